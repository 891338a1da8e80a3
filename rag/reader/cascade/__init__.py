"""The reader: evidence → a verified answer. Search decides what the model may read; this decides what
it says, one small job per call.

1. Refusal by the documents: what the question names (a year, an acronym, "Figure 7") must occur in them.
2. Pick: the model chooses the evidence ids that answer the question (ids constrained to existing ones).
3. Read: from those lines alone, a typed short answer (number, text, list, yes/no) citing its line,
   or, when the question asks for arithmetic, a tiny program run by `compute.run_program`.
4. Verify in code: the value occurs in the evidence it cites (numbers normalised: "$9,912" = 9912), or
   is computed from values that do. A failure is retried once, then the next evidence is tried, then
   the answer is "not in the documents". Code, not the model, decides refusals.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from functools import partial
from numbers import Real
from typing import Any, Literal, NamedTuple

from llama_index.core.llms import ChatMessage, MessageRole
from pydantic import BaseModel, Field, create_model

from rag import prompts
from rag.context import Evidence, EvidenceItem
from rag.ingest.figures import CHART_MARK
from rag.reader.cascade.extremes import (
    Comparison,
    asks_amount,
    clear_column,
    comparison,
    direction,
    gap,
    gap_program,
    holder_program,
    named_columns,
    names_all,
    numeric_table,
    share_given,
)
from rag.reader.cascade.extremes import program as comparison_program
from rag.reader.cascade.formulas import Plan, asked_line, line_rank, named_ratio, ratio_plan
from rag.records import Cell
from rag.text import STOPWORDS
from rag.reader.cascade.question import QuestionInfo, missing_names, missing_options
from rag.reader.cascade.samples import Counted, Sample, counted_people, names_group, sample_for
from rag.reader.program import ComputeError, run_program
from rag.settings import ReaderSettings

NOT_ANSWERABLE = "Not answerable"
_NUMBER = re.compile(r"\(?-?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?\)?|-?\.\d+%?")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:\s*(?:[-–]|to|through)\s*(?:{_MONTH}\s+)?\d{{1,2}})?,?\s+(?:19|20)\d\d\b"
                   rf"|\b{_MONTH}\s+(?:19|20)\d\d\b", re.I)  # "April 25-May 1, 2018" too: its days are no values
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_FRACTION = re.compile(r"\$?\d[\d,]*\.\d*[1-9]\d*")  # 5.2: a section, a version or a share, never a count
_REFERENCE = re.compile(r"\b(table|figure|fig\.|section|appendix|chapter|page|p\.|step|eq\.)\s*\[…\]$", re.I)
_CHART_CELL = re.compile(r"(?:,\s)?(?P<label>[^:]+?):\s(?P<value>-?\$?\d[\d,]*(?:\.\d+)?%?)(?=,\s|$)")
_NEGATIONS = {"no", "not", "non", "never", "without", "none"}
_CONTRARY = 0.25  # how much of its score a label keeps when it says the opposite of what is asked
_LABEL_WORDS = re.compile(r"[a-z]{3,}|\d+(?:[-–]\d+|\+)?")  # "65-69" and "65+" are two groups, not "65"
_COUNTED = re.compile(r"\bhow many ((?:[a-z][\w'-]*\s+){0,3}?[a-z][\w'-]*)\s+(?:are|is|were|was|do|does|did|have|"
                      r"has|had|in|of|on|at|for|from|that|who|which|can|will|would|there)\b", re.I)
_STANDALONE = re.compile(r"(?<![A-Za-z&$])" + r"\(?-?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?\)?" + r"(?![A-Za-z\d])")
_OWNER = re.compile(r"\b(?:[A-Z][\w&.-]*\s)*[A-Z][\w&.-]*['’]s\b")
_FISCAL = re.compile(r"\bFY\s?'?((?:19|20)?\d\d)\b", re.I)
_DECIMALS = re.compile(r"\b(\d+|one|two|three|four)\s+decimal", re.I)
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
_CONSTANTS = {0, 1, 2, 3, 4, 5, 10, 12, 100, 365, 1000}  # averages, percentages, units, days: not evidence
NUMBER_PATTERN = r"^-?\(?[$]?[0-9][0-9,]*([.][0-9]+)?%?\)?$"

Call = Callable[[str, list[ChatMessage], type[BaseModel], int], Any]
Lookup = Callable[[str, str], list[EvidenceItem]]  # (query, modality)


class ReaderResult(BaseModel):
    """The reader's outcome: the answer shown, the short answer scored, and how it was reached."""

    answer: str
    short: str
    answer_type: str
    picked: list[str] = Field(default_factory=list)
    cited: list[EvidenceItem] = Field(default_factory=list)
    program: str | None = None
    value: str | None = None
    refused: str | None = None  # why the documents were judged not to answer
    skill: str = "cascade"  # which mechanism answered


class ReaderInput(BaseModel):
    """Everything the reader reads for one question."""

    evidence: Evidence
    numbers: Evidence | None = None  # more of the same evidence (its first items, ids alike): numbers' options
    document_text: str = ""  # the searched documents' pages, split by \f: what a question names must occur in it
    tables: dict[str, Any] = Field(default_factory=dict)  # fragment id of a table row → its table's DataFrame
    counting: str | None = None  # a program counting outline entries, for "how many appendices/figures…"
    pages: list[tuple[str, int]] = Field(default_factory=list)  # (doc id, page) the question names
    lookup: Lookup | None = None  # a search for one quantity of a computation
    samples: list[Sample] = Field(default_factory=list)  # survey sample sizes, for "how many adults …"


class Attempt(BaseModel):
    ok: bool
    value: str = ""
    cited: list[str] = Field(default_factory=list)
    program: str | None = None
    reason: str = ""


