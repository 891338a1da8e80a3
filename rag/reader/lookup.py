"""Lookups by code: one figure of a document's statements (`value`), found by its row's label and a fiscal
year, in the statement asked where it prints the row named, else in the one an analyst's word lives in (capex:
the cash flows), a statement before a note's table.

A row is found by its label's likeness to the label asked (rapidfuzz: half token-set ratio, which forgives
words the page adds, "Inventories, net (Note 6)", half plain ratio, which keeps "Deferred revenue" below
"Revenue"), or to the statement wordings of the GLOSSARY concept the label names; an injected `similarity`
(the embedder's cosine) can take part. A year is matched to a column's fiscal year ("2019", "FY2019", "fiscal
2019") or to its header as printed ("January 28, 2023"). A lookup that finds nothing raises `NotFound`,
whose message says which row and year it sought. A note's sentence that prints a figure per year is a
frame too (rag/ingest/sentences.py), after a statement's row of like name. An analyst's "unadjusted" or
"as reported" figure is the statement's own; an amount paid out (capex, dividends, buybacks, any cash flow row
named as an outflow: "Purchases of …", "Repayments of …") is positive, as analysts use it, though its statement
prints it as an outflow, and so is a cost that a statement prints in parentheses in every year.

The statement a question names ("capex shown in the cash flow statement", `named_statement`) is read first:
its rows before any other's, a note's table or sentence only when it prints no like row, and then the figure
says where it was read (`Lookup.note`); a balance asked of a statement of flows, or a flow of the balance
sheet, is read where it lives. A statement's name is no row's (`without_statement`).

GLOSSARY: the words analysts use → the statement that holds the figure, and the wordings statements print
(in order of preference: a total before its parts). Written once, for every company's filings:

- revenue (sales, net sales, top line) → income statement: total net revenues, total revenues, net sales, …
- COGS (cost of goods sold, cost of sales, cost of revenue) → income statement: cost of sales, cost of revenue(s),
  cost of goods sold, cost of products sold, total cost of revenue(s), merchandise costs
- gross profit (gross margin) · operating income (operating profit, EBIT, income from operations) ·
  net income (net earnings, net profit; attributable to the company before including minority interests)
  · SG&A (selling, general and administrative expenses) · R&D (research and development; printed also as
  technology and development, product development) · interest expense · income tax expense · income
  before income taxes (EBT) → income statement
- PP&E (net PP&E, PPNE, PP/E, fixed assets, property, plant and equipment) → balance sheet: property and
  equipment, net; property, plant and equipment, net; net property and equipment; land, buildings and equipment
- inventory, accounts receivable, accounts payable, cash, total current assets, total current liabilities,
  total assets, total liabilities, shareholders' equity, long-term debt, its current portion → balance sheet (never
  the cash flows, which print a balance's change under its name, unless they are asked)
- capex (cap-ex, capital expenditures, purchases of PP&E) → cash flows: purchases of / additions to / payments
  for property (plant) and equipment, capital expenditures, capital spending
- D&A (depreciation and amortization) · cash from operations (operating cash flow, CFO, OCF) → net cash provided
  by operating activities · dividends paid → cash dividends paid, dividends paid · share repurchases → cash flows
- A/R and A/P are accounts receivable and payable
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import NamedTuple, get_args

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from rag.records import StatementFrame, StatementKind, StatementRow

MIN_SCORE = 75.0  # a label less alike than this is another row
_KIND_BONUS = 15.0  # the statement asked for, over another that prints a like row
_EXACT = 95.0  # a label as alike as this is the row named
_STATEMENT_BONUS = 8.0  # a statement's row, over a note's table that repeats it
_NAMED_BONUS = 40.0  # the statement the question names, over any other that prints a like row
# and up to 3 more for a long table: the statement itself, over a summary of it (selected financial data)


class Concept(NamedTuple):
    kind: StatementKind
    said: tuple[str, ...]  # analysts' words
    printed: tuple[str, ...]  # statements' wordings, preferred first
    spent: bool = False  # an amount paid out, which a statement may print as an outflow: "(460.8)"
    expense: bool = False  # a cost, which some statements print in parentheses in every year: "(3,269)"


_PPE = ("property and equipment net", "property plant and equipment net", "net property and equipment",
        "net property plant and equipment", "property and equipment", "property plant and equipment",
        "land buildings and equipment", "property equipment and software net")
GLOSSARY: dict[str, Concept] = {
    "revenue": Concept("income_statement", ("revenue", "revenues", "sales", "top line", "turnover"), (
        "total net revenues", "total net revenue", "total revenues", "total revenue", "net revenues", "net revenue",
        "revenues", "revenue", "total net sales", "net sales", "net operating revenues", "operating revenues",
        "sales", "revenues net")),
    "cogs": Concept("income_statement", ("cogs", "cost of goods sold", "cost of sales", "cost of revenue",
                                         "cost of revenues", "cost of goods"), (
        "total cost of revenues", "total cost of revenue", "total cost of sales", "cost of sales", "cost of revenues",
        "cost of revenue", "cost of goods sold", "cost of products sold", "cost of goods sold excluding depreciation",
        "merchandise costs", "cost of merchandise sold"), expense=True),
    "gross profit": Concept("income_statement", ("gross profit", "gross margin"), ("gross profit", "gross margin")),
    "operating income": Concept("income_statement", ("operating income", "operating profit", "ebit",
                                                     "income from operations", "operating earnings"), (
        "operating income", "operating profit", "income from operations", "operating income loss",
        "income loss from operations", "earnings from operations", "operating earnings")),
    "net income": Concept("income_statement", ("net income", "net earnings", "net profit", "profit", "earnings",
                                               "net income attributable to the company",
                                               "net income attributable to shareholders"), (
        "net income", "net earnings", "net income attributable to", "net earnings attributable to",
        "net income loss", "net income loss attributable to common shareholders")),
    "sg&a": Concept("income_statement", ("sg&a", "sga", "selling general and administrative",
                                         "selling general and administrative expenses"), (
        "selling general and administrative expenses", "selling general and administrative expense",
        "selling general and administrative", "selling and administrative expenses"), expense=True),
    "r&d": Concept("income_statement", ("r&d", "research and development", "research and development expense",
                                        "research and development expenses"), (
        "research and development", "research and development expense", "research and development expenses",
        "technology and development", "product development", "research development and engineering"), expense=True),
    "interest expense": Concept("income_statement", ("interest expense",),
                                ("interest expense", "interest expense net"), spent=True),
    "pretax income": Concept("income_statement", ("income before income taxes", "pretax income", "pre tax income", "ebt",
                                                  "earnings before income taxes", "income before taxes"), (
        "income before income taxes", "earnings before income taxes", "income before provision for income taxes",
        "earnings before income tax expense", "income loss before income taxes", "income before taxes")),
    "income tax": Concept("income_statement", ("income tax expense", "income taxes", "tax expense"), (
        "income tax expense", "provision for income taxes", "income taxes", "income tax provision"), expense=True),
    "ppe": Concept("balance_sheet", ("pp&e", "ppe", "net ppe", "net pp&e", "ppne", "net ppne", "ppne net", "ppe net",
                                     "pp&e net", "pp/e", "net pp/e", "p p e", "fixed assets", "net fixed assets",
                                     "property plant and equipment", "property and equipment", *_PPE), _PPE),
    "inventory": Concept("balance_sheet", ("inventory", "inventories"), (
        "inventories", "inventory", "merchandise inventories", "inventories net", "total inventories")),
    "accounts receivable": Concept("balance_sheet", ("accounts receivable", "receivables", "trade receivables", "a/r",
                                                     "ar", "net receivables", "accounts receivable net"), (
        "accounts receivable net", "receivables net", "trade accounts receivable net", "trade receivables net",
        "accounts receivable", "receivables")),
    "accounts payable": Concept("balance_sheet", ("accounts payable", "payables", "trade payables", "a/p", "ap"), (
        "accounts payable", "trade accounts payable", "accounts payable trade", "trade payables")),
    "cash": Concept("balance_sheet", ("cash", "cash and cash equivalents"), (
        "cash and cash equivalents", "cash and equivalents")),
    "total current assets": Concept("balance_sheet", ("total current assets", "current assets"),
                                    ("total current assets",)),
    "total current liabilities": Concept("balance_sheet", ("total current liabilities", "current liabilities"),
                                         ("total current liabilities",)),
    "total assets": Concept("balance_sheet", ("total assets", "assets"), ("total assets",)),
    "total liabilities": Concept("balance_sheet", ("total liabilities", "liabilities"), ("total liabilities",)),
    "equity": Concept("balance_sheet", ("shareholders equity", "stockholders equity", "equity", "book value",
                                      "common equity", "common shareholders equity", "common stockholders equity"), (
        "total shareholders equity", "total stockholders equity", "total equity")),
    "current portion of long-term debt": Concept("balance_sheet", ("current portion of long term debt",
                                                                   "current maturities of long term debt"), (
        "current portion of long term debt", "current maturities of long term debt",
        "current portion of long term debt and finance leases")),
    "long-term debt": Concept("balance_sheet", ("long term debt",), (
        "long term debt", "long term debt net", "long term debt excluding current portion",
        "long term debt net of current portion", "long term debt less current portion",
        "long term debt excluding current maturities", "long term debt less current maturities",
        "long term debt non current", "long term debt net of current maturities")),
    "capex": Concept("cash_flows", ("capex", "cap ex", "capital expenditures", "capital expenditure",
                                    "capital spending", "purchases of pp&e", "purchases of ppe"), (
        "capital expenditures", "purchases of property and equipment", "purchases of property plant and equipment",
        "additions to property and equipment", "additions to property plant and equipment",
        "payments for property and equipment", "payments for property plant and equipment",
        "capital spending", "acquisitions of property and equipment", "expenditures for property and equipment",
        "purchases of property equipment and software", "purchases of land buildings and equipment"), spent=True),
    "d&a": Concept("cash_flows", ("d&a", "da", "depreciation and amortization", "depreciation & amortization",
                                  "depreciation amortization"), (
        "depreciation and amortization", "depreciation amortization and other", "depreciation and amortization expense",
        "depreciation")),
    "cash from operations": Concept("cash_flows", ("cash from operations", "operating cash flow", "cfo", "ocf",
                                                   "operating cash flows", "cash flow from operations",
                                                   "cash flow from operating activities",
                                                   "cash from operating activities"), (
        "net cash provided by operating activities", "net cash provided by used in operating activities",
        "net cash from operating activities", "cash provided by operating activities",
        "total cash provided by operating activities", "net cash provided by operations",
        "cash provided by operations", "net cash used in provided by operating activities")),
    "dividends paid": Concept("cash_flows", ("dividends paid", "dividends", "cash dividends"), (
        "dividends paid", "cash dividends paid", "dividends paid to shareholders", "payments of dividends",
        "cash dividends", "dividends paid on common stock", "cash dividends paid to shareholders"), spent=True),
    "share repurchases": Concept("cash_flows", ("share repurchases", "buybacks", "stock repurchases"), (
        "repurchase of common stock", "repurchases of common stock", "purchases of treasury stock",
        "share repurchases", "repurchases of common stock and dividends"), spent=True),
}

_STATEMENTS: dict[str, StatementKind] = {
    "balance sheet": "balance_sheet", "financial position": "balance_sheet", "financial condition": "balance_sheet",
    "cash flow": "cash_flows", "income statement": "income_statement", "p l": "income_statement",
    "p and l": "income_statement",
    "profit and loss": "income_statement", "statement of income": "income_statement",
    "statement of operations": "income_statement", "statement of earnings": "income_statement",
    "operations": "income_statement", "earnings": "income_statement", "equity": "equity",
}
_KINDS: tuple[StatementKind, ...] = get_args(StatementKind)
KIND_NAMES = {"balance_sheet": "balance sheet", "income_statement": "income statement",
               "cash_flows": "cash flow statement", "equity": "statement of equity", "other": "other tables",
               "sentence": "text"}

_NOT_STATEMENTS = ("other", "sentence")  # a statement's row before a note's table or sentence of like name
Similarity = Callable[[str, str], float]  # (label asked, label printed) → 0..1


class Lookup(BaseModel):
    """One figure found: what was asked, the row and column it was read from, as printed, and where."""

    asked: str
    value: float | None = Field(description="None where the statement prints a dash")
    printed: str
    label: str
    section: list[str] = Field(default_factory=list)
    period: str
    year: int | None = None
    page: int
    file: str = ""
    doc_id: str = ""
    kind: StatementKind
    title: str
    scale: str | None = None  # None for a per-share figure too
    currency: str | None = None
    score: float
    note: str = Field("", description="where it was read, when not in the statement the question names")


class NotFound(LookupError):
    """No row like the one asked, with a figure for the year asked: the message says which."""

    def __init__(self, label: str, period: str | int, statement: str | None = None, detail: str = "") -> None:
        self.label, self.period, self.statement = label, str(period), statement
        named = KIND_NAMES.get(statement or "", statement)
        where = f" in the {named}" if named else ""
        super().__init__(f"no row for '{label}' in {period}{where}{detail}")


def value(frames: list[StatementFrame], label: str, period: str | int, statement: str | None = None,
          similarity: Similarity | None = None, named: StatementKind | None = None) -> Lookup:
    """The figure of the row most like `label` in the column of `period`, preferring the statement asked
    (a kind, "balance sheet", "P&L", …) where it prints that row, else the one the glossary names for it.
    `named`: the statement the question names, whose rows come before any other's (`_NAMED_BONUS`) where the
    row lives there or in another statement of flows; a figure read elsewhere says so in its `note`."""
    year, header = period_of(period)
    asked, label = label, _AS_REPORTED.sub(" ", label).strip() or label  # a statement prints reported figures
    concept = concept_of(label)
    asked_kind, home = statement_kind_of(statement), concept.kind if concept else None
    if named and home and (named == "balance_sheet") != (home == "balance_sheet"):
        named = None  # a balance asked of a statement of flows, or a flow of the balance sheet: its own statement
    wordings = [label, *(concept.printed if concept else ())]
    best: tuple[float, int] | None = None
    found: tuple[StatementFrame, StatementRow, int, float] | None = None
    for frame in frames:
        col = column_of(frame, year, header)
        if col is None or (home == "balance_sheet" and frame.kind == "cash_flows" and asked_kind != "cash_flows"):
            continue  # the cash flows print a balance's change, not the balance
        for row in frame.rows:
            if not row.cells[col] or (score := label_score(wordings, row.label, similarity)) < MIN_SCORE:
                continue
            bonus = _kind_bonus(frame.kind, score, asked_kind, home) + (_NAMED_BONUS if frame.kind == named else 0.0) + \
                (_STATEMENT_BONUS if frame.kind not in _NOT_STATEMENTS else 0.0)
            rank = (score + bonus + min(len(frame.rows), 30) / 10, -frame.page)
            if best is None or rank > best:
                best, found = rank, (frame, row, col, score)
    if found is None:
        raise NotFound(asked, period, named or statement or home)
    return _looked_up(asked, concept, named, *found)


def _looked_up(asked: str, concept: Concept | None, named: StatementKind | None, frame: StatementFrame,
               row: StatementRow, col: int, score: float) -> Lookup:
    """A row's figure as found: an amount paid out (a concept's, or a cash flow row that names an outflow,
    "Purchases of …", "Payments of …") or a cost printed in parentheses in every year is positive; a figure
    from another statement or a note than the one the question names says so."""
    figure = row.values[col]
    outflow = frame.kind == "cash_flows" and {"outflow"} == _marks(normal(row.label)) & {"inflow", "outflow"}
    costs = concept is not None and concept.expense and all(v is None or v <= 0 for v in row.values)
    if figure is not None and (outflow or costs or (concept is not None and concept.spent)):
        figure = abs(figure)
    where = "the text" if frame.kind == "sentence" else "a note's table" if frame.kind == "other" else \
        f"the {KIND_NAMES[frame.kind]}"
    note = f"no row for '{asked}' in the {KIND_NAMES[named]}: read from {where}, p. {frame.page}" \
        if named and frame.kind != named else ""
    return Lookup(asked=asked, value=figure, printed=row.cells[col], label=row.label, section=row.section,
                  period=frame.periods[col].header, year=frame.periods[col].year, page=frame.page, file=frame.file,
                  doc_id=frame.doc_id, kind=frame.kind, title=frame.title, currency=frame.currency,
                  scale=None if row.per_share else frame.scale, score=round(score, 1), note=note)


def _kind_bonus(kind: StatementKind, score: float, asked: StatementKind | None, home: StatementKind | None) -> float:
    """The statement asked first where it prints the row named; then the one an analyst's word lives in:
    capex asked of the balance sheet is not its property and equipment."""
    if kind == asked and (home is None or score >= _EXACT):
        return _KIND_BONUS + 1.0
    return _KIND_BONUS if kind == home else 0.0


def label_score(wordings: list[str], printed: str, similarity: Similarity | None = None) -> float:
    """How alike a printed label is to the label asked (first) or to its glossary wordings, 0–100; of two
    wordings as alike, the earlier wins by a hair."""
    target = normal(_QUALIFIER.sub("", printed))
    marks = _marks(target)
    best = 0.0
    for n, wording in enumerate(wordings):
        asked = normal(wording)
        if not asked:
            continue
        score = 100.0 if asked == target else \
            0.5 * fuzz.token_set_ratio(asked, target) + 0.5 * fuzz.ratio(asked, target) - \
            (_MARK_MISSED if _marks(asked) != marks else 0.0) - \
            (_TOTAL_MISSED if asked.startswith("total ") and "total" not in target.split() else 0.0)
        best = max(best, score - 0.01 * n)
    if similarity is not None:
        best = 0.7 * best + 30.0 * similarity(wordings[0], printed)
    return best


# Words that make another row of like words: "current portion of long-term debt" is not "long-term debt",
# nor "short-term debt", "income before income taxes" is not "income taxes", "dividends declared and not paid"
# not "dividends paid", and "total liabilities and equity" not "total liabilities"; a cost is not a revenue, an
# accrued expense not a prepaid one, and a flow in or out of cash ("Proceeds from issuance of …", "Repayments of …",
# "Income taxes paid") neither a balance of like name ("Long-term debt", "Income taxes payable") nor the other flow.
_MARKS = frozenset({"current", "before", "short", "long", "not", "cost", "accrued", "prepaid"})
_INFLOW = frozenset({"proceeds", "issuance", "issuances", "borrowings", "sale"})
_OUTFLOW = frozenset({"repayments", "repayment", "payments", "payment", "purchases", "purchase", "repurchase",
                      "repurchases", "repurchased", "paid"})
_MARK_MISSED = 25.0
_TOTAL_MISSED = 10.0  # a total asked, a row that is not one: "Accrued liabilities" for "total liabilities"
_BOTH = re.compile(r"\bliabilities and (?:\w+ )?equity\b|\bcapitalization and liabilities\b")
# what a printed label adds after the row's name: "Accounts receivable, net of allowances of $132 …",
# "Capital expenditures, net of construction payable", "Long-term debt, less current portion"
_QUALIFIER = re.compile(r"[\s,(]+(?:net of|less)\b.*$", re.I)


def _marks(label: str) -> frozenset[str]:
    words = {"cost" if w == "costs" else w for w in label.split()}
    flows = ({"inflow"} if words & _INFLOW else set()) | ({"outflow"} if words & _OUTFLOW else set())
    return _MARKS.intersection(words) | flows | ({"and equity"} if _BOTH.search(label) else set())


_AS_REPORTED = re.compile(r"\b(?:unadjusted|as reported|reported|gaap)\b", re.I)
_NOTE = re.compile(r"\((?:see )?notes? [\w ,&]+\)|\(\d{1,2}\)|\([a-z]\)|\[\d+\]", re.I)


def normal(label: str) -> str:
    """A label as compared: lower case, "&" as "and", note references and punctuation gone."""
    text = _NOTE.sub(" ", label.lower().replace("&", " and ").replace("’", "'"))
    text = re.sub(r"'s?\b", "", text)
    return " ".join(re.findall(r"[a-z0-9]+", text))


def concept_of(label: str) -> Concept | None:
    """The glossary concept a label names, by analysts' words or a statement's wording."""
    text = " ".join(w for w in normal(label).split() if not re.fullmatch(r"(fy)?\d{2,4}", w))
    for name, concept in GLOSSARY.items():
        if text == normal(name) or text in _said(concept):
            return concept
    return None


@cache
def _said(concept: Concept) -> set[str]:
    return {normal(w) for w in (*concept.said, *concept.printed)}


def statement_kind_of(statement: str | None) -> StatementKind | None:
    """A statement named as a kind ("cash_flows") or in words ("the statement of cash flows", "P&L")."""
    if not statement:
        return None
    if statement in _KINDS:
        return statement  # type: ignore[return-value]
    text = normal(statement).replace("statements", "statement")
    for words, kind in _STATEMENTS.items():
        if words in text:
            return kind
    return None


# a statement named in a question or a reply: "the statement of cash flows", "the consolidated balance sheets", "P&L"
STATEMENT_NAMES = re.compile(r"\b(?:consolidated )?(?:statements? of (?:consolidated )?(?:cash flows?|income|operations|"
                             r"earnings|financial (?:position|condition))|cash flows? statements?|balance sheets?|"
                             r"income statements?|profit and loss(?: statements?)?|p ?& ?l)(?![\w&])", re.I)
# the words that put a row in it: "capital expenditures (shown in the cash flow statement)"
_IN_STATEMENT = re.compile(r"(?:\b(?:as )?(?:shown|reported|printed|stated|presented|given|found|listed|disclosed) )?"
                           r"\b(?:in|on|from|per|of|according to|based on|using) (?:the |its |their )?"
                           rf"(?:company'?s? )?(?:{STATEMENT_NAMES.pattern})", re.I)


def named_statement(text: str) -> StatementKind | None:
    """The one statement a text names ("capex shown in the cash flow statement"); None for none, or two."""
    kinds = {statement_kind_of(m.group()) for m in STATEMENT_NAMES.finditer(text)} - {None}
    return kinds.pop() if len(kinds) == 1 else None


def without_statement(words: str) -> str:
    """Words without the statement they put a row in ("capital expenditures from the cash flow statement":
    "capital expenditures"); "" when they name nothing but a statement ("cash flow statement")."""
    text = STATEMENT_NAMES.sub(" ", _IN_STATEMENT.sub(" ", words))
    return re.sub(r"\s+", " ", re.sub(r"[(\[]\s*[)\]]", " ", text)).strip(" ,;:-")


_FISCAL = re.compile(r"^(?:fy|fiscal(?: year)?|year)?\s*'?((?:19|20)\d\d|\d\d)$", re.I)
_ANY_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")


def period_of(period: str | int) -> tuple[int | None, str]:
    """A period asked as a fiscal year ("2019", "FY2019", "FY19", "fiscal 2019", 2019) or a printed header."""
    text = str(period).strip()
    if match := _FISCAL.match(text.replace(" ", " ")):
        digits = match.group(1)
        return (int(digits) if len(digits) == 4 else 2000 + int(digits)), ""
    years = _ANY_YEAR.findall(text)
    return (int(years[-1]) if years else None), text


def column_of(frame: StatementFrame, year: int | None, header: str = "") -> int | None:
    """The column of a frame for a year or a printed header."""
    if header:
        for n, p in enumerate(frame.periods):
            if normal(p.header) == normal(header):
                return n
    for n, p in enumerate(frame.periods):
        if year is not None and p.year == year:
            return n
    return None
