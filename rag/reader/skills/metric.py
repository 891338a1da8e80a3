"""Metrics by code: the model writes a small program, code does the rest.

For a question that asks a figure of a company's statements for a fiscal year (a lookup, a ratio, a change, an
average, a total), the model writes, held by a JSON schema, the statement rows the metric needs (each once, in
its own words) and one formula over a row's name and a fiscal year each ("avg(ni_2019 / rev_2019, ni_2020 /
rev_2020)"), following the question's definition, else an analyst's (rag/reader/definitions.py).
Code looks every input up in the document's statement frames (rag/reader/lookup.py), runs the formula
(rag/reader/program.py), and gives the result in the unit and decimals asked, each input with its page:
"13.05 = revenue 4,150 [p. 52] / avg(ppe_2021 301 [p. 51], ppe_2022 335 [p. 51]) · …". What code can repair
of the model's program, it does before any model call (rag/reader/formulas.py: brackets balanced, "^" a power, a
name it never defined matched to its input or a glossary row, a statement's name never a row). A program code
cannot run (it does not parse, names no row or no year, asks a year the question does not name) gets one
repair: the model's reply and the reason as one more turn, held to the same schema. A row no statement prints
gets none. A result its kind of metric cannot have (a margin above 100%, a turnover below nil,
rag/reader/plausible.py) is turned the right way up by code where a division's inputs are a part and its
whole, else repaired once with the reason, else said: never the answer. The statement a question names is read
first; a figure from elsewhere says where it was read.

A question that names one figure for one fiscal year and asks nothing more of it (a metric defined once, or
a row its statements print: "What is the capitalization ratio for FY2023?", "What goodwill does it have at
the end of fiscal 2023?"), that asks one row's growth between two years as a percentage or one metric's change
or average over years ("How did the operating margin change from FY2020 to FY2021?"), or that states its own
definition in rows code knows ("… is defined as gross profit divided by net sales"), needs no model: code writes
its program (`by_code`).

A lookup that finds no row says which row it sought; the reader then reads pages as for any question.
"""

from __future__ import annotations

import re

from llama_index.core.llms import ChatMessage, MessageRole
from pydantic import ValidationError

from rag import prompts
from rag.reader.answer import Cited, Solution
from rag.reader.definitions import (DEFINITIONS, SAID, across, defined, gives, longest_first, metrics_named, stated,
                                   written)
from rag.reader.formulas import MAX_ROWS, STATEMENTS, ProgramReply, RowReply  # noqa: F401 (the skill's schema)
from rag.reader.lookup import GLOSSARY, NotFound, concept_of, named_statement, normal, without_statement
from rag.reader.pages import PageRef
from rag.reader.plausible import checked
from rag.reader.program import ComputeError, Computed, Input, Program, compute, in_unit, shown
from rag.reader.question import YEAR, Question
from rag.reader.skills.base import Documents, JsonModel, Read, few_shot, register
from rag.reader.wording import RULES
from rag.records import StatementFrame
from rag.text import plain_number

REPLY_TOKENS = 250  # the longest reply the schema allows, at 3 characters a token
_TIMES_100 = re.compile(r"\s*\*\s*100(?:\.0*)?(?![\d.])|(?<![\d.])100(?:\.0*)?\s*\*\s*")
_METRIC_WORDS = {w for name, c in GLOSSARY.items() for w in (normal(name), *map(normal, c.said))}
MIN_ROW_CHARS = 6  # a shorter label ("Total", "Other") names no figure


@register
class Metric:
    name, reads = "metric", "documents"

    def applies(self, question: Question) -> bool:
        """A year named, or a figure asked: the statements' years and rows decide the rest."""
        return bool(question.years) or asks_figure(question, [])

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None:
        """Of several searched documents, the filing of the company the question names (its choice and why
        said with the answer, or with why not); of one, its statements."""
        frames = documents.frames(hits, question.names, question.text)
        why = getattr(frames, "why", "")
        if not frames:  # the question names a company no searched filing is of: said, and pages are read
            return Read(reason=why) if why and asks_figure(question, []) else None
        return with_filing(await solve(question, frames, model), why) if applies(question, frames) else None


