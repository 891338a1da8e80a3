"""Lookups by code and programs over statements (rag/reader/lookup.py, rag/reader/program.py): a row found by
an analyst's word or its printed label and a fiscal year, ten kinds of metric computed as programs and shown
with every input's page, a formula that is not allowed refused with its reason, a missing row named."""

from __future__ import annotations

import pytest
from conftest import EVAL, frames_of

from rag.reader.definitions import DEFINITIONS, written
from rag.reader.lookup import (GLOSSARY, NotFound, concept_of, named_statement, period_of, statement_kind_of, value,
                               without_statement)
from rag.reader.program import ComputeError, Program, check_formula, compute, in_unit, shown
from rag.reader.skills.metric import statements as metric_statements
from rag.records import Period, StatementFrame, StatementRow


@pytest.mark.parametrize(("label", "statement", "printed", "found", "page"), [
    ("revenue", None, "46,298", "Revenue", 40),
    ("COGS", None, "36,386", "Cost of sales", 40),
    ("operating income", "income statement", "1,795", "Operating income", 40),
    ("net income", None, "1,419", "Net earnings", 40),
    ("PP&E", None, "2,352", "Net property and equipment", 39),
    ("inventory", None, "5,140", "Merchandise inventories", 39),
    ("accounts payable", None, "5,687", "Accounts payable", 39),
    ("accounts payable", "statement of cash flows", "(1,099)", "Accounts payable", 42),
    ("total current liabilities", "balance sheet", "8,979", "Total current liabilities", 39),
    ("capex", None, "(930)", "Additions to property and equipment, net of $35, $46 and $32, respectively, of non-cash "
                              "capital expenditures", 42),
    ("D&A", None, "918", "Depreciation and amortization", 42),
    ("cash from operations", None, "1,824", "Total cash provided by operating activities", 42),
    ("dividends paid", None, "(789)", "Dividends paid", 42),
    ("Selling, general and administrative expenses", None, "7,970", "Selling, general and administrative expenses", 40),
    ("current portion of long-term debt", None, "16", "Current portion of long-term debt", 39),
    ("long-term debt", None, "1,160", "Long-term debt", 39),
    ("income before income taxes", None, "1,788", "Earnings before income tax expense and equity in income of "
                                                  "affiliates", 40),
])
def test_a_row_is_found_by_an_analysts_word_or_its_printed_label(bestbuy, label, statement, printed, found, page):
    got = value(bestbuy, label, "FY2023", statement)
    assert (got.printed, got.label, got.page) == (printed, found, page)
    assert got.period == "January 28, 2023" and got.year == 2023 and got.scale == "million" and got.currency == "$"


@pytest.mark.parametrize("period", ["2023", 2023, "FY2023", "FY23", "fiscal 2023", "Fiscal Year 2023", "January 28, 2023"])
def test_a_fiscal_year_is_asked_in_many_ways(bestbuy, period):
    assert value(bestbuy, "revenue", period).value == 46298


def test_a_statement_is_preferred_to_the_summary_or_note_that_repeats_it(netflix):
    # the selected financial data (p. 17) prints the same operating income: the statement's page is cited
    got = value(netflix, "operating income", 2015)
    assert (got.value, got.page, got.scale, got.kind) == (305826, 40, "thousand", "income_statement")


def test_a_per_share_figure_has_no_scale(bestbuy):
    got = value(bestbuy, "Diluted earnings per share", 2023)
    assert got.value == 6.29 and got.scale is None


def test_a_missing_row_or_year_says_which_it_sought(bestbuy):
    with pytest.raises(NotFound, match=r"no row for 'capital expenditures' in 2019 in the cash flow statement"):
        value(bestbuy, "capital expenditures", 2019)
    with pytest.raises(NotFound, match=r"no row for 'goodwill impairment of unicorns' in FY2023"):
        value(bestbuy, "goodwill impairment of unicorns", "FY2023")


def test_glossary_and_periods():
    assert concept_of("PP&E").kind == "balance_sheet" and concept_of("capex").kind == "cash_flows"
    assert concept_of("Net sales").kind == "income_statement" and concept_of("goodwill") is None
    assert period_of("FY2019") == (2019, "") and period_of("Feb. 1, 2020") == (2020, "Feb. 1, 2020")


def program(formula, *inputs):
    return Program(formula=formula, inputs=[{"name": n, "label": label, "year": year} for n, label, year in inputs])


