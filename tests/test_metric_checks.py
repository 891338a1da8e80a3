"""What a metric is, checked by code, and the model's program repaired by code (rag/reader/plausible.py,
rag/reader/formulas.py, the metric skill): a margin computed upside down turned the right way up, a result its
kind cannot have repaired once with the reason or said, never given; a formula's unclosed bracket, a name it
never defined and a statement's name taken for a row repaired with no model call; the standard metrics written
once (a retention ratio, a cash conversion cycle, a D&A margin); a figure from the statement the question
names, a page's prose only when no row matches, and said so. The model's replies are scripted (control flow
only: which calls are made, and what code does with a reply); the questions are ours, on real 10-Ks."""

from __future__ import annotations

import asyncio
import json

import pytest
from scripted_llm import JsonReplies

from rag.models.structured import StructuredReply
from rag.reader.formulas import ProgramReply, mended
from rag.reader.plausible import kind_of, within
from rag.reader.program import ComputeError
from rag.reader.question import understand
from rag.reader.skills import metric


def program(*rows: tuple[str, str, str], formula: str) -> str:
    return json.dumps({"rows": [{"name": n, "label": label, "statement": st} for n, label, st in rows],
                       "formula": formula})


def solve(question: str, frames, *replies: str):
    """The skill with the model's replies scripted, in order; and the purposes of the calls it made."""
    left, calls = list(replies), []

    async def call(purpose, messages, model, max_tokens):
        calls.append((purpose, messages))
        said = left.pop(0)
        try:
            return StructuredReply(value=model.model_validate_json(said), text=said)
        except ValueError as exc:
            return StructuredReply(text=said, error=str(exc)[:80])

    return asyncio.run(metric.solve(understand(question), frames, JsonReplies(call))), calls


GP, REV = ("gp", "gross profit", "income statement"), ("rev", "revenues", "income statement")
AVERAGE_MARGIN = ("What was Nike's mean gross margin over FY2019 to FY2021, in percent, each year's gross profit "
                  "relative to its revenues?")


def test_a_margin_computed_upside_down_is_turned_the_right_way_up_by_code(nike):
    upside_down = program(GP, REV, formula="avg(rev_2019 / gp_2019, rev_2020 / gp_2020, rev_2021 / gp_2021)")
    got, calls = solve(AVERAGE_MARGIN, nike, upside_down)
    assert [c[0] for c in calls] == ["write program"], "no repair call: code swaps part and whole"
    assert got.solution.short() == "44.3", got.solution.value  # 17,474/39,117, 16,241/37,403, 19,962/44,538
    assert got.solution.program == "avg(gp_2019 / rev_2019, gp_2020 / rev_2020, gp_2021 / rev_2021)"
    assert "part and whole swapped by code: avg(rev_2019 / gp_2019, " in got.solution.value and "gave 225.8%" in \
        got.solution.value


def test_a_result_its_kind_cannot_have_gets_one_repair_with_the_reason_or_is_said_never_given(nike):
    turnover = ("What was Nike's FY2021 inventory turnover, cost of sales over inventories averaged across FY2020 and "
                "FY2021? Two decimals.")
    cogs, inv = ("cogs", "cost of sales", "income statement"), ("inv", "inventories", "balance sheet")
    below_nil = program(cogs, inv, formula="cogs_2021 / (inv_2021 - inv_2020)")  # no whole to swap: -47.91
    right = program(cogs, inv, formula="cogs_2021 / avg(inv_2020, inv_2021)")
    got, calls = solve(turnover, nike, below_nil, right)
    assert [c[0] for c in calls] == ["write program", "repair program"] and got.solution.short() == "3.46"
    assert "the result -47.91 cannot be what is asked: a turnover, a ratio of balances or a number of days is " \
           "above nil" in calls[1][1][-1].content
    got, _ = solve(turnover, nike, below_nil, below_nil)
    assert got.solution is None and got.reason.count("cannot be what is asked") == 2 and "(repaired: " in got.reason


@pytest.mark.parametrize(("text", "formula", "kind"), [
    ("What was the operating margin in FY2021?", "oi_2021 / rev_2021", "share"),
    ("What was the pretax margin in FY2021?", "pti_2021 / rev_2021", "share"),
    ("What share of FY2021 revenue was R&D, in percent?", "rd_2021 / rev_2021", None),  # a whole's: by its inputs
    ("How many days of payables did it carry in FY2021?", "365 * ap_2021 / cogs_2021", "positive"),
    ("How did the gross margin change from FY2020 to FY2021?", "(gp_2021 / rev_2021) - (gp_2020 / rev_2020)", "growth"),
    ("What was the cash conversion cycle in FY2021?", "dio_2021 + dso_2021 - dpo_2021", None),  # may be below nil
    ("What was the dividend payout ratio in FY2021?", "div_2021 / ni_2021", None),  # above 100% happens
    ("What was the interest coverage in FY2021?", "oi_2021 / ie_2021", None),
])
def test_each_kind_of_metric_has_its_range(text, formula, kind):
    assert kind_of(text, formula) == kind
    assert within("share", -0.99) and not within("share", 1.2) and not within("positive", 0.0)
    assert within("growth", 9.5) and not within("growth", -10.5) and within(None, 1e6)


