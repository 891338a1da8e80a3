"""The item a table or chart ranks at the extreme a question asks, found by code (rag/reader/ranks.py): on tables
written here, on a real report's charts as the store keeps them, and in the reader without a model call."""

from __future__ import annotations

import asyncio

import pytest
from conftest import PEW
from scripted_llm import JsonReplies

from rag.reader import PageReader, PageRef, understand
from rag.reader.ranks import ranked_item
from rag.records import Table
from rag.settings import ReaderSettings

REF = PageRef(doc_id="d", file="f.pdf", page=4, score=1.0)
DEPOTS = Table(table_id="t", page=4, bbox=(0, 0, 1, 1), title="Bicycles repaired by depot",
               header=["Depot", "2021", "2022"],
               rows=[["North depot", "52", "61"], ["South depot", "38", "30"], ["East depot", "45", "47"],
                     ["West depot", "45", "40"], ["Total", "180", "178"]])
CASH = Table(table_id="c", page=4, bbox=(0, 0, 1, 1), title="Statement of cash flows ($ in millions)",
             header=["Fiscal year", "2023", "2022"],
             rows=[["Net earnings", "900", "700"],
                   ["Total cash provided by operating activities", "1,200", "1,000"],
                   ["Additions to property and equipment", "(500)", "(400)"],
                   ["Total cash used in investing activities", "(800)", "(600)"],
                   ["Total cash used in financing activities", "(300)", "(900)"]])


@pytest.mark.parametrize("question, item", [
    ("Which depot repaired the most bicycles in 2022?", "North depot"),  # the column of the year named
    ("Which depot repaired the second largest number of bicycles in 2022?", "East depot"),
    ("Which depot had the second lowest number of bicycles repaired in 2021?", None),  # East and West tie
    ("Which depot's repairs fell the most from 2021 to 2022?", "South depot"),  # a change: 30 − 38
    ("Which depot grew the most between 2021 and 2022?", "North depot"),
    ("Among the north, east and west depots, which repaired the fewest bicycles in 2022?", "west depots"),
    ("Which depot repaired the most scooters?", None),  # no column named
    ("Which depot's repairs fell the most from 2019 to 2022?", None),  # a change between columns not printed
    ("What was the highest number of bicycles repaired in 2022?", None),  # a number asked, not an item
    ("Which driver parked the most cars in 2022?", None),  # another table's question
])
def test_the_item_at_the_rank_asked(question, item):
    found = ranked_item(understand(question), [DEPOTS], REF)
    assert (found.short() if found else None) == item
    if found:
        assert found.by == "code" and found.pages == [REF] and found.program.startswith("rank(table, by=")
        assert found.inputs[0].page == 4 and found.inputs[0].printed in found.line


def test_a_statements_negatives_and_a_choice_among_its_totals():
    question = "Among operating, investing and financing activities, which had the lowest cash flow in 2023?"
    found = ranked_item(understand(question), [CASH], REF)
    assert found.short() == "investing activities" and found.inputs[0].row == "Total cash used in investing activities"
    assert "(800)" in found.line
    most = ranked_item(understand("Among operating, investing and financing activities, which brought in the most "
                                  "cash in 2022?"), [CASH], REF)
    assert most.short() == "operating activities"
    assert ranked_item(understand("Among operating, leasing and financing activities, which brought in the most "
                                  "cash in 2022?"), [CASH], REF) is None  # an option no row names


def test_two_tables_that_rank_differently_are_no_answer():
    other = DEPOTS.model_copy(update={"table_id": "u", "rows": [["Harbour depot", "70", "80"], ["Hill depot", "1", "2"]]})
    question = understand("Which depot repaired the most bicycles in 2022?")
    assert ranked_item(question, [DEPOTS, other], REF) is None
    assert ranked_item(question, [DEPOTS, DEPOTS.model_copy(update={"table_id": "v"})], REF).short() == "North depot"


def test_a_reports_charts_ranked_as_the_store_keeps_them(pew_workspace):
    """Questions of our own on two charts of a real report: a column named by its words, a change between two
    years (summary rows left out)."""
    doc = next(d for d in pew_workspace.store.documents() if d.file == PEW)
    charts = pew_workspace.store.tables(doc.doc_id)

    def ask(question: str, page: int) -> str | None:
        ref = PageRef(doc_id=doc.doc_id, file=doc.file, page=page)
        found = ranked_item(understand(question), [t for t in charts if t.page == page], ref)
        return found.short() if found else None

    assert ask("Which financial condition has the largest share saying their finances will improve a lot?", 16) \
        == "Excellent financial condition"
    assert ask("Which group of Hispanics rose the least from 2008 to 2015?", 14) == "65 and older"
    assert ask("Which group rose the least from 2008 to 2015?", 14) is None  # the chart names no word of it
    assert ask("Which group rose the least from 2008 to 2015?", 16) is None


def test_the_reader_gives_the_ranked_item_without_calling_the_model():
    class Depots:
        def text(self, page):
            return "Bicycles repaired by depot\nDepot 2021 2022\nNorth depot 52 61\nSouth depot 38 30"

        def tables(self, page):
            return [DEPOTS]

    async def no_model(*args, **kwargs):
        raise AssertionError("the model was called")

    reader = PageReader(understand("Which depot repaired the fewest bicycles in 2022?"), ReaderSettings(), Depots(),
                        None, lambda text: len(text.split()), JsonReplies(no_model))
    got = asyncio.run(reader.read(REF))
    assert got.solution.short() == "South depot" and got.solution.sentence().startswith("South depot: 30 (2022")
    assert (got.record.skill, got.record.found, got.calls) == ("table", True, [])
