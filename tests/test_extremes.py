"""Which row of a table holds the highest or lowest value: pure functions over tables as ingestion stores
them from the dev PDFs (rows copied from the store); no model."""

from __future__ import annotations

import pandas as pd
import pytest

from rag.reader.cascade import asked_years
from rag.reader.cascade.extremes import (
    asks_amount,
    clear_column,
    comparison,
    direction,
    gap,
    gap_program,
    holder_program,
    named_columns,
    names_all,
    numeric_table,
    option_rows,
    program,
    share_given,
)
from rag.reader.cascade.question import analyse
from rag.reader.program import run_program

CASH_FLOWS = pd.DataFrame([  # Best Buy 10-K p. 29, as the table parser stores it
    ["Total cash provided by (used in) — Operating activities", "$1,824", "$3,252", "$4,927"],
    ["Total cash provided by (used in) — Investing activities", "(962)", "(1,372)", "(788)"],
    ["Total cash provided by (used in) — Financing activities", "(1,806)", "(4,297)", "(876)"],
    ["Increase (decrease) in cash, cash equivalents and restricted cash", "$(952)", "$(2,420)", "$3,270"],
], columns=["col1", "2023", "2022", "2021"])
EXPECTATIONS = pd.DataFrame([  # Pew Hispanic economy report p. 16, a chart read at ingestion
    ["Excellent financial condition", "45", "41", "5", ""],
    ["Good financial condition", "30", "59", "3", "1"],
    ["Only fair financial condition", "17", "62", "8", "3"],
    ["Poor financial condition", "15", "51", "13", "8"],
], columns=["category", "Improve a lot", "Improve some", "Get a little worse", "Get a lot worse"])
OPTIMISM = pd.DataFrame([  # p. 14: two years and the chart's own change column
    ["General population", "61", "56", "+6"],
    ["All Hispanics", "81", "67", "+14"],
    ["Foreign born", "81", "67", "+14"],
    ["2nd generation", "86", "", ""],
    ["Male", "84", "67", "+18"],
    ["Some college or more", "85", "65", "+20"],
    ["Ages 18-29", "90", "77", "+13"],
], columns=["category", "2015", "2008", "Change '08-'15"])
CONFIDENCE = pd.DataFrame([  # Pew political survey p. 5, a chart read at ingestion
    ["Negotiate favorable trade agreements with other countries", "26", "30", "44", "54"],
    ["Make good decisions about economic policy", "29", "31", "46", "53"],
    ["Use military force wisely", "32", "26", "51", "46"],
    ["Make wise decisions about immigration policy", "39", "26", "55", "43"],
    ["Work effectively with Congress", "33", "13", "54", "43"],
], columns=["category", "Not at all", "Very", "Not at all + Not too", "Somewhat + Very"])
CHILDREN = pd.DataFrame([  # p. 17: groups by rows, answers by columns
    ["All Hispanics", "5", "72", "16"], ["U.S. born", "6", "70", "17"], ["Foreign born", "5", "75", "16"],
    ["Male", "6", "72", "15"], ["High school graduate", "4", "79", "14"],
], columns=["category", "Less well-off", "Better off", "About the same"])
INCOME = pd.DataFrame([  # p. 11: a group in a year per row
    ["2015 · Hispanic", "53", "37", "10"], ["2015 · White", "49", "43", "7"],
    ["2014 · Hispanic", "53", "34", "9"], ["2014 · White", "59", "33", "7"],
], columns=["category", "Falling behind", "Staying about even with", "Going up faster than"])


def answer(frame: pd.DataFrame, question: str) -> str:
    found = comparison(frame, question, asked_years(question), analyse(question).options)
    assert found is not None
    column = [] if found.change else [clear_column(list(found.frame.columns), question, asked_years(question))]
    return run_program(program(found, column), {"df": found.frame})


@pytest.mark.parametrize("question, way", [
    ("Which group has the highest share?", "max"),
    ("Which party brought in the most (or lost the least) votes?", "max"),
    ("Which type of error has the lowest total percentage?", "min"),
    ("Which one is greater in population, A or B?", "max"),
    ("Which groups have more than half saying yes?", None),  # a threshold, not an extreme
    ("How do 5% of Latinos see the future, better or less well-off?", None),
    ("The highest share of the year.", None),  # asks for no row
    ("Among the higher-income seniors, what share go online?", None),  # a group's name
])
def test_the_extreme_asked_for(question, way):
    assert direction(question) == way


def test_the_options_of_a_question_name_their_rows_by_the_words_that_tell_them_apart():
    labels = list(CASH_FLOWS["col1"])
    assert option_rows(labels, ["operations activities", "investing activities", "financing activities"]) == [0, 1, 2]
    assert option_rows(labels, ["operations activities", "lending activities"]) is None, "no row of its own"


def test_the_year_asked_is_the_column_compared_and_the_answer_is_the_option():
    question = "Among operations, investing, and financing activities, which brought in the most cash flow in FY2022?"
    assert answer(CASH_FLOWS, question) == "operations activities"
    assert answer(CASH_FLOWS, question.replace("the most", "the least")) == "financing activities"


def test_a_header_that_says_what_is_asked_is_the_column_and_totals_are_no_rows():
    question = ("Among the Hispanics shaped by their current financial situation, which situation involves the "
                "highest percentage that expects their finances to get a lot worse?")
    assert answer(EXPECTATIONS, question) == "Poor financial condition"


