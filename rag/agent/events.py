"""Typed hop events: the one stream that the CLI, the UI and the trace writer consume.

They are LlamaIndex workflow events, so the agent writes them to its event stream the
moment they happen, and plain pydantic records, so they serialise to JSONL as they are.
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from llama_index.core.workflow import Event
from pydantic import BaseModel, Field

from rag.control import queue_text
from rag.reader.answer import Cited, PageReading
from rag.records import MODALITY_NAMES, Citation, Hit

# How an event stands out: a step of the run, a note under it, the model's thought, news for the user.
Style = Literal["step", "note", "thought", "info", "warning"]
EventKind = Literal[
    "run_start", "hop_start", "hop_end", "llm", "thought", "paraphrase", "stop", "compute", "error", "answer",
    "waiting", "read", "draft", "plan", "route", "scope",
]


class HopEvent(Event):
    kind: EventKind
    run_id: str = ""
    hop: int = 0
    t_start: float = Field(default_factory=time.time)
    t_end: float | None = None

    style: ClassVar[Style] = "note"

    def headline(self) -> str | None:
        """How this event reads, in one line: the chat, the trace view and the terminal say the same."""
        return None

    def details(self) -> list[str]:
        """What the terminal prints under the headline (the chat shows cards for hits and evidence)."""
        return []


class RunStart(HopEvent):
    kind: EventKind = "run_start"
    question: str
    settings: dict = Field(default_factory=dict)
    model: str = ""


class HopStart(HopEvent):
    """A search is about to run: what, where and why."""

    kind: EventKind = "hop_start"
    query: str
    modality: str
    why: str = ""

    style: ClassVar[Style] = "step"

    def headline(self) -> str:
        why = f" ({self.why})" if self.why else ""
        return f"Hop {self.hop}: {MODALITY_NAMES.get(self.modality, self.modality)} search for “{self.query}”{why}"


class HopEnd(HopEvent):
    kind: EventKind = "hop_end"
    query: str
    modality: str
    route: list[str] = Field(default_factory=list)
    hits: list[Hit] = Field(default_factory=list)
    new_ids: list[str] = Field(default_factory=list)
    retrieval_ms: float = 0.0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    pages_read: list[int] = Field(default_factory=list, description="pages whose text the model reads")

    def headline(self) -> str:
        routed = f" · routed to {', '.join(MODALITY_NAMES.get(r, r) for r in self.route)}" if self.route else ""
        read = f" · the model reads the text of p. {', '.join(map(str, self.pages_read))}" if self.pages_read else ""
        return f"{len(self.hits)} fragments ({len(self.new_ids)} new) in {self.retrieval_ms:.0f} ms{routed}{read}"

    def details(self) -> list[str]:
        return [f"{h.score:.2f}  p.{h.fragment.page:<3} {h.fragment.modality:13s} {h.fragment.text[:90]}"
                for h in self.hits]


class LLMCall(HopEvent):
    kind: EventKind = "llm"
    purpose: str = "react"
    constraint: str = ""  # for JSON replies: grammar, json_schema, json_object or prompt
    llm_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    output: str = ""

    def headline(self) -> str:
        return (f"LLM ({self.purpose}) {self.llm_ms / 1000:.1f} s, {self.prompt_tokens} prompt + "
                f"{self.completion_tokens} completion tokens")


class Thought(HopEvent):
    kind: EventKind = "thought"
    text: str

    style: ClassVar[Style] = "thought"

    def headline(self) -> str:
        return self.text


class Paraphrase(HopEvent):
    kind: EventKind = "paraphrase"
    original: str
    paraphrased: str
    best_score: float

    def headline(self) -> str:
        found = f"Best score {self.best_score:.2f} is low" if self.best_score > 0 else "Nothing found"
        return f"{found}: retrying as “{self.paraphrased}”"


class Waiting(HopEvent):
    """The embedded model serves other questions first: `ahead` of this one (0: its turn has come,
    after `waited_s`). Issue 14: the run turns the model queue's news into these."""

    kind: EventKind = "waiting"
    ahead: int
    waited_s: float = 0.0

    def headline(self) -> str | None:
        if self.ahead or self.waited_s >= 0.5:
            return queue_text(self.ahead, self.waited_s)
        return None


StopReason = Literal["hop_cap", "no_new_fragments", "sufficient", "token_budget", "unparseable", "single_pass",
                     "stopped", "error"]


