"""The page reader's control flow in the agent, on a real store, driven by a scripted LLM (scripted_llm.py).

These tests check which step runs when: which pages are read in which order, what happens when a page
does not hold the answer or the reply does not parse, when the agent searches again, and that code
checks what the model says against the page. Never answer quality: the real model is in
tests/test_reader_real.py.
"""

from __future__ import annotations

import json

import pytest
from scripted_llm import QueuedLLM, ScriptedLLM, StopWhenQueued, action, model_held

from rag.agent.events import HopEnd, LLMCall, PageRead, Stop
from rag.agent.run import run_question
from rag.models.queue import ModelQueue

QUESTION = "How do Latinos see economic upward mobility for their children?"


def page(found: bool, answer="", line=""):
    return json.dumps({"found": found, "line": line, "answer": answer})


def copy_from_page(words: int = 4):
    """A reply that finds the answer: the first words of the page's longest line, copied."""
    def reply(prompt: str) -> str:
        text = prompt.split("<page>")[1].split("</page>")[0]
        line = max(text.splitlines(), key=len).strip()
        return page(True, " ".join(line.split()[:words]), line)
    return reply


@pytest.fixture
def run(pew_workspace, tmp_path):
    original, reader = pew_workspace.settings.agent, pew_workspace.settings.reader

    def go(replies, question=QUESTION, reader_settings=None, llm=None, control=None, **agent):
        pew_workspace.settings.agent = original.model_copy(update={"low_score": 0.0, **agent})
        pew_workspace.settings.reader = reader.model_copy(update=reader_settings or {})
        llm = llm or ScriptedLLM(replies=list(replies))
        events = []
        result = run_question(pew_workspace, llm, question, trace_dir=tmp_path / "logs", on_event=events.append,
                     control=control)
        return result, events, llm

    yield go
    pew_workspace.settings.agent, pew_workspace.settings.reader = original, reader


def reads(events) -> list[PageRead]:
    return [e for e in events if isinstance(e, PageRead)]


def test_the_best_page_is_read_first_and_the_answer_cites_it(run):
    result, events, llm = run([copy_from_page()])
    [read] = reads(events)
    first_page = next(e for e in events if isinstance(e, HopEnd)).hits[0].fragment.page
    assert read.found and read.page == first_page and read.skill == "read_free"
    assert result.answer.endswith(f"[p. {first_page}]") and result.citations[0].page == first_page
    assert result.citations[0].bbox, "the cited page is boxed where the answer's line stands"
    assert result.skill == "read_free" and [c.purpose for c in events if isinstance(c, LLMCall)] == ["read page"]
    assert "<page>" in llm.prompts[0] and QUESTION in llm.prompts[0]


def test_a_page_without_the_answer_leads_to_the_next_page(run):
    result, events, _ = run([page(False), "not json at all", copy_from_page()], max_hops=1,
                            reader_settings={"max_pages": 3})
    first, second, third = reads(events)
    assert (first.found, second.found, third.found) == (False, False, True)
    assert len({first.page, second.page, third.page}) == 3
    assert "did not parse" in second.reason and result.citations[0].page == third.page


def test_an_answer_not_on_the_page_is_not_an_answer(run):
    invented = page(True, "Latinos expect a quarterly dividend of 4.7 billion", "no such line")
    result, events, _ = run([invented] * 2, max_hops=1, reader_settings={"max_pages": 2})
    assert all(not r.found for r in reads(events)) and len(reads(events)) == 2, "reader.max_pages"
    assert result.short_answer == "Not answerable" and result.answer.startswith("Not in the documents")
    assert result.skill == "none"


def test_after_two_pages_without_answer_the_agent_searches_again(run):
    replies = [page(False), page(False), action("TableSearch", "Latino children financial future"),
               copy_from_page()]
    result, events, llm = run(replies, max_hops=2, reader_settings={"pages_per_search": 2, "max_pages": 3})
    kinds = [type(e).__name__ for e in events]
    assert kinds.count("HopStart") == 2 and kinds.index("PageRead") < len(kinds) - kinds[::-1].index("HopStart")
    assert "none of them holds the answer" in llm.prompts[2]
    assert [s.reason for s in events if isinstance(s, Stop)][-1] == "hop_cap" and result.skill == "read_free"


