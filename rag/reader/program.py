"""Computation as a tool: a tiny program over values read off a page, run by an AST whitelist.

The model writes an expression over the numbers it copied (`a = 31; b = 20; ans = a - b`), or code writes
the program of a count or a comparison; either way the program is shown, and nothing in it reaches `eval`
or `exec`: it is parsed with `ast` and interpreted node by node. Allowed: number and string literals,
lists, tuples, names bound by the program, arithmetic, round/abs/min/max/sum/len/float/int and
subscripts. No attributes, imports, loops or function definitions, no dunder anywhere; powers and sizes
are bounded (with no loop, a program of 2,000 characters ends at once).

A `Program` is a metric over a document's statements: named inputs, each a row as printed (or an analyst's
word for it) and a fiscal year, and one formula over their names ("revenue / avg(ppe_2018, ppe_2019)",
numbers, + - * / ** and abs/min/max/round/avg only). `compute` looks every input up by code
(rag/reader/lookup.py) and runs the formula; `shown` cites each input's printed figure and page.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from typing import Any

from pydantic import BaseModel, Field, field_validator

from rag.reader.lookup import Lookup, Similarity, normal, value
from rag.records import SCALES, StatementFrame, StatementKind

MAX_SOURCE_CHARS = 2000
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e15
MAX_ITEMS = 10_000

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCTIONS = {"round": round, "abs": abs, "min": min, "max": max, "sum": sum, "len": len,
             "float": float, "int": int}


class ComputeError(ValueError):
    """The program is not allowed, or failed; the message says why, for the model's retry."""


def run_program(source: str, names: dict[str, Any] | None = None) -> Any:
    """Run a program; its result is `ans` if it sets one, else its last expression or assignment."""
    if len(source) > MAX_SOURCE_CHARS:
        raise ComputeError(f"program too long ({len(source)} characters)")
    try:
        tree = ast.parse(source.strip(), mode="exec")
    except SyntaxError as exc:
        raise ComputeError(f"syntax error: {exc.msg} (line {exc.lineno})") from None
    return _Interpreter(names or {}).run(tree)


class _Interpreter:
    def __init__(self, names: dict[str, Any]) -> None:
        self.names = dict(names)

    def run(self, tree: ast.Module) -> Any:
        result = None
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                result = self.eval(stmt.value)
                for target in stmt.targets:
                    self.names[_name(target.id)] = result
            elif isinstance(stmt, ast.Expr):
                result = self.eval(stmt.value)
            else:
                raise ComputeError(f"not allowed: {type(stmt).__name__} statements")
        return self.names.get("ans", result)

    def eval(self, node: ast.AST) -> Any:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is None:
            raise ComputeError(f"not allowed: {type(node).__name__}")
        return _bounded(handler(node))

    def _Constant(self, node: ast.Constant) -> Any:
        if not isinstance(node.value, (int, float, str, bool)) or node.value is None:
            raise ComputeError(f"not allowed: constant {node.value!r}")
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        name = _name(node.id)
        if name in self.names:
            return self.names[name]
        if name in FUNCTIONS:
            return FUNCTIONS[name]
        raise ComputeError(f"unknown name {name!r}")

    def _List(self, node: ast.List) -> list:
        return [self.eval(e) for e in node.elts]

    def _Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.eval(e) for e in node.elts)

    def _BinOp(self, node: ast.BinOp) -> Any:
        op = _BINARY.get(type(node.op))
        if op is None:
            raise ComputeError(f"not allowed: operator {type(node.op).__name__}")
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, ast.Pow) and (not _is_number(right) or abs(right) > MAX_EXPONENT):
            raise ComputeError(f"exponent too large (at most {MAX_EXPONENT})")
        if isinstance(node.op, ast.Mult) and (isinstance(left, (str, list, tuple)) or isinstance(right, (str, list, tuple))):
            raise ComputeError("not allowed: repeating a sequence")
        try:
            return op(left, right)
        except ZeroDivisionError:
            raise ComputeError("division by zero") from None
        except (TypeError, ValueError, OverflowError) as exc:
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        op = _UNARY.get(type(node.op))
        if op is None:
            raise ComputeError(f"not allowed: operator {type(node.op).__name__}")
        return op(self.eval(node.operand))

    def _Call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        if not callable(func):
            raise ComputeError("not allowed: calling a value")
        args = [self.eval(a) for a in node.args]
        kwargs = {_name(k.arg or ""): self.eval(k.value) for k in node.keywords}
        try:
            return func(*args, **kwargs)
        except ComputeError:
            raise
        except Exception as exc:  # a wrong argument is the program's error, reported for a retry
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None

    def _Subscript(self, node: ast.Subscript) -> Any:
        value, key = self.eval(node.value), self.eval(node.slice)
        try:
            return value[key]
        except Exception as exc:
            raise ComputeError(f"{type(exc).__name__}: {exc}") from None