class Stop(HopEvent):
    """The search ended: why, by the stop rules (or a failure); the reader takes over."""

    kind: EventKind = "stop"
    reason: StopReason
    detail: str = ""

    def headline(self) -> str:
        return f"Stopped searching: {self.reason.replace('_', ' ')}" + (f" ({self.detail[:120]})" if self.detail else "")


class Scoped(HopEvent):
    """Of several searched documents, the one the question is answered from: the filing of the company (and the
    form and fiscal year) it names, found by the names each filing prints (rag/reader/filings.py)."""

    kind: EventKind = "scope"
    file: str
    why: str

    style: ClassVar[Style] = "step"

    def headline(self) -> str:
        return f"Searching one filing: {self.why}"


class Routed(HopEvent):
    """The path the question takes (rag/reader/route.py) and why: the document skills tried before any page is
    read, then the plan or the pages."""

    kind: EventKind = "route"
    path: str
    why: str
    skills: list[str] = Field(default_factory=list)
    then: str = "read"

    def headline(self) -> str:
        rest = [*self.skills[1:], self.then] if self.skills else []
        return f"Route: {self.path}, {self.why}" + (f"; else {', then '.join(rest)}" if rest else "")


class Planned(HopEvent):
    """The question needs two or three facts: each part is its own hop and read, then code composes them."""

    kind: EventKind = "plan"
    composition: str
    parts: list[str]
    by: str = "model"
    said: str = ""

    style: ClassVar[Style] = "step"

    def headline(self) -> str:
        return f"Plan: the {self.composition} of {len(self.parts)} parts, each searched and read on its own"

    def details(self) -> list[str]:
        return [f"{n}. {p}" for n, p in enumerate(self.parts, 1)]


class Computation(HopEvent):
    """A program over values read off a page (a model's expression, or code's count or comparison), and
    what the whitelist evaluator made of it."""

    kind: EventKind = "compute"
    program: str
    result: str | None = None
    error: str | None = None
    inputs: list[Cited] = Field(default_factory=list)

    style: ClassVar[Style] = "step"

    def headline(self) -> str:
        got = self.result if self.error is None else f"refused or failed: {self.error}"
        return f"Computed by a program over the values read (a whitelist evaluator runs it) → {got}"

    def details(self) -> list[str]:
        return self.program.splitlines()


class PageRead(HopEvent, PageReading):
    """The model read one page (ReadPage): what it said, and whether code found the answer on the page."""

    kind: EventKind = "read"

    style: ClassVar[Style] = "step"

    def headline(self) -> str:
        said = f"the answer: {self.answer}" if self.found else f"no answer, {self.reason}"
        return f"Read p. {self.page} of {self.file} ({self.skill}): {said}"

    def details(self) -> list[str]:
        return [f"{self.tokens} tokens of the page read"] + ([] if self.found else [f"model said: {self.said[:160]}"])


class Draft(HopEvent):
    """The answer as the model writes it, before code checks it: the chat shows it growing."""

    kind: EventKind = "draft"
    page: int
    text: str

    def headline(self) -> str | None:
        return None  # shown while it grows, never kept in the hop box


class ErrorEvent(HopEvent):
    kind: EventKind = "error"
    message: str

    style: ClassVar[Style] = "warning"

    def headline(self) -> str:
        return self.message


class Answer(BaseModel):
    """An answer as the run gives it: the words, the short form scored, its citations and how it came."""

    answer: str
    short_answer: str = ""
    answer_type: str = ""
    citations: list[Citation] = Field(default_factory=list)
    picked: list[str] = Field(default_factory=list)
    program: str | None = None
    missing: bool = False
    stop_reason: str | None = None
    skill: str = ""
    still_reading: str = ""  # "Pages 40–73 of report.pdf are still being read (tables, charts)."
    ask_again: bool = False  # the pages that mattered to it are among those


class AnswerEvent(HopEvent, Answer):
    kind: EventKind = "answer"


_BY_KIND = {cls.model_fields["kind"].default: cls for cls in HopEvent.__subclasses__()}


def from_records(records: list[dict]) -> list[HopEvent]:
    """Events as a trace or a saved turn records them, typed again; kinds this version does not know are
    skipped."""
    return [_BY_KIND[r["kind"]].model_validate(r) for r in records if r.get("kind") in _BY_KIND]
