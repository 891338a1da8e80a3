"""Metrics by code: the model writes a small program, code does the rest.

For a question that asks a figure of a company's statements for a fiscal year (a lookup, a ratio, a change, an
average, a total), the model writes, held by a JSON schema, the inputs the metric needs (each a statement row
in its own words and a fiscal year) and one formula over their names, following the question's definition,
else an analyst's (rag/reader/definitions.py).
Code looks every input up in the document's statement frames (rag/reader/lookup.py), runs the formula
(rag/reader/program.py), and gives the result in the unit and decimals asked, each input with its page:
"24.26 = revenue 6,489 [p. 70] / avg(ppe_2018 253 [p. 69], ppe_2019 282 [p. 69]) · …".

A question that names one figure for one fiscal year and asks nothing more of it (a metric defined once, or
a row its statements print: "What is the capitalization ratio for FY2023?", "What goodwill does it have at
the end of fiscal 2023?") needs no model: code writes its program (`by_code`), as it would write it.

A lookup that finds no row says which row it sought; the reader then reads pages as for any question.
"""

from __future__ import annotations

import re
from typing import Literal

from llama_index.core.llms import ChatMessage
from pydantic import BaseModel, Field, ValidationError

from rag import prompts
from rag.reader.answer import Solution
from rag.reader.definitions import SAID, defined, gives, longest_first, metrics_named, written
from rag.reader.lookup import GLOSSARY, NotFound, normal
from rag.reader.pages import PageRef
from rag.reader.program import ComputeError, Computed, Input, Program, compute, in_unit, shown
from rag.reader.question import YEAR, Question
from rag.reader.skills.base import Call, Documents, Read, few_shot, register
from rag.records import StatementFrame
from rag.text import plain_number

STATEMENTS = ("income statement", "balance sheet", "cash flow statement")
MAX_INPUTS = 6
REPLY_TOKENS = 60 + 40 * MAX_INPUTS
_PERCENT = re.compile(r"%|\bpercent", re.I)
_TIMES_100 = re.compile(r"\s*\*\s*100(?:\.0*)?(?![\d.])|(?<![\d.])100(?:\.0*)?\s*\*\s*")
_METRIC_WORDS = {w for name, c in GLOSSARY.items() for w in (normal(name), *map(normal, c.said))}
# what a question may ask beyond the one figure it names, which that figure's program does not do
_MORE = re.compile(r"\b(?:change|growth|grows?|increases?|decreases?|difference|cagr|compared?|versus|vs|average|mean|"
                   r"per|ratio|margin|share|portion|percentage of|to|from|between)\b")
MIN_ROW_CHARS = 6  # a shorter label ("Total", "Other") names no figure


class InputReply(BaseModel):
    name: str = Field(json_schema_extra={"pattern": "^[a-z][a-z0-9_]{0,23}$"})
    label: str = Field(json_schema_extra={"maxLength": 60})
    year: str = Field(json_schema_extra={"pattern": "^(19|20)[0-9][0-9]$"})
    statement: Literal[STATEMENTS]


class ProgramReply(BaseModel):
    """What the model writes: the inputs and one formula over their names."""

    inputs: list[InputReply] = Field(json_schema_extra={"minItems": 1, "maxItems": MAX_INPUTS})
    formula: str = Field(json_schema_extra={"maxLength": 160})


@register
class Metric:
    name, reads = "metric", "documents"

    async def answer(self, question: Question, documents: Documents, hits, call: Call) -> Read | None:
        frames = documents.frames(hits)
        return await solve(question, frames, call) if applies(question, frames) else None


def applies(question: Question, frames: list[StatementFrame]) -> bool:
    """A figure of a fiscal year the statements print, asked as a number or by a statement's word (revenue,
    capex, total assets…); not a choice among things the question names."""
    years, kept = {int(y) for y in question.years}, statements(frames)
    printed = {p.year for f in kept for p in f.periods}
    words = f" {normal(question.task or question.text)} "
    named = any(f" {w} " in words for w in _METRIC_WORDS) or bool(metrics_named(words)) or \
        one_figure(question, kept) is not None
    return bool(years & printed) and not question.options and (question.asked == "number" or named)


def statements(frames: list[StatementFrame]) -> list[StatementFrame]:
    """The statements themselves: a note's or a segment's table by year prints figures of other things too
    (stores, employees, a segment's revenue), which a page read answers with their context."""
    return [f for f in frames if f.kind != "other"]


