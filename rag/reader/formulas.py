"""The model's program as code reads it, repaired by code before any model call.

The model writes, held by a JSON schema (`ProgramReply`), each statement row a metric needs once (a name, the
row's label in its own words, a statement) and one formula over a row's name and a fiscal year each. What a
person would read past, code reads past too, and asks the model again only for what it cannot:

- the formula's slips (`mended`): "^" is a power, "×", "÷" and "−" are the operators, square brackets are
  brackets, and brackets are balanced: a bracket left open is closed where its group's words end ("(oi + da /
  rev" is "(oi + da) / rev": a group that adds and is then divided; "avg(a_2020, a_2021 / r" closes its last
  argument as long as its first), and a bracket closed that was never opened opens the formula;
- a formula's name that no row has: the row it extends or abbreviates ("rev" for "revenue"), whose label it
  spells out, or of the same glossary concept ("revenue" for the row "net sales"); else, an analyst's word for a
  row (capex, inventory, revenue) is that row, added;
- a statement's name is never a row: "capital expenditures from the cash flow statement" is the row "capital
  expenditures"; a row labelled only "cash flow statement" is the row its name says ("capex"), or refused.
"""

from __future__ import annotations

import ast
import re
from typing import Literal

from pydantic import BaseModel, Field

from rag.reader.lookup import KIND_NAMES, concept_of, normal, without_statement
from rag.reader.program import FORMULA_FUNCTIONS, ComputeError, Input, Program
from rag.reader.question import YEAR

STATEMENTS = ("income statement", "balance sheet", "cash flow statement")
MAX_ROWS = 4
_SIGNS = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-", "—": "-", "[": "(", "]": ")", "{": "(", "}": ")"})
_TOKEN = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+|[A-Za-z_]\w*|\*\*|[-+*/(),])")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_OPERATORS = ("+", "-", "*", "/", "**", ",")
_SUM = re.compile(r"\s+([+-])\s+")  # a label's terms, added or subtracted


class RowReply(BaseModel):
    name: str = Field(json_schema_extra={"pattern": "^[a-z][a-z0-9]{0,15}$"})
    label: str = Field(json_schema_extra={"maxLength": 60})
    statement: Literal[STATEMENTS]


class ProgramReply(BaseModel):
    """What the model writes: each statement row the metric needs, once, and one formula over a row's name and
    a fiscal year each ("avg(ni_2019 / rev_2019, ni_2020 / rev_2020)"): a year more costs no row more."""

    rows: list[RowReply] = Field(json_schema_extra={"minItems": 1, "maxItems": MAX_ROWS})
    formula: str = Field(json_schema_extra={"maxLength": 160})

    def program(self, year: str | None = None) -> Program:
        """Every name of the formula an input: its row's label and statement, and its year (a name without
        one: the `year`, the one the question names). The formula and the rows repaired by code first."""
        formula, rows = _summed_apart(mended(self.formula), [_relabelled(r) for r in self.rows])
        formula, rows = _named_apart(formula, rows)
        try:
            names = dict.fromkeys(n.id for n in ast.walk(ast.parse(formula.strip(), mode="eval"))
                                  if isinstance(n, ast.Name) and n.id not in FORMULA_FUNCTIONS)
        except SyntaxError as exc:
            raise ComputeError(f"syntax error in the formula: {exc.msg}") from None
        inputs = []
        for name in names:
            row, _, named = name.rpartition("_") if YEAR.fullmatch(name[-4:]) else (name, "", year)
            row = _row_named(row, rows)
            if not named:
                raise ComputeError(f"{name!r} has no year: write it as {name}_ and the fiscal year")
            if name != f"{row}_{named}":
                formula = re.sub(rf"\b{name}\b", f"{row}_{named}", formula)
            inputs.append(Input(name=f"{row}_{named}", label=rows[row].label, year=named,
                                statement=rows[row].statement))
        if not inputs:
            raise ComputeError("the formula names no row")
        return Program(inputs=inputs, formula=formula)


def mended(formula: str) -> str:
    """A formula with its slips repaired: the operators people write, and its brackets balanced. A formula
    with no bracket to balance comes back as written; one that still does not parse, with the parser's reason."""
    text = formula.translate(_SIGNS).replace("^", "**")
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text) or (not _unopened(tokens) and _unclosed(tokens) is None):
        return text
    tokens = ["("] * _unopened(tokens) + tokens
    while (start := _unclosed(tokens)) is not None:
        tokens.insert(_closing(tokens, start), ")")
    try:
        return ast.unparse(ast.parse(" ".join(tokens), mode="eval"))
    except SyntaxError:
        return text


def _unopened(tokens: list[str]) -> int:
    """How many closing brackets close nothing."""
    depth = extra = 0
    for t in tokens:
        if t == "(":
            depth += 1
        elif t == ")":
            depth, extra = (depth - 1, extra) if depth else (0, extra + 1)
    return extra


def _unclosed(tokens: list[str]) -> int | None:
    """The innermost bracket left open, by its index."""
    opened: list[int] = []
    for n, t in enumerate(tokens):
        if t == "(":
            opened.append(n)
        elif t == ")" and opened:
            opened.pop()
    return opened[-1] if opened else None