def test_a_percentage_of_a_whole_is_a_share_and_of_another_figure_is_not(nike):
    capex = "What were Nike's FY2021 capital expenditures as a percentage of its revenues?"
    spent = ("capex", "capital expenditures", "cash flow statement")
    got, calls = solve(capex, nike, program(spent, REV, formula="rev_2021 / capex_2021"))
    assert len(calls) == 1 and got.solution.short() == "1.56" and "part and whole swapped by code" in \
        got.solution.value, "revenue is a whole: 6,408% cannot be capex's share of it"
    bought = "What were Nike's FY2020 share repurchases as a percentage of its net income?"
    rows = (("buy", "repurchase of common stock", "cash flow statement"), ("ni", "net income", "income statement"))
    got, _ = solve(bought, nike, program(*rows, formula="buy_2020 / ni_2020"))
    assert got.solution.short() == "120.8", "3,067 of 2,539: buybacks are no part of net income, no range"
    assert kind_of("What were diluted earnings per share of common stock in FY2021?", "eps_2021") is None
    covered = "What was Nike's FY2021 cash from operations as a share of its capital expenditures, in percent?"
    rows = (("cfo", "cash provided by operations", "cash flow statement"),
            ("capex", "capital expenditures", "cash flow statement"))
    got, _ = solve(covered, nike, program(*rows, formula="cfo_2021 / capex_2021"))
    assert got.solution.short() == "957.84", "6,657 of 695: capex is no whole, so no range and no swap"
    got, _ = solve("What share of Nike's FY2021 revenues was its gross profit, in percent?", nike,
                   program(GP, REV, formula="rev_2021 / gp_2021"))
    assert got.solution.short() == "44.82", "revenue is a whole: a share of it lies within 100%"


@pytest.mark.parametrize(("written", "repaired"), [
    ("(oi_2021 + da_2021 / rev_2021", "(oi_2021 + da_2021) / rev_2021"),  # a group that adds, then divided
    ("365 * avg(inv_2020, inv_2021 / cogs_2021 + 365 * avg(ar_2020, ar_2021) / rev_2021",
     "365 * avg(inv_2020, inv_2021) / cogs_2021 + 365 * avg(ar_2020, ar_2021) / rev_2021"),  # a call's last argument
    ("avg(oi_2020 / rev_2020, oi_2021 / rev_2021", "avg(oi_2020 / rev_2020, oi_2021 / rev_2021)"),
    ("oi_2021 + da_2021) / rev_2021", "(oi_2021 + da_2021) / rev_2021"),  # closed, never opened
    ("[oi_2021 + da_2021] ÷ rev_2021", "(oi_2021 + da_2021) / rev_2021"),
    ("(rev_2021 / rev_2019) ^ 0.5 − 1", "(rev_2021 / rev_2019) ** 0.5 - 1"),
    ("gp_2021 / rev_2021", "gp_2021 / rev_2021"),  # nothing to repair: as written
])
def test_a_formulas_slips_are_repaired_by_code(written, repaired):
    assert mended(written) == repaired


def test_an_unclosed_parenthesis_is_repaired_by_code_with_no_model_call(nike, netflix):
    margin = "What is Netflix's FY2015 EBITDA margin, from operating income plus D&A over revenues, in percent?"
    rows = (("oi", "operating income", "income statement"), ("da", "depreciation and amortization",
                                                             "cash flow statement"), REV)
    unclosed = program(*rows, formula="(oi_2015 + da_2015 / rev_2015")
    got, calls = solve(margin, netflix, unclosed)
    assert len(calls) == 1 and got.solution.short() == "5.43", got.reason  # (305,826 + 62,283) / 6,779,511
    cycle = "What was Nike's FY2021 cash turnaround in days, defined by days of inventory plus days of receivables?"
    rows = (("inv", "inventories", "balance sheet"), ("cogs", "cost of sales", "income statement"),
            ("ar", "accounts receivable", "balance sheet"), REV)
    unclosed = program(*rows, formula="365 * avg(inv_2020, inv_2021 / cogs_2021 + 365 * avg(ar_2020, ar_2021) / "
                                      "rev_2021")
    got, calls = solve(cycle, nike, unclosed)
    assert len(calls) == 1 and got.solution.short() == "135.16", got.reason  # 105.61 + 29.55 days