def applies(question: Question, frames: list[StatementFrame]) -> bool:
    """A figure of a fiscal year the statements print, asked as a number or by a statement's word (revenue,
    capex, total assets…); not a choice among things the question names, nor a count of things."""
    years, kept = {int(y) for y in question.years}, statements(frames)
    printed = {p.year for f in kept for p in f.periods}
    return bool(years & printed) and asks_figure(question, kept)


def asks_figure(question: Question, frames: list[StatementFrame]) -> bool:
    """A number asked, or a statement's word or a metric named; no choice among things, no count of things."""
    words = f" {normal(question.task or question.text)} "
    named = any(f" {w} " in words for w in _METRIC_WORDS) or bool(metrics_named(words)) or \
        one_figure(question, frames) is not None
    return not question.options and not question.counts and (question.asked == "number" or named)


def with_filing(read: Read, why: str) -> Read:
    """A read that says which filing its statements are and why (the hop box shows it), with its figure or
    with why not."""
    if not why:
        return read
    if read.solution:
        return read.model_copy(update={"solution": read.solution.model_copy(
            update={"value": f"{read.solution.value} · {why}"})})
    return read.model_copy(update={"reason": f"{read.reason} ({why})"})


def statements(frames: list[StatementFrame]) -> list[StatementFrame]:
    """The statements themselves: a note's or a segment's table by year prints figures of other things too
    (stores, employees, a segment's revenue), which a page read answers with their context."""
    return [f for f in frames if f.kind != "other"]


def one_figure(question: Question, frames: list[StatementFrame]) -> tuple[str, str] | None:
    """The one figure a question asks for one fiscal year, if it asks nothing more of it: ("metric", a defined
    metric's name) or ("row", a row's words). Wordings are taken longest first, none inside another; an
    analyst's word for a row (revenue, capex) counts as a figure too, but code does not pick its row."""
    text = without_statement(question.task or question.text)
    if len(set(question.years)) != 1:
        return None
    metrics = {said: name for said, name in SAID if not gives(text, name)}
    rows = row_words(frames)
    found, rest = longest_first(text, {*metrics, *rows, *_METRIC_WORDS})
    if len(found) != 1 or RULES["metric_more"].search(rest):
        return None
    said = found[0]
    return ("metric", metrics[said]) if said in metrics else ("row", said) if said in rows else None


def growth(question: Question, frames: list[StatementFrame]) -> Program | None:
    """The program of one row's growth between the two fiscal years a question names, asked as a percentage
    ("By how much did revenue grow from FY2020 to FY2021, in percent?"): the change over the earlier year's
    size (a loss that narrows grows). A margin's or a ratio's change is not a row's growth."""
    text = without_statement(question.task or question.text)
    years, words = sorted({int(y) for y in question.years}), normal(text)
    if len(years) != 2 or not RULES["percent"].search(question.text) or not RULES["growth"].search(words) or \
            RULES["compound"].search(words) or metrics_named(text):
        return None
    rows = row_words(frames)
    found, rest = longest_first(text, {*rows, *_METRIC_WORDS})
    if len(found) != 1 or RULES["metric_more"].search(RULES["span"].sub(" ", RULES["growth"].sub(" ", rest))):
        return None
    first, last = (Input.of_row(found[0], year) for year in years)
    return Program(inputs=[first, last], formula=f"({last.name} - {first.name}) / abs({first.name})")


