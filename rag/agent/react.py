"""The agent as a LlamaIndex workflow: search hop by hop (ReAct), then read page by page.

    start → search ⇄ decide → read ⇄ (next page | search again) → stop

`search` runs one hop through a tool. `decide` applies the paper's stop rules (rag/agent/stop.py);
when none fires, one ReAct step (Thought → Action → Action Input, LlamaIndex's formatter and parser)
chooses the next tool and query. When the search stops, `read` is the ReadPage step: the model reads
the best page (rag/reader) and code checks what it found there. A page without the answer leads to the
next page, or, after `pages_per_search` pages, back to the ReAct step, which may search again.
The same workflow serves every evaluation mode: `single-pass` reads after the first hop without the
ReAct step, and `text-only` / `oracle` only swap the first hop's search.
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
from rapidfuzz import fuzz

from rag import prompts
from rag.agent.events import Computation, EvidencePicked, PageRead, Refusal, Stop, Thought, Verification
from rag.agent.state import RunState, llm_call
from rag.agent.stop import stop_reason
from rag.agent.tools import READ_PAGE, TOOL_MODALITY, SearchTools
from rag.context import EvidenceItem, from_hits
from rag.models.structured import ask_json, token_counter
from rag.reader import PageReader, Solution
from rag.reader.answer import PICTURES_UNREAD, PageReading
from rag.reader.cascade import Reader, ReaderInput, ReaderResult
from rag.reader.cascade.question import missing_names
from rag.reader.pages import candidates
from rag.records import SearchResult

READER_EVENTS = {"pick": EvidencePicked, "compute": Computation, "verify": Verification, "refuse": Refusal}


class HopRequest(Event):
    query: str
    modality: str
    why: str


class Searched(Event):
    observation: str


class ReadRequest(Event):
    page: int | None = None  # a page the ReAct step asked to read


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
                 history: list[ChatMessage] | None = None, source=None) -> None:
        super().__init__(timeout=None)
        self.llm, self.state, self.mode = llm, state, mode
        self.evidence_for = evidence_for
        self.source = source  # rag.agent.run.PageSource: named pages, page texts, the outline's counts
        self.pages: PageReader | None = None
        self.since_search = 0
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
        if self.reads_pages and state.settings.sufficiency_check != "react":
            return ReadRequest()  # read what was found first; the ReAct step comes when those pages fail
        return await self.react_step()

    @property
    def reads_pages(self) -> bool:
        return self.state.reads_pages and self.source is not None

    @step
    async def read(self, ev: ReadRequest) -> ReadRequest | HopRequest | StopEvent:
        state, cfg = self.state, self.state.reader
        if not self.reads_pages:
            return await self.read_evidence()
        if self.pages is None:
            self.pages = PageReader(state.question_record, cfg, self.source.text, self.count_tokens, self.ask,
                                    self.page_read)
            if "outline" in cfg.skills and (counted := self.source.outline_count(state.question_record)):
                return self.finish(counted)
            if state.question_record.pictures:  # what a photo shows is not in the text: say so, guess nothing
                return self.finish(None, PICTURES_UNREAD)
        asked = self.source.pages_numbered(ev.page, state.best_hits()) if ev.page else []
        queue = candidates(asked + self.source.named(state.question_record), state.best_hits(), self.pages.read_keys)
        if not queue or len(self.pages.read_pages) >= cfg.max_pages:
            return self.finish(None)
        page = queue[0]
        focus = "\n".join(h.fragment.text for h in state.best_hits() if (h.fragment.doc_id, h.fragment.page) == page.key)
        got = await self.pages.read(page, focus)
        if got.solution:
            return self.finish(got.solution)
        self.since_search += 1
        if self.mode == "agent" and self.since_search >= cfg.pages_per_search and state.hops < state.settings.max_hops \
                and len(self.pages.read_pages) < cfg.max_pages:
            self.since_search = 0
            read = ", ".join(f"p. {p.page}" for p in self.pages.read_pages)
            self.reasoning.append(ObservationReasoningStep(observation=prompts.PAGES_WITHOUT_ANSWER.format(pages=read)))
            return await self.react_step()
        return ReadRequest()

    async def read_evidence(self) -> StopEvent:
        """The earlier reader: numbered evidence lines, a cascade of strategies (reader.engine=cascade)."""
        reader = Reader(self.ask, self.reader_event, self.state.reader)
        given = self.evidence_for(self.state)
        given.lookup = lambda query, modality: from_hits(self.tools.search(query, modality).hits)
        self.result = await reader.read(self.state.question, self.state.info, given)
        return StopEvent(result=self.result)

    def finish(self, solution: Solution | None, reason: str = "") -> StopEvent:
        """The run's answer from what the pages gave: a solution with its pages, or "not in the documents"."""
        if solution is None:
            answer, short = self.pages.nothing_found(reason)
            self.result = ReaderResult(answer=answer, short=short, answer_type=self.state.question_record.asked,
                                       refused=answer, skill="none")
        else:
            cited = [self.cite(p, solution.line or solution.sentence()) for p in solution.pages]
            self.result = ReaderResult(answer=solution.sentence(), short=solution.short(), answer_type=solution.asked,
                                       cited=cited, program=solution.program, value=solution.value or None,
                                       skill=solution.skill)
            if solution.program:
                self.reader_event("compute", {"program": solution.program, "result": solution.value, "error": None})
        return StopEvent(result=self.result)

    def cite(self, page, line: str) -> EvidenceItem:
        """A cited page, boxed at the fragment found on it that reads most like the answer's line."""
        found = [h.fragment for h in self.state.seen.values() if (h.fragment.doc_id, h.fragment.page) == page.key]
        best = max(found, key=lambda f: fuzz.partial_ratio(line.lower(), f.text.lower()), default=None)
        return EvidenceItem(id=f"p. {page.page}", text=line, kind="page", doc_id=page.doc_id, file=page.file,
                            page=page.page, score=page.score, fragment_id=best.id if best else None,
                            bbox=best.bbox if best else None)

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
                                        content=prompts.UNPARSEABLE_RETRY.format(tool_names=", ".join([*TOOL_MODALITY, READ_PAGE])))]
                continue
            if parsed.thought:
                self.emit(Thought(run_id=self.state.run_id, hop=self.state.hops, text=parsed.thought))
            if isinstance(parsed, ResponseReasoningStep):
                self.state.sufficient = True
                return self.stop("sufficient", "the model judged the evidence enough")
            if isinstance(parsed, ActionReasoningStep) and parsed.action == READ_PAGE:
                self.reasoning.append(parsed)
                page = str(parsed.action_input.get("page") or next(iter(parsed.action_input.values()), ""))
                return ReadRequest(page=int(page) if page.strip().isdigit() else None)
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

    def page_read(self, reading: PageReading) -> None:
        self.emit(PageRead(run_id=self.state.run_id, hop=self.state.hops, **reading.model_dump()))

    def emit(self, event) -> None:
        if self._ctx is not None:
            self._ctx.write_event_to_stream(event)