def test_a_row_labelled_as_a_sum_of_rows_is_those_rows_with_no_model_call(netflix):
    margin = "What was Netflix's FY2015 operating income plus D&A as a share of its revenues, in percent?"
    summed = program(("ebitda", "operating income + depreciation and amortization", "income statement"), REV,
                     formula="ebitda_2015 / rev_2015")
    got, calls = solve(margin, netflix, summed)
    assert len(calls) == 1 and got.solution.short() == "5.43", got.reason  # (305,826 + 62,283) / 6,779,511
    assert got.solution.program == "(ebitda1_2015 + ebitda2_2015) / rev_2015"
    net = ProgramReply.model_validate_json(program(("cash", "cash from operations - capital expenditures",
                                                    "cash flow statement"), formula="cash_2015"))
    assert net.program().formula == "(cash1_2015 - cash2_2015)"
    hyphened = ProgramReply.model_validate_json(program(("debt", "long-term debt", "balance sheet"), formula="debt_2015"))
    assert hyphened.program().formula == "debt_2015", "a hyphen inside a word is no minus"


def test_a_name_the_formula_never_defined_is_a_defined_input_or_a_glossary_row(nike):
    share = "What share of Nike's FY2021 revenues was its gross profit, in percent?"
    sales = ("sales", "revenues", "income statement")
    got, calls = solve(share, nike, program(GP, sales, formula="gp_2021 / revenue_2021"))
    assert len(calls) == 1 and got.solution.program == "gp_2021 / sales_2021", "the input of the same concept"
    capex = "What were Nike's FY2021 capital expenditures as a percentage of its revenues?"
    got, calls = solve(capex, nike, program(("capex", "capital expenditures", "cash flow statement"),
                                            formula="capex_2021 / revenue_2021"))
    assert len(calls) == 1 and got.solution.short() == "1.56", "revenue: a glossary row, added"  # 695 / 44,538
    assert [i.row for i in got.solution.inputs] == ["Additions to property, plant and equipment", "Revenues"]


def test_a_statements_name_is_never_taken_for_a_row(bestbuy):
    asked = "What were Best Buy's FY2023 total capital expenditures, shown in the cash flow statement?"
    named = program(("capex", "cash flow statement", "cash flow statement"), formula="capex_2023")
    got, calls = solve(asked, bestbuy, named)
    assert len(calls) == 1 and got.solution.short() == "930", got.reason  # the statement's (930), not a note's 35
    assert got.solution.inputs[0].page == 42
    worded = ProgramReply.model_validate_json(program(("x", "capex in the statement of cash flows",
                                                       "cash flow statement"), formula="x_2023"))
    assert worded.program().inputs[0].label == "capex"
    unnamed = ProgramReply.model_validate_json(program(("x", "statement of cash flows", "cash flow statement"),
                                                       formula="x_2023"))
    with pytest.raises(ComputeError, match="a statement, not a row of it"):
        unnamed.program()
    its_own_word = ProgramReply.model_validate_json(program(("cash", "cash flow statement", "cash flow statement"),
                                                            formula="cash_2023"))
    with pytest.raises(ComputeError, match="a statement, not a row of it"):
        its_own_word.program()  # "cash" is the statement's first word here, not the row of cash held


def test_a_retention_ratio_and_its_payout_are_amounts_over_net_income(bestbuy):
    def by_code(question: str):
        got, calls = solve(question, bestbuy)
        assert not calls, "code writes the program"
        return got.solution

    kept = by_code("What was Best Buy's FY2023 retention ratio?")
    assert kept.program == "(net_income_2023 - dividends_paid_2023) / net_income_2023"
    assert kept.short() == "0.44" and kept.inputs[1].printed == "(789)", "dividends paid out: an amount, not a sign"
    assert by_code("What was Best Buy's FY2023 dividend payout ratio?").short() == "0.56"  # 789 / 1,419


def test_a_cash_conversion_cycle_and_a_d_and_a_margin_are_written_by_code(nike, netflix):
    cycle, calls = solve("What was Nike's cash conversion cycle in FY2021, in days?", nike)
    assert not calls and cycle.solution.short() == "97.4", "105.61 + 29.55 - 37.75 days"
    margin, calls = solve("What was Netflix's D&A margin for FY2015, in percent?", netflix)
    assert not calls and margin.solution.short() == "0.92", "62,283 / 6,779,511"


def test_a_figure_comes_from_the_statement_the_question_names_else_it_says_where(netflix, bestbuy):
    got, _ = solve("What were Netflix's FY2015 advertising expenses, per the income statement?", netflix)
    assert got.solution.value.endswith("no row for 'advertising expenses' in the income statement: read from the "
                                       "text, p. 47"), "no statement prints it: a note's sentence, said so"
    got, _ = solve("What were Best Buy's FY2023 net earnings shown in the cash flow statement?", bestbuy)
    assert got.solution.inputs[0].page == 42 and "no row for" not in got.solution.value
    reply = program(("staff", "headcount costs", "cash flow statement"), formula="staff_2023")
    got, _ = solve("What were Best Buy's FY2023 headcount costs in the cash flow statement, in USD millions?",
                   bestbuy, reply)
    assert got.solution is None and got.reason == "no row for 'headcount costs' in 2023 in the cash flow statement"
