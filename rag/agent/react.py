"""The agent as a LlamaIndex workflow: search hop by hop (ReAct), then read.

    start → search ⇄ decide → read → stop

`search` runs one hop through a tool. `decide` applies the paper's stop rules (rag/agent/stop.py);
when none fires, one ReAct step (Thought → Action → Action Input, LlamaIndex's formatter and parser)
chooses the next tool and query. The model is never asked to answer here: when the search stops,
`read` hands the gathered evidence to the reader (rag/agent/reader.py), which writes the answer.
The same workflow serves every evaluation mode: `single-pass` reads after the first hop, and
`text-only` / `oracle` only swap the first hop's search.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from llama_index.core.agent.react.formatter import ReActChatFormatter
from llama_index.core.agent.react.output_parser import ReActOutputParser
from llama_index.core.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.workflow import Context, Event, StartEvent, StopEvent, Workflow, step

from rag.agent import prompts
from rag.agent.events import Computation, EvidencePicked, Refusal, Stop, Thought, Verification
from rag.agent.question import missing_names
from rag.agent.reader import Reader, ReaderInput, ReaderResult
from rag.agent.state import RunState, llm_call
from rag.agent.stop import stop_reason
from rag.agent.tools import TOOL_MODALITY, SearchTools
from rag.context import from_hits
from rag.models.structured import ask_json, token_counter
from rag.records import SearchResult

READER_EVENTS = {"pick": EvidencePicked, "compute": Computation, "verify": Verification, "refuse": Refusal}


class HopRequest(Event):
    query: str
    modality: str
    why: str


class Searched(Event):
    observation: str


class ReadRequest(Event):
    pass


class CompactReActFormatter(ReActChatFormatter):
    """ReAct prompt with one-line tool descriptions instead of JSON schemas (a 1.5B model copies schemas)."""

    def format(self, tools, chat_history, current_reasoning=None) -> list[ChatMessage]:
        tool_desc = "\n".join(f"- {t.metadata.name}: {t.metadata.description}" for t in tools)
        header = self.system_header.format(tool_desc=tool_desc, tool_names=", ".join(t.metadata.name for t in tools))
        steps = [ChatMessage(role=MessageRole.USER if isinstance(s, ObservationReasoningStep) else MessageRole.ASSISTANT,
                             content=s.get_content()) for s in current_reasoning or []]
        return [ChatMessage(role=MessageRole.SYSTEM, content=header), *chat_history, *steps]


class DocAgent(Workflow):
    """One run of the agent over a workspace's documents. `evidence_for(state)` builds what the reader reads."""

    def __init__(self, llm, state: RunState, search: Callable[[str, str], SearchResult],
                 evidence_for: Callable[[RunState], ReaderInput], mode: str = "agent",
                 history: list[ChatMessage] | None = None) -> None:
        super().__init__(timeout=None)
        self.llm, self.state, self.mode = llm, state, mode
        self.evidence_for = evidence_for
        self.history = history or []
        self.count_tokens = token_counter(llm)
        self.tools = SearchTools(state, search, self.complete, self.emit)
        self.formatter = CompactReActFormatter(system_header=prompts.REACT_HEADER)
        self.reasoning: list[BaseReasoningStep] = []
        self.result: ReaderResult | None = None
        self._ctx: Context | None = None

    # steps

    @step
    async def start(self, ctx: Context, ev: StartEvent) -> HopRequest:
        self._ctx = ctx
        modality = "auto" if self.mode in ("agent", "single-pass") else self.mode
        why = "initial retrieval (modality router)" if modality == "auto" else modality
        return HopRequest(query=self.state.question, modality=modality, why=why)

    @step
    async def search(self, ev: HopRequest) -> Searched:
        return Searched(observation=await self.tools.hop(ev.query, ev.modality, ev.why))

    @step
    async def decide(self, ev: Searched) -> HopRequest | ReadRequest:
        state = self.state
        if self.mode != "agent":
            return self.stop("single_pass")
        if not self.reasoning:  # the router's search, in ReAct form, so the model sees what it found
            self.reasoning.append(ActionReasoningStep(thought=prompts.INITIAL_THOUGHT, action="TextSearch",
                                                      action_input={"query": state.question}))
        self.reasoning.append(ObservationReasoningStep(observation=ev.observation))
        await self.check_evidence()
        if reason := stop_reason(state):
            return self.stop(reason)
        return await self.react_step()

    @step
    async def read(self, ev: ReadRequest) -> StopEvent:
        reader = Reader(self.ask, self.reader_event, self.state.reader)
        given = self.evidence_for(self.state)
        given.lookup = lambda query, modality: from_hits(self.tools.search(query, modality).hits)
        self.result = await reader.read(self.state.question, self.state.info, given)
        return StopEvent(result=self.result)

    # the search side

    async def check_evidence(self) -> None:
        """The inputs of the stop rules: how much the reader would read, and the sufficiency self-check."""
        state, cfg = self.state, self.state.settings
        given = self.evidence_for(state)
        evidence, document_text = given.evidence, given.document_text
        state.evidence_tokens = sum(self.count_tokens(i.text) for i in from_hits(state.best_hits()))
        if cfg.sufficiency_check == "coverage":  # words the documents never use cannot be searched for
            terms = [t for t in state.info.terms if not missing_names([t], document_text)]
            gathered = " ".join(i.text for i in evidence.items)
            state.sufficient = not terms or len(missing_names(terms, gathered)) <= (1 - cfg.coverage) * len(terms)
        elif cfg.sufficiency_check == "llm":
            prompt = prompts.SUFFICIENCY.format(evidence=evidence.render(), question=state.question)
            state.sufficient = (await self.complete(prompt, "sufficiency", max_tokens=3)).strip().lower().startswith("yes")

    async def react_step(self) -> HopRequest | ReadRequest:
        """One ReAct step: the next tool and query, or the model's word that the evidence is enough."""
        messages = self.formatter.format(self.tools.tools(), self.history + [
            ChatMessage(role=MessageRole.USER, content=self.state.question)], self.reasoning)
        for attempt in range(2):
            reply = await self.chat(messages, "react")
            try:
                parsed = ReActOutputParser().parse(reply)
            except ValueError:
                self.state.parse_failures += 1
                messages = [*messages, ChatMessage(role=MessageRole.ASSISTANT, content=reply),
                            ChatMessage(role=MessageRole.USER,
                                        content=prompts.UNPARSEABLE_RETRY.format(tool_names=", ".join(TOOL_MODALITY)))]
                continue
            if parsed.thought:
                self.emit(Thought(run_id=self.state.run_id, hop=self.state.hops, text=parsed.thought))
            if isinstance(parsed, ResponseReasoningStep):
                self.state.sufficient = True
                return self.stop("sufficient", "the model judged the evidence enough")
            if isinstance(parsed, ActionReasoningStep) and parsed.action in TOOL_MODALITY:
                self.reasoning.append(parsed)
                query = str(parsed.action_input.get("query") or next(iter(parsed.action_input.values()), ""))
                return HopRequest(query=query or self.state.question, modality=TOOL_MODALITY[parsed.action],
                                  why=parsed.action)
            self.state.parse_failures += 1
        return self.stop("unparseable", reply[:300])

    def stop(self, reason: str, detail: str = "") -> ReadRequest:
        self.state.stop_reason = reason
        self.emit(Stop(run_id=self.state.run_id, hop=self.state.hops, reason=reason, detail=detail))
        return ReadRequest()

    # model calls, each timed and reported

    async def chat(self, messages: list[ChatMessage], purpose: str, **kwargs) -> str:
        t0, start = time.perf_counter(), time.time()
        response = await self.llm.achat(messages, **kwargs)
        text = response.message.content or ""
        self.emit(llm_call(self.state, purpose, t0, start, response.raw, text))
        return text

    async def complete(self, prompt: str, purpose: str, **kwargs) -> str:
        return await self.chat([ChatMessage(role=MessageRole.USER, content=prompt)], purpose, **kwargs)

    async def ask(self, purpose: str, messages: list[ChatMessage], model, max_tokens: int):
        t0, start = time.perf_counter(), time.time()
        reply = await ask_json(self.llm, messages, model, max_tokens)
        call = llm_call(self.state, purpose, t0, start, reply.raw, reply.text)
        self.emit(call.model_copy(update={"constraint": reply.constraint}))
        return reply

    def reader_event(self, kind: str, data: dict) -> None:
        self.emit(READER_EVENTS[kind](run_id=self.state.run_id, hop=self.state.hops, **data))

    def emit(self, event) -> None:
        if self._ctx is not None:
            self._ctx.write_event_to_stream(event)
