"""Ask a question: run the agent, stream its hop events, write the trace, return the answer.

`stream_answer` is the async generator the UI consumes; `ask` is its synchronous form
for the CLI and tests (one event loop per question, which is what Streamlit wants).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from llama_index.core.memory import Memory
from pydantic import BaseModel, Field

from rag.agent.events import AnswerEvent, ErrorEvent, HopEnd, HopEvent, LLMCall, RunStart, Stop, Waiting
from rag.agent.prompts import NOT_IN_DOCUMENTS
from rag.agent.react import DocAgent, cited_pages
from rag.agent.state import RunState, failure_answer
from rag.control import QueueTimeOff, RunControl, controlled
from rag.models.llm import for_run
from rag.trace import TraceWriter, redact

MISSING = "<missing>"
STOPPED = "Stopped before an answer was written."
# Numbers (with their separators) and words of 5+ letters: what ties an answer to its source.
_TERMS = re.compile(r"\d[\d,.]*\d%?|\d%?|[A-Za-z]{5,}")


class HopSummary(BaseModel):
    hop: int
    query: str
    modality: str
    fragments: list[dict]
    retrieval_ms: float
    llm_ms: float = 0.0


class AgentAnswer(BaseModel):
    run_id: str
    question: str
    answer: str
    citations: list[dict] = Field(default_factory=list)
    hops: list[HopSummary] = Field(default_factory=list)
    tokens: dict[str, int] = Field(default_factory=dict)
    first_hop_s: float | None = None
    total_s: float = 0.0
    stop_reason: str | None = None
    trace: str = ""
    missing: bool = False
    not_found: bool = False
    error: str | None = None


async def stream_answer(
    workspace, llm, question: str, memory: Memory | None = None, doc_ids: list[str] | None = None,
    trace_dir: Path = Path("logs"), model_name: str = "", control: RunControl | None = None,
) -> AsyncIterator[HopEvent]:
    """Yield every hop event as it happens; the last one is the AnswerEvent. `control` stops the run
    and hears its place in the embedded model's queue (as Waiting events)."""
    control = control or RunControl()  # issue 14
    settings = workspace.settings.agent
    docs = workspace.store.documents()
    state = RunState(question=question, settings=settings, doc_ids=doc_ids,
                     many_files=len(doc_ids or docs) > 1)
    writer = TraceWriter(trace_dir, state.run_id)

    def record(event: HopEvent) -> HopEvent:
        event.run_id = event.run_id or state.run_id
        writer.write(event)
        return event

    yield record(RunStart(run_id=state.run_id, question=question, model=model_name,
                          settings=workspace.settings.for_trace(), hop=0))  # issue 14: the run's own settings
    if len(question) > settings.max_question_chars:
        error = (f"the question is too long ({len(question):,} characters; the limit is "
                 f"{settings.max_question_chars:,}), please ask a shorter one")
        for event in failure_events(state, error, f"Not answered: {error}."):
            yield record(event)
        return
    agent = DocAgent.for_run(workspace, for_run(llm, control), state)  # issue 14: the queue hears this run
    handler = agent.run(user_msg=question, memory=memory or Memory.from_defaults(),
                        max_iterations=2 * settings.max_hops + 6)
    text, error = "", None
    deadline = asyncio.timeout(settings.timeout_s)
    queue_time_off = QueueTimeOff(deadline)  # issue 14: waiting for the model does not count
    try:
        async with deadline, contextlib.aclosing(controlled(handler, control, waiting(state))) as events:  # issue 14
            async for event in events:
                queue_time_off.see(event)  # issue 14
                if isinstance(event, HopEvent):
                    yield record(event)
            result = await handler
        text = (result.response.content or "").strip()
    except Exception as exc:  # the deadline, a model server that is down, a workflow error
        error = (f"no answer within {settings.timeout_s:.0f} s" if deadline.expired()
                 else error_text(exc))
    if control.stopped:  # issue 14: stopped from the chat, whatever the run was doing
        await _cancel(handler)
        for event in stopped_events(state):
            yield record(event)
        return
    if not error:
        yield record(answer_event(state, text, None))
        return
    await _cancel(handler)
    for event in failure_events(state, error, failure_answer(state, error)):
        yield record(event)


def error_text(exc: BaseException) -> str:
    """An exception as users may see it: named, short, and scrubbed (a server's error body may quote the key)."""
    return redact(f"{type(exc).__name__}: {exc}")[:500]


def waiting(state: RunState):
    """The model queue's news as Waiting events of this run (issue 14)."""
    def event(ahead: int, waited: float) -> Waiting:
        now = time.time()
        return Waiting(run_id=state.run_id, hop=state.hops, ahead=ahead, waited_s=round(waited, 3),
                       t_start=now - waited, t_end=now)

    return event


