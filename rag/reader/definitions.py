"""Analysts' metrics, defined once: what a question means by "ROCE" or "total debt" when it does not say.

A question that names a metric and gives no definition of its own gets the definition an analyst would use,
written in the statements' row words, after its text; the model then writes the program as for a question
that defines it (rag/reader/skills/metric.py), and code looks the rows up. A metric built on another ("total
debt" in the capitalization ratio) brings that one's definition too. An average is between the fiscal year
asked and the one before.

- total debt = long-term debt + current portion of long-term debt · EBITDA = operating income + D&A ·
  working capital = total current assets − total current liabilities · long-term liabilities = total
  liabilities − total current liabilities · free cash flow = cash from operations − capex
- margins (gross, operating, EBITDA, net) over revenue · current and quick ratios · effective tax rate =
  income tax expense / income before income taxes · interest coverage = operating income / interest expense
- returns: on assets and on equity over their averages, on capital employed = operating income / (total
  assets − total current liabilities) · capitalization ratio, debt to equity ("total debt to EBITDA": both)
- turnovers (asset, fixed asset, inventory, receivables, payables) and days (sales, inventory, payables) over
  averages · cash conversion cycle = days inventory + days sales − days payable outstanding · D&A margin =
  D&A / revenue · dividend payout ratio = dividends paid / net income · retention ratio = (net income −
  dividends paid) / net income, the dividends an amount though printed as an outflow · net debt = total debt − cash

Each has the kind of result it gives where that kind has a range (`kind`: a share of a whole, within ±100%; a
turnover or days, above nil), which rag/reader/plausible.py checks every result against.

A question that asks one of these for one fiscal year and nothing more needs no model: `written` makes its
program from the definition (`across`: its change between two years, or its average over several). Nor does
a question whose own definition is written in row words an analyst uses
("defined as FY2020 revenue / average inventories between FY2019 and FY2020", "total current assets less
inventories"): `stated` reads it into a program, or gives None for any word it does
not know, and the model writes the program.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal, NamedTuple

from rag.reader.lookup import normal, without_statement
from rag.reader.program import ComputeError, Input, Program, check_formula
from rag.reader.question import YEAR
from rag.reader.wording import RULES

_AVERAGE = "between FY{prev} and FY{year}"
_ROW = r"[a-z]+(?:(?:[' ,]+|-)[a-z]+)*"  # a row's words in a formula, between its operators
_SPAN = r"between fy ?(?P<{0}a>\d{{4}}) and fy ?(?P<{0}b>\d{{4}})"
_PART = re.compile(rf"average (?:of )?(?P<average>{_ROW}) {_SPAN.format('avg')}|"
                   rf"change in (?P<change>{_ROW}) {_SPAN.format('chg')}|"
                   rf"(?P<dated>{_ROW}) (?:in|for|of) fy ?(?P<of>\d{{4}})|(?:fy ?(?P<year>\d{{4}}) )?(?P<row>{_ROW})", re.I)


class Definition(NamedTuple):
    said: tuple[str, ...]  # analysts' words, as `normal` writes them
    formula: str  # in statement rows' words; {prev} and {year}: the years of an average
    uses: tuple[str, ...] = ()  # metrics its formula names, defined after it
    percent: bool = False  # told as a percentage (a margin, a rate, a return), so it changes by points
    kind: Literal["share", "positive"] | None = None  # the range its result lies in (rag/reader/plausible.py)


_SHARE, _POSITIVE = "share", "positive"
DEFINITIONS: dict[str, Definition] = {
    "total debt": Definition(("total debt",), "long-term debt + current portion of long-term debt"),
    "EBITDA": Definition(("ebitda",), "operating income + depreciation and amortization"),
    "EBITDA margin": Definition(("ebitda margin", "ebitda margins"),
                                "(operating income + depreciation and amortization) / revenue", percent=True,
                                kind=_SHARE),
    "D&A margin": Definition(("d and a margin", "da margin", "depreciation and amortization margin"),
                             "depreciation and amortization / revenue", percent=True, kind=_SHARE),
    "working capital": Definition(("working capital", "net working capital"),
                                  "total current assets - total current liabilities"),
    "long-term liabilities": Definition(("long term liabilities", "total long term liabilities",
                                         "non current liabilities", "total non current liabilities"),
                                        "total liabilities - total current liabilities"),
    "current ratio": Definition(("current ratio",),
                                "total current assets / total current liabilities", kind=_POSITIVE),
    "quick ratio": Definition(("quick ratio", "acid test ratio"), "(cash and cash equivalents + short-term "
                              "investments + accounts receivable) / total current liabilities", kind=_POSITIVE),
    "free cash flow": Definition(("free cash flow", "fcf"),
                                 "net cash provided by operating activities - capital expenditures"),
    "gross margin": Definition(("gross margin", "gross margins", "gross profit margin"), "gross profit / revenue",
                               percent=True, kind=_SHARE),
    "operating margin": Definition(("operating margin", "operating profit margin", "ebit margin"),
                                   "operating income / revenue", percent=True, kind=_SHARE),
    "net profit margin": Definition(("net profit margin", "net margin", "net income margin", "profit margin"),
                                    "net income / revenue", percent=True, kind=_SHARE),
    "effective tax rate": Definition(("effective tax rate", "effective tax ratio", "effective income tax rate"),
                                     "income tax expense / income before income taxes", percent=True),
    "interest coverage ratio": Definition(("interest coverage", "interest coverage ratio", "times interest earned"),
                                          "operating income / interest expense"),
    "return on assets": Definition(("return on assets", "roa", "return on average assets"),
                                   f"net income / average total assets {_AVERAGE}", percent=True, kind=_SHARE),
    "return on equity": Definition(("return on equity", "roe", "return on average equity"),
                                   f"net income / average total shareholders' equity {_AVERAGE}", percent=True),
    "return on capital employed": Definition(("return on capital employed", "roce"),
                                             "operating income / (total assets - total current liabilities)",
                                             percent=True),
    "capitalization ratio": Definition(("capitalization ratio",),
                                       "total debt / (total debt + total shareholders' equity)", ("total debt",)),
    "debt to equity ratio": Definition(("debt to equity", "debt to equity ratio", "debt equity ratio"),
                                       "total debt / total shareholders' equity", ("total debt",)),
    "cost of debt": Definition(("cost of debt",), f"interest expense / average total debt {_AVERAGE}", ("total debt",)),
    "asset turnover ratio": Definition(("asset turnover", "total asset turnover"),
                                      f"revenue / average total assets {_AVERAGE}", kind=_POSITIVE),
    "fixed asset turnover ratio": Definition(("fixed asset turnover",),
                                             f"revenue / average property and equipment, net {_AVERAGE}", kind=_POSITIVE),
    "inventory turnover ratio": Definition(("inventory turnover",), f"cost of sales / average inventories {_AVERAGE}",
                                           kind=_POSITIVE),
    "receivables turnover ratio": Definition(("receivables turnover", "accounts receivable turnover"),
                                             f"revenue / average accounts receivable {_AVERAGE}", kind=_POSITIVE),
    "days sales outstanding": Definition(("days sales outstanding", "dso"),
                                         f"365 * average accounts receivable {_AVERAGE} / revenue", kind=_POSITIVE),
    "days inventory outstanding": Definition(("days inventory outstanding", "dio", "days of inventory"),
                                             f"365 * average inventories {_AVERAGE} / cost of sales", kind=_POSITIVE),
    "days payable outstanding": Definition(("days payable outstanding", "dpo"),
                                           f"365 * average accounts payable {_AVERAGE} / cost of sales", kind=_POSITIVE),
    "cash conversion cycle": Definition(("cash conversion cycle", "ccc", "cash cycle", "cash to cash cycle"),
                                        "days inventory outstanding + days sales outstanding - days payable outstanding",
                                        ("days inventory outstanding", "days sales outstanding",
                                         "days payable outstanding")),
    "payables turnover ratio": Definition(("payables turnover", "accounts payable turnover"),
                                          f"cost of sales / average accounts payable {_AVERAGE}", kind=_POSITIVE),
    "net debt": Definition(("net debt",), "total debt - cash and cash equivalents", ("total debt",)),
    "dividend payout ratio": Definition(("dividend payout ratio", "payout ratio"),
                                        "dividends paid / net income", percent=True),
    "retention ratio": Definition(("retention ratio", "earnings retention ratio", "earnings retention rate",
                                   "plowback ratio"), "(net income - dividends paid) / net income", percent=True),
}
SAID = sorted(((w, name) for name, d in DEFINITIONS.items() for w in d.said), key=lambda p: -len(p[0]))


def longest_first(text: str, wordings) -> tuple[list[str], str]:
    """The wordings a text holds, longest first, none inside another; and the text's words left over."""
    words, found = f" {normal(text)} ", []
    for said in sorted(wordings, key=len, reverse=True):
        if f" {said} " in words:
            words = words.replace(f" {said} ", " | ")
            found.append(said)
    return found, words


