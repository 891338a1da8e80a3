"""Each hop event says how it reads (its headline and details), and the terminal prints exactly that:
the chat renders the same headline (tests/test_app.py checks it on screen)."""

from __future__ import annotations

import io
import json

import pytest

from rag.agent import events as ev
from rag.agent.printer import print_event
from rag.agent.run import AgentAnswer
from rag.records import Citation, Fragment, Hit

HIT = Hit(fragment=Fragment(id="d:text:3:0", doc_id="d", file="r.pdf", page=3, modality="text", bbox=(0, 0, 1, 1),
                            text="Revenue grew 4%"), score=0.61, collection="text")
SAMPLES = [
    ev.HopStart(hop=1, query="revenue 2023", modality="image_caption", why="first search"),
    ev.HopEnd(hop=1, query="revenue 2023", modality="text", route=["text", "table"], hits=[HIT], new_ids=["d:text:3:0"],
              retrieval_ms=12.0),
    ev.LLMCall(purpose="read page", llm_ms=2100, prompt_tokens=800, completion_tokens=12),
    ev.Thought(text="The table on p. 3 should hold it."),
    ev.Paraphrase(original="rev", paraphrased="total revenue", best_score=0.21),
    ev.Waiting(ahead=2),
    ev.Stop(reason="no_new_fragments", detail="hop 2 found nothing new"),
    ev.Computation(program="a = 9912\nans = a / 2", result="4956"),
    ev.Routed(path="metric", why="a figure of the statements for a fiscal year, computed by code", skills=["metric"]),
    ev.Scoped(file="harbor.pdf", why="from harbor.pdf: Harbor General Corporation's filing of FY2031, the company the "
                                     "question names (by its cover page)"),
    ev.Planned(composition="difference", parts=["How many vans in 2020?", "How many vans in 2019?"], by="code"),
    ev.PageRead(doc_id="d", file="r.pdf", page=3, skill="read_page", found=False, reason="not on the page",
                said='{"found": false}', tokens=640),
    ev.ErrorEvent(message="TimeoutError: the model did not answer in 120 s"),
]


def test_every_kind_of_event_but_the_run_start_the_answer_and_a_draft_has_a_sample_here():
    kinds = {cls.model_fields["kind"].default for cls in ev.HopEvent.__subclasses__()}
    assert kinds - {"run_start", "answer", "draft"} == {e.kind for e in SAMPLES}


def test_an_answer_as_it_grows_is_shown_not_printed():
    out = io.StringIO()
    print_event(ev.Draft(page=3, text="$9,91"), out)
    assert out.getvalue() == ""


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.kind)
def test_the_terminal_prints_the_events_own_words(event):
    out = io.StringIO()
    print_event(event, out)
    printed = out.getvalue()
    assert event.headline() and event.headline() in printed
    assert all(line in printed for line in event.details())


def test_the_words_carry_what_a_reader_needs():
    text = {e.kind: e.headline() for e in SAMPLES}
    assert text["hop_start"] == "Hop 1: figure search for “revenue 2023” (first search)"
    assert "1 fragments (1 new) in 12 ms · routed to text, table" == text["hop_end"]
    assert text["read"] == "Read p. 3 of r.pdf (read_page): no answer, not on the page"
    assert text["route"] == "Route: metric, a figure of the statements for a fiscal year, computed by code; else read"
    assert text["waiting"] == "Waiting for the model — 2 questions ahead"
    assert text["plan"] == "Plan: the difference of 2 parts, each searched and read on its own"
    assert text["scope"].startswith("Searching one filing: from harbor.pdf: Harbor General Corporation's filing")
    read = next(e for e in SAMPLES if e.kind == "read")
    assert ev.PageRead.model_validate(read.model_dump()).details()[1].startswith("model said:")


def test_an_answer_prints_its_words_and_sources():
    out = io.StringIO()
    print_event(ev.AnswerEvent(answer="$9,912 million [p. 2]", citations=[Citation(file="bb.pdf", page=2)]), out)
    assert "$9,912 million [p. 2]" in out.getvalue() and "sources: bb.pdf p.2" in out.getvalue()


def test_a_trace_or_turn_saved_with_dict_citations_loads_them_typed():
    old = {"file": "bb.pdf", "doc_id": "d", "page": 2, "fragment_id": "d:text:2:0", "bbox": [1.0, 2.0, 3.0, 4.0],
           "evidence": "p. 2", "text": "Gross profit was $9,912 million."}
    [answer] = ev.from_records([{"kind": "answer", "answer": "$9,912 million [p. 2]", "citations": [old]}])
    assert answer.citations == [Citation(**{**old, "bbox": (1.0, 2.0, 3.0, 4.0)})]
    assert ev.from_records([{"kind": "answer", "answer": "x", "citations": [{"file": "a.pdf", "page": 1}]}]
                           )[0].citations[0].fragment_id is None, "the first traces kept no doc id, evidence or text"
    hop = {"hop": 1, "query": "gross profit", "modality": "auto", "retrieval_ms": 9.0,
           "fragments": [{"id": "d:text:2:0", "page": 2, "score": 0.5, "text": "Gross profit", "file": "bb.pdf",
                          "modality": "text"}]}
    turn = AgentAnswer.model_validate_json(json.dumps({"answer": "x", "run_id": "r", "question": "q",
                                                       "citations": [old], "hops": [hop]}))
    assert turn.citations[0].bbox == (1.0, 2.0, 3.0, 4.0) and turn.hops[0].fragments[0].page == 2