# (frames, program, unit, scale asked, decimals, expected): ten kinds of metric analysts ask for
METRICS = {
    "lookup": ("bestbuy", program("revenue", ("revenue", "revenue", 2023)), "money", "billion", 3, 46.298),
    "ratio": ("bestbuy", program("tca / tcl", ("tca", "total current assets", 2023), ("tcl", "total current liabilities", 2023)),
              "ratio", None, 2, 0.98),
    "growth": ("bestbuy", program("(r23 - r22) / r22", ("r23", "revenue", 2023), ("r22", "revenue", 2022)),
               "percent", None, 1, -10.6),
    "3-year average": ("bestbuy", program("avg(r21, r22, r23)", ("r21", "revenue", 2021), ("r22", "revenue", 2022),
                                          ("r23", "revenue", 2023)), "money", "million", 0, 48440),
    "CAGR": ("bestbuy", program("(r23 / r21) ** (1 / 2) - 1", ("r21", "revenue", 2021), ("r23", "revenue", 2023)),
             "percent", None, 2, -1.03),
    "margin": ("bestbuy", program("oi / revenue", ("oi", "operating income", 2023), ("revenue", "revenue", 2023)),
               "percent", None, 1, 3.9),
    "working capital": ("bestbuy", program("tca - tcl", ("tca", "total current assets", 2023),
                                           ("tcl", "total current liabilities", 2023)), "money", "million", 0, -177),
    "average of two years": ("nike", program("cogs / avg(inv_2020, inv_2021)", ("cogs", "COGS", 2021),
                                             ("inv_2020", "inventories", 2020), ("inv_2021", "inventories", 2021)),
                             "ratio", None, 2, 3.46),
    "sum": ("netflix", program("oi + da", ("oi", "operating income", 2015), ("da", "D&A", 2015)),
            "money", "million", 3, 368.109),
    "change": ("bestbuy", program("cash_2023 - cash_2022", ("cash_2023", "cash and cash equivalents", 2023),
                                  ("cash_2022", "cash and cash equivalents", 2022)), "money", "million", 0, -1062),
}


@pytest.mark.parametrize("kind", METRICS)
def test_ten_metric_kinds_as_programs(kind, request):
    frames, prog, unit, asked, decimals, expected = METRICS[kind]
    computed = compute(prog, request.getfixturevalue(frames))
    assert in_unit(computed.value, unit, computed.scale, asked, decimals) == expected
    assert all(f"[p. {u.lookup.page}]" in shown(computed, unit, asked, decimals) for u in computed.inputs)


def test_a_result_is_shown_with_each_input_its_printed_figure_and_page(nike):
    computed = compute(METRICS["average of two years"][1], nike)
    assert (computed.scale, computed.currency) == ("million", "$")
    assert shown(computed) == (
        "3.46 = cogs 24,576 [p. 59] / avg(inv_2020 7,367 [p. 61], inv_2021 6,854 [p. 61]) · cogs: Cost of sales, 2021; "
        "inv_2020: Inventories, 2020; inv_2021: Inventories, 2021 ($ in millions)")


def test_money_keeps_the_statements_scale_and_converts_to_the_one_asked(netflix, bestbuy):
    computed = compute(program("oi + da", ("oi", "operating income", 2015), ("da", "D&A", 2015)), netflix)
    assert computed.scale == "thousand" and computed.value == 368109
    assert in_unit(computed.value, "money", "thousand", "billion", 4) == 0.3681
    assert shown(computed, "money", "million", 1).startswith("$368.1 million = oi 305,826 [p. 40] + da 62,283 [p. 42]")
    # a dash is nil: Best Buy's equity in income of affiliates was "-" in fiscal 2021
    assert compute(program("x", ("x", "Equity in income of affiliates", 2021)), bestbuy).value == 0


@pytest.mark.parametrize(("formula", "why"), [
    ("__import__('os')", "not allowed in a formula: calling __import__"),
    ("revenue.real", r"attribute access \(\.real\)"),
    ("__import__('os').system('true')", r"attribute access \(\.system\)"),
    ("open('/etc/passwd')", "calling open"),
    ("x_unknown * 2", "the name 'x_unknown'"),
    ("[revenue][0]", "subscripts|lists"),
    ("revenue if revenue else 0", "if/else"),
    ("revenue > 0", "comparisons"),
    ("revenue // 2", "operator FloorDiv"),
    ("(lambda: 1)()", "lambda|calling"),
    ("round(revenue, ndigits=2)", "calling round"),
    ("'a' * 3", "the constant 'a'"),
    ("revenue +", "syntax error"),
])
def test_a_formula_that_is_not_allowed_is_refused_with_its_reason(bestbuy, formula, why):
    with pytest.raises(ComputeError, match=why):
        compute(program(formula, ("revenue", "revenue", 2023)), bestbuy)


