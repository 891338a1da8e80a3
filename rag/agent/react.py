"""The agent as a LlamaIndex workflow: search hop by hop (ReAct), then read page by page.

    start → search ⇄ decide → consult → read ⇄ (next page | search again) → stop
    start → consult → plan → (part hop → part read) × 2–3 → compose → stop

`start` runs the question's route (rag/reader/route.py), decided once and shown as `Routed`: `consult` asks
the route's document skills, each once, before any page is read (after the first search, whose hits they may
use, or before the plan), and the first answer or refusal ends the run; else the plan or the pages.
`search` runs one hop through a tool. `decide` applies the paper's stop rules (rag/agent/stop.py); then the
pages found are read first, unless the model's own word on sufficiency is asked for (a ReAct step). `read`
is the ReadPage step: the reader reads the best lines of the best page (rag/reader) and code checks what it
found there. A page without the answer leads to the next page, or, after `pages_per_search` pages, back to
the ReAct step, which may search again, read a page by number, or say the evidence is enough.
A question of two or three facts ("how many more … than …", "the total of … and …", "which is higher, … or
…?") has a plan (rag/reader/plan.py): each part is its own hop, searched and read on its own page, and code
composes the values (rag/reader/compose.py); a one-fact question keeps the first path.
The run's `Strategy` (rag/agent/strategy.py) says what the first hop searches and whether plans and the
ReAct step follow; the evaluation's baselines are strategies too (rag/eval/modes.py). The search, the model
and the documents come in once, as typed tools.
"""

from __future__ import annotations

import time
from typing import Literal

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
from pydantic import Field
from rapidfuzz import fuzz

from rag import prompts
from rag.agent.calls import EventStream, ModelCalls
from rag.agent.documents import SearchedDocuments
from rag.agent.events import Answer, Computation, Draft, PageRead, Planned, Routed, Stop, Thought
from rag.agent.state import RunState, llm_call
from rag.agent.stop import stop_reason
from rag.agent.strategy import Search, Strategy
from rag.agent.tools import READ_PAGE, TOOL_MODALITY, SearchTools, missing_words
from rag.models.structured import ModelCall, Recorded
from rag.reader import PageReader, Reading, Solution, route
from rag.reader.compose import compose
from rag.reader.pages import PageRef, Similarity, candidates
from rag.reader.plan import Plan, part_question, planned
from rag.reader.skills import SKILLS
from rag.records import Citation, Hit


class HopRequest(Event):
    query: str
    modality: str
    why: str


class Searched(Event):
    observation: str


class ReadRequest(Event):
    page: int | None = None  # a page the ReAct step asked to read


class Consult(Event):
    """The route's document skills, before any page is read; then the plan or the pages."""

    skills: list[str]
    hits: list[Hit] = Field(default_factory=list)
    then: Literal["plan", "read"] = "read"
    page: int | None = None


class PartHop(Event):
    index: int  # the plan's part to search for


class PartRead(Event):
    index: int
    hits: list[Hit]  # what the part's own hop found


class CompactReActFormatter(ReActChatFormatter):
    """ReAct prompt with one-line tool descriptions instead of JSON schemas (a 1.5B model copies schemas)."""

    def format(self, tools, chat_history, current_reasoning=None) -> list[ChatMessage]:
        tool_desc = "\n".join(f"- {t.metadata.name}: {t.metadata.description}" for t in tools)
        header = self.system_header.format(tool_desc=tool_desc, tool_names=", ".join(t.metadata.name for t in tools))
        steps = [ChatMessage(role=MessageRole.USER if isinstance(s, ObservationReasoningStep) else MessageRole.ASSISTANT,
                             content=s.get_content()) for s in current_reasoning or []]
        return [ChatMessage(role=MessageRole.SYSTEM, content=header), *chat_history, *steps]


