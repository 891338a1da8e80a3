"""A count of things on a page (skills/count.py): the count as printed when the page prints it, else the things
listed by the model and counted by code. Through the agent on a real store with a scripted LLM: control flow
only, the replies are the test's."""

from __future__ import annotations

import json

import pymupdf
import pytest
from scripted_llm import ScriptedLLM

from rag.agent.run import run_question
from rag.reader.question import understand
from rag.reader.skills import page_skills


def offices_pdf() -> bytes:
    doc = pymupdf.open()
    text = ("The cooperative's regional offices. The cooperative runs its members' services from Leeds, Bristol, "
            "Cardiff and York. Each office keeps its own ledger and reports to the board every quarter. "
            "The board has 9 members.")
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 400), text, fontsize=11)
    return doc.tobytes()


def test_a_count_of_things_is_read_by_the_count_skill_and_an_amount_is_not():
    counted = "How many offices does the cooperative run?"
    assert [s.name for s in page_skills(understand(counted), ["count"])] == ["count", "read_page"]
    for other in ("How many more members than offices are there?", "How many shares were bought back?",
                  "How many pages does the report have?", "What share of members voted?"):
        assert [s.name for s in page_skills(understand(other), ["count"])] == ["read_page"], other


@pytest.fixture
def ask(workspace, tmp_path):
    report = workspace.ingest(offices_pdf(), "offices.pdf")
    assert report.outcome == "ingested", report.error

    def go(question: str, replies: list[str]):
        llm = ScriptedLLM(replies=replies)
        return run_question(workspace, llm, question, trace_dir=tmp_path / "logs"), llm
    return go


def test_things_the_page_lists_are_counted_by_code_and_a_thing_not_on_the_page_is_not(ask):
    not_printed = json.dumps({"found": False, "answer": ""})
    listed = json.dumps({"found": True, "answer": ["Leeds", "Bristol", "Cardiff", "York", "Glasgow"]})
    result, llm = ask("How many offices does the cooperative run?", [not_printed, listed])
    assert result.short_answer == "4", "Glasgow is not on the page"
    assert "Which offices does the cooperative run?" in llm.prompts[1]
    assert [c["page"] for c in result.citations] == [1]


def test_a_count_the_page_prints_is_read_as_printed_with_one_call(ask):
    result, llm = ask("How many members does the board have?", [json.dumps({"found": True, "answer": "9"})])
    assert result.short_answer == "9" and len(llm.prompts) == 1