def metrics_named(text: str) -> list[str]:
    """The metrics a text names, longest wording first, none inside another ("total debt to EBITDA": both)."""
    names = dict(SAID)
    return list(dict.fromkeys(names[said] for said in longest_first(text, names)[0]))


def defined(text: str, year: int | None) -> str:
    """The definitions a question leaves out, as sentences ("Work out EBITDA from operating profit and D&A"
    names the parts, not how they combine); "" for a metric it defines itself ("Net debt is defined as …")."""
    names = [name for name in metrics_named(text) if not gives(text, name)]
    names = list(dict.fromkeys(n for name in names for n in (name, *DEFINITIONS[name].uses)))
    return " ".join(f"{name[0].upper()}{name[1:]} is defined as {formula}." for name in names
                    if (formula := _formula(name, year)))


def gives(text: str, name: str) -> bool:
    """Whether a text defines a metric itself: "X is defined as", "define X as", "X = …"."""
    words = normal(text)
    return any(re.search(rf"\b{said}\b(?: \w+){{0,3}} defined as|\bdefine(?: \w+){{0,2}} {said}\b", words) or
               re.search(rf"\b{re.escape(said)}\W*=", text, re.I) for said in DEFINITIONS[name].said)


def _formula(name: str, year: int | None) -> str:
    formula = DEFINITIONS[name].formula
    if "{year}" in formula:
        if year is None:
            return ""
        formula = formula.format(prev=year - 1, year=year)
    return formula