def _closing(tokens: list[str], start: int) -> int:
    """Where the bracket opened at `start` closes: a call's last argument as long as its first; a group that
    adds and is then multiplied or divided, before that; else at the end."""
    units, n = [], start + 1
    while n < len(tokens):
        units.append((n, end := _unit_end(tokens, n)))
        n = end
    kinds = [tokens[a] if b == a + 1 and tokens[a] in _OPERATORS else "x" for a, b in units]
    if start > 0 and _IDENTIFIER.fullmatch(tokens[start - 1]):
        if "," not in kinds:
            return len(tokens)
        first, last = kinds.index(","), len(kinds) - kinds[::-1].index(",")
        cut = min(last + first, len(units))
        return units[cut - 1][1] if cut > last else len(tokens)
    adds = [i for i, k in enumerate(kinds) if k in ("+", "-") and i > 0 and kinds[i - 1] == "x"]
    times = [i for i, k in enumerate(kinds) if k in ("*", "/") and adds and i > adds[0]]
    return units[times[0]][0] if times else len(tokens)


def _unit_end(tokens: list[str], n: int) -> int:
    """The end of the unit at `n`: a name with its call, a bracketed group, or one token."""
    if _IDENTIFIER.fullmatch(tokens[n]) and n + 1 < len(tokens) and tokens[n + 1] == "(":
        return _unit_end(tokens, n + 1)
    if tokens[n] != "(":
        return n + 1
    depth = 0
    for m in range(n, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[m], 0)
        if depth == 0:
            return m + 1
    return len(tokens)


def _relabelled(row: RowReply) -> RowReply:
    """A row whose label names the statement it is in as well, or instead: the row its words, or its name, say."""
    label = without_statement(row.label)
    if label == row.label:
        return row
    if not label:  # the row's name, unless it is the statement's own first word ("cash" of "cash flow statement")
        words = row.name.replace("_", " ")
        if concept_of(words) is None or normal(row.label).startswith(words):
            raise ComputeError(f"the row {row.name!r} is labelled {row.label!r}, a statement, not a row of it: "
                               "give the label of the row sought in it")
        label = words
    return row.model_copy(update={"label": label})


def _summed_apart(formula: str, rows: list[RowReply]) -> tuple[str, list[RowReply]]:
    """A row whose label adds or subtracts rows ("operating income + depreciation") is those rows, each its own,
    and the formula adds or subtracts them where it names it."""
    out: list[RowReply] = []
    for row in rows:
        terms = _SUM.split(row.label)
        if len(terms) < 3:
            out.append(row)
            continue
        parts = [row.model_copy(update={"name": f"{row.name}{n}", "label": label})
                 for n, label in enumerate(terms[::2], 1)]
        signs = ["+", *terms[1::2]]
        formula = re.sub(rf"\b{row.name}(_(?:19|20)\d\d)?\b", lambda m: "(" + " ".join(
            f"{sign} {p.name}{m.group(1) or ''}" for sign, p in zip(signs, parts)).lstrip("+ ") + ")", formula)
        out += parts
    return formula, out


def _named_apart(formula: str, rows: list[RowReply]) -> tuple[str, dict[str, RowReply]]:
    """Rows by name. Rows that share a name ("current" for total current assets and total current liabilities)
    are told apart in the order the formula names them, when it names that name once for each of them."""
    named: dict[str, RowReply] = {}
    for name in dict.fromkeys(r.name for r in rows):
        alike = [r for r in rows if r.name == name]
        if len(alike) == 1:
            named[name] = alike[0]
            continue
        uses = list(re.finditer(rf"\b{name}(?=_(?:19|20)\d\d\b|\b)", formula))
        if len(uses) != len(alike):
            labels = ", ".join(r.label for r in alike)
            raise ComputeError(f"two rows share the name {name!r} ({labels}): give each row its own name")
        for n, (row, use) in reversed(list(enumerate(zip(alike, uses), 1))):
            formula = f"{formula[:use.start()]}{name}{n}{formula[use.end():]}"
            named[f"{name}{n}"] = row
    return formula, named


def _row_named(name: str, rows: dict[str, RowReply]) -> str:
    """The row a formula's name is: its own; else the one row whose name it extends or abbreviates, or whose
    label it spells ("depreciation" for a row named "deprec", "rev" for "revenue"); else the one row of the
    glossary concept it names ("revenue" for the row "net sales"); else that concept's row, added to `rows`."""
    if name in rows:
        return name
    words = " ".join(name.split("_"))
    concept = concept_of(words)
    for alike in ([n for n, r in rows.items() if name.startswith(n) or name == "_".join(normal(r.label).split())],
                  [n for n in rows if len(name) >= 3 and n.startswith(name)],
                  [n for n, r in rows.items() if concept and concept in (concept_of(r.label), concept_of(n))]):
        if len(alike) == 1:
            return alike[0]
        if alike:
            break
    else:
        if concept is not None:
            rows[name] = RowReply(name=name, label=words, statement=KIND_NAMES[concept.kind])
            return name
    raise ComputeError(f"the formula names {name!r}, which is no row ({', '.join(rows)}): add its row")