def over_years(question: Question, frames: list[StatementFrame]) -> Program | None:
    """The program of a defined metric's change between the two fiscal years a question names ("How did the
    operating margin change from FY2020 to FY2021?": the later less the earlier), or of its average over the
    years from the first to the last ("the FY2019 - FY2021 average current ratio"), if it asks nothing more.
    A ratio's change asked as a percentage (relative, or in points?) is left to the model."""
    text = without_statement(question.task or question.text)
    years = {int(y) for y in question.years}
    metrics = {said: name for said, name in SAID if not gives(text, name)}
    found, rest = longest_first(text, {*metrics, *row_words(frames), *_METRIC_WORDS})
    if len(years) < 2 or len(found) != 1 or found[0] not in metrics:
        return None
    name, rest = metrics[found[0]], RULES["span"].sub(" ", rest)
    how = "average" if RULES["average"].search(rest) else \
        "change" if RULES["change"].search(rest) and len(years) == 2 else None
    rest = RULES["average"].sub(" ", rest)
    if not how or RULES["metric_more"].search(RULES["change"].sub(" ", rest)) or RULES["compound"].search(rest) or \
            (how == "change" and RULES["percent"].search(question.text) and not DEFINITIONS[name].percent):
        return None
    return across(name, sorted(years), how)


def by_code(question: Question, frames: list[StatementFrame]) -> Program | None:
    """The program written by code: of a question's one figure (a metric's from its definition, a row's lookup),
    of one row's growth or one metric's change or average over years, or of the definition the question states
    in rows code knows."""
    if not (figure := one_figure(question, frames)):
        return growth(question, frames) or over_years(question, frames) or \
            stated(question.task or question.text, known_rows(frames))
    (kind, words), year = figure, int(question.years[0])
    if kind == "metric":
        return written(words, year)
    row = Input.of_row(words, year)
    return Program(inputs=[row], formula=row.name)


def known_rows(frames: list[StatementFrame]):
    """Whether words name a row: an analyst's word for one, or a label the statements print."""
    printed = printed_labels(frames)
    return lambda words: concept_of(words) is not None or normal(words) in printed


def row_words(frames: list[StatementFrame]) -> set[str]:
    """The printed labels long enough to name a figure."""
    return {label for label in printed_labels(frames) if len(label) >= MIN_ROW_CHARS}


def printed_labels(frames: list[StatementFrame]) -> set[str]:
    """Every row label the statements print, as compared (`normal`)."""
    return {normal(r.label) for f in frames for r in f.rows}


async def solve(question: Question, frames: list[StatementFrame], model: JsonModel) -> Read:
    """The program code writes, else the model's (repaired by code, then once by the model with the reason),
    run by code on the statements, the one the question names first; a result its kind of metric cannot have
    is turned the right way up or refused, never the answer."""
    frames = statements(frames)
    if program := by_code(question, frames):
        try:
            return Read(solution=solution(question, run(question, program, frames)))
        except (NotFound, ComputeError, ZeroDivisionError):
            pass  # a row code did not find: the model names the rows in its own words
    question = with_definitions(question)
    said = messages(question)
    read, mendable = await _written(question, frames, model, "write program", said)
    if read.solution or not mendable:
        return read
    said += [ChatMessage(role=MessageRole.ASSISTANT, content=read.said),
             ChatMessage(role=MessageRole.USER, content=prompts.METRIC_REPAIR.format(reason=read.reason))]
    again, _ = await _written(question, frames, model, "repair program", said)
    return again if again.solution else again.model_copy(update={"reason": f"{read.reason} (repaired: {again.reason})"})