class Reader:
    """Reads one question's evidence. `call(purpose, messages, model, max_tokens)` is one constrained LLM
    call (timed and traced by the caller); `emit` reports each step as an event."""

    def __init__(self, call: Call, emit: Callable[[str, dict], None], settings: ReaderSettings | None = None) -> None:
        self.call = call
        self.emit = emit
        self.settings = settings or ReaderSettings()
        self.rarity: dict[str, float] = {}
        self.document = ""

    async def read(self, question: str, info: QuestionInfo, given: ReaderInput) -> ReaderResult:
        cfg, evidence = self.settings, given.evidence
        if not cfg.typed:
            info = info.model_copy(update={"answer_type": "text", "options": []})
        ratio = (named_ratio(question) or ("",))[0] if cfg.ratios else ""  # "after-tax": the ratio's word
        absent = missing_names([n for n in info.names if n.lower() not in ratio], given.document_text) \
            if cfg.refuse_unnamed else []
        if absent:
            return self.refuse(info, f"the documents never mention {', '.join(absent[:3])}")
        if cfg.refuse_unnamed and info.options and len(missing_options(info.options, given.document_text)) == len(info.options):
            return self.refuse(info, f"the documents mention none of {', '.join(info.options)}")
        if not evidence.items:
            return self.refuse(info, "no evidence was found")
        best = max(i.score for i in evidence.items)
        if best < cfg.min_score:
            return self.refuse(info, f"no evidence is close to the question (best similarity {best:.2f})")
        if given.counting and (counted := self.count(given.counting, evidence)):
            return counted
        if cfg.compare and info.answer_type == "text" and (share := share_given(question)) is not None and \
                (held := self.holder(question, info, evidence, given.tables, share)):
            return held
        if cfg.compare and info.answer_type in ("text", "choice", "list") and direction(question):
            if compared := await self.compare(question, info, evidence, given.tables):
                return compared
            if info.answer_type != "list":  # a model's pick of the highest cannot be checked against values
                return self.refuse(info, "no table of the evidence compares what the question asks about")
        if cfg.compare and info.answer_type == "number" and (between := await self.difference(question, info, evidence,
                                                                                             given.tables)):
            return between
        if info.answer_type == "number":  # only number options are ranked by it
            self.rarity, self.document = word_rarity(given.document_text), given.document_text
            if given.samples and (people := await self.people(question, info, given)):
                return people
        avoid: list[str] = []
        numbers = given.numbers or evidence  # only options are shown: they may come from further down
        for attempt in range(1, (2 if cfg.verify else 1) + 1):
            read_from = numbers
            if info.answer_type == "number" and not (info.compute and cfg.compute) and cfg.max_options:
                picked, result = await self.choose_number(question, info, numbers, avoid, attempt)
            elif info.answer_type == "number" and info.compute and cfg.compute and cfg.operand_choice \
                    and cfg.max_options and attempt == 1:
                picked, result = await self.compute_by_choice(question, numbers, given.lookup)
            else:
                read_from = evidence
                picked = await self.pick(question, info, evidence, avoid, attempt)
                result = await self.answer(question, info, evidence, picked, given.tables) if picked else None
            if not picked:
                break
            cited = read_from.get(result.cited) or picked
            if result.ok and given.pages and not {(c.doc_id, c.page) for c in cited} & set(given.pages):
                result = result.model_copy(update={"ok": False, "reason": "it is not on the page the question names"})
            self.emit("verify", {"ok": result.ok, "value": result.value, "ids": result.cited or [p.id for p in picked],
                                 "reason": result.reason, "attempt": attempt})
            if result.ok or not cfg.verify:
                return self.accept(info, read_from, picked, result)
            avoid += [p.id for p in picked]
        return self.refuse(info, "no evidence line held a verifiable answer")

    async def pick(self, question: str, info: QuestionInfo, evidence: Evidence, avoid: list[str],
                   attempt: int) -> list[EvidenceItem]:
        """The evidence lines to answer from, one id per call: the best line, then (for lists, counts and
        computations) further lines until the model says none. Each call repeats the same prompt and adds
        a line, so a local model re-reads only that line (llama.cpp reuses the prompt's cache)."""
        ids = [i for i in evidence.ids if i not in avoid]
        most = min(len(ids), self.settings.max_picks if info.answer_type == "list" or info.compute else 1)
        hint = prompts.PICK_AVOID.format(ids=", ".join(avoid)) if avoid else ""
        prompt = prompts.PICK.format(evidence=evidence.render(), question=question, avoid=hint)
        chosen: list[str] = []
        while ids and len(chosen) < most:
            more = prompts.PICK_MORE.format(ids=", ".join(chosen)) if chosen else ""
            choices = [i for i in ids if i not in chosen] + (["none"] if chosen else [])
            model = create_model("Pick", id=(Literal[tuple(choices)], ...))
            reply = await self.call("pick evidence", messages(prompt + more), model, 12)
            if reply.value is None or reply.value.id == "none":
                break
            chosen.append(reply.value.id)
        picked = evidence.get(chosen)
        self.emit("pick", {"ids": [p.id for p in picked], "attempt": attempt, "evidence": [shown(p) for p in picked]})
        return picked

    async def answer(self, question: str, info: QuestionInfo, evidence: Evidence, picked: list[EvidenceItem],
                     tables: dict[str, Any]) -> Attempt:
        retry = ""
        for _ in range(2 if self.settings.verify else 1):  # one retry, told what was wrong
            if info.compute and info.answer_type == "number" and self.settings.compute:
                attempt = await self.compute(question, evidence, picked, tables, retry)
                retry = prompts.RETRY_PROGRAM.format(error=attempt.reason)
            else:
                attempt = await self.extract(question, info, evidence, picked, retry)
                retry = prompts.RETRY_NOT_FOUND.format(answer=attempt.value)
            if attempt.ok:
                return attempt
        return attempt

    async def choose_number(self, question: str, info: QuestionInfo, evidence: Evidence, avoid: list[str],
                            attempt: int) -> tuple[list[EvidenceItem], Attempt]:
        """A number question as a multiple choice: every number of the evidence with what labels it (a row
        and column, or the words around it), best evidence first. The model's pick is a number and, with
        it, the evidence line it stands in; the value is the evidence's own, so it needs no retry. The
        amount of a statement line is chosen among the rows of that name (the consolidated value, which
        the statements and the summaries repeat, over a segment's)."""
        items = [i for i in evidence.items if i.id not in avoid]
        lines = () if info.count else asked_line(question) or ()
        chosen = await self.choose(items, question, info.count, prompts.CHOOSE_NUMBER.format, lines=lines,
                                   question=question)
        picked = [chosen.item] if chosen else []
        self.emit("pick", {"ids": [p.id for p in picked], "attempt": attempt, "evidence": [shown(p) for p in picked],
                           "by": chosen.by if chosen else "model"})
        if chosen is None:
            return [], Attempt(ok=False, reason="no number in the evidence")
        return picked, Attempt(ok=True, value=chosen.value, cited=[chosen.item.id], reason=chosen.context)

    async def choose(self, items: list[EvidenceItem], about: str, count: bool, prompt: Callable[..., str],
                     exclude: frozenset = frozenset(), lines: tuple[str, ...] = (),
                     keep: Callable[[Candidate], bool] | None = None, **fields: str) -> Candidate | None:
        """One number of the evidence among the options whose labels best match `about` (not the year it
        asks about, nor a value labelled only by another year): taken by code when one clearly fits, else
        chosen by the model. A statement line's amount (one of its `lines`' names) is labelled by its year
        and is no percentage; the rows of that very name, when there are any, are the only options. So
        are a count's total rows, and the count most of them hold is taken (a store count recurs; the
        stores opened in a year do not)."""
        named = asked_years(about)
        options = [o for o in number_candidates(items, count) if o.value not in named and o[:2] not in exclude
                   and not (lines and "%" in o.value + o.context) and (keep is None or keep(o))]
        if any(named & set(_YEAR.findall(o.context)) for o in options):
            options = [o for o in options if named & set(_YEAR.findall(o.context))
                       or not (lines or _YEAR.search(o.context))]
        if count and (counted := counted_totals(options, about)):
            held = most_held(counted)
            if len({to_number(o.value) for o in held}) == 1 and self.settings.decide_margin:
                return held[0]._replace(by="code")
            options = counted
        if lines and (rows := statement_rows(options, lines, self.document)):
            if len({to_number(o.value) for o in rows}) == 1 and self.settings.decide_margin:
                return rows[0]._replace(by="code")
            options = rows
        options = rank_candidates(options, about, self.rarity)[: self.settings.max_options]
        if not options:
            return None
        margin = self.settings.decide_margin
        if margin and not count and (clear := clear_choice(options, about, self.rarity, margin)):
            return clear  # not a count: what is counted is seldom the label of the number that counts it
        listed = "\n".join(f"{n}. {o.context}: {o.value}" for n, o in enumerate(options, 1))  # as a table reads
        model = create_model("Choice", option=(Literal[tuple(str(n) for n in range(1, len(options) + 1))], ...))
        reply = await self.call("pick evidence", messages(prompt(options=listed, **fields)), model, 16)
        return options[int(reply.value.option) - 1] if reply.value else None

    async def compare(self, question: str, info: QuestionInfo, evidence: Evidence,
                      tables: dict[str, Any]) -> ReaderResult | None:
        """"Which row has the highest …": code compares the rows of the first table of the evidence that
        has them (rag/reader/cascade/extremes.py); the model only chooses the column when the headers cannot tell."""
        years = asked_years(question)
        for item, frame in evidence_tables(evidence, tables, info.names):
            found = comparison(frame, question, years, info.options)
            if found is None or (compared := await self.compared_columns(question, info, found, item, years)) is None:
                continue
            chosen, by = compared
            what = "option" if info.options else "row label"
            amount = info.answer_type != "list" and asks_amount(question)
            code = f"# df: the numbers of the table of {item.id} (p. {item.page}), one row per {what}\n" \
                   + comparison_program(found, chosen, amount)
            asked = info.model_copy(update={"answer_type": "list"}) if amount else info
            if answered := self.by_program(asked, item, code, found.frame, by):
                return answered
        return None

    async def difference(self, question: str, info: QuestionInfo, evidence: Evidence,
                         tables: dict[str, Any]) -> ReaderResult | None:
        """"The gap between the youngest and the oldest age group who …": code subtracts the two rows'
        values in the first table of the evidence that has both; the column is the one header that fits,
        else the model's choice."""
        years = asked_years(question)
        for item, frame in evidence_tables(evidence, tables, info.names):
            if (found := gap(frame, question, years)) is None:
                continue
            if (chosen := await self.one_column(question, item, list(map(str, found.frame.columns)), years)) is None:
                continue
            column, by = chosen
            code = f"# df: the numbers of the table of {item.id} (p. {item.page})\n{gap_program(found, column)}"
            if answered := self.by_program(info, item, code, found.frame, by):
                return answered
        return None

    def holder(self, question: str, info: QuestionInfo, evidence: Evidence, tables: dict[str, Any],
               share: float) -> ReaderResult | None:
        """"How do 5% of Latinos see …": what the cells holding that share stand for, in the first table of
        the evidence where they agree (rag/reader/cascade/extremes.py)."""
        for item, frame in evidence_tables(evidence, tables, info.names):
            numbers = numeric_table(frame, set())
            code = holder_program(numbers, share, question) if numbers is not None else None
            if code and (answered := self.by_program(info, item, f"# df: the numbers of the table of {item.id} "
                                                                  f"(p. {item.page})\n{code}", numbers, "code")):
                return answered
        return None

    def by_program(self, info: QuestionInfo, item: EvidenceItem, code: str, frame: Any, by: str) -> ReaderResult | None:
        """An answer code computed over a table: run, reported like a computation, cited to the table's line."""
        try:
            result = run_program(code, {"df": frame})
        except ComputeError:
            return None
        if isinstance(result, list) and info.answer_type != "list":
            if len(result) != 1:
                return None
            result = result[0]
        label = json.dumps(list(map(plain, result)), ensure_ascii=False) if isinstance(result, list) else plain(result)
        self.emit("pick", {"ids": [item.id], "attempt": 1, "evidence": [shown(item)], "by": by})
        self.emit("compute", {"program": code, "result": label, "error": None})
        self.emit("verify", {"ok": True, "value": label, "ids": [item.id], "reason": "computed by code", "attempt": 1})
        return ReaderResult(answer=f"{label} [p. {item.page}]", short=label, answer_type=info.answer_type,
                            picked=[item.id], cited=[item], program=code, value=label)

    async def compared_columns(self, question: str, info: QuestionInfo, found: Comparison, item: EvidenceItem,
                               years: set[str]) -> tuple[list[str], str] | None:
        """The columns compared and who chose them: for a list, each column the question spells out; the
        change between two years; the one header that fits; else the model's choice."""
        columns = list(map(str, found.frame.columns))
        if info.answer_type == "list":
            chosen = named_columns(columns, question)
            return (chosen, "code") if len(chosen) >= 2 and not found.change else None
        if found.change:
            return [], "code"
        chosen = await self.one_column(question, item, columns, years)
        return ([chosen[0]], chosen[1]) if chosen else None

    async def one_column(self, question: str, item: EvidenceItem, columns: list[str],
                         years: set[str]) -> tuple[str, str] | None:
        """The column a question asks about and who chose it: the one header that fits, else the model."""
        if column := clear_column(columns, question, years):
            return column, "code"
        column = await self.column(question, item, columns)
        return (column, "model") if column else None

    async def column(self, question: str, item: EvidenceItem, columns: list[str]) -> str | None:
        """The column a comparison is about, chosen by the model among the table's numeric columns."""
        listed = "\n".join(f"{n}. {c}" for n, c in enumerate(columns, 1))
        model = create_model("Column", column=(Literal[tuple(str(n) for n in range(1, len(columns) + 1))], ...))
        prompt = prompts.CHOOSE_COLUMN.format(table=item.text[:200], columns=listed, question=question)
        reply = await self.call("pick evidence", messages(prompt), model, 16)
        return columns[int(reply.value.column) - 1] if reply.value else None

    async def compute_by_choice(self, question: str, evidence: Evidence, lookup: Lookup | None
                                ) -> tuple[list[EvidenceItem], Attempt]:
        """Program of thought in small jobs: a ratio with a textbook definition is planned by it, anything
        else by the model from the question alone (named quantities, one expression); each quantity is
        chosen like a lookup (`operands`); code builds the program from the chosen values and runs it."""
        plan = ratio_plan(question, asked_years(question)) if self.settings.ratios else None
        if plan is None:
            quantity = create_model("Quantity", name=(str, Field(pattern=r"^[a-z][a-z0-9_]{0,24}$")),
                                    label=(str, Field(min_length=2, max_length=60)))
            model = create_model("Plan", quantities=(list[quantity], Field(min_length=1, max_length=4)),
                                 expression=(str, Field(min_length=1, max_length=120)))
            reply = await self.call("plan computation", messages(prompts.PLAN.format(question=question)), model, 160)
            if reply.value is None:
                return [], Attempt(ok=False, reason=f"unparseable plan: {reply.error}")
            plan = reply.value
        used = set(re.findall(r"[a-z_][a-z0-9_]*", plan.expression))
        quantities = [q for n, q in enumerate(plan.quantities)  # each named once, and only those the expression uses
                      if q.name in used and q.name not in {p.name for p in plan.quantities[:n]}]
        defined = isinstance(plan, Plan)  # its quantities are statement lines
        chosen = await self.operands(question, [(q.label, q.lines if defined else ()) for q in quantities],
                                     evidence, lookup)
        if chosen is None:
            return [], Attempt(ok=False, reason="a quantity has no number in the evidence")
        program = "\n".join([*([f"# {plan.definition}, as textbooks define it"] if defined else []),
                             *(f"{q.name} = {number_literal(c.value)}  # {c.item.id}: {c.context}"
                               for q, c in zip(quantities, chosen)), f"ans = {plan.expression}"])
        picked = evidence.get(list(dict.fromkeys(c.item.id for c in chosen)))
        self.emit("pick", {"ids": [p.id for p in picked], "attempt": 1, "evidence": [shown(p) for p in picked],
                           "by": "code" if all(c.by == "code" for c in chosen) else "model"})
        return picked, self.run(program, plan.expression, question, picked, {})

    async def people(self, question: str, info: QuestionInfo, given: ReaderInput) -> ReaderResult | None:
        """"How many adults rated … as poor" in a survey report: the share who did (each alternative of
        an "or" chosen apart, then added) of the sample the survey asked, that group's when it names one."""
        counted = counted_people(question)
        if not counted or sample_for(counted.group, given.samples) is None or \
                (chosen := await self.shares(question, counted, given)) is None:
            return None
        survey = [s for s in given.samples if s.item.doc_id == chosen[0].item.doc_id]  # the share's own
        if (sample := sample_for(counted.group, survey)) is None:
            return None
        evidence = given.numbers or given.evidence
        cited = evidence.get(list(dict.fromkeys(c.item.id for c in chosen)))
        sampled = (evidence.add([sample.item]) or [sample.item])[0]
        names = ["share"] if len(chosen) == 1 else [f"share{n}" for n in range(1, len(chosen) + 1)]
        expression = f"round(({' + '.join(names)}) / 100 * sample)"
        program = "\n".join([*(f"{name} = {number_literal(c.value)}  # {c.item.id}: {c.context}"
                                for name, c in zip(names, chosen)),
                              f"sample = {sample.n}  # p. {sample.item.page}: {sample.item.text}",
                              f"ans = {expression}"])
        self.emit("pick", {"ids": [c.id for c in cited], "attempt": 1, "evidence": [shown(c) for c in cited],
                           "by": "code" if all(c.by == "code" for c in chosen) else "model"})
        attempt = self.run(program, expression, question, cited, {})
        if not attempt.ok:
            return None
        return self.accept(info, evidence, cited, attempt.model_copy(update={"cited": [*attempt.cited, sampled.id]}))

    async def shares(self, question: str, counted: Counted, given: ReaderInput) -> list[Candidate] | None:
        """A percentage for each share the question adds up, searched for among charts and tables and
        chosen like an operand: the group's own ("65+ · …") when the question names one, everyone's (a
        chart's "Total" or "All …" row) when not. The alternatives of one question are shares of one
        chart, of the first one's category when it has one ("65+ · Every day" after "65+ · 3-5 times
        per week"). A date in the question says when the survey was, not whose share it is."""
        evidence, chosen = given.numbers or given.evidence, []
        context = " ".join(sorted(asked_years(_DATE.sub(" ", question))) + ([] if counted.group else ["total", "all"]))
        for label in counted.shares:
            label = " ".join(_DATE.sub(" ", label).split())
            about = f"{label} {context}".strip()
            if given.lookup is not None and self.settings.lookup_k:
                evidence.add(given.lookup(about, "table")[: self.settings.lookup_k])
            keep = partial(beside, chosen[0]) if chosen else partial(of_group, counted.group)
            if not any(map(keep, number_candidates(evidence.items))):
                keep = is_share
            found = await self.choose(evidence.items, about, False, prompts.CHOOSE_OPERAND.format,
                                      frozenset(c[:2] for c in chosen), (), keep, question=question, label=label)
            if found is None:
                return None
            chosen.append(found)
        return chosen

    async def operands(self, question: str, labels: list[tuple[str, tuple[str, ...]]], evidence: Evidence,
                       lookup: Lookup | None) -> list[Candidate] | None:
        """The number of each (label, statement line names): searched for (its row may be on another page
        than the question's best evidence; a statement line among table rows) and chosen among the
        evidence's numbers like a lookup, never one already chosen. None when one has no number."""
        chosen: list[Candidate] = []
        for label, lines in labels:
            about = label if asked_years(label) else f"{label} {' '.join(sorted(asked_years(question)))}".strip()
            if lookup is not None and self.settings.lookup_k:
                rows = lookup(about, "table" if lines else "auto")
                evidence.add(rows[: self.settings.lookup_k * (2 if lines else 1)])
            found = await self.choose(evidence.items, about, False, prompts.CHOOSE_OPERAND.format,
                                      frozenset(c[:2] for c in chosen), lines, question=question, label=label)
            if found is None:
                return None
            chosen.append(found)
        return chosen

    async def extract(self, question: str, info: QuestionInfo, evidence: Evidence, picked: list[EvidenceItem],
                      retry: str) -> Attempt:
        if info.answer_type == "number" and not retry and self.settings.table_cells:
            for item in picked:
                if item.kind == "table" and (cell := cell_answer(question, item.cells)):
                    return Attempt(ok=True, value=cell, cited=[item.id], reason="the row's cell in the column asked for")
        ids = Literal[tuple(p.id for p in picked)]
        written = list(dict.fromkeys(n for p in picked for n in numbers_written(p.text)
                                     if not (info.count and _YEAR.fullmatch(n))))  # a count is not a year
        answer_field = {
            # A number is chosen among those the picked lines hold, as they are written there.
            "number": (Literal[tuple(written)], ...) if written else (str, Field(pattern=NUMBER_PATTERN, max_length=24)),
            "text": (str, Field(min_length=1, max_length=80)),
            "list": (list[str], Field(min_length=1, max_length=10)),
            "yes_no": (Literal["yes", "no"], ...),
            "choice": (Literal[tuple(info.options)], ...) if info.options else (str, ...),
        }[info.answer_type]
        fields = {"answer": answer_field} if info.answer_type == "list" else {"id": (ids, ...), "answer": answer_field}
        model = create_model("Read", **fields)
        task = prompts.EXTRACT[info.answer_type]
        prompt = prompts.READ.format(evidence=evidence.render(picked), question=question, task=task, retry=retry)
        reply = await self.call("read answer", messages(prompt), model, 200)
        if reply.value is None:
            return Attempt(ok=False, reason=f"unparseable reply: {reply.error}")
        cited = [reply.value.id] if hasattr(reply.value, "id") else [p.id for p in picked]
        return verify(info, reply.value.answer, evidence.get(cited), evidence.items)

    async def compute(self, question: str, evidence: Evidence, picked: list[EvidenceItem], tables: dict[str, Any],
                      retry: str) -> Attempt:
        """Program of thought, held to the evidence: the model names values chosen among the numbers the
        picked lines hold and writes one expression over the names; code builds and runs the program."""
        written = list(dict.fromkeys(n for p in picked for n in numbers_written(p.text)))
        frames = {f"df{n}": tables[p.fragment_id] for n, p in enumerate(picked, 1)
                  if p.kind == "table" and p.fragment_id in tables} if self.settings.dataframes else {}
        if not written and not frames:
            return Attempt(ok=False, reason="the picked lines hold no numbers")
        value = create_model("Value", name=(str, Field(pattern=r"^[a-z][a-z0-9_]{0,24}$")),
                             value=(Literal[tuple(written)], ...) if written else (str, ...))
        model = create_model("Program", values=(list[value], Field(min_length=1 if written else 0, max_length=6)),
                             expression=(str, Field(min_length=1, max_length=200)))
        described = "".join(prompts.COMPUTE_TABLES.format(id=picked[int(name[2:]) - 1].id, name=name,
                                                         columns=list(map(str, df.columns)))
                            for name, df in frames.items())
        prompt = prompts.COMPUTE.format(evidence=evidence.render(picked), question=question, tables=described,
                                        retry=retry)
        reply = await self.call("write program", messages(prompt), model, 220)
        if reply.value is None:
            return Attempt(ok=False, reason=f"unparseable reply: {reply.error}")
        program = "\n".join([*(f"{v.name} = {number_literal(v.value)}  # {where(v.value, picked)}"
                               for v in reply.value.values), f"ans = {reply.value.expression}"])
        return self.run(program, reply.value.expression, question, picked, frames)

    def run(self, program: str, expression: str, question: str, picked: list[EvidenceItem],
            frames: dict[str, Any]) -> Attempt:
        """Runs a program over evidence values; a number in its expression must be a constant or evidence."""
        invented = [n for n in numbers_written(expression) if to_number(n) not in _CONSTANTS
                    and not any(occurs(n, p.text) for p in picked)]
        if invented:
            return Attempt(ok=False, program=program, reason=f"{', '.join(invented)} do not occur in the evidence")
        try:
            result = format_number(run_program(program, frames), question)
        except ComputeError as exc:
            self.emit("compute", {"program": program, "result": None, "error": str(exc)})
            return Attempt(ok=False, program=program, reason=str(exc))
        self.emit("compute", {"program": program, "result": result, "error": None})
        if result is None:
            return Attempt(ok=False, program=program, reason="the expression's result is not a number")
        return Attempt(ok=True, program=program, value=result, cited=[p.id for p in picked])

    def count(self, program: str, evidence: Evidence) -> ReaderResult | None:
        """A count the document's outline answers, run as a program and cited to the outline."""
        try:
            value = run_program(program)
        except ComputeError:
            return None
        self.emit("compute", {"program": program, "result": str(value), "error": None})
        cited = [i for i in evidence.items if i.kind == "outline"][:1]
        where = f" [p. {cited[0].page}]" if cited else ""
        return ReaderResult(answer=f"{value}{where}", short=str(value), answer_type="number", program=program,
                            cited=cited, value=str(value))

    def accept(self, info: QuestionInfo, evidence: Evidence, picked: list[EvidenceItem],
               attempt: Attempt) -> ReaderResult:
        cited = evidence.get(attempt.cited) or picked
        pages = sorted({c.page for c in cited})
        where = " ".join(f"[p. {p}]" for p in pages)
        return ReaderResult(answer=f"{attempt.value} {where}".strip(), short=short_form(info, attempt.value),
                            answer_type=info.answer_type, picked=[p.id for p in picked], cited=cited,
                            program=attempt.program, value=attempt.value)

    def refuse(self, info: QuestionInfo, reason: str) -> ReaderResult:
        self.emit("refuse", {"reason": reason})
        return ReaderResult(answer=f"{prompts.NOT_IN_DOCUMENTS.capitalize()}: {reason}.", short=NOT_ANSWERABLE,
                            answer_type=info.answer_type, refused=reason)