class DocAgent(Workflow):
    """One run over the searched documents, in the way its strategy says."""

    def __init__(self, llm, state: RunState, strategy: Strategy, search: Search, source: SearchedDocuments,
                 similarity: Similarity | None = None, history: list[ChatMessage] | None = None) -> None:
        super().__init__(timeout=None)
        self.state, self.strategy, self.source, self.similarity = state, strategy, source, similarity
        self.stream = EventStream()
        self.model = ModelCalls(llm, state, self.stream)
        self.pages: PageReader | None = None
        self.since_search = 0
        self.history = history or []
        self.tools = SearchTools(state, search, self.model, self.stream, source)
        self.formatter = CompactReActFormatter(system_header=prompts.REACT_HEADER)
        self.reasoning: list[BaseReasoningStep] = []
        self.result: Answer | None = None
        self.plan = Plan()
        self.parts_read: list[Solution | None] = []
        self.route = route(state.question, state.reader.skills, plans=strategy.react and state.reader.plans)
        # over several documents the search's hits choose the filing: a plan that does not come tries them again
        self.on_read = self.route.skills if self.route.then == "read" or len(source.docs) > 1 else []
        self.before = ""  # what a document skill found missing ("no row for …"), said if no page answers

    # steps

    @step
    async def start(self, ctx: Context, ev: StartEvent) -> HopRequest | Consult:
        self.stream.ctx = ctx
        r = self.route
        self.stream.emit(Routed(run_id=self.state.run_id, path=r.path, why=r.why, skills=r.skills, then=r.then))
        return Consult(skills=r.skills, then="plan") if r.plan else self.first_hop()

    @step
    async def consult(self, ev: Consult) -> PartHop | HopRequest | ReadRequest | StopEvent:
        """The route's document skills, each asked once in order (the first answer or refusal ends the run); then
        the plan, or the pages."""
        if answered := await self.document_skills(ev.skills, ev.hits):
            return answered
        if ev.then == "plan":
            return await self.planning()
        self.pages = self.reader(self.state.question, self.route.pages)
        return ReadRequest(page=ev.page)

    async def planning(self) -> PartHop | HopRequest:
        """The plan's parts, each its own hop; a plan that does not come leaves the question to the pages."""
        model = Recorded(self.model)
        self.plan = await planned(self.state.question, model, self.route.plan)
        self.called(model.calls)
        if not 2 <= len(self.plan.parts) <= self.state.settings.max_hops:
            return self.first_hop()
        plan = self.plan
        self.stream.emit(Planned(run_id=self.state.run_id, composition=plan.composition, by=plan.by,
                                 said=plan.said, parts=[p.question for p in plan.parts]))
        return PartHop(index=0)

    def first_hop(self) -> HopRequest:
        modality = self.strategy.first_hop
        why = "initial retrieval (modality router)" if modality == "auto" else modality
        return HopRequest(query=self.state.question.text, modality=modality, why=why)

    @step
    async def search(self, ev: HopRequest) -> Searched:
        return Searched(observation=await self.tools.hop(ev.query, ev.modality, ev.why))

    @step
    async def decide(self, ev: Searched) -> HopRequest | ReadRequest:
        state = self.state
        if not self.strategy.react:
            return self.stop("single_pass")
        if not self.reasoning:  # the router's search, in ReAct form, so the model sees what it found
            self.reasoning.append(ActionReasoningStep(thought=prompts.INITIAL_THOUGHT, action="TextSearch",
                                                      action_input={"query": state.question.text}))
        self.reasoning.append(ObservationReasoningStep(observation=ev.observation))
        await self.check_evidence()
        if reason := stop_reason(state):
            return self.stop(reason)
        if state.settings.sufficiency_check != "react":
            return ReadRequest()  # read what was found first; the ReAct step comes when those pages fail
        return await self.react_step()

    @step
    async def read(self, ev: ReadRequest) -> ReadRequest | HopRequest | Consult | StopEvent:
        state, cfg, question = self.state, self.state.reader, self.state.question
        if self.pages is None:  # the route's document skills come before the first page
            return Consult(skills=self.on_read, hits=state.best_hits(), page=ev.page)
        asked = self.source.pages_numbered(ev.page, state.best_hits()) if ev.page else []
        page, why = self.next_page(self.pages, asked + self.source.named(question), state.best_hits())
        if page is None:
            return self.finish(None, why)
        got = await self.read_next(self.pages, page)
        if got.solution:
            return self.finish(got.solution)
        self.since_search += 1
        if self.strategy.react and self.since_search >= cfg.pages_per_search and state.hops < state.settings.max_hops \
                and len(self.pages.read_pages) < cfg.max_pages and time.time() - state.started < cfg.budget_s:
            self.since_search = 0
            read = ", ".join(f"p. {p.page}" for p in self.pages.read_pages)
            self.reasoning.append(ObservationReasoningStep(observation=prompts.PAGES_WITHOUT_ANSWER.format(pages=read)))
            return await self.react_step()
        return ReadRequest()

    async def document_skills(self, names: list[str], hits) -> StopEvent | None:
        """The run's answer from what the store knows of the documents (their outline, statements, names), before
        any page is read; what one found missing is said if no page holds an answer."""
        state = self.state
        for skill in (SKILLS[name] for name in names):
            model = Recorded(self.model)
            try:
                got = await skill.answer(state.question, self.source, hits, model)
            finally:
                self.called(model.calls)
            if got is None:
                continue
            if got.solution or got.final:
                self.pages = self.pages or self.reader(state.question, self.route.pages)
                return self.finish(got.solution, got.reason, refused_by=skill.name)
            self.stream.emit(Computation(run_id=state.run_id, hop=state.hops, program=got.said, error=got.reason))
            self.before = got.reason
        return None

    def next_page(self, pages: PageReader, named: list[PageRef], hits: list[Hit]) -> tuple[PageRef | None, str]:
        """The best page not yet read (the pages named first, then the hits'), or none and why: the question's
        pages all read, or the next one not read within its time."""
        queue = candidates(named, hits, pages.read_keys)
        if not queue or len(pages.read_pages) >= self.state.reader.max_pages:
            return None, ""
        if not pages.fits(queue[0], time.time() - self.state.started):
            return None, pages.out_of_time()
        return queue[0], ""

    async def read_next(self, pages: PageReader, page: PageRef) -> Reading:
        """One page read, announced first ("Reading p. N …") and its events reported."""
        self.stream.emit(Draft(run_id=self.state.run_id, hop=self.state.hops, page=page.page, text=""))
        return self.reported(await pages.read(page, time.time() - self.state.started))

    def reader(self, question, skills: list[str] | None = None) -> PageReader:
        """A page reader for the question (the route's page skills), or for a plan's part (its own)."""
        pages = PageReader(question, self.state.reader, self.source, self.similarity, self.model.count_tokens,
                           self.model, skills)
        pages.before = self.before
        return pages

    # a plan's parts: each its own hop and its own page read; code composes their values

    @step
    async def search_part(self, ev: PartHop) -> PartRead:
        part, n = self.plan.parts[ev.index], len(self.plan.parts)
        before = len(self.state.hop_hits)
        await self.tools.hop(part.question, "auto", f"part {ev.index + 1} of {n}: {self.plan.composition}")
        hits = list({h.fragment.id: h for found in self.state.hop_hits[before:] for h in found}.values())
        return PartRead(index=ev.index, hits=hits)

    @step
    async def read_part(self, ev: PartRead) -> PartHop | StopEvent:
        """The part's own pages, best first, until one gives its value (as many pages as a question reads)."""
        state, question = self.state, part_question(self.plan.parts[ev.index])
        pages = self.reader(question)
        named = self.source.named(state.question) + self.source.named(question)
        earlier = [p for s in self.parts_read if s for p in s.pages]
        found = pages.look_up(earlier + candidates(named, ev.hits, set()))
        solution = self.reported(found).solution if found else None
        while solution is None and (page := self.next_page(pages, named, ev.hits)[0]):
            solution = (await self.read_next(pages, page)).solution
        self.parts_read.append(solution)
        if ev.index + 1 < len(self.plan.parts):
            return PartHop(index=ev.index + 1)
        state.stop_reason = "planned"
        return self.finish(compose(state.question, self.plan, self.parts_read))

    def finish(self, solution: Solution | None, reason: str = "", refused_by: str = "none") -> StopEvent:
        """The run's answer from what the pages gave: a solution with its pages, or "not in the documents" (said
        by `refused_by`, a skill that knows the documents cannot answer, or by the pages read: "none")."""
        if solution is None:
            answer, short = self.pages.nothing_found(reason)
            self.result = Answer(answer=answer, short_answer=short, answer_type=self.state.question.asked,
                                 skill=refused_by)
        else:
            if solution.program:
                self.stream.emit(Computation(run_id=self.state.run_id, hop=self.state.hops,
                                             program=solution.program, result=solution.value, inputs=solution.inputs))
            self.result = Answer(answer=solution.sentence(), short_answer=solution.short(), answer_type=solution.asked,
                                 citations=[self.cite(p, solution.line or solution.sentence()) for p in solution.pages],
                                 program=solution.program, skill=solution.skill)
        return StopEvent(result=self.result)

    def cite(self, page: PageRef, line: str) -> Citation:
        """A cited page, boxed at the fragment found on it that reads most like the answer's line."""
        found = [h.fragment for h in self.state.seen.values() if (h.fragment.doc_id, h.fragment.page) == page.key]
        best = max(found, key=lambda f: fuzz.partial_ratio(line.lower(), f.text.lower()), default=None)
        return Citation(file=page.file, doc_id=page.doc_id, page=page.page, fragment_id=best.id if best else None,
                        bbox=best.bbox if best else None, evidence=f"p. {page.page}", text=line)

    # the search side

    async def check_evidence(self) -> None:
        """The inputs of the stop rules: how much text the hops found, and the sufficiency self-check."""
        state, cfg = self.state, self.state.settings
        state.evidence_tokens = sum(self.model.count_tokens(h.fragment.text) for h in state.best_hits())
        if cfg.sufficiency_check == "coverage":
            state.sufficient = len(missing_words(state)) <= (1 - cfg.coverage) * len(state.question.terms)
        elif cfg.sufficiency_check == "llm":
            evidence = "\n".join(f"- {h.fragment.text}" for h in state.best_hits()[:10])
            prompt = prompts.SUFFICIENCY.format(evidence=evidence, question=state.question.text)
            state.sufficient = (await self.model.complete(prompt, "sufficiency", max_tokens=3)).strip().lower().startswith("yes")

    async def react_step(self) -> HopRequest | ReadRequest:
        """One ReAct step: the next tool and query, or the model's word that the evidence is enough."""
        messages = self.formatter.format(self.tools.tools(), self.history + [
            ChatMessage(role=MessageRole.USER, content=self.state.question.text)], self.reasoning)
        for _ in range(2):
            reply = await self.model.chat(messages, "react")
            try:
                parsed = ReActOutputParser().parse(reply)
            except ValueError:
                self.state.parse_failures += 1
                messages = [*messages, ChatMessage(role=MessageRole.ASSISTANT, content=reply),
                            ChatMessage(role=MessageRole.USER,
                                        content=prompts.UNPARSEABLE_RETRY.format(tool_names=", ".join([*TOOL_MODALITY, READ_PAGE])))]
                continue
            if parsed.thought:
                self.stream.emit(Thought(run_id=self.state.run_id, hop=self.state.hops, text=parsed.thought))
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
                return HopRequest(query=query or self.state.question.text, modality=TOOL_MODALITY[parsed.action],
                                  why=parsed.action)
            self.state.parse_failures += 1
        return self.stop("unparseable", reply[:300])

    def stop(self, reason: str, detail: str = "") -> ReadRequest:
        self.state.stop_reason = reason
        self.stream.emit(Stop(run_id=self.state.run_id, hop=self.state.hops, reason=reason, detail=detail))
        return ReadRequest()

    def called(self, calls: list[ModelCall]) -> None:
        """The model calls the reader, a skill or the plan made, as the run's events."""
        for call in calls:
            self.stream.emit(llm_call(self.state, call))

    def reported(self, got: Reading) -> Reading:
        """A page read the reader gave back, as the run's events: its model calls, then the page read."""
        self.called(got.calls)
        self.stream.emit(PageRead(run_id=self.state.run_id, hop=self.state.hops, **got.record.model_dump()))
        return got
