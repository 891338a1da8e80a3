"""Financial ratios planned by their textbook definitions (rag/reader/cascade/formulas.py)."""

import re

import pytest

from rag.context import EvidenceItem
from rag.reader.cascade import Candidate, asked_years, statement_rows
from rag.reader.cascade.formulas import LINES, RATIOS, asked_line, line_rank, ratio_plan
from rag.reader.program import run_program


def plan(question):
    return ratio_plan(question, asked_years(question))


def test_a_ratio_is_planned_with_each_statement_line_labelled_by_the_year_asked():
    roce = plan("What is Return on Capital Employed for the fiscal year ending January 28, 2023?")
    assert roce.expression == "operating_income / (total_assets - current_liabilities)"
    assert [(q.lines[0], q.label.split()[-1]) for q in roce.quantities] == [
        ("operating income", "2023"), ("total assets", "2023"), ("total current liabilities", "2023")]


def test_an_average_takes_the_year_before_and_a_percentage_is_scaled():
    roe = plan("What is after-tax return on average equity in FY2023? Answer in percentage terms.")
    assert roe.expression.startswith("100 * ")
    assert {q.name: q.label.split()[-1] for q in roe.quantities} == {
        "net_income": "2023", "equity": "2023", "equity_prev": "2022"}
    values = {"net_income": 1419, "equity": 2795, "equity_prev": 3020}
    program = "\n".join(f"{k} = {v}" for k, v in values.items()) + f"\nans = {roe.expression}"
    assert run_program(program) == pytest.approx(100 * 1419 / 2907.5)


@pytest.mark.parametrize("question", [
    "What was Best Buy's revenue in fiscal 2023?",  # no ratio: the model plans or reads
    "What is the change of gross margin from FY2022 to FY2021?",  # two years: a change, not the ratio
    "What is the return on average assets?",  # an average, but of which two years?
])
def test_no_plan_when_the_definition_does_not_fit_the_question(question):
    assert plan(question) is None


def test_every_name_a_definition_uses_is_a_statement_line():
    for pattern, expression in RATIOS:
        names = {n.removesuffix("_prev") for n in re.findall(r"[a-z_][a-z0-9_]*", expression)} - {"abs"}
        assert names <= set(LINES), (pattern, names - set(LINES))


@pytest.mark.parametrize(("context", "line", "named"), [
    ("Fiscal Years Ended: Net earnings · January 28, 2023", "net_income", True),
    ("Current liabilities — Total current liabilities · January 28, 2023", "current_liabilities", True),
    ("Fiscal Years Ended: Earnings before income tax expense and equity in income of affiliates · 2023",
     "pretax_income", True),
    ("Total shareholders’ equity(1) · 2023", "equity", True),
    ("Property and equipment, net · 2023", "ppe", True),
    ("Deferred revenue · January 28, 2023", "revenue", False),  # another line that says "revenue"
    ("Total long-term debt, less current portion · 2023", "debt", False),
])
def test_a_row_is_a_statement_line_only_under_one_of_its_names(context, line, named):
    assert (line_rank(context, LINES[line]) is not None) is named


def rows(*cells):
    """Number options as the reader builds them from table rows: (label · column, value)."""
    item = EvidenceItem(text="", kind="table", doc_id="d", file="f.pdf", page=1)
    return [Candidate(value, context, item) for context, value in cells]


def test_the_rows_named_like_the_line_hold_its_value_the_consolidated_one_where_segments_differ():
    options = rows(("Consolidated Performance Summary: Gross profit · 2022", "$11,640"),
                   ("International Segment Performance Summary: Gross profit · 2022", "$938"),
                   ("Fiscal Years Ended: Gross profit · January 29, 2022", "11,640"),
                   ("Gross profit as a % of revenue · 2022", "22.5"))
    assert {o.value for o in statement_rows(options, LINES["gross_profit"])} == {"$11,640", "11,640"}


def test_where_one_row_each_differs_the_value_the_document_writes_most_often_is_the_lines():
    options = rows(("International Segment Performance Summary: Gross profit · 2023", "$806"),
                   ("Fiscal Years Ended: Gross profit · January 28, 2023", "9,912"))
    document = "Gross profit $ 9,912 … Gross profit 9,912 11,640 … International gross profit $806 (1,806 in all)"
    assert [o.value for o in statement_rows(options, LINES["gross_profit"], document)] == ["9,912"]
    assert len(statement_rows(options, LINES["gross_profit"])) == 2, "without the document: a tie"


@pytest.mark.parametrize(("question", "line"), [
    ("What was Best Buy's gross profit in fiscal 2023?", "gross_profit"),
    ("What were total current assets in FY2023? Answer in million.", "current_assets"),
    ("What was the company's total revenue in 2022?", "revenue"),
    ("What was the Domestic segment's revenue?", None),  # a part of the line
    ("What was the gross profit rate in 2023?", None),  # a rate
    ("What were basic earnings per share?", None),
])
def test_the_statement_line_a_question_asks_the_amount_of(question, line):
    assert asked_line(question) == (LINES[line] if line else None)


def test_a_rows_very_name_and_a_more_common_name_come_first():
    options = rows(("Statement of Earnings Location: Cost of sales and SG&A · 2023", "233"),
                   ("Fiscal Years Ended: Cost of sales · January 28, 2023", "36,386"))
    assert [o.value for o in statement_rows(options, LINES["cost_of_sales"])] == ["36,386"]
    debt = rows(("Long-term debt · January 28, 2023", "1,160"), ("Total long-term debt · January 28, 2023", "1,176"))
    assert [o.value for o in statement_rows(debt, LINES["debt"])] == ["1,176"]