def evidence_tables(evidence: Evidence, tables: dict[str, Any], names: list[str]):
    """(first line, DataFrame) of each table the evidence holds a line of, in the evidence's order, when
    the table names every acronym the question names."""
    seen = set()
    for item in evidence.items:
        frame = tables.get(item.fragment_id)
        if frame is not None and id(frame) not in seen and names_all(frame, item.text, names):
            seen.add(id(frame))
            yield item, frame


def plain(value: Any) -> str:
    """A computed value as read: 10.0 as 10."""
    if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer():
        return str(int(value))
    return str(value)


def shown(item: EvidenceItem) -> dict:
    """A picked line as events carry it."""
    return item.model_dump(include={"id", "text", "page", "file", "kind", "fragment_id", "cells"})


def messages(prompt: str) -> list[ChatMessage]:
    return [ChatMessage(role=MessageRole.SYSTEM, content=prompts.READER_SYSTEM),
            ChatMessage(role=MessageRole.USER, content=prompt)]


# verification


def verify(info: QuestionInfo, answer: Any, cited: list[EvidenceItem], items: list[EvidenceItem]) -> Attempt:
    """Does the answer stand in the evidence it cites (or, second best, anywhere in the evidence)?"""
    values = answer if isinstance(answer, list) else [answer]
    values = [str(v).strip() for v in values if str(v).strip()]
    if not values:
        return Attempt(ok=False, reason="empty answer")
    # a list as a literal: the benchmark's rules parse a list answer that way
    shown = json.dumps(values, ensure_ascii=False) if isinstance(answer, list) else values[0]
    if info.answer_type in ("yes_no", "choice"):  # an option of the question, decided by the cited line
        return Attempt(ok=bool(cited), value=values[0], cited=[c.id for c in cited])
    if info.answer_type == "text" and len(values[0]) < 3 and to_number(values[0]) is None:
        return Attempt(ok=False, value=values[0], reason=f"{values[0]!r} is a label, not an answer")
    found = []
    for value in values:
        where = next((c for c in cited if occurs(value, c.text)), None) or \
            next((c for c in items if occurs(value, c.text)), None)
        if where is None:
            return Attempt(ok=False, value=shown, reason=f"{value!r} does not occur in the evidence")
        found.append(where.id)
    return Attempt(ok=True, value=shown, cited=list(dict.fromkeys(found)))