def test_a_named_page_is_read_first(run):
    result, events, _ = run([copy_from_page()], question="What does page 3 say about Latinos' finances?")
    assert reads(events)[0].page == 3 and result.citations[0].page == 3


def test_the_react_step_may_ask_for_a_page(run):
    read_seven = 'Thought: Page 7 may hold it.\nAction: ReadPage\nAction Input: {"page": 7}'
    result, events, llm = run([read_seven, copy_from_page()], sufficiency_check="react")
    assert "ReadPage" in llm.prompts[0] and reads(events)[0].page == 7 and result.citations[0].page == 7


def test_a_question_of_what_a_picture_shows_reads_the_pages_named(run):
    result, events, _ = run([copy_from_page()], question="How many people appear in the pictures on pages 3 and 4?")
    assert [r.page for r in reads(events)][:1] == [3] and result.short_answer != "Not answerable"


def test_a_name_no_document_prints_is_answered_at_once(run):
    result, events, llm = run([], question="What do Latinos in Nova Scotia think of Port Hawkesbury's schools?")
    assert result.short_answer == "Not answerable" and \
        "no document searched mentions “Nova Scotia”, “Port Hawkesbury”" in result.answer
    assert not reads(events) and not llm.prompts


@pytest.mark.parametrize("question", ["What do Latinos in Ontario think of their schools?",
                                      "What share of the Email newsletters was opened?",
                                      "How much USD did the survey cost?"])
def test_one_capitalised_word_or_an_acronym_is_no_reason_to_refuse(run, question):
    result, events, _ = run([copy_from_page()], question=question)
    assert reads(events) and "mentions" not in result.answer


def test_a_name_misspelt_by_one_letter_is_still_read(run):
    result, events, _ = run([copy_from_page()], question="How do Latinso see economic upward mobility for their children?")
    assert reads(events) and "mentions" not in result.answer


def test_a_skill_switched_off_in_the_settings_is_not_tried(run):
    result, events, _ = run([copy_from_page()], question='How many times does "Hispanic" appear on page 3?',
                            reader_settings={"skills": ["outline", "metric"]})
    assert reads(events) and result.skill != "printed"


def test_a_page_read_waiting_for_the_model_is_stopped(run):
    """Stopped from outside while its page read waits for another question's turn: the run ends as stopped."""
    queue = ModelQueue()
    with model_held(queue):
        result, events, llm = run([], llm=QueuedLLM(replies=[copy_from_page()], queue=queue),
                                  control=StopWhenQueued(after=0.5))
    assert result.stop_reason == "stopped" and result.error is None and llm.prompts == []
    assert [e.kind for e in events][-2:] == ["stop", "answer"] and not reads(events)


def test_a_check_not_enforced_is_recorded_and_lets_the_answer_stand(run):
    """Every page read records each check its answer failed; only the enforced ones reject it."""
    invented = page(True, "Latinos expect a quarterly dividend of 4.7 billion", "no such line")
    result, events, _ = run([invented], max_hops=1, reader_settings={"max_pages": 1, "checks": ["year_on_page"]})
    [read] = reads(events)
    assert read.found and "values_on_page" in read.checks and read.short
    assert result.answer.startswith("Latinos expect") and result.skill == "read_free"

    result, events, _ = run([invented], max_hops=1, reader_settings={"max_pages": 1, "checks": ["values_on_page"]})
    [read] = reads(events)
    assert not read.found and read.reason == "its numbers are not on the page" and read.short, "what it gave is kept"
    assert result.short_answer == "Not answerable"


def test_no_page_is_begun_that_the_time_budget_cannot_hold(run):
    """The first page is always read; the next only when the model's measured speed says it ends in time."""
    result, events, _ = run([page(False)] * 3, max_hops=1, reader_settings={"max_pages": 3, "budget_s": 0.0})
    assert len(reads(events)) == 1 and "time to read more" in result.answer
    result, events, _ = run([page(False)] * 3, max_hops=1, reader_settings={"max_pages": 3, "budget_s": 600.0})
    assert len(reads(events)) == 3 and "time to read more" not in result.answer
