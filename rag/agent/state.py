"""What one run knows: its hops, the fragments seen, why it stopped, tokens spent."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from itertools import zip_longest

from rag.agent.events import LLMCall
from rag.models.structured import ModelCall
from rag.reader.question import Question
from rag.records import Hit
from rag.settings import AgentSettings, ReaderSettings


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


@dataclass
class RunState:
    """`question` is the one understanding of the question (rag/reader/question.py), built once."""

    question: Question
    settings: AgentSettings
    reader: ReaderSettings = field(default_factory=ReaderSettings)
    run_id: str = field(default_factory=new_run_id)
    started: float = field(default_factory=time.time)
    doc_ids: list[str] | None = None
    hops: int = 0
    hop_hits: list[list[Hit]] = field(default_factory=list)
    seen: dict[str, Hit] = field(default_factory=dict)
    last_route: list[str] = field(default_factory=lambda: ["text"])
    last_new_ids: list[str] = field(default_factory=list)
    sufficient: bool | None = None
    evidence_tokens: int = 0
    stop_reason: str | None = None
    parse_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def remember(self, hits: list[Hit]) -> list[str]:
        """Record a hop's hits; return the ids not seen in earlier hops."""
        new = [h.fragment.id for h in hits if h.fragment.id not in self.seen]
        for hit in hits:
            known = self.seen.get(hit.fragment.id)
            if known is None or hit.score > known.score:
                self.seen[hit.fragment.id] = hit
        self.hop_hits.append(hits)
        self.last_new_ids = new
        return new

    def best_hits(self) -> list[Hit]:
        """Every hop's hits in its own ranking, the hops interleaved: a later, targeted hop's best
        fragment stands beside the first hop's best, not after all of it."""
        ordered = [h for rank in zip_longest(*self.hop_hits) for h in rank if h is not None]
        return list({h.fragment.id: self.seen[h.fragment.id] for h in ordered}.values())


def llm_call(state: RunState, call: ModelCall) -> LLMCall:
    """Count a finished call's tokens into the run and describe it as an event."""
    state.prompt_tokens += call.prompt_tokens
    state.completion_tokens += call.completion_tokens
    return LLMCall(run_id=state.run_id, hop=state.hops, **call.model_dump())


def failure_answer(state: RunState, reason: str) -> str:
    """What the user gets when the model fails: the reason and the best evidence found."""
    best = state.best_hits()[:3]
    if not best:
        return f"The language model failed ({reason}) and no fragment was found."
    lines = [f"- {h.fragment.text[:200]} [p. {h.fragment.page}]" for h in best]
    return f"The language model failed ({reason}); the most relevant fragments are:\n" + "\n".join(lines)
