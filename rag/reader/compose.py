"""The answer of a plan, composed by code from the values its parts read, each with its page.

"14 = 52 [p. 3] − 38 [p. 3]", "90 = 52 [p. 3] + 38 [p. 4]", "Asia (2.1 [p. 11]) over Europe (1.4 [p. 11])".
The arithmetic is a program run by the whitelist (rag/reader/program.py) and shown with the answer; a part
that found no value leaves a partial answer with `<missing>` where it stands, never a figure.
"""

from __future__ import annotations

import re

from rag.reader.answer import NOT_ANSWERABLE, Cited, Solution
from rag.reader.plan import Part, Plan
from rag.reader.program import run_program
from rag.reader.question import Question
from rag.text import numbers, plain_number

MISSING = "<missing>"
_SIGN = {"difference": " − ", "sum": " + ", "average": " + "}
_FORMULA = {"difference": "abs({a} - {b})", "sum": "{all}", "average": "({all}) / {n}"}


class Value:
    """A part's figure as read: the number, whether it is a percentage, how it was printed, where."""

    def __init__(self, part: Part, solution: Solution, name: str) -> None:
        self.part, self.solution, self.name = part, solution, name
        self.number = numbers(solution.short())[0]
        self.percent = "%" in solution.value
        self.printed = solution.line or solution.value

    def shown(self) -> str:
        return f"{self.solution.value} {self.solution.citations()}".strip()

    def read_at(self) -> tuple:
        """Where the figure was read: its page, and its cell when code looked it up (two cells may print one
        number; a page read gives no cell, so one number read twice on one page is one figure)."""
        cells = tuple((i.row, i.period) for i in self.solution.inputs)
        return self.number, tuple(p.key for p in self.solution.pages), cells

    def decimals(self) -> int:
        digits = re.search(r"\.(\d+)", self.solution.short())
        return len(digits.group(1)) if digits else 0


def compose(question: Question, plan: Plan, read: list[Solution | None]) -> Solution:
    """The plan's answer from each part's solution (None where the part found nothing)."""
    values = [Value(p, s, f"part_{n}") if s and numbers(s.short()) else None
              for n, (p, s) in enumerate(zip(plan.parts, read), 1)]
    if any(v is None for v in values):
        return partial(plan, values)
    if len({v.read_at() for v in values}) < len(values):
        return partial(plan, values, "two parts read one figure of one page for two things")
    if plan.composition in ("greater", "lesser"):
        return compared(plan, values)
    return computed(question, plan, values)


def computed(question: Question, plan: Plan, values: list[Value]) -> Solution:
    kind = plan.composition
    names = [v.name for v in values]
    formula = _FORMULA[kind].format(a=names[0], b=names[-1], all=" + ".join(names), n=len(names))
    program = "\n".join(f"{v.name} = {plain_number(v.number)}" for v in values) + f"\nans = {formula}"
    places = question.decimals if question.decimals is not None else max(v.decimals() for v in values)
    result = round(float(run_program(program)), places)
    unit = "%" if all(v.percent for v in values) else ""
    ordered = sorted(values, key=lambda v: -v.number) if kind == "difference" else values
    terms = _SIGN[kind].join(v.shown() for v in ordered)
    body = f"({terms}) / {len(values)}" if kind == "average" else terms
    figure = f"{result:,.{places}f}{unit}"
    return Solution(skill="plan", asked="number", value=f"{figure} = {body}", short_value=plain_number(result),
                    line=figure, program=program, inputs=[_input(v) for v in values], pages=_pages(values), by="code")


def compared(plan: Plan, values: list[Value]) -> Solution:
    """The choice whose value is the greatest (or least), with every choice's value beside it."""
    pick = max if plan.composition == "greater" else min
    best = pick(values, key=lambda v: v.number)
    if sum(v.number == best.number for v in values) > 1:
        return Solution(skill="plan", asked="text", value=" and ".join(f"{v.part.label} ({v.shown()})" for v in values)
                        + ": the same", short_value=NOT_ANSWERABLE, pages=_pages(values), by="code")
    others = [v for v in values if v is not best]
    word = "over" if plan.composition == "greater" else "under"
    program = "\n".join(f"{v.name} = {plain_number(v.number)}" for v in values) + \
        f"\nans = {pick.__name__}({', '.join(v.name for v in values)})"
    text = f"{best.part.label} ({best.shown()}) {word} " + ", ".join(f"{v.part.label} ({v.shown()})" for v in others)
    return Solution(skill="plan", asked="text", value=text, short_value=best.part.label, line=best.part.label,
                    program=program, inputs=[_input(v) for v in values], pages=_pages(values), by="code")


def partial(plan: Plan, values: list[Value | None], why: str = "") -> Solution:
    """What the parts found, and `<missing>` for each part that found nothing: no figure is composed."""
    said = [f"{part.label or part.question}: {v.shown() if v else MISSING}" for part, v in zip(plan.parts, values)]
    found = [v for v in values if v]
    why = f" ({why})" if why else ""
    return Solution(skill="plan", asked="text", value=f"{plan.composition} not computed{why}: " + "; ".join(said),
                    short_value=NOT_ANSWERABLE, inputs=[_input(v) for v in found], pages=_pages(found), by="code")


def _input(value: Value) -> Cited:
    """A part's value as the chat's table and the trace show it."""
    ref = value.solution.pages[0] if value.solution.pages else None
    return Cited(name=value.name, row=value.part.label or value.part.question, printed=value.printed,
                 page=ref.page if ref else None, doc_id=ref.doc_id if ref else "", file=ref.file if ref else "")


def _pages(values: list[Value]) -> list:
    return list({p.key: p for v in values for p in v.solution.pages}.values())