def _name(name: str) -> str:
    if name.startswith("_"):
        raise ComputeError(f"not allowed: name {name!r}")
    return name


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bounded(value: Any) -> Any:
    if _is_number(value) and (abs(value) > MAX_MAGNITUDE or math.isinf(value)):
        raise ComputeError("result too large")
    if isinstance(value, (list, tuple, str)) and len(value) > MAX_ITEMS:
        raise ComputeError("result too large")
    return value


# Programs over a document's statements

FORMULA_FUNCTIONS = ("abs", "min", "max", "round", "avg")
_FORMULA_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,40}$")
_WHAT = {ast.Attribute: "attribute access", ast.Subscript: "subscripts", ast.Lambda: "lambda",
         ast.List: "lists", ast.Tuple: "tuples", ast.Dict: "dicts", ast.Compare: "comparisons", ast.BoolOp: "and/or",
         ast.IfExp: "if/else", ast.ListComp: "comprehensions", ast.GeneratorExp: "comprehensions",
         ast.NamedExpr: "assignments", ast.JoinedStr: "strings"}


class Input(BaseModel):
    """One figure a program needs: a statement row as printed (or an analyst's word for it), its fiscal
    year, and the statement that holds it when the question names one."""

    name: str
    label: str
    year: str
    statement: str | None = None

    @classmethod
    def of_row(cls, words: str, year: int) -> Input:
        """A row's input named by its words, as long as a name may be: "net_cash_provided_by_operating_2021"."""
        name = ""
        for word in normal(words).split():
            if len(name) + len(word) > 30:
                break
            name = f"{name}_{word}" if name else word
        return cls(name=f"{name}_{year}" if name[:1].isalpha() else f"row_{year}", label=words, year=year)

    @field_validator("year", mode="before")
    @classmethod
    def _year_text(cls, year) -> str:
        return str(year)

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not _NAME.match(name) or name in FORMULA_FUNCTIONS:
            raise ValueError(f"an input's name is a letter then letters, digits or _, not a function: {name!r}")
        return name


class Program(BaseModel):
    """A metric as named inputs and one formula over them: "revenue / avg(ppe_2018, ppe_2019)"."""

    inputs: list[Input] = Field(min_length=1)
    formula: str


class Used(BaseModel):
    """An input as it was found: its name and the figure's lookup."""

    name: str
    lookup: Lookup


class Computed(BaseModel):
    """A program's result, in the statements' scale when its inputs share one (else in units), with every
    input as printed and where."""

    value: float
    formula: str
    inputs: list[Used]
    scale: str | None = None
    currency: str | None = None
    notes: list[str] = Field(default_factory=list, description="what code did to the program or where a figure "
                                                              "came from, said with the result")


def check_formula(formula: str, names: set[str]) -> ast.Expression:
    """The formula parsed, or ComputeError saying what in it is not allowed: only numbers, the inputs' names,
    + - * / ** and brackets, and abs, min, max, round and avg."""
    if len(formula) > 500:
        raise ComputeError(f"formula too long ({len(formula)} characters)")
    try:
        tree = ast.parse(formula.strip(), mode="eval")
    except SyntaxError as exc:
        raise ComputeError(f"syntax error in the formula: {exc.msg}") from None
    for node in ast.walk(tree):
        _check(node, names)
    return tree


def _check(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, (ast.Expression, ast.Load, ast.BinOp, ast.UnaryOp, *_FORMULA_OPERATORS)):
        return
    if isinstance(node, (ast.operator, ast.unaryop)):
        raise ComputeError(f"not allowed in a formula: the operator {type(node).__name__}")
    if isinstance(node, ast.Constant):
        if not _is_number(node.value):
            raise ComputeError(f"not allowed in a formula: the constant {node.value!r}")
    elif isinstance(node, ast.Name):
        if node.id not in names and node.id not in FORMULA_FUNCTIONS:
            raise ComputeError(f"not allowed in a formula: the name {node.id!r} (inputs: {', '.join(sorted(names))})")
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute):
            _check(node.func, names)
        if not isinstance(node.func, ast.Name) or node.func.id not in FORMULA_FUNCTIONS or node.keywords:
            called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise ComputeError(f"not allowed in a formula: calling {called} (only {', '.join(FORMULA_FUNCTIONS)}, "
                               "without keywords)")
    elif isinstance(node, ast.Attribute):
        raise ComputeError(f"not allowed in a formula: attribute access (.{node.attr})")
    else:
        raise ComputeError(f"not allowed in a formula: {_WHAT.get(type(node), type(node).__name__)}")