def test_a_change_between_two_years_is_computed_and_a_drop_is_the_most_negative():
    assert answer(OPTIMISM, "Which subgroup gained most from 2008 to 2015?") == "Some college or more"
    assert answer(OPTIMISM, "Which subgroup had the biggest drop from 2008 to 2015?") == "Ages 18-29"
    found = comparison(OPTIMISM, "Which subgroup gained most from 2008 to 2015?", {"2008", "2015"}, [])
    assert "General population" not in found.frame.index and "All Hispanics" not in found.frame.index


def test_no_comparison_where_the_rows_are_not_the_things_compared():
    assert comparison(INCOME, "Which group had the most significant drop from 2014 to 2015?", {"2014", "2015"}, []) is None
    assert comparison(CASH_FLOWS, "What was the cash from operations in 2022?", {"2022"}, []) is None
    words = pd.DataFrame([["Deductive", "LP"], ["First-order", "FOL"]], columns=["Problem", "Formulation"])
    assert comparison(words, "Which problem has the most examples?", set(), []) is None, "no numbers"


def test_rows_of_a_group_in_a_year_are_compared_as_the_change_of_the_measure_the_question_names():
    question = ("From 2014 to 2015, one group has the most significant drop of households saying their income "
                "was falling behind the cost of living. Which group is this, and what is the percentage dropped?")
    found = comparison(INCOME, question, asked_years(question), [])
    assert list(found.frame.index) == ["Hispanic", "White"] and "Staying about even with · 2014" in found.frame
    assert found.change == ("Falling behind · 2014", "Falling behind · 2015") and found.way == "min"
    assert asks_amount(question) and not asks_amount("Which group had the biggest drop?")
    assert run_program(program(found, [], amount=True), {"df": found.frame}) == ["White", 10.0]
    gained = "Which group gained most in saying their income was falling behind from 2014 to 2015?"
    assert answer(INCOME, gained) == "Hispanic", "'falling' names the measure, it asks for no drop"


APPROVAL = pd.DataFrame([  # Pew political survey p. 10, a chart read at ingestion
    ["Total", "42", "27", "54", "39"], ["Men", "33", "34", "45", "48"], ["Women", "51", "20", "64", "30"],
    ["Ages 18-29", "46", "14", "65", "27"], ["30-49", "41", "26", "54", "38"], ["50-64", "42", "34", "50", "45"],
    ["65+", "39", "34", "49", "47"], ["Postgrad", "59", "16", "68", "23"],
], columns=["category", "Disapprove Strongly", "Approve Strongly", "Disapprove Strongly + Disapprove Not strongly",
            "Approve Not strongly + Approve Strongly"])


@pytest.mark.parametrize(("question", "rows", "value"), [
    ("What is the percentage gap between the youngest age group and the oldest age group that strongly "
     "disapproves of the way the president was handling his job?", ("Ages 18-29", "65+"), 7),
    ("What is the difference between the oldest and the youngest age group who strongly disapprove?",
     ("65+", "Ages 18-29"), 7),
    ("What is the gap between men and women who strongly disapprove of Trump?", ("Men", "Women"), 18),
])
def test_the_gap_between_two_rows_is_a_subtraction_in_the_column_asked(question, rows, value):
    found = gap(APPROVAL, question, set())
    assert found.rows == rows
    column = clear_column(list(found.frame.columns), question, set())
    assert column == "Disapprove Strongly", "of headers that fit as well, the one that says nothing else"
    assert run_program(gap_program(found, column), {"df": found.frame}) == value


def test_no_gap_without_two_rows_of_the_table():
    assert gap(APPROVAL, "What is the gap between men and retirees who strongly disapprove?", set()) is None
    assert gap(APPROVAL, "What share of the youngest age group strongly disapproves?", set()) is None
    assert gap(CHILDREN, "What is the gap between the youngest and the oldest age group who are better off?",
               set()) is None, "a table without age rows"


def test_a_column_code_cannot_tell_is_left_to_the_model():
    columns = ["Less well-off", "Better off", "About the same"]
    assert clear_column(columns, "Which subgroup is the most optimistic about its children's future?", set()) is None
    assert clear_column(["value"], "Which year had the most?", set()) == "value"


def test_a_table_that_does_not_name_the_acronyms_asked_about_is_not_compared():
    errors = pd.DataFrame([["Syntax error", "0%"], ["Semantic error", "29%"]], columns=["Error Type", "2-hop"])
    question = "Which type of semantic errors has the lowest total percentages in FEVER dataset?"
    assert not names_all(errors, "Table: error analysis on HOVER", analyse(question).names)
    assert names_all(errors, "Table: error analysis on HOVER", analyse(question.replace("FEVER", "HOVER")).names)


def test_a_list_of_extremes_is_one_per_column_the_question_spells_out():
    question = "What are the domains with the highest percentage that adults are very confident and not at all confident?"
    found = comparison(CONFIDENCE, question, set(), [])
    assert named_columns(list(found.frame.columns), question) == ["Not at all", "Very"]
    assert run_program(program(found, ["Very", "Not at all"]), {"df": found.frame}) == [
        "Make good decisions about economic policy", "Make wise decisions about immigration policy"]


def holder(question: str) -> list[str] | None:
    numbers = numeric_table(CHILDREN, set())
    code = holder_program(numbers, share_given(question), question)
    return code and run_program(code, {"df": numbers})


def test_what_a_share_the_question_gives_stands_for():
    assert share_given("How do 5% of the Latinos see upward mobility for their children?") == 5.0
    assert share_given("Do 5% or 10% of them agree?") is None, "two shares: which one is asked about is unclear"
    assert holder("How do 5% of the Latinos see upward mobility for their children?") == ["Less well-off"]
    assert holder("Which group has 79% saying their children will be better off?") == ["High school graduate"]
    assert holder("Which group has 72% saying their children will be better off?") is None, "two rows hold it"