def numbers_written(text: str) -> list[str]:
    """The numbers of a text as written there, without the days and years of dates."""
    text = _DATE.sub(" ", text)
    return [n.strip("()") if n.count("(") != n.count(")") else n for n in _NUMBER.findall(text)]


class Candidate(NamedTuple):
    value: str
    context: str
    item: EvidenceItem
    by: Literal["model", "code"] = "model"  # who chose it among the options


def number_candidates(items: list[EvidenceItem], count: bool = False) -> list[Candidate]:
    """Every number of the evidence with what labels it: a table cell's row and column, else the words
    around it. Dates' days and years are not candidates, nor years and fractions when the question asks
    for a count."""
    found: dict[tuple[str, str], Candidate] = {}
    for item in items:
        if item.kind == "table":
            pairs = [(value, context) for context, value in labelled_values(item.cells)]
        else:
            text, _, chart = item.text.partition(CHART_MARK) if item.kind == "image_caption" else (item.text, "", "")
            pairs = text_numbers(text) + chart_cells(chart)
        for value, context in pairs:
            value = value.strip("()") if value.count("(") != value.count(")") else value
            not_a_count = count and (_YEAR.fullmatch(value) or _FRACTION.fullmatch(value))
            if not_a_count or _REFERENCE.search(context.split("[…]")[0][-12:] + "[…]"):
                continue
            found.setdefault((value, context), Candidate(value, context, item))
    return list(found.values())


