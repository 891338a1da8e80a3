"""The metric skill (rag/reader/skills/metric.py): the model's program held by a schema, code's lookups, units and
rounding, and in the agent the program, its inputs and their pages in the hop box and the trace; a missing row
said with the answer. The model's replies are scripted here (control flow only); the real model writes programs in
tests/test_metric_real.py."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import BESTBUY, local_settings, pages_of
from scripted_llm import ScriptedLLM

from rag.agent.events import Computation, PageRead
from rag.agent.run import run_question
from rag.models.structured import StructuredReply
from rag.reader.definitions import metrics_named
from rag.reader.question import understand
from rag.reader.skills import metric
from rag.workspace import Workspace

TURNOVER = ("What is the FY2021 inventory turnover ratio for Nike? Inventory turnover ratio is defined as: (FY2021 "
            "COGS) / (average inventory between FY2020 and FY2021). Round your answer to two decimal places.")


def program(*inputs: tuple[str, str, str, str], formula: str) -> str:
    return json.dumps({"inputs": [{"name": n, "label": label, "year": y, "statement": s} for n, label, y, s in inputs],
                       "formula": formula})


def solve(question: str, reply: str, frames):
    async def call(purpose, messages, model, max_tokens):
        return StructuredReply(value=model.model_validate_json(reply), text=reply)

    return asyncio.run(metric.solve(understand(question), frames, call))


def test_a_metric_question_on_statements_gets_the_skill_and_others_do_not(nike):
    assert metric.applies(understand(TURNOVER), nike)
    assert metric.applies(understand("What was Nike's revenue in fiscal 2021?"), nike), "a statement's word"
    assert not metric.applies(understand("What was Nike's revenue in fiscal 1994?"), nike), "a year no column holds"
    assert not metric.applies(understand("Who signed the report in 2021?"), nike)


def test_code_looks_up_computes_and_rounds_and_every_input_has_its_page(nike):
    got = solve(TURNOVER, program(("cogs", "cost of sales", "2021", "income statement"),
                                  ("inv_2020", "inventories", "2020", "balance sheet"),
                                  ("inv_2021", "inventories", "2021", "balance sheet"),
                                  formula="cogs / avg(inv_2020, inv_2021)"), nike)
    s = got.solution
    assert s.short() == "3.46" and s.by == "code" and s.skill == "metric"
    assert s.value.startswith("3.46 = cogs 24,576 [p. 59] / avg(inv_2020 7,367 [p. 61], inv_2021 6,854 [p. 61])")
    assert [i["page"] for i in s.inputs] == [59, 61, 61] and {p.page for p in s.pages} == {59, 61}


def test_a_percentage_is_made_by_code_and_money_in_the_scale_asked(nike):
    margin = "What is Nike's FY2021 gross margin in percent? Round to one decimal place."
    got = solve(margin, program(("gp", "gross profit", "2021", "income statement"),
                                ("rev", "revenues", "2021", "income statement"), formula="gp / rev * 100"), nike)
    assert got.solution.short() == "44.8", "the formula's own * 100 is not applied twice"
    billions = "What were Nike's FY2021 total assets in USD billions?"
    got = solve(billions, program(("ta", "total assets", "2021", "balance sheet"), formula="ta"), nike)
    assert got.solution.short() == "37.74" and "billion" in got.solution.value


def test_a_missing_row_or_a_program_not_allowed_says_why(nike):
    got = solve(TURNOVER, program(("staff", "number of employees", "2021", "income statement"), formula="staff"), nike)
    assert got.solution is None and got.reason.startswith("no row for 'number of employees' in 2021")
    got = solve(TURNOVER, program(("cogs", "cost of sales", "2021", "income statement"),
                                  formula="__import__('os').system('true')"), nike)
    assert got.solution is None and got.reason.startswith("the program was refused")


@pytest.fixture(scope="module")
def bestbuy_statements(tmp_path_factory, embed_model):
    """Best Buy's statements (pp. 38–43 of its 10-K), searchable from their text layer only."""
    ws = Workspace(local_settings(tmp_path_factory.mktemp("bby")), embed_model=embed_model)
    report = ws.ingest(pages_of(BESTBUY, list(range(38, 44))), BESTBUY, wait="searchable")
    assert report.stage == "searchable", report
    return ws