def test_the_evaluator_still_bounds_what_a_formula_computes(bestbuy):
    with pytest.raises(ComputeError, match="exponent too large"):
        compute(program("revenue ** 100", ("revenue", "revenue", 2023)), bestbuy)
    with pytest.raises(ComputeError, match="division by zero"):
        compute(program("revenue / (revenue - revenue)", ("revenue", "revenue", 2023)), bestbuy)
    check_formula("abs(a) / max(b, 1) + min(a, b) * round(avg(a, b), 2) ** 2", {"a", "b"})


def test_a_program_with_a_missing_row_names_it(bestbuy):
    prog = program("ebitda / revenue", ("ebitda", "adjusted EBITDA", 2023), ("revenue", "revenue", 2023))
    with pytest.raises(NotFound, match="no row for 'adjusted EBITDA' in 2023"):
        compute(prog, bestbuy)


def test_an_input_name_must_be_a_plain_name():
    with pytest.raises(ValueError, match="input's name"):
        Program(formula="x", inputs=[{"name": "__class__", "label": "revenue", "year": 2023}])
    with pytest.raises(ValueError, match="input's name"):
        Program(formula="avg", inputs=[{"name": "avg", "label": "revenue", "year": 2023}])


def test_a_current_short_or_pretax_row_is_not_taken_for_its_namesake(netflix):
    with pytest.raises(NotFound, match="current portion of long-term debt"):
        value(netflix, "current portion of long-term debt", 2015)  # Netflix's 2015 balance sheet prints none
    assert value(netflix, "long-term debt", 2015).printed == "2,371,362"
    costco = frames_of(EVAL / "wide" / "pdfs" / "COSTCO_2021_10K.pdf")
    assert value(costco, "long-term debt", 2021).label == "Long-term debt, excluding current portion"
    assert value(costco, "income before income taxes", 2021).printed == "6,680"
    assert value(costco, "common equity", 2021).printed == "18,078", "an analyst's word for the total"
    interest = value(costco, "interest expense", 2021)
    assert (interest.printed, interest.value) == ("(171)", 171), "an expense printed as a deduction is an amount"


# Every glossary concept, hand-checked on one of the three 10-Ks: the row its statement prints for it
GLOSSARY_ROWS = {
    "revenue": ("nike", "Revenues"), "cogs": ("netflix", "Cost of revenues"), "gross profit": ("nike", "Gross profit"),
    "operating income": ("netflix", "Operating income"), "net income": ("bestbuy", "Net earnings"),
    "sg&a": ("bestbuy", "Selling, general and administrative expenses"),
    "r&d": ("netflix", "Technology and development"),
    "interest expense": ("netflix", "Interest expense"), "pretax income": ("nike", "Income before income taxes"),
    "income tax": ("netflix", "Provision for income taxes"), "ppe": ("bestbuy", "Net property and equipment"),
    "inventory": ("bestbuy", "Merchandise inventories"), "accounts receivable": ("nike", "Accounts receivable, net"),
    "accounts payable": ("netflix", "Accounts payable"), "cash": ("nike", "Cash and equivalents"),
    "total current assets": ("bestbuy", "Total current assets"),
    "total current liabilities": ("nike", "Total current liabilities"), "total assets": ("netflix", "Total assets"),
    "total liabilities": ("netflix", "Total liabilities"), "equity": ("nike", "Total shareholders' equity"),
    "current portion of long-term debt": ("nike", "Current portion of long-term debt"),
    "long-term debt": ("bestbuy", "Long-term debt"), "capex": ("netflix", "Purchases of property and equipment"),
    "d&a": ("bestbuy", "Depreciation and amortization"),
    "cash from operations": ("bestbuy", "Total cash provided by operating activities"),
    "dividends paid": ("bestbuy", "Dividends paid"), "share repurchases": ("nike", "Repurchase of common stock"),
}
YEARS = {"bestbuy": 2023, "nike": 2021, "netflix": 2015}


def test_the_glossary_rows_are_hand_checked_for_every_concept():
    assert set(GLOSSARY_ROWS) == set(GLOSSARY)


@pytest.mark.parametrize(("said", "concept"), [(said, name) for name, c in GLOSSARY.items() for said in (name, *c.said)])
def test_every_analysts_word_finds_its_concepts_row(said, concept, request):
    doc, printed = GLOSSARY_ROWS[concept]
    assert value(request.getfixturevalue(doc), said, YEARS[doc]).label == printed


