"""The general path's free reply put in the asked form by code (rag/reader/normalise.py) and checked on its
page (rag/reader/skills/read_free.py). The model is a scripted reply here: these test the code around it."""

from __future__ import annotations

import asyncio

import pytest
from scripted_llm import JsonReplies

from rag.models.structured import parse
from rag.reader.normalise import normalised
from rag.reader.pages import PageRef
from rag.reader.question import understand
from rag.reader.skills.base import PageView
from rag.reader.skills.read_free import FreeReply, ReadFree
from rag.settings import ReaderSettings

PAGE = """Harbour Ferries annual review 2023
Ridership by route (thousands of trips)
North loop | 1,482
Island shuttle | 906
The board chair, Dr. Amara Osei, PhD, opened the new pier on 03/04/2023.
About 35 percent of riders travel before 9 am. The company runs three depots."""


@pytest.mark.parametrize("question, reply, form", [
    ("How many depots does the company run?", "three depots", "3"),
    ("What share of riders travel before 9 am?", "About 35 percent of riders", "35%"),
    ("Does the island shuttle run in winter?", "No, it stops in November", "No"),
    ("List the routes in the ridership table.", "North loop, Island shuttle", ["North loop", "Island shuttle"]),
    ("Which route carried more trips? The North loop or the Island shuttle?", "the north loop route", "The North loop"),
    ("Who chairs the board?", "Dr. Amara Osei, PhD", "Dr. Amara Osei, PhD"),
])
def test_a_reply_is_put_in_the_form_asked(question, reply, form):
    assert normalised(reply, understand(question)) == form


def test_words_that_are_no_figure_stay_as_written():
    assert normalised("not stated on this page", understand("How many ferries sail at night?")) == \
        "not stated on this page"


def read(question: str, reply: str):
    async def call(purpose, messages, model, max_tokens):
        assert model is FreeReply and "Harbour Ferries" in messages[-1].content
        return parse(reply, model)

    view = PageView(ref=PageRef(doc_id="d", file="review.pdf", page=4), text=PAGE, whole=PAGE)
    return asyncio.run(ReadFree().solve(understand(question), view, JsonReplies(call)))


def test_a_figure_comes_with_its_page_scale_and_stands_on_the_page():
    got = read("How many trips did the North loop carry?", '{"found": true, "answer": "1,482"}')
    assert got.solution and not got.failed
    assert got.solution.short() == "1482" and got.solution.sentence().startswith("1,482")


def test_a_date_is_given_in_the_form_asked():
    got = read("On what date did the new pier open? Answer as YYYY-MM-DD.", '{"found": true, "answer": "03/04/2023"}')
    assert got.solution.short() == "2023-03-04"


def test_a_reply_the_page_does_not_hold_fails_its_check_and_no_reply_is_no_answer():
    invented = read("How many trips did the Island shuttle carry?", '{"found": true, "answer": "7,120"}')
    assert "values_on_page" in invented.failed
    assert read("Who built the pier?", '{"found": false, "answer": ""}').solution is None
    assert read("List the piers.", '{"found": true, "answer": " ; "}').solution is None
    assert "did not parse" in read("Who built the pier?", "the pier was").reason


@pytest.mark.parametrize("reply", ['{"found": true, "answer": "}"}', '{"found": true, "answer": ":["}'])
def test_a_reply_of_punctuation_alone_is_no_answer(reply):
    got = read("How many trips did the North loop carry?", reply)
    assert got.solution is None and "no word and no number" in got.reason
    assert read("How many depots are there?", '{"found": true, "answer": "3"}').solution, "a digit alone is an answer"


@pytest.mark.parametrize("question, reply, check", [
    ("What was the ticket price in 2023?", "906", "number_line"),
    ("Who opened the new pier?", "North loop", "words_line"),
])
def test_a_reply_on_a_line_about_something_else_is_refused_by_default(question, reply, check):
    got = read(question, f'{{"found": true, "answer": "{reply}"}}')
    assert check in got.failed and check in ReaderSettings().checks


@pytest.mark.parametrize("question, reply", [
    ("How many trips did the Island shuttle carry?", "906"),
    ("Who opened the new pier?", "Dr. Amara Osei"),
])
def test_a_reply_on_a_line_about_what_is_asked_passes_every_check(question, reply):
    assert not read(question, f'{{"found": true, "answer": "{reply}"}}').failed


def test_a_count_is_the_readers_tally_and_needs_no_line_that_prints_it():
    assert "number_line" not in read("How many ferries does the company own?", '{"found": true, "answer": "906"}').failed