def test_the_agent_answers_a_lookup_by_code_with_its_input_cited(bestbuy_statements, tmp_path):
    events: list = []
    result = run_question(bestbuy_statements, ScriptedLLM(replies=[]), "What was Best Buy's revenue in fiscal 2023?",
                          trace_dir=tmp_path, on_event=events.append)
    assert result.answer.startswith("$46,298 million = revenue_2023 46,298 [p. 3]"), result.answer
    assert result.skill == "metric" and result.citations[0]["page"] == 3
    [computed] = [e for e in events if isinstance(e, Computation)]
    assert computed.program == "revenue_2023" and computed.inputs[0]["printed"] == "46,298"


def test_the_agent_runs_the_models_program_when_the_question_composes(bestbuy_statements, tmp_path):
    reply = program(("rev", "revenue", "2023", "income statement"),
                    ("cogs", "cost of sales", "2023", "income statement"), formula="rev - cogs")
    events: list = []
    llm = ScriptedLLM(replies=[reply])
    result = run_question(bestbuy_statements, llm, "What was Best Buy's revenue less its cost of sales in fiscal 2023?",
                          trace_dir=tmp_path, on_event=events.append)
    assert result.answer.startswith("$9,912 million = rev 46,298 [p. 3] - cogs 36,386 [p. 3]"), result.answer
    assert not llm.replies, "the model wrote the program"


def test_a_missing_row_is_said_when_no_page_holds_the_answer(bestbuy_statements, tmp_path):
    reply = program(("staff", "number of employees", "2023", "balance sheet"), formula="staff")
    nothing = json.dumps({"found": False, "answer": ""})
    events: list = []
    result = run_question(bestbuy_statements, ScriptedLLM(replies=[reply] + [nothing] * 6),
                 "How many employees did Best Buy have in fiscal 2023?", trace_dir=tmp_path, on_event=events.append)
    assert any(isinstance(e, PageRead) for e in events), "pages are read after the lookup failed"
    assert result.answer.startswith("Not in the documents: no row for 'number of employees' in 2023"), result.answer
    assert any(isinstance(e, Computation) and e.error for e in events)


def test_an_amount_spent_is_positive_and_an_unadjusted_figure_is_the_statements(nike):
    fcf = "What is Nike's FY2021 free cash flow, cash from operations less capex? Answer in USD millions."
    got = solve(fcf, program(("cfo", "cash from operations", "2021", "cash flow statement"),
                             ("capex", "capital expenditures", "2021", "cash flow statement"), formula="cfo - capex"), nike)
    [cfo, capex] = got.solution.inputs
    assert capex["printed"].startswith("(") and got.solution.short() == str(round(6657 - 695)), got.solution.value
    got = solve("What was Nike's unadjusted cost of sales in FY2021?",
                program(("cogs", "unadjusted cost of sales", "2021", "income statement"), formula="cogs"), nike)
    assert got.solution and got.solution.inputs[0]["printed"] == "24,576", got.reason


def test_a_program_for_a_year_the_question_does_not_name_is_not_run(nike):
    got = solve(TURNOVER, program(("cogs", "cost of sales", "2019", "income statement"), formula="cogs"), nike)
    assert got.solution is None and "2019, a year the question does not name" in got.reason
    spanned = "What is the FY2019 - FY2021 3 year average of cost of sales?"
    got = solve(spanned, program(*[(f"c{y}", "cost of sales", str(y), "income statement") for y in (2019, 2020, 2021)],
                                 formula="avg(c2019, c2020, c2021)"), nike)
    assert got.solution is not None, "a year between those named is asked too"


def test_a_choice_a_segments_table_or_a_share_of_nothing_is_left_to_page_reading(nike):
    assert not metric.applies(understand("Among operations, investing and financing activities, which brought in "
                                         "the most cash in FY2021?"), nike), "a choice among named things"
    assert all(f.kind != "other" for f in metric.statements(nike)) and len(metric.statements(nike)) < len(nike)
    got = solve("What is the change of Nike's gross profit from FY2020 to FY2021, in percent?",
                program(("gp_2021", "gross profit", "2021", "income statement"),
                        ("gp_2020", "gross profit", "2020", "income statement"), formula="gp_2021 - gp_2020"), nike)
    assert got.solution is None and "divides nothing" in got.reason