def compute(program: Program, frames: list[StatementFrame], similarity: Similarity | None = None,
            named: StatementKind | None = None) -> Computed:
    """Every input looked up (`NotFound` names the first that is not), then the formula run on their values. A
    dash in a statement is nil: 0. Inputs in different scales are taken in units first. `named`: the statement
    the question names, whose rows come first; a figure read elsewhere is said in the notes."""
    names = [i.name for i in program.inputs]
    if len(set(names)) != len(names):
        raise ComputeError(f"two inputs share a name: {names}")
    check_formula(program.formula, set(names))
    used = [Used(name=i.name, lookup=value(frames, i.label, i.year, i.statement, similarity, named))
            for i in program.inputs]
    _read_once(used)
    scales = {u.lookup.scale for u in used if u.lookup.scale}
    scale = scales.pop() if len(scales) == 1 else None
    values = {u.name: (u.lookup.value or 0.0) * (SCALES.get(u.lookup.scale or "", 1.0) if scale is None else 1.0)
              for u in used}
    result = run_program(program.formula.strip(), {**values, "avg": _avg})
    if not _is_number(result):
        raise ComputeError(f"the formula gave {result!r}, not a number")
    currencies = {u.lookup.currency for u in used if u.lookup.currency}
    return Computed(value=float(result), formula=program.formula.strip(), inputs=used, scale=scale,
                    currency=currencies.pop() if len(currencies) == 1 else None,
                    notes=list(dict.fromkeys(u.lookup.note for u in used if u.lookup.note)))


def _read_once(used: list[Used]) -> None:
    """Two inputs asked in other words that read one figure count it twice ("depreciation" and "amortization"
    both the row "Depreciation and amortization"): ComputeError, so the program names it once."""
    seen: dict[tuple, Used] = {}
    for u in used:
        where = (u.lookup.doc_id, u.lookup.page, u.lookup.label, u.lookup.period)
        if (first := seen.setdefault(where, u)) is not u and normal(first.lookup.asked) != normal(u.lookup.asked):
            raise ComputeError(f"{first.name} and {u.name} both read the row '{u.lookup.label}' ({u.lookup.period}, "
                               f"p. {u.lookup.page}): name it once")


def _avg(*values: float) -> float:
    flat = [v for item in values for v in (item if isinstance(item, (list, tuple)) else [item])]
    if not flat:
        raise ComputeError("avg() of nothing")
    return sum(flat) / len(flat)


Unit = str  # "ratio" | "percent" | "money"


def in_unit(result: float, unit: Unit = "ratio", scale: str | None = None, asked: str | None = None,
            decimals: int | None = None) -> float:
    """A result as asked: a ratio as it is, a percentage ×100, money from the statements' `scale` to the
    `asked` one ("thousand", "million", "billion"; None: units); rounded to `decimals` when given."""
    if unit == "percent":
        result *= 100
    elif unit == "money" and asked != scale:
        result = result * SCALES.get(scale or "", 1.0) / SCALES.get(asked or "", 1.0)
    return round(result, decimals) if decimals is not None else result


def shown(computed: Computed, unit: Unit = "ratio", asked: str | None = None, decimals: int = 2) -> str:
    """The result and its formula with every input's printed value and page, then what each input is:
    "13.05 = revenue 4,150 [p. 52] / avg(ppe_2021 301 [p. 51], ppe_2022 335 [p. 51]) · revenue: Net sales,
    2022; …"."""
    number = in_unit(computed.value, unit, computed.scale, asked, decimals)
    text = f"{number:,.{decimals}f}"
    if unit == "percent":
        text += "%"
    elif unit == "money":  # the sign before the currency: "-$749.4 million"
        sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
        text = f"{sign}{computed.currency or ''}{text}{' ' + asked if asked else ''}"
    by_name = {u.name: u.lookup for u in computed.inputs}

    def cited(match: re.Match) -> str:
        found = by_name.get(match.group(0))
        return f"{match.group(0)} {found.printed} [p. {found.page}]" if found else match.group(0)

    formula = re.sub(r"\b[A-Za-z]\w*\b", cited, computed.formula)
    scale = f" ({computed.currency or ''} in {computed.scale}s)".replace("( ", "(") if computed.scale else ""
    what = "; ".join(f"{u.name}: {u.lookup.label}, {u.lookup.period}" for u in computed.inputs)
    notes = "".join(f" · {note}" for note in computed.notes)
    return f"{text} = {formula} · {what}{scale}{notes}"