def text_numbers(text: str) -> list[tuple[str, str]]:
    """Each number of running text with the words around it; brackets are an aside there, not a negative
    amount as in a statement's cell, and a date's days are no values."""
    masked = _DATE.sub(lambda m: "·" * len(m.group(0)), text)
    return [(m.group(0).strip("()"), _around(text, m.start(), m.end())) for m in _STANDALONE.finditer(masked)]


def chart_cells(text: str) -> list[tuple[str, str]]:
    """The values of a figure's chart as ingestion wrote them ("Total — Poor: 36, Excellent: 9; …", or
    "Use SNS: 27%; …"), each labelled by its category and series like a table's cell; a chart's words
    that are no such pairs are running text."""
    cells = []
    for group in text.split("; "):
        category, _, rest = group.rpartition(" — ")
        for m in _CHART_CELL.finditer(rest):
            label = m.group("label").strip()
            cells.append((m.group("value"), f"{category} · {label}" if category else label))
    return cells or text_numbers(text)


def statement_rows(options: list[Candidate], lines: tuple[str, ...], document: str = "") -> list[Candidate]:
    """The options in rows of the best of a statement line's names; of those, the value most of them
    hold when one does, else the value the document writes most often (the consolidated figure recurs
    in the statements and the discussion, a segment's does not)."""
    ranked = [(rank, o) for o in options if (rank := line_rank(o.context, lines)) is not None]
    top = min((rank for rank, _ in ranked), default=None)
    best = [o for rank, o in ranked if rank == top]
    rows = Counter(to_number(o.value) for o in best)
    written = {to_number(o.value): _times_written(o.value, document) for o in best}
    counts = sorted(((rows[v], written[v]), v) for v in rows)
    if len(counts) > 1 and counts[-1][0] > counts[-2][0]:
        return [o for o in best if to_number(o.value) == counts[-1][1]]
    return best