def test_a_total_of_two_or_a_figure_not_paid_is_not_the_row_asked(bestbuy, nike):
    statements = metric_statements(bestbuy)  # as the metric skill reads them
    with pytest.raises(NotFound):
        value(statements, "total liabilities", 2023)  # "Total liabilities and equity", "Accrued liabilities" only
    with pytest.raises(NotFound):
        value(nike, "dividends paid", 2021)  # its cash flows print "Dividends declared and not paid"


@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_every_analysts_definition_computes_on_a_10k(name, bestbuy, nike, netflix):
    results = []
    for frames, year in ((bestbuy, 2023), (nike, 2021), (netflix, 2015)):
        try:
            results.append(compute(written(name, year), frames).value)
        except (NotFound, ComputeError):
            pass
    assert results, f"{name} computes on none of the three 10-Ks"


def test_inputs_printed_in_different_scales_are_each_taken_in_units_first():
    """An income statement in millions and a cash flow statement in thousands, as one filer printed them."""
    def frame(kind: str, scale: str, page: int, label: str, figure: float, cell: str) -> StatementFrame:
        return StatementFrame(doc_id="d", file="d.pdf", page=page, title=kind, kind=kind, scale=scale, currency="$",
                              periods=[Period(header="2022", year=2022)],
                              rows=[StatementRow(label=label, values=[figure], cells=[cell])])

    frames = [frame("income_statement", "million", 40, "Net sales", 1250, "1,250"),
              frame("cash_flows", "thousand", 44, "Capital expenditures", -62500, "(62,500)")]
    ratio = compute(program("capex / sales", ("capex", "capital expenditures", 2022), ("sales", "net sales", 2022)),
                    frames)
    assert ratio.value == 0.05 and ratio.scale is None, "62.5 million of 1,250 million, not 62,500 of 1,250"
    total = compute(program("sales + capex", ("sales", "net sales", 2022), ("capex", "capex", 2022)), frames)
    assert in_unit(total.value, "money", total.scale, "million", 1) == 1312.5
    assert shown(total, "money", "million", 1).startswith("$1,312.5 million = sales 1,250 [p. 40] + capex (62,500)")


def test_an_analysts_word_asked_of_another_statement_is_read_where_it_lives(nike):
    assert value(nike, "capital expenditures", 2021, "balance sheet").label == "Additions to property, plant and equipment"
    # and where the statement asked prints the row named, it is read there (Best Buy's cash flows: above)


def test_a_balance_is_read_off_the_balance_sheet_by_its_name_before_its_qualifier():
    """The cash flows print a balance's change ("Trade receivables, net (160,416)"); the balance sheet prints the
    balance with a qualifier after its name ("…, net of allowances for doubtful accounts of $6,214 …")."""
    adobe = frames_of(EVAL / "fin" / "pdfs" / "ADOBE_2016_10K.pdf")
    got = value(adobe, "accounts receivable", 2016)
    assert (got.printed, got.kind, got.page) == ("833,033", "balance_sheet", 61)
    assert value(adobe, "accounts receivable", 2016, "cash flow statement").printed == "(160,416)", "the change, asked"
    water = metric_statements(frames_of(EVAL / "fin" / "pdfs" / "AMERICANWATERWORKS_2020_10K.pdf"))
    assert value(water, "accounts receivable", 2020).printed == "321", "not 'Provision for losses on accounts receivable'"
    with pytest.raises(NotFound):
        value(water, "total liabilities", 2020)  # a utility prints "Total capitalization and liabilities" only
    mgm = frames_of(EVAL / "fin" / "pdfs" / "MGMRESORTS_2018_10K.pdf")
    assert value(mgm, "capex", 2018).label == "Capital expenditures, net of construction payable", \
        "not 'Dispositions of property and equipment'"


def test_a_cost_is_never_read_off_a_revenue_row():
    costco = frames_of(EVAL / "wide" / "pdfs" / "COSTCO_2021_10K.pdf")
    assert value(costco, "COGS", 2021).label == "Merchandise costs"
    activision = metric_statements(frames_of(EVAL / "fin" / "pdfs" / "ACTIVISIONBLIZZARD_2019_10K.pdf"))
    with pytest.raises(NotFound):
        value(activision, "cost of revenues", 2019)  # it prints each cost line, no total: not "Total net revenues"
    assert value(activision, "revenue", 2019).label == "Total net revenues"


