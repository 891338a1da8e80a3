"""Ask a question: run the agent workflow, record every event, return the answer.

`stream_answer` is the one run pipeline — the agent and every evaluation mode go through it — and
`RunRecorder` the one place a run's events get their run id and reach the trace. `run_question` is the
synchronous form for the CLI and tests (one event loop per question, which is what Streamlit wants).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from collections.abc import AsyncIterator, Callable
from pathlib import Path

from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from pydantic import BaseModel, Field

from rag.agent.events import (
    Answer,
    AnswerEvent,
    Draft,
    ErrorEvent,
    HopEnd,
    HopEvent,
    LLMCall,
    Planned,
    RunStart,
    Scoped,
    Stop,
    Waiting,
)
from rag.agent.documents import SearchedDocuments, similarity
from rag.agent.react import DocAgent
from rag.agent.state import RunState, failure_answer
from rag.agent.strategy import AGENT, Strategy
from rag.control import QueueTimeOff, RunControl, controlled
from rag.models.llm import for_run, model_load
from rag.reader import understand
from rag.reader.answer import NOT_ANSWERABLE, NOT_IN_DOCUMENTS
from rag.reader.compose import MISSING
from rag.records import Hit, Modality
from rag.trace import TraceWriter, redact

STOPPED = "Stopped before an answer was written."


class HopFragment(BaseModel):
    """A fragment a hop found, as the answer record keeps it: where it stands, its score and its text."""

    id: str
    page: int
    score: float
    text: str
    file: str
    modality: Modality

    @classmethod
    def of(cls, hit: Hit) -> HopFragment:
        f = hit.fragment
        return cls(id=f.id, page=f.page, score=round(hit.score, 4), text=f.text, file=f.file, modality=f.modality)


class HopSummary(BaseModel):
    hop: int
    query: str
    modality: str
    fragments: list[HopFragment]
    retrieval_ms: float
    llm_ms: float = 0.0


class AgentAnswer(Answer):
    """The run's answer with what the run measured: its hops, tokens, times and trace."""

    run_id: str
    question: str
    hops: list[HopSummary] = Field(default_factory=list)
    tokens: dict[str, int] = Field(default_factory=dict)
    first_hop_s: float | None = None
    total_s: float = 0.0
    trace: str = ""
    not_found: bool = False
    error: str | None = None
    plan: list[str] = Field(default_factory=list, description="a question of several facts: its composition, then "
                                                                "each part's question")


class RunRecorder:
    """Stamps each event with the run id and appends it to logs/<run_id>.jsonl as it happens."""

    def __init__(self, state: RunState, trace_dir: Path) -> None:
        self.state = state
        self.writer = TraceWriter(trace_dir, state.run_id)

    def record(self, event: HopEvent) -> HopEvent:
        event.run_id = event.run_id or self.state.run_id
        self.writer.write(event)
        return event

    def stopped(self) -> list[HopEvent]:
        """How a stopped run ends: a stop event, and an answer that says so."""
        state = self.state
        events = [Stop(hop=state.hops, reason="stopped", detail="stopped by the user"),
                  AnswerEvent(hop=state.hops, answer=STOPPED, stop_reason="stopped")]
        return [self.record(e) for e in events]

    def waiting(self, ahead: int, waited: float) -> Waiting:
        """The model queue's news: `ahead` questions before this one (0: its turn came after `waited` s)."""
        now = time.time()
        return Waiting(run_id=self.state.run_id, hop=self.state.hops, ahead=ahead, waited_s=round(waited, 3),
                       t_start=now - waited, t_end=now)

    def failure(self, error: str, text: str | None = None) -> list[HopEvent]:
        """How a failed run ends in the trace and the UI: the error, the stop, an answer that says why."""
        state = self.state
        answer = AnswerEvent(hop=state.hops, answer=text or failure_answer(state, error), short_answer="",
                             stop_reason="error")
        events = [ErrorEvent(hop=state.hops, message=error), Stop(hop=state.hops, reason="error", detail=error), answer]
        return [self.record(e) for e in events]


async def stream_answer(
    workspace, llm, question: str, memory: Memory | None = None, doc_ids: list[str] | None = None,
    trace_dir: Path = Path("logs"), model_name: str = "", strategy: Strategy = AGENT, control: RunControl | None = None,
) -> AsyncIterator[HopEvent]:
    """Yield every event of one run as it happens; the last one is the AnswerEvent.

    `strategy` says how the run searches and whether it reasons (the agent's way, or an evaluation's
    baseline); `control` stops the run and hears its place in the embedded model's queue (as Waiting events)."""
    control, settings = control or RunControl(), workspace.settings.agent
    state = RunState(question=understand(question), settings=settings, reader=workspace.settings.reader,
                     doc_ids=doc_ids)
    recorder = RunRecorder(state, trace_dir)
    yield recorder.record(RunStart(question=question, model=model_name, hop=0,
                                   settings={"mode": strategy.name, **workspace.settings.for_trace()}))
    if len(question) > settings.max_question_chars:
        error = (f"the question is too long ({len(question):,} characters; the limit is "
                 f"{settings.max_question_chars:,}), please ask a shorter one")
        for event in recorder.failure(error, f"Not answered: {error}."):
            yield event
        return
    history = (await memory.aget()) if memory is not None else []
    searched = SearchedDocuments(workspace.store, doc_ids)
    if filing := searched.filing_named(question):  # the company's filing, before any search across the others
        doc_ids = state.doc_ids = [filing.doc_id]
        searched = searched.only(filing.doc_id)
        yield recorder.record(Scoped(run_id=state.run_id, file=searched.docs[0].file, why=filing.why))
    agent = DocAgent(for_run(llm, control), state, strategy, strategy.searcher(workspace, doc_ids, state.question.pages),
                     searched, similarity(workspace.embed_model), history=history)
    run = Relayed(agent.run(), control, recorder, settings.timeout_s)
    async for event in run.events(model_load(llm)):
        yield event
    if run.result is None or control.stopped:
        for event in await run.ended():
            yield event
        return
    if memory is not None:
        await memory.aput_messages([ChatMessage(role=MessageRole.USER, content=question),
                                    ChatMessage(role=MessageRole.ASSISTANT, content=run.result.answer)])
    answer = answer_event(state, run.result)
    answer.still_reading, answer.ask_again = reading_news(workspace.store, doc_ids, state, answer)
    yield recorder.record(answer)