def counted_words(question: str) -> set[str]:
    """What "how many … are/does/in …" counts, as word stems ("domestic stores" → {domestic, store})."""
    match = _COUNTED.search(question)
    return _label_stems(match.group(1)) - STOPWORDS if match else set()


def counted_totals(options: list[Candidate], question: str) -> list[Candidate]:
    """For "how many domestic stores …": the options labelled as the total or count of those very things
    ("Total Domestic store count"), where the document counts them itself."""
    counted = counted_words(question)
    return [o for o in options if counted and is_total_of(o.context.rpartition(" — ")[2], counted)]


def is_total_of(label: str, counted: set[str]) -> bool:
    words = _label_stems(label)
    return counted <= words and bool(words & {"total", "count", "number"})


def most_held(options: list[Candidate]) -> list[Candidate]:
    """The options holding the value more of them hold than any other value, when there is one; else all."""
    held = Counter(to_number(o.value) for o in options).most_common(2)
    return [o for o in options if to_number(o.value) == held[0][0]] if len(held) > 1 and held[0][1] > held[1][1] \
        else options


def _label_stems(text: str) -> set[str]:
    return {_stem(w) for w in _LABEL_WORDS.findall(text.lower())}


def _times_written(value: str, text: str) -> int:
    bare = value.strip("$()%").strip()
    return len(re.findall(rf"(?<![\d,.]){re.escape(bare)}(?![\d,]|\.\d)", text)) if bare else 0