def test_a_flow_is_neither_a_balance_of_like_name_nor_the_other_flow(netflix, bestbuy):
    """Row names no concept holds, as a model's program names them: a figure like the asked one in all but the word
    that makes it another (accrued · prepaid; proceeds · repayments; paid · payable) is another row."""
    netflix = metric_statements(netflix)
    # were "Total liabilities", "Accrued expenses", "Long-term debt" (twice), "Income taxes paid"
    for asked in ("accrued liabilities", "prepaid expenses", "proceeds from issuance of long-term debt",
                  "repayments of long-term debt", "income taxes payable"):
        with pytest.raises(NotFound):
            value(netflix, asked, 2015)
    assert value(bestbuy, "accrued liabilities", 2023).label == "Accrued liabilities"
    pepsi = metric_statements(frames_of(EVAL / "fin" / "pdfs" / "PEPSICO_2022_10K.pdf"))
    assert value(pepsi, "repayments of long-term debt", 2022).label == "Payments of long-term debt"
    assert value(pepsi, "proceeds from issuance of long-term debt", 2022).label == "Proceeds from issuances of long-term debt"
    assert value(pepsi, "share repurchases", 2022).kind == "cash_flows"


def test_a_cost_printed_in_parentheses_every_year_is_an_amount_and_a_benefit_keeps_its_sign(bestbuy):
    boeing = metric_statements(frames_of(EVAL / "fin" / "pdfs" / "BOEING_2018_10K.pdf"))
    found = [value(boeing, said, 2018) for said in ("R&D", "income tax expense", "research and development expense")]
    assert [(got.value, got.printed) for got in found] == \
        [(3269.0, "(3,269)"), (1144.0, "(1,144)"), (3269.0, "(3,269)")], "Boeing prints every cost as an outflow"
    corning = metric_statements(frames_of(EVAL / "fin" / "pdfs" / "CORNING_2020_10K.pdf"))
    assert value(corning, "provision for income taxes", 2020).value == 111.0
    kraft = metric_statements(frames_of(EVAL / "fin" / "pdfs" / "KRAFTHEINZ_2019_10K.pdf"))
    assert [value(kraft, "income tax expense", year).value for year in (2019, 2018)] == [728.0, -1067.0], \
        "a row of both signs prints a benefit as one"
    assert value(bestbuy, "COGS", 2023).value == 36386.0


@pytest.mark.parametrize(("said", "doc", "printed"), [
    ("net PPNE", "bestbuy", "2,352"), ("PP/E", "nike", "4,904"), ("cap-ex", "netflix", "(91,248)"),
    ("purchases of PP&E", "bestbuy", "(930)"), ("OCF", "nike", "6,657"), ("operating cash flows", "bestbuy", "1,824"),
    ("A/R", "nike", "4,463"), ("net receivables", "nike", "4,463"), ("A/P", "bestbuy", "5,687"),
])
def test_an_analysts_abbreviation_finds_its_row(said, doc, printed, request):
    assert value(request.getfixturevalue(doc), said, YEARS[doc]).printed == printed


def test_an_outflow_of_the_cash_flows_is_an_amount_and_an_inflow_keeps_its_sign(nike):
    bought = value(nike, "purchases of short-term investments", 2021)
    assert (bought.printed, bought.value) == ("(9,961)", 9961.0), "a row no concept holds, named as an outflow"
    assert value(nike, "sales of short-term investments", 2021).value == 2449.0
    assert value(nike, "net foreign currency adjustments", 2021).value == -138.0, "no flow named: its sign"


def test_the_statement_the_question_names_comes_first_and_a_figure_from_elsewhere_says_so(bestbuy, nike):
    earned = value(bestbuy, "net earnings", 2023, named="cash_flows")
    assert (earned.page, earned.note) == (42, ""), "the cash flows print it too: theirs"
    goodwill = value(bestbuy, "goodwill", 2023, named="cash_flows")
    assert goodwill.note == "no row for 'goodwill' in the cash flow statement: read from the balance sheet, p. 39"
    assert value(nike, "inventories", 2021, named="cash_flows").printed == "6,854", \
        "a balance asked of a statement of flows: the balance sheet's, not its change"
    with pytest.raises(NotFound, match="no row for 'unicorn stables' in 2021 in the cash flow statement"):
        value(nike, "unicorn stables", 2021, named="cash_flows")


def test_a_statement_named_in_words_is_told_and_is_no_row():
    assert named_statement("What was capex as shown in the consolidated statements of cash flows?") == "cash_flows"
    assert named_statement("Per the P&L and the balance sheet, what …") is None, "two statements named"
    assert statement_kind_of("Consolidated Statements of Income") == "income_statement"
    assert without_statement("capital expenditures (shown in the cash flow statement)") == "capital expenditures"
    assert without_statement("statement of financial position") == ""