def stopped_events(state: RunState) -> list[HopEvent]:
    """How a stopped run ends (issue 14): a stop event, and an answer that says so."""
    return [Stop(run_id=state.run_id, hop=state.hops, reason="stopped", detail="stopped by the user"),
            AnswerEvent(run_id=state.run_id, hop=state.hops, answer=STOPPED, stop_reason="stopped")]


def failure_events(state: RunState, error: str, text: str) -> list[HopEvent]:
    """How a failed run ends in the trace and the UI: the error, the stop, an answer that says why."""
    return [ErrorEvent(run_id=state.run_id, hop=state.hops, message=error),
            Stop(run_id=state.run_id, hop=state.hops, reason="error", detail=error),
            answer_event(state, text, error)]


def answer_event(state: RunState, text: str, error: str | None) -> AnswerEvent:
    if not error and not cited_pages(text) and NOT_IN_DOCUMENTS not in text.lower():
        text = add_citations(text, state.best_hits())
    pages = cited_pages(text)
    by_page = {}
    for hit in state.best_hits():
        by_page.setdefault(hit.fragment.page, hit.fragment)
    citations = [{"file": by_page[p].file, "page": p, "fragment_id": by_page[p].id, "bbox": by_page[p].bbox}
                 for p in pages if p in by_page]
    return AnswerEvent(run_id=state.run_id, hop=state.hops, answer=text or NOT_IN_DOCUMENTS,
                       citations=citations, missing=MISSING in text,
                       stop_reason="error" if error else state.stop_reason)


def add_citations(answer: str, hits: list) -> str:
    """Small models often forget the [p. N] marks: cite the pages whose fragments hold the
    answer's numbers and rarer words."""
    terms = {t.lower() for t in _TERMS.findall(answer)}
    scored = []
    for hit in hits:
        text = hit.fragment.text.lower()
        overlap = sum((3 if t[0].isdigit() else 1) for t in terms if t in text)
        if overlap:
            scored.append((overlap, hit.score, hit.fragment.page))
    if not scored:
        return answer
    best = max(scored)[0]
    pages = sorted({page for overlap, _, page in scored if overlap == best})[:2]
    return answer.rstrip() + " " + " ".join(f"[p. {p}]" for p in pages)


async def _cancel(handler) -> None:
    with contextlib.suppress(Exception):  # already finished or never started
        await handler.cancel_run()


def ask(
    workspace, llm, question: str, memory: Memory | None = None, doc_ids: list[str] | None = None,
    trace_dir: Path = Path("logs"), on_event: Callable[[HopEvent], None] | None = None, model_name: str = "",
    control: RunControl | None = None,
) -> AgentAnswer:
    """Run one question to its answer, calling on_event for each hop event as it happens."""
    events = stream_answer(workspace, llm, question, memory, doc_ids, trace_dir, model_name, control)
    return drain(events, question, trace_dir, on_event)


def drain(events: AsyncIterator[HopEvent], question: str, trace_dir: Path,
          on_event: Callable[[HopEvent], None] | None = None) -> AgentAnswer:
    """Consume an event stream in a fresh event loop and fold it into the answer record."""

    async def run() -> list[HopEvent]:
        seen = []
        async for event in events:
            seen.append(event)
            if on_event:
                on_event(event)
        return seen

    return collect(asyncio.run(run()), question, trace_dir)


def collect(events: list[HopEvent], question: str, trace_dir: Path) -> AgentAnswer:
    """Fold an event list into the answer record the CLI prints as JSON."""
    start = events[0]
    answer = next(e for e in reversed(events) if isinstance(e, AnswerEvent))
    llm_calls = [e for e in events if isinstance(e, LLMCall)]
    hops = [
        HopSummary(
            hop=e.hop, query=e.query, modality=e.modality, retrieval_ms=e.retrieval_ms,
            llm_ms=sum(c.llm_ms for c in llm_calls if c.hop == e.hop),
            fragments=[{"id": h.fragment.id, "page": h.fragment.page, "score": round(h.score, 4),
                        "text": h.fragment.text, "file": h.fragment.file, "modality": h.fragment.modality}
                       for h in e.hits],
        )
        for e in events if isinstance(e, HopEnd)
    ]
    first_hop = next((e for e in events if isinstance(e, HopEnd)), None)
    error = next((e.message for e in events if isinstance(e, ErrorEvent)), None)
    return AgentAnswer(
        run_id=start.run_id, question=question, answer=answer.answer, citations=answer.citations, hops=hops,
        tokens={"prompt": sum(c.prompt_tokens for c in llm_calls),
                "completion": sum(c.completion_tokens for c in llm_calls)},
        first_hop_s=round(first_hop.t_end - start.t_start, 3) if first_hop else None,
        total_s=round(answer.t_start - start.t_start, 3), stop_reason=answer.stop_reason,
        trace=str(trace_dir / f"{start.run_id}.jsonl"), missing=answer.missing,
        not_found=NOT_IN_DOCUMENTS in answer.answer.lower(), error=error,
    )
