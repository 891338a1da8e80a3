"""Plans by code and their composition: which questions need several facts, the parts code writes where the
wording is plain, and the answer composed from the parts' values (no model: every value is given here)."""

from __future__ import annotations

import pytest

from rag.reader.answer import NOT_ANSWERABLE, Cited, Solution
from rag.reader.compose import MISSING, compose
from rag.reader.pages import PageRef
from rag.reader.plan import Part, Plan, PlanReply, by_code, checked, composition
from rag.reader.question import understand


@pytest.mark.parametrize("question, kind", [
    ("How many more bicycles did the north depot repair than the south depot?", "difference"),
    ("What is the gap between the share of owners and the share of renters who recycle?", "difference"),
    ("How much lower is the error rate of model X compared to model Y?", "difference"),
    ("What is the total number of visitors in June and July?", "sum"),
    ("How many trees were planted in the parks, the schools, and the streets combined?", "sum"),
    ("What is the average of the scores of team A and team B?", "average"),
    ("Which lake is larger? Lake Alder, or Lake Birch?", "greater"),
    ("Which plant had the lower output? The east plant, or the west plant?", "lesser"),
])
def test_the_wording_says_the_composition(question, kind):
    assert composition(understand(question)) == kind


@pytest.mark.parametrize("question", [
    "How many visitors came in June?",
    "How many members does the club with the highest total count of boats and canoes have?",  # picks, adds nothing
    "How many figures are there in total in the report?",  # one count of the document itself
    "Why did the total cost rise between 2019 and 2020?",
    "Is the east plant larger than the west plant?",
])
def test_a_question_of_one_fact_has_no_plan(question):
    assert composition(understand(question)) is None


@pytest.mark.parametrize("question, parts", [
    ("How many more bicycles did the north depot repair than the south depot?",
     ["How many bicycles did the north depot repair?", "How many bicycles did the south depot repair?"]),
    ("What is the percentage gap between the oldest members and the newest members who vote in the club survey?",
     ["What is the percentage of the oldest members who vote in the club survey?",
      "What is the percentage of the newest members who vote in the club survey?"]),
    ("How many trees were planted in the parks, the schools, and the streets combined?",
     ["How many trees were planted in the parks?", "How many trees were planted in the schools?",
      "How many trees were planted in the streets?"]),
    ('What is the total percentage of "part-time" and "full-time" staff in the 2020 table?',
     ['What is the percentage of "part-time" staff in the 2020 table?',
      'What is the percentage of "full-time" staff in the 2020 table?']),
    ("How much lower is the error rate of the small model on Set-A compared to Set-B?",
     ["What is the error rate of the small model on Set-A?", "What is the error rate of the small model on Set-B?"]),
    ("How much higher were the sales of the shop in 2021 compared to 2019?",
     ["What were the sales of the shop in 2021?", "What were the sales of the shop in 2019?"]),
    ("How much higher is the score of Model-A + cache compared to Model-A on TaskQ?",  # A is B and more
     ["What is the score of Model-A + cache on TaskQ?", "What is the score of Model-A on TaskQ?"]),
])
def test_code_writes_the_parts_of_plain_wording(question, parts):
    q = understand(question)
    got = by_code(q, composition(q))
    assert [p.question for p in got] == parts and all(p.label and p.label in q.text for p in got)


def test_a_comparison_of_choices_is_left_to_the_model_and_its_parts_are_checked():
    q = understand("Which town had the higher rainfall? Alder, or Birchwood?")
    assert by_code(q, "greater") == []
    parts = ["What was the rainfall of Alder?", "What was the rainfall of Birchwood?"]
    plan = checked(q, "greater", PlanReply(parts=parts))
    assert [(p.label, p.question) for p in plan.parts] == [("Alder", "What was the rainfall of Alder?"),
                                                          ("Birchwood", "What was the rainfall of Birchwood?")]
    assert not checked(q, "greater", PlanReply(parts=["What was the rainfall of Alder?"] * 2)).parts, "one part twice"
    assert not checked(q, "greater", PlanReply(parts=["a?", "b?", "c?"])).parts, "not one per choice"


def solution(value: str, page: int, short: str = "") -> Solution:
    return Solution(skill="read_page", asked="number", value=value, short_value=short, line=value,
                    pages=[PageRef(doc_id="d", file="f.pdf", page=page)])


def plan_of(kind: str, *labels: str) -> Plan:
    return Plan(composition=kind, parts=[Part(question=f"q{n}?", label=label) for n, label in enumerate(labels)])


def test_a_difference_is_computed_by_code_and_shows_each_value_with_its_page():
    got = compose(understand("How many more?"), plan_of("difference", "", ""), [solution("38", 3), solution("52", 4)])
    assert got.value == "14 = 52 [p. 4] − 38 [p. 3]" and got.short() == "14"
    assert got.program.endswith("ans = abs(part_1 - part_2)") and [i.page for i in got.inputs] == [3, 4]
    assert [p.page for p in got.pages] == [3, 4]


def test_percentages_stay_percentages_and_decimals_are_kept():
    got = compose(understand("What is the sum?"), plan_of("sum", "", ""), [solution("41.5%", 2, "41.5"),
                                                                           solution("18.9%", 2, "18.9")])
    assert got.value == "60.4% = 41.5% [p. 2] + 18.9% [p. 2]" and got.short() == "60.4"


def test_an_average_divides_by_the_parts():
    got = compose(understand("What is the average?"), plan_of("average", "", "", ""),
                  [solution("3", 1), solution("4", 1), solution("8", 2)])
    assert got.short() == "5" and got.value.startswith("5 = (3 [p. 1] + 4 [p. 1] + 8 [p. 2]) / 3")


def test_a_comparison_names_the_choice_with_both_values():
    got = compose(understand("Which is higher?"), plan_of("greater", "Asia", "Europe"),
                  [solution("2.1", 11), solution("1.4", 12)])
    assert got.value == "Asia (2.1 [p. 11]) over Europe (1.4 [p. 12])" and got.short() == "Asia"
    lower = compose(understand("Which is lower?"), plan_of("lesser", "Asia", "Europe"),
                    [solution("2.1", 11), solution("1.4", 12)])
    assert lower.short() == "Europe"


def test_a_part_not_found_leaves_a_partial_answer_marked_missing():
    got = compose(understand("How many more?"), plan_of("difference", "vans", "cars"), [solution("38", 3), None])
    assert got.value == f"difference not computed: vans: 38 [p. 3]; cars: {MISSING}" and got.short() == NOT_ANSWERABLE
    assert got.program is None and [p.page for p in got.pages] == [3]


def test_two_parts_that_read_one_figure_of_one_page_are_not_composed():
    got = compose(understand("How many more?"), plan_of("difference", "vans", "cars"), [solution("87", 3), solution("87", 3)])
    assert got.short() == NOT_ANSWERABLE and "one figure" in got.value and got.program is None


def test_two_cells_of_one_page_that_print_one_number_are_two_figures():
    def looked_up(row: str) -> Solution:
        return solution("16", 5).model_copy(update={"skill": "table", "by": "code",
                                                    "inputs": [Cited(row=row, period="2013", printed="16", page=5)]})

    got = compose(understand("What is the total?"), plan_of("sum", "vans", "cars"), [looked_up("Vans"), looked_up("Cars")])
    assert got.short() == "32"
