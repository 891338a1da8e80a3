"""Typed hop events: the one stream that the CLI, the UI and the trace writer consume.

They are LlamaIndex workflow events, so the agent writes them to its event stream the
moment they happen, and plain pydantic records, so they serialise to JSONL as they are.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field
from llama_index.core.workflow import Event

from rag.records import Hit

EventKind = Literal[
    "run_start", "hop_start", "hop_end", "llm", "thought", "paraphrase", "stop", "error", "answer", "waiting"
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


class Stop(HopEvent):
    kind: EventKind = "stop"
    reason: Literal[
        "answered", "hop_cap", "no_new_fragments", "sufficient", "token_budget", "unparseable", "error",
        "stopped",  # issue 14: stopped by the asker
    ]
    detail: str = ""


class ErrorEvent(HopEvent):
    kind: EventKind = "error"
    message: str


class AnswerEvent(HopEvent):
    kind: EventKind = "answer"
    answer: str
    citations: list[dict] = Field(default_factory=list)
    missing: bool = False
    stop_reason: str | None = None
