"""Typed hop events: the one stream that the CLI, the UI and the trace writer consume.

They are LlamaIndex workflow events, so the agent writes them to its event stream the
moment they happen, and plain pydantic records, so they serialise to JSONL as they are.
"""

from __future__ import annotations

import time
from typing import Literal

from llama_index.core.workflow import Event
from pydantic import Field

from rag.reader.answer import PageReading
from rag.records import Hit

EventKind = Literal[
    "run_start", "hop_start", "hop_end", "llm", "thought", "paraphrase", "stop", "evidence", "compute", "verify",
    "refuse", "error", "answer", "waiting", "read",
]


class HopEvent(Event):
    kind: EventKind
    run_id: str = ""
    hop: int = 0
    t_start: float = Field(default_factory=time.time)
    t_end: float | None = None


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


class LLMCall(HopEvent):
    kind: EventKind = "llm"
    purpose: str = "react"
    constraint: str = ""  # for JSON replies: grammar, json_schema, json_object or prompt
    llm_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    output: str = ""


class Thought(HopEvent):
    kind: EventKind = "thought"
    text: str


class Paraphrase(HopEvent):
    kind: EventKind = "paraphrase"
    original: str
    paraphrased: str
    best_score: float


class Waiting(HopEvent):
    """The embedded model serves other questions first: `ahead` of this one (0: its turn has come,
    after `waited_s`). Issue 14: the run turns the model queue's news into these."""

    kind: EventKind = "waiting"
    ahead: int
    waited_s: float = 0.0


StopReason = Literal["hop_cap", "no_new_fragments", "sufficient", "token_budget", "unparseable", "single_pass",
                     "stopped", "error"]


class Stop(HopEvent):
    """The search ended: why, by the stop rules (or a failure); the reader takes over."""

    kind: EventKind = "stop"
    reason: StopReason
    detail: str = ""


class EvidencePicked(HopEvent):
    """The reader's first job: the evidence ids the model chose to answer from."""

    kind: EventKind = "evidence"
    ids: list[str]
    evidence: list[dict] = Field(default_factory=list)
    attempt: int = 1
    by: Literal["model", "code"] = "model"  # code chose when one number's label clearly fits the question


class Computation(HopEvent):
    """A program the model wrote over evidence values, and what the whitelist evaluator made of it."""

    kind: EventKind = "compute"
    program: str
    result: str | None = None
    error: str | None = None


class Verification(HopEvent):
    """Whether the answer stands in the evidence it cites."""

    kind: EventKind = "verify"
    ok: bool
    value: str = ""
    ids: list[str] = Field(default_factory=list)
    reason: str = ""
    attempt: int = 1


class PageRead(HopEvent, PageReading):
    """The model read one page (ReadPage): what it said, and whether code found the answer on the page."""

    kind: EventKind = "read"

    def describe(self) -> str:
        if self.found:
            return f"📖 p. {self.page} read ({self.skill}): {self.answer}"
        return f"📖 p. {self.page} read ({self.skill}): no answer, {self.reason}"


class Refusal(HopEvent):
    """Code decided the documents do not answer the question, and why."""

    kind: EventKind = "refuse"
    reason: str


class ErrorEvent(HopEvent):
    kind: EventKind = "error"
    message: str


class AnswerEvent(HopEvent):
    kind: EventKind = "answer"
    answer: str
    short_answer: str = ""
    answer_type: str = ""
    citations: list[dict] = Field(default_factory=list)
    picked: list[str] = Field(default_factory=list)
    program: str | None = None
    missing: bool = False
    stop_reason: str | None = None
    skill: str = ""