class Relayed:
    """A workflow run's events relayed to the caller, recorded as they pass, within the run's deadline; then its
    result, or the error or stop that ended it."""

    def __init__(self, handler, control: RunControl, recorder: RunRecorder, timeout_s: float) -> None:
        self.handler, self.control, self.recorder, self.timeout_s = handler, control, recorder, timeout_s
        self.result: Answer | None = None
        self.error: str | None = None

    async def events(self, load) -> AsyncIterator[HopEvent]:
        deadline = asyncio.timeout(self.timeout_s)
        queue_time_off = QueueTimeOff(deadline)  # waiting for the model is the other questions' time
        events = controlled(self.handler, self.control, self.recorder.waiting, load)
        try:
            async with deadline, contextlib.aclosing(events):
                async for event in events:
                    queue_time_off.see(event)
                    if isinstance(event, Draft):  # a reply as it grows: shown, not traced
                        yield event
                    elif isinstance(event, HopEvent):
                        yield self.recorder.record(event)
                self.result = await self.handler
        except asyncio.CancelledError:  # the run cancelled by its Stop after its events ended: not an error
            if not self.control.stopped:
                raise
        except Exception as exc:  # the deadline, a model server that is down, a workflow error
            self.error = f"no answer within {self.timeout_s:.0f} s" if deadline.expired() else error_text(exc)

    async def ended(self) -> list[HopEvent]:
        """How a run without a result ends: stopped from the chat, whatever it was doing, or failed."""
        await _cancel(self.handler)
        if self.control.stopped:
            return self.recorder.stopped()
        return self.recorder.failure(self.error or "the run ended without an answer")


def reading_news(store, doc_ids: list[str] | None, state: RunState, answer: AnswerEvent) -> tuple[str, bool]:
    """One line on what of the searched documents is still being read, and whether the pages that mattered
    to this question (its best hits', its citations') are among them."""
    docs = [d for d in store.documents() if d.stage != "complete" and (doc_ids is None or d.doc_id in doc_ids)]
    if not docs:
        return "", False
    best = {(h.fragment.doc_id, h.fragment.page) for h in state.best_hits()[:3]}
    best |= {(c.doc_id, c.page) for c in answer.citations if c.doc_id}
    line = "; ".join(d.still_reading() for d in docs)
    return line[0].upper() + line[1:] + ".", any((d.doc_id, p) in best for d in docs for p in d.pages_left())


def answer_event(state: RunState, result: Answer) -> AnswerEvent:
    return AnswerEvent(hop=state.hops, **result.model_dump(exclude={"stop_reason", "missing"}),
                       missing=MISSING in result.answer, stop_reason=state.stop_reason)


def error_text(exc: BaseException) -> str:
    """An exception as users may see it: named, short, and scrubbed (a server's error body may quote the key)."""
    return redact(f"{type(exc).__name__}: {exc}")[:500]


async def _cancel(handler) -> None:
    with contextlib.suppress(Exception):  # already finished or never started
        await handler.cancel_run()


def run_question(
    workspace, llm, question: str, memory: Memory | None = None, doc_ids: list[str] | None = None,
    trace_dir: Path = Path("logs"), on_event: Callable[[HopEvent], None] | None = None, model_name: str = "",
    strategy: Strategy = AGENT, control: RunControl | None = None,
) -> AgentAnswer:
    """Run one question to its answer, calling on_event for each event as it happens."""
    events = stream_answer(workspace, llm, question, memory, doc_ids, trace_dir, model_name, strategy, control)
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
    ends = [e for e in events if isinstance(e, HopEnd)]
    hops = [  # a hop retried in other words ends twice: its last end holds both searches' hits
        HopSummary(
            hop=e.hop, query=e.query, modality=e.modality,
            retrieval_ms=round(sum(x.retrieval_ms for x in ends if x.hop == e.hop), 1),
            llm_ms=sum(c.llm_ms for c in llm_calls if c.hop == e.hop),
            fragments=[HopFragment.of(h) for h in e.hits],
        )
        for e in {x.hop: x for x in ends}.values()
    ]
    first_hop = ends[0] if ends else None
    error = next((e.message for e in events if isinstance(e, ErrorEvent)), None)
    plan = next(([e.composition, *e.parts] for e in events if isinstance(e, Planned)), [])
    return AgentAnswer(
        **answer.model_dump(include=set(Answer.model_fields)), run_id=start.run_id, question=question, hops=hops,
        tokens={"prompt": sum(c.prompt_tokens for c in llm_calls), "completion": sum(c.completion_tokens for c in llm_calls)},
        first_hop_s=round(first_hop.t_end - start.t_start, 3) if first_hop else None,
        total_s=round(answer.t_start - start.t_start, 3), trace=str(trace_dir / f"{start.run_id}.jsonl"),
        not_found=answer.short_answer == NOT_ANSWERABLE or answer.answer.startswith(NOT_IN_DOCUMENTS), error=error,
        plan=plan,
    )