async def _written(question: Question, frames: list[StatementFrame], model: JsonModel, purpose: str,
                   said: list[ChatMessage]) -> tuple[Read, bool]:
    """The model's program run by code, or why not, and whether a repair may mend it: a program refused may be
    written again; a row no statement prints is rarely printed in other words."""
    reply = await model.json(purpose, said, ProgramReply, REPLY_TOKENS)
    if reply.value is None:
        return Read(said=reply.text[:300], reason=f"the program did not parse ({reply.error})"), True
    try:
        program = reply.value.program(question.years[0] if len(set(question.years)) == 1 else None)
    except ComputeError as exc:
        return Read(said=reply.text, reason=f"the program was refused: {str(exc)[:200]}"), True
    if unasked := _unasked_years(question, program):
        return Read(said=reply.text, reason=f"the program asks for {unasked}, a year the question does not name"), True
    if unit_of(question, program.formula) == "percent":  # code makes the percentage: a formula's own "* 100" goes
        program = program.model_copy(update={"formula": _TIMES_100.sub("", program.formula)})
        if "/" not in program.formula:
            return Read(said=reply.text, reason="a percentage was asked and the program divides nothing"), True
    try:
        return Read(said=reply.text, solution=solution(question, run(question, program, frames))), False
    except NotFound as exc:
        return Read(said=reply.text, reason=str(exc)), False
    except (ComputeError, ValidationError, ZeroDivisionError) as exc:
        return Read(said=reply.text, reason=f"the program was refused: {str(exc)[:200]}"), True


def run(question: Question, program: Program, frames: list[StatementFrame]) -> Computed:
    """A program run on the statements, the one the question names first, and its result checked against what
    the metric asked is (rag/reader/plausible.py): `Implausible`, a ComputeError, when it cannot be that."""
    named = named_statement(question.text)
    return checked(question.text, program, lambda p: compute(p, frames, named=named),
                   money=unit_of(question, program.formula) == "money")


def with_definitions(question: Question) -> Question:
    """The question with the definitions of the metrics it names and leaves undefined; the years an average
    of theirs takes count as named."""
    task = question.task or question.text
    years = [int(y) for y in question.years]
    if not (definitions := defined(task, max(years, default=None))):
        return question
    named_years = list(dict.fromkeys([*question.years, *YEAR.findall(definitions)]))
    return question.model_copy(update={"task": f"{task} {definitions}", "years": named_years})


def _unasked_years(question: Question, program: Program) -> str:
    """A year of the program outside the span of years the question names ("FY2017 - FY2019" holds 2018)."""
    named = [int(y) for y in question.years]
    return next((i.year for i in program.inputs if named and not min(named) <= int(i.year) <= max(named)), "")


def messages(question: Question) -> list[ChatMessage]:
    return few_shot(prompts.METRIC_SYSTEM, prompts.METRIC_EXAMPLES, question.task or question.text)


def unit_of(question: Question, formula: str) -> str:
    """A percentage when asked; money when a scale is asked or the formula only adds and subtracts figures;
    else a ratio."""
    if RULES["percent"].search(question.text):
        return "percent"
    return "money" if question.scale or not re.search(r"[/*]", formula) else "ratio"


def solution(question: Question, computed: Computed) -> Solution:
    unit = unit_of(question, computed.formula)
    asked = question.scale or (computed.scale if unit == "money" else None)
    raw = in_unit(computed.value, unit, computed.scale, asked)
    shown_places = question.decimals if question.decimals is not None else \
        2 if unit != "money" or abs(raw) < 100 else 0 if raw == int(raw) else 1
    pages = list({(u.lookup.doc_id, u.lookup.page): PageRef(doc_id=u.lookup.doc_id, file=u.lookup.file,
                                                            page=u.lookup.page) for u in computed.inputs}.values())
    return Solution(skill="metric", asked="number", value=shown(computed, unit, asked, shown_places),
                    short_value=plain_number(round(raw, 2 if question.decimals is None else question.decimals)),
                    program=computed.formula, pages=pages,
                    by="code", inputs=[input_row(u) for u in computed.inputs])


def input_row(used) -> Cited:
    """An input as the chat's table and the trace show it."""
    found = used.lookup
    return Cited(name=used.name, row=found.label, period=found.period, printed=found.printed, statement=found.title,
                 page=found.page, doc_id=found.doc_id, file=found.file)