def rank_candidates(options: list[Candidate], question: str, rarity: dict[str, float] | None = None) -> list[Candidate]:
    """The options whose labels say most of what the question asks (its words and years, per word of
    label) first, then in the evidence's order: a small model often takes the first option."""
    scores = option_scores(options, question, rarity)
    return [options[n] for n in sorted(range(len(options)), key=scores.__getitem__, reverse=True)]


def option_scores(options: list[Candidate], question: str, rarity: dict[str, float] | None = None) -> list[float]:
    """How much of what the question asks each option's label says. A word weighs by its rarity in the
    documents when known (the company's own name, on every page, says little), else among the options;
    half in the headings the row is under ("Equity — … — Common stock"), which label the group, not the value.
    The owner of a possessive ("Best Buy's revenue") says whose value it is, not which."""
    asked = {_stem(w) for w in _LABEL_WORDS.findall(fiscal_as_years(_OWNER.sub(" ", question).lower()))}
    split = [o.context.lower().rpartition(" — ") for o in options]
    own = [{_stem(w) for w in _LABEL_WORDS.findall(label)} for _, _, label in split]
    labels = [words | {_stem(w) for w in _LABEL_WORDS.findall(heads)} for words, (heads, _, _) in zip(own, split)]
    df = Counter(w for words in labels for w in words)
    top = max(rarity.values(), default=1.0) if rarity else 0.0
    weight = {w: (2 if w[0].isdigit() else 1) * (rarity.get(w, top) if rarity else math.log(1 + len(options) / df[w]))
              for w in df}
    denied = _negated(question)
    return [sum(weight[w] * (1 if w in mine else 0.5) for w in words & asked) / max(len(words), 1) ** 0.5
            * (_CONTRARY if _contradicts(o.context, asked - denied, denied) else 1)
            for o, words, mine in zip(options, labels, own)]


def _negated(text: str) -> set[str]:
    """The words a negation governs ("no SNS", "do not go online", "Non-users"): the two after it."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("n't", " not"))
    return {_stem(w) for n, w in enumerate(words) if any(x in _NEGATIONS for x in words[max(0, n - 2):n])}


def _contradicts(label: str, affirmed: set[str], denied: set[str]) -> bool:
    """A label that denies what the question affirms ("Go online, no SNS" for "use SNS"), or affirms what
    it denies ("Go online" for "do not go online")."""
    negated = _negated(label)
    plain = {_stem(w) for w in re.findall(r"[a-z0-9]+", label.lower())} - negated - _NEGATIONS
    return bool(negated & affirmed or plain & denied)


def word_rarity(text: str) -> dict[str, float]:
    """Each word's inverse page frequency in the documents (pages split by form feeds)."""
    pages = text.lower().split("\f")
    df = Counter(w for page in pages for w in {_stem(w) for w in _LABEL_WORDS.findall(page)})
    return {w: math.log((1 + len(pages)) / n) for w, n in df.items()}  # ~0 on every page