def test_a_question_naming_one_figure_for_one_year_gets_its_program_from_code(nike):
    async def no_model(*_):
        raise AssertionError("code writes this program")

    def solved(question: str):
        return asyncio.run(metric.solve(understand(question), nike, no_model)).solution

    ratio = solved("What is Nike's capitalization ratio for FY2021? Answer in percentage term, round to one decimal.")
    assert ratio.program == ("(long_term_debt_2021 + current_portion_of_long_term_2021) / ((long_term_debt_2021 + "
                             "current_portion_of_long_term_2021) + total_shareholders_equity_2021)")
    assert ratio.short() == "42.4", "9,413 / (9,413 + 0 + 12,767), the dash a nil"
    roa = solved("What is Nike's return on assets in FY2021?")
    assert roa.program == "net_income_2021 / avg(total_assets_2020, total_assets_2021)"
    assert [i["page"] for i in roa.inputs] == [59, 61, 61]
    goodwill = solved("What goodwill did Nike have at the end of FY2021?")
    assert goodwill.value.startswith("$242 million = goodwill_2021 242 [p. 61]"), "a row the statements print"


def test_a_question_asking_more_of_its_figure_is_left_to_the_model(nike):
    for question in ("What is the change in Nike's capitalization ratio from FY2020 to FY2021?",
                     "What is Nike's sales to working capital ratio in FY2021?",
                     "What is Nike's revenue per employee in FY2021?", TURNOVER,
                     "What was Nike's capex in FY2021?"):  # an analyst's word: the model names the row
        assert metric.by_code(understand(question), metric.statements(nike)) is None, question


def test_a_metric_the_question_leaves_undefined_gets_an_analysts_definition():
    ratio = metric.with_definitions(understand("What is the capitalization ratio for the fiscal year ending "
                                               "January 28, 2023? Answer in percentage term."))
    assert ratio.task.endswith("Capitalization ratio is defined as total debt / (total debt + total shareholders' "
                               "equity). Total debt is defined as long-term debt + current portion of long-term debt.")
    roe = metric.with_definitions(understand("What is the return on equity for FY2023?"))
    assert "average total shareholders' equity between FY2022 and FY2023" in roe.task and roe.years == ["2023", "2022"]
    given = understand("What is Block's FY2016 working capital ratio? Define working capital ratio as total current "
                       "assets / total current liabilities.")
    assert metric.with_definitions(given) == given, "the question's own definition stands alone"
    fcf = understand("What is the FY2020 free cash flow (FCF) for General Mills? FCF here is defined as: (cash from "
                     "operations - capex).")
    assert metric.with_definitions(fcf) == fcf
    parts = metric.with_definitions(understand("What is the FY2022 unadjusted EBITDA % margin for PepsiCo? Calculate "
                                               "unadjusted EBITDA using unadjusted operating income and D&A."))
    assert "EBITDA margin is defined as (operating income + depreciation and amortization) / revenue." in parts.task, \
        "naming the parts is not saying how they combine"
    assert metrics_named("total debt to EBITDA ratio") == ["total debt", "EBITDA"]
    assert metrics_named("sales to working capital ratio") == ["working capital"]
    assert metric.applies(understand("What is EBITDA for Best Buy in FY2023?"), []) is False, "no statements, no skill"


@pytest.mark.parametrize(("question", "inputs", "formula", "short"), [
    ("What is Return on Capital Employed for the fiscal year ending January 28, 2023? Round to three decimal places.",
     [("oi", "operating income", "income statement"), ("ta", "total assets", "balance sheet"),
      ("cl", "total current liabilities", "balance sheet")], "oi / (ta - cl)", "0.263"),
    ("What is the capitalization ratio for the fiscal year ending January 28, 2023? Answer in percentage term, round "
     "to one decimal place.", [("ltd", "long-term debt", "balance sheet"),
                               ("cur", "current portion of long-term debt", "balance sheet"),
                               ("eq", "total shareholders' equity", "balance sheet")],
     "(ltd + cur) / (ltd + cur + eq)", "29.6"),
    ("What is the effective tax rate for the fiscal year ending January 28, 2023? Answer in percentage term, round to "
     "one decimal place.", [("tax", "income tax expense", "income statement"),
                            ("pretax", "income before income taxes", "income statement")], "tax / pretax", "20.7"),
])
def test_a_defined_metric_is_computed_from_the_rows_its_definition_names(bestbuy, question, inputs, formula, short):
    got = solve(question, program(*[(n, label, "2023", st) for n, label, st in inputs], formula=formula), bestbuy)
    assert got.solution and got.solution.short() == short, (got.reason, got.solution)
