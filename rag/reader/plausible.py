"""What a metric is, checked by code: each kind of metric has the range its result can lie in, and a result
outside it is no answer.

- a share of a whole (a margin, a return on assets, a capitalization ratio, "R&D as a percentage of revenue"):
  within ±100%;
- a turnover, a number of days, a current or quick ratio: above nil;
- a growth or a change (asked as a percentage): within ±1,000%.

A result outside its range is most often a division upside down ("revenue / operating income" for an operating
margin: 1,256.1%). Where a division's inputs are a part and its whole (revenue, total assets, income before
taxes, net income are wholes), code turns it the right way up (`swapped`) and runs it again; else the result is
refused with the reason (`Implausible`), for one repair by the model or to be said plainly. A payout ratio, a
tax rate, a coverage or a return on equity has no such range (a payout above 100%, a tax rate of a year of tiny
pretax income, a negative equity all happen), so none is checked: code refuses only what cannot be.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Literal

from rag.reader.definitions import DEFINITIONS, metrics_named
from rag.reader.lookup import GLOSSARY, concept_of, normal
from rag.reader.program import ComputeError, Computed, Program
from rag.reader.wording import RULES

Kind = Literal["share", "positive", "growth"]
WHAT = {"share": "a share of a whole (a margin, a return, a part of a total) lies within ±100%",
        "positive": "a turnover, a ratio of balances or a number of days is above nil",
        "growth": "a growth or a change lies within ±1,000%"}
# a whole, and how wide: a division of a wider whole by a narrower one is upside down
WHOLES = {"revenue": 3, "total assets": 3, "pretax income": 2, "total current assets": 2,
          "total current liabilities": 2, "total liabilities": 2, "net income": 1, "cash from operations": 1}


class Implausible(ComputeError):
    """A result its kind of metric cannot have: the message says which and why, for a repair or the answer."""


def kind_of(text: str, formula: str = "") -> Kind | None:
    """The kind of metric a question asks: a change where the program's formula is one (a difference, or a
    difference over a base); else by the metric it names, else by its words; None for any other."""
    if _changes(formula):
        return "growth"
    for name in metrics_named(text):
        if kind := DEFINITIONS[name].kind:
            return kind
    words = normal(text)
    if RULES["growth_or_cagr"].search(words):
        return "growth"
    if RULES["margin"].search(words):
        return "share"
    return "positive" if RULES["turnover_days"].search(words) and not RULES["cycle"].search(words) else None


def _changes(formula: str) -> bool:
    """Whether a formula is a change of one thing over years: "x_b - x_a", "(x_b - x_a) / x_a", "(x_b / x_a) **
    (1 / n) - 1", "(a_b / r_b) - (a_a / r_a)"; not a difference of other things (a cash conversion cycle)."""
    try:
        top = ast.parse(formula.strip(), mode="eval").body if formula.strip() else None
    except SyntaxError:
        return False
    if isinstance(top, ast.BinOp) and isinstance(top.op, ast.Div):
        top = top.left
    if not (isinstance(top, ast.BinOp) and isinstance(top.op, ast.Sub)):
        return False
    left, right = ({re.sub(r"_(?:19|20)\d\d$", "", n) for n in _names(side)} for side in (top.left, top.right))
    return left == right or not left or not right


def within(kind: Kind | None, result: float) -> bool:
    """Whether a result (a share as a fraction: 0.2 for 20%) lies in its kind's range."""
    if kind == "share":
        return abs(result) <= 1.0
    if kind == "positive":
        return result > 0
    if kind == "growth":
        return abs(result) <= 10.0
    return True


def told(kind: Kind, result: float) -> str:
    """A result as the refusal says it: a share or a growth in percent, else as it is."""
    return f"{result * 100:,.1f}%" if kind in ("share", "growth") else f"{result:,.2f}"


def swapped(program: Program, computed: Computed) -> Program | None:
    """The program with each division of a wider whole by a part turned the right way up ("revenue / operating
    income" → "operating income / revenue"), or None when no division is upside down."""
    widths = {u.name: _width(u.lookup.asked, u.lookup.label) for u in computed.inputs}
    tree = ast.parse(program.formula.strip(), mode="eval")
    turned = False
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            top, bottom = _widest(node.left, widths), _widest(node.right, widths)
            if top > bottom and _names(node.right):
                node.left, node.right = node.right, node.left
                turned = True
    return program.model_copy(update={"formula": ast.unparse(tree)}) if turned else None


def _of_a_whole(program: Program, computed: Computed) -> bool:
    """Whether the formula divides by, or (upside down) divides, one of the widest wholes (revenue, total
    assets) and a narrower figure."""
    widths = {u.name: _width(u.lookup.asked, u.lookup.label) for u in computed.inputs}
    widest = max(WHOLES.values())
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and
               max(sides := (_widest(node.left, widths), _widest(node.right, widths))) == widest > min(sides)
               for node in ast.walk(ast.parse(program.formula.strip(), mode="eval")))


def _width(asked: str, printed: str) -> int:
    concept = concept_of(asked) or concept_of(printed)
    return next((w for name, w in WHOLES.items() if concept is GLOSSARY[name]), 0)


def _names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def _widest(node: ast.AST, widths: dict[str, int]) -> int:
    return max((widths.get(name, 0) for name in _names(node)), default=0)


def checked(text: str, program: Program, run: Callable[[Program], Computed], money: bool = False) -> Computed:
    """A program's result, if it lies in the range of the kind of metric the question `text` asks (money has
    none); else the program with its divisions turned the right way up, if that one's does, said in its notes;
    else `Implausible`, never the figure."""
    computed = run(program)
    kind = None if money else kind_of(text, program.formula) or \
        ("share" if RULES["percent_of"].search(normal(text)) and _of_a_whole(program, computed) else None)
    if within(kind, computed.value):
        return computed
    if (turned := swapped(program, computed)) is not None and within(kind, (again := run(turned)).value):
        note = f"part and whole swapped by code: {program.formula} gave {told(kind, computed.value)}"
        return again.model_copy(update={"notes": [*again.notes, note]})
    raise Implausible(f"the result {told(kind, computed.value)} cannot be what is asked: {WHAT[kind]} "
                      f"(from {program.formula})")