def one_figure(question: Question, frames: list[StatementFrame]) -> tuple[str, str] | None:
    """The one figure a question asks for one fiscal year, if it asks nothing more of it: ("metric", a defined
    metric's name) or ("row", a row's words). Wordings are taken longest first, none inside another; an
    analyst's word for a row (revenue, capex) counts as a figure too, but code does not pick its row."""
    text = question.task or question.text
    if len(set(question.years)) != 1:
        return None
    metrics = {said: name for said, name in SAID if not gives(text, name)}
    rows = {label for f in frames for r in f.rows if len(label := normal(r.label)) >= MIN_ROW_CHARS}
    found, rest = longest_first(text, {*metrics, *rows, *_METRIC_WORDS})
    if len(found) != 1 or _MORE.search(rest):
        return None
    said = found[0]
    return ("metric", metrics[said]) if said in metrics else ("row", said) if said in rows else None


def by_code(question: Question, frames: list[StatementFrame]) -> Program | None:
    """The program of a question's one figure, written by code: a metric's from its definition, a row's lookup."""
    if not (figure := one_figure(question, frames)):
        return None
    (kind, words), year = figure, int(question.years[0])
    if kind == "metric":
        return written(words, year)
    row = Input.of_row(words, year)
    return Program(inputs=[row], formula=row.name)


async def solve(question: Question, frames: list[StatementFrame], call: Call) -> Read:
    frames = statements(frames)
    if program := by_code(question, frames):
        try:
            return Read(solution=solution(question, compute(program, frames)))
        except (NotFound, ComputeError, ZeroDivisionError):
            pass  # a row code did not find: the model names the rows in its own words
    question = with_definitions(question)
    reply = await call("write program", messages(question), ProgramReply, REPLY_TOKENS)
    if reply.value is None:
        return Read(said=reply.text[:300], reason=f"the program did not parse ({reply.error})")
    if unasked := _unasked_years(question, reply.value):
        return Read(said=reply.text, reason=f"the program asks for {unasked}, a year the question does not name")
    formula = reply.value.formula
    if unit_of(question, formula) == "percent":  # code makes the percentage: a formula's own "* 100" goes
        formula = _TIMES_100.sub("", formula)
        if "/" not in formula:
            return Read(said=reply.text, reason="a percentage was asked and the program divides nothing")
    try:
        program = Program(inputs=[Input(**i.model_dump()) for i in reply.value.inputs], formula=formula)
        computed = compute(program, frames)
    except NotFound as exc:
        return Read(said=reply.text, reason=str(exc))
    except (ComputeError, ValidationError, ZeroDivisionError) as exc:
        return Read(said=reply.text, reason=f"the program was refused: {str(exc)[:200]}")
    return Read(said=reply.text, solution=solution(question, computed))


def with_definitions(question: Question) -> Question:
    """The question with the definitions of the metrics it names and leaves undefined; the years an average
    of theirs takes count as named."""
    task = question.task or question.text
    years = [int(y) for y in question.years]
    if not (definitions := defined(task, max(years, default=None))):
        return question
    named_years = list(dict.fromkeys([*question.years, *YEAR.findall(definitions)]))
    return question.model_copy(update={"task": f"{task} {definitions}", "years": named_years})


def _unasked_years(question: Question, reply: ProgramReply) -> str:
    """A year of the program outside the span of years the question names ("FY2017 - FY2019" holds 2018)."""
    named = [int(y) for y in question.years]
    return next((i.year for i in reply.inputs if named and not min(named) <= int(i.year) <= max(named)), "")


def messages(question: Question) -> list[ChatMessage]:
    return few_shot(prompts.METRIC_SYSTEM, prompts.METRIC_EXAMPLES, question.task or question.text)


def unit_of(question: Question, formula: str) -> str:
    """A percentage when asked; money when a scale is asked or the formula only adds and subtracts figures;
    else a ratio."""
    if _PERCENT.search(question.text):
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


def input_row(used) -> dict:
    """An input as the chat's table and the trace show it."""
    found = used.lookup
    return {"name": used.name, "row": found.label, "period": found.period, "printed": found.printed,
            "statement": found.title, "page": found.page, "doc_id": found.doc_id, "file": found.file}
