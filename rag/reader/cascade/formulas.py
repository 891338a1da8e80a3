"""Textbook definitions of common financial ratios, as computation plans.

A 1.5B model cannot plan "return on capital employed" from the question alone (it wrote
`cash / (earnings / stores)`); these definitions are what an analyst would use, the same for every
report. Each quantity is still searched for and chosen among the evidence's numbers like any other
plan's, and the program is shown. A quantity ending in `_prev` is the year before the one asked
(the averages of balance-sheet items); outflows, often printed in brackets, count by their size.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Quantity(NamedTuple):
    name: str
    label: str  # what is searched for and ranked: the line's names and the year
    lines: tuple[str, ...]  # the names a statement gives the line (normalised by `row_name`)


class Plan(NamedTuple):
    definition: str
    quantities: list[Quantity]
    expression: str


# The names statements give each line, most common first.
LINES: dict[str, tuple[str, ...]] = {
    "revenue": ("revenue", "revenues", "total revenue", "total revenues", "net sales", "total net sales",
                "net revenue", "net revenues", "sales"),
    "cost_of_sales": ("cost of sales", "cost of goods sold", "cost of revenue", "cost of revenues",
                      "total cost of revenue", "cost of products sold"),
    "gross_profit": ("gross profit", "gross margin"),
    "operating_income": ("operating income", "income from operations", "operating profit", "total operating income"),
    "net_income": ("net earnings", "net income"),
    "income_tax": ("income tax expense", "provision for income taxes", "income taxes", "income tax provision"),
    "pretax_income": ("earnings before income tax expense", "income before income taxes",
                      "earnings before income taxes", "income before taxes"),
    "interest_expense": ("interest expense", "interest expense net"),
    "total_assets": ("total assets",),
    "total_liabilities": ("total liabilities",),
    "cash": ("cash and cash equivalents", "cash and equivalents"),
    "current_assets": ("total current assets",),
    "current_liabilities": ("total current liabilities",),
    "inventories": ("merchandise inventories", "inventories", "inventory", "inventories net"),
    "receivables": ("receivables", "accounts receivable", "receivables net", "accounts receivable net",
                    "trade receivables"),
    "payables": ("accounts payable", "trade payables"),
    "equity": ("total equity", "total shareholders equity", "total stockholders equity"),
    "debt": ("total debt", "total long-term debt", "long-term debt"),  # the debt note's total, current portion included
    "ppe": ("property and equipment net", "property plant and equipment net", "net property and equipment"),
    "depreciation": ("depreciation and amortization", "depreciation"),
    "capex": ("capital expenditures", "purchases of property and equipment", "additions to property and equipment",
              "purchases of property plant and equipment"),
    "dividends": ("dividends paid", "cash dividends paid"),
    "operating_cash": ("total cash provided by operating activities", "net cash provided by operating activities",
                       "cash provided by operating activities"),
}

# How questions name each one, and its expression (a ratio is scaled to a percentage when the question asks).
RATIOS: list[tuple[str, str]] = [
    (r"return on capital employed|\broce\b", "operating_income / (total_assets - current_liabilities)"),
    (r"(?:after-tax )?return on (?:average )?(?:shareholders'? |stockholders'? )?equity|\broe\b",
     "net_income / ((equity + equity_prev) / 2)"),
    (r"return on (?:average )?(?:total )?assets|\broa\b", "net_income / ((total_assets + total_assets_prev) / 2)"),
    (r"interest to average total debt", "abs(interest_expense) / ((debt + debt_prev) / 2)"),
    (r"capitali[sz]ation ratio", "debt / (debt + equity)"),
    (r"debt[- ]to[- ]equity", "debt / equity"),
    (r"effective tax (?:rate|ratio)", "abs(income_tax) / pretax_income"),
    (r"interest coverage|times interest earned", "operating_income / abs(interest_expense)"),
    (r"\bdebt ratio|(?:total )?debt to (?:total )?assets", "debt / total_assets"),
    (r"equity ratio", "equity / total_assets"),
    (r"gross (?:profit )?margin", "gross_profit / revenue"),
    (r"operating (?:profit )?margin", "operating_income / revenue"),
    (r"net (?:profit )?margin|profit margin", "net_income / revenue"),
    (r"current ratio", "current_assets / current_liabilities"),
    (r"\bcash ratio", "cash / current_liabilities"),
    (r"operating cash flow ratio", "operating_cash / current_liabilities"),
    (r"quick ratio", "(current_assets - inventories) / current_liabilities"),
    (r"fixed asset turnover", "revenue / ((ppe + ppe_prev) / 2)"),
    (r"(?:total )?asset turnover", "revenue / ((total_assets + total_assets_prev) / 2)"),
    (r"inventory turnover", "abs(cost_of_sales) / ((inventories + inventories_prev) / 2)"),
    (r"days payable outstanding|\bdpo\b", "365 * ((payables + payables_prev) / 2) / abs(cost_of_sales)"),
    (r"days (?:of )?inventory outstanding|\bdio\b", "365 * ((inventories + inventories_prev) / 2) / abs(cost_of_sales)"),
    (r"days sales outstanding|\bdso\b", "365 * ((receivables + receivables_prev) / 2) / revenue"),
    (r"receivables? turnover", "revenue / ((receivables + receivables_prev) / 2)"),
    (r"payables? turnover", "abs(cost_of_sales) / ((payables + payables_prev) / 2)"),
    (r"dividend payout ratio", "abs(dividends) / net_income"),
    (r"capex to revenue|capital expenditures? to revenue", "abs(capex) / revenue"),
    (r"working capital ratio", "current_assets / current_liabilities"),
    (r"working capital", "current_assets - current_liabilities"),
    (r"ebitda margin", "(operating_income + depreciation) / revenue"),
    (r"ebitda", "operating_income + depreciation"),
    (r"free cash flow", "operating_cash - abs(capex)"),
]
_PERCENT = re.compile(r"\bpercent(?:age)?\b|%", re.I)
_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def named_ratio(question: str) -> tuple[str, str] | None:
    """(its name in lower case, its expression) for the first ratio the question names."""
    for pattern, expression in RATIOS:
        if match := re.search(pattern, question, re.I):
            return match.group(0).lower(), expression
    return None


def ratio_plan(question: str, years: set[str]) -> Plan | None:
    """The plan of the first ratio the question names, its quantities labelled with the (latest) year
    it asks about and, for `_prev`, the year before; None when it names none."""
    named = named_ratio(question)
    if named is None or len(years) > 1:
        return None  # two years: "from 2021 to 2022" asks for a change or comparison, which the model plans
    definition, expression = named
    if not years and "_prev" in expression:
        return None  # an average needs the year asked to know which year is the one before
    year = int(max(years)) if years else None
    quantities = []
    for name in dict.fromkeys(n for n in _NAME.findall(expression) if n.removesuffix("_prev") in LINES):
        lines = LINES[name.removesuffix("_prev")]
        words = dict.fromkeys(" ".join(lines[:3]).split())  # searched for: its three most common names
        when = [str(year - name.endswith("_prev"))] if year else []
        quantities.append(Quantity(name, " ".join([*words, *when]), lines))
    if _PERCENT.search(question) and "/" in expression:  # a ratio; an amount (working capital) never is
        expression = f"100 * {expression}"
    return Plan(definition, quantities, expression)


def row_name(context: str) -> str:
    """A table cell's own row name, normalised: "Fiscal Years Ended: Net earnings · 2023" → "net earnings",
    "Current assets — Total current assets(1) · …" → "total current assets"."""
    name = context.split(" · ")[0].rpartition(" — ")[2].rpartition(": ")[2]
    name = re.sub(r"\([^)]*\)", " ", name.lower().replace("’", "'").replace("'", ""))
    return " ".join(re.sub(r"[^a-z-]+", " ", name).split())


# A share, a rate or a part of the line (a segment's, a share's) is not the statement line's amount.
_NOT_THE_AMOUNT = re.compile(r"\bper\b|%|\bpercent|\brate\b|\bratio\b|\bmargin\b|\bgrowth\b|\bchange|"
                             r"\bsegment|\baverage\b|\bincrease|\bdecrease", re.I)


def asked_line(question: str) -> tuple[str, ...] | None:
    """The names of the statement line a question asks the amount of ("Best Buy's gross profit in fiscal
    2023": gross profit), by the longest name it spells; None when it asks a share, a rate or a part."""
    if _NOT_THE_AMOUNT.search(question):
        return None
    text = " ".join(re.sub(r"[^a-z-]+", " ", question.lower().replace("'", "")).split())
    named = [(len(name), lines) for lines in LINES.values() for name in lines if re.search(rf"\b{name}\b", text)]
    return max(named)[1] if named else None


def line_rank(context: str, lines: tuple[str, ...]) -> tuple[int, int] | None:
    """How well a row's name is one of a statement line's names: its very name before a longer one
    ("… and equity in income of affiliates"), a more common name first; None when it is none of them."""
    name = row_name(context)
    ranks = [(0 if name == line else 1, n) for n, line in enumerate(lines)
             if name == line or name.startswith(f"{line} and ")]
    return min(ranks, default=None)