def written(name: str, year: int) -> Program:
    """The program of a defined metric for one fiscal year: each row of its formula an input, a metric it
    builds on in parentheses, an average over the year and the one before."""
    return across(name, [year], "one year")


def across(name: str, years: list[int], how: Literal["one year", "change", "average"]) -> Program:
    """A defined metric's program over fiscal years: of one year, its change from the first year to the last
    (a margin's in points), or its average over every year from the first to the last."""
    built_on = {said: used for used in DEFINITIONS[name].uses for said in DEFINITIONS[used].said}
    first, last = min(years), max(years)
    span = range(first, last + 1) if how == "average" else dict.fromkeys((first, last))
    inputs: dict[tuple[str, int], Input] = {}
    each = [_program(_formula(name, year), year, built_on, inputs=inputs).formula for year in span]
    formula = each[0] if how == "one year" else f"({each[-1]}) - ({each[0]})" if how == "change" else \
        f"avg({', '.join(each)})"
    return Program(inputs=list(inputs.values()), formula=formula)


def _program(formula: str, year: int, built_on: dict[str, str] | None = None,
             known: Callable[[str], bool] = lambda words: True,
             inputs: dict[tuple[str, int], Input] | None = None) -> Program:
    """A formula in row words as a program: "average X between FYa and FYb" is avg(X_a, X_b), "change in X
    between …" X_b − X_a, "FYa X" or "X in FYa" X of that year, any other row the `year`'s, a metric `built_on`
    names (its words → its name) that metric's formula of the year; a row `known` refuses, ValueError. `inputs`
    gathers the rows of several years' programs."""
    inputs = {} if inputs is None else inputs
    built_on = built_on or {}

    def expand(formula: str, y: int) -> str:
        def part(m: re.Match) -> str:
            if m["average"]:
                return f"avg({row(m['average'], int(m['avga']))}, {row(m['average'], int(m['avgb']))})"
            if m["change"]:
                return f"({row(m['change'], int(m['chgb']))} - {row(m['change'], int(m['chga']))})"
            if m["dated"]:
                return row(m["dated"], int(m["of"]))
            return row(m["row"], int(m["year"] or y))
        return _PART.sub(part, formula)

    def row(words: str, y: int) -> str:
        words = words.strip(" ,")
        if words in built_on:
            return f"({expand(_formula(built_on[words], y), y)})"
        if not known(words):
            raise ValueError(f"no row named {words!r}")
        if (words, y) not in inputs:
            inputs[words, y] = Input.of_row(words, y)
        return inputs[words, y].name

    formula = expand(formula, year)
    return Program(inputs=list(inputs.values()), formula=formula)


_WORDED = [(re.compile(rf"\b{words}\b", re.I), op) for words, op in (
    ("divided by", "/"), ("over", "/"), ("less", "-"), ("minus", "-"), ("plus", "+"), ("times", "*"),
    ("multiplied by", "*"))]
_PRONOUNS = {"it", "this", "this ratio", "this metric", "the ratio", "the metric"}
_DROPPED = re.compile(r"\[[^\]]*\]|\b(?:the|unadjusted|reported|as reported)\b", re.I)


def stated(text: str, known: Callable[[str], bool]) -> Program | None:
    """The program of the definition a question gives in row words, each row one `known` takes; None where
    the question gives none, or says anything else."""
    if not (match := RULES["defined"].search(text)) or not (years := YEAR.findall(text[:match.start("formula")])) or \
            len(set(years)) != 1:
        return None
    name = normal(match["named"] or match["name"] or match["listed"])
    if name in _PRONOUNS and (asked := RULES["asked_of_year"].search(text[:match.start()])):
        name = normal(asked["asked"])  # "What is its FY2021 quick ratio? Define it as …"
        if RULES["definition_more"].search(name.rpartition(" ")[0]):  # "… cushion less capex? Define it as …"
            return None
    if not name or RULES["definition_more"].search(f" {normal(text[:match.start()])} ".replace(f" {name} ", " ")):
        return None
    formula = _DROPPED.sub(" ", without_statement(match["formula"]).replace("&", " and "))
    for worded, op in _WORDED:
        formula = worded.sub(f" {op} ", formula)
    formula = re.sub(r"\s+", " ", formula).strip().lower()
    try:
        program = _program(formula, int(years[0]), known=known)
        check_formula(program.formula, {i.name for i in program.inputs})
    except (ValueError, ComputeError):
        return None
    return program