def clear_choice(options: list[Candidate], question: str, rarity: dict[str, float], margin: float) -> Candidate | None:
    """The one option whose label says clearly more of what is asked than any option with another value:
    code takes it, not the model (a small model often takes the wrong one of two fitting labels)."""
    scores = option_scores(options, question, rarity)
    best = max(range(len(options)), key=scores.__getitem__, default=None)
    if best is None:
        return None
    rival = max((s for o, s in zip(options, scores) if o.value != options[best].value), default=0.0)
    return options[best]._replace(by="code") if scores[best] > margin * rival else None


def fiscal_as_years(text: str) -> str:
    """ "FY23" / "FY 2023" written as the year 2023, as statements' headers write it."""
    return _FISCAL.sub(lambda m: f" 20{m.group(1)[-2:]} ", text)


def asked_years(question: str) -> set[str]:
    return set(_YEAR.findall(fiscal_as_years(question)))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def labelled_values(row: list[Cell]) -> list[tuple[str, str]]:
    """A table row's numeric cells as (row label · column header, value); a text cell labels the values
    after it (rows the parser merged)."""
    cells, label = [], ""
    for h, v in ((c.header, c.value) for c in row):
        if re.fullmatch(NUMBER_PATTERN, v.strip()) and label:
            cells.append((f"{label} · {h}".strip(" ·"), v.strip()))
        else:
            label = f"{h}: {v}".strip(": ") if not cells else v.strip()
    return cells


def _around(text: str, start: int, end: int, before: int = 50, after: int = 50) -> str:
    left = text[max(0, start - before):start].split(" ", 1)[-1] if start > before else text[:start]
    right = text[end:end + after].rsplit(" ", 1)[0] if len(text) > end + after else text[end:]
    return " ".join(f"{left}[…]{right}".split())


def cell_answer(question: str, row: list[Cell]) -> str | None:
    """A table row's value in the column the question names ("fiscal 2023", "January 28, 2023"): code picks
    the cell when exactly one column header matches best; a one-value row gives its value."""
    cells = labelled_values(row)
    if len(cells) == 1:
        return cells[0][1]
    asked = asked_years(question)
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", question)}
    scores = [3 * len(asked & set(_YEAR.findall(h))) + len(words & {w.lower() for w in re.findall(r"[A-Za-z]{3,}", h)})
              for h, _ in cells]
    best = max(scores, default=0)
    return cells[scores.index(best)][1] if best > 0 and scores.count(best) == 1 else None


def occurs(value: str, text: str) -> bool:
    """A value occurs in a text: as a number (normalised) when it is one, else as words."""
    number = to_number(value)
    if number is not None and re.fullmatch(NUMBER_PATTERN, value.strip()):
        return any(_same(number, n) for n in numbers_in(text))
    v, t = normalise(value), normalise(text)
    if not v:
        return False
    if re.search(rf"(?<!\w){re.escape(v)}(?!\w)", t):
        return True
    words = v.split()
    return len(words) >= 3 and sum(w in t.split() for w in words) >= 0.8 * len(words)


def normalise(text: str) -> str:
    text = text.lower().replace("’", "'").replace("–", "-").replace("—", "-")
    return " ".join(re.sub(r"[^\w%$.'-]+", " ", text).split()).strip(" .")


def to_number(text: str) -> float | None:
    raw = text.strip().replace(",", "").replace("$", "").replace("%", "")
    negative = raw.startswith("(") and raw.endswith(")")
    raw = raw.strip("()")
    try:
        value = float(raw)
    except ValueError:
        return None
    return -value if negative else value


def is_share(option: Candidate) -> bool:
    """A percentage: written with its sign, or a cell of a table or chart ("Total · Poor: 36"); never a
    number of running text without its sign ("adults ages 18 and older") nor one past 100."""
    number = to_number(option.value)
    if number is None or not 0 <= number <= 100 or option.value.startswith("$"):
        return False
    return option.value.endswith("%") or "[…]" not in option.context


def of_group(group: str, option: Candidate) -> bool:
    """A share labelled by the group a question names (any share when it names none)."""
    return is_share(option) and (not group or names_group(option.context, group) > 0)


def beside(first: Candidate, option: Candidate) -> bool:
    """A share of the same chart as `first` (its page), and of its category when it has one."""
    category, dot, _ = first.context.partition(" · ")
    same_page = (option.item.doc_id, option.item.page) == (first.item.doc_id, first.item.page)
    return is_share(option) and same_page and (not dot or option.context.startswith(category + dot))


def numbers_in(text: str) -> list[float]:
    found = []
    for raw in _NUMBER.findall(text):
        value = to_number(raw)
        if value is not None:
            found += [value, abs(value)]
    return found


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def number_literal(written: str) -> str:
    """An evidence number as a Python literal: "$1,874" → 1874, "(20)" → -20, "46.3%" → 46.3."""
    value = to_number(written)
    return repr(int(value)) if value is not None and value.is_integer() else repr(value)


def where(written: str, picked: list[EvidenceItem]) -> str:
    return next((p.id for p in picked if written in p.text), "evidence")


def format_number(value: Any, question: str) -> str | None:
    """A computed value as the answer: rounded as the question asks, else to at most 3 decimals."""
    try:
        number = float(value.item() if hasattr(value, "item") else value)
    except (TypeError, ValueError):
        return None
    match = _DECIMALS.search(question)
    digits = (int(match.group(1)) if match.group(1).isdigit() else _WORDS[match.group(1).lower()]) if match else 3
    if number.is_integer() and not match:
        return str(int(number))
    text = f"{round(number, digits):.{digits}f}"
    return text if match else text.rstrip("0").rstrip(".")


def short_form(info: QuestionInfo, value: str) -> str:
    """The short answer a scorer compares: a number bare (no $, thousands commas or %), the rest as read."""
    number = to_number(value) if re.fullmatch(NUMBER_PATTERN, value.strip()) else None
    if number is None:
        return value
    return str(int(number)) if number.is_integer() else repr(round(number, 6))
