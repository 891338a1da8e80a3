"""The agent's control flow on a real store, driven by a scripted LLM (see scripted_llm.py)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from rag.agent.events import AnswerEvent, HopEnd, Paraphrase, Stop, Waiting
from rag.agent.run import STOPPED, ask
from rag.control import RunControl
from rag.models.queue import ModelQueue
from rag.trace import list_runs, load_trace, summarize
from scripted_llm import QueuedLLM, ScriptedLLM, action, answer

QUESTION = "How do Latinos see economic upward mobility for their children?"


@pytest.fixture
def run(pew_workspace, tmp_path):
    """ask() with agent settings overridden per test; returns (answer, events, llm)."""
    original = pew_workspace.settings.agent
    retrieval = pew_workspace.settings.retrieval
    parent_page_was, page_tokens_was = retrieval.parent_page, retrieval.page_context_tokens

    def go(replies, question=QUESTION, memory=None, llm=None, parent_page=False, page_tokens=0, control=None,
           **agent):
        # No paraphrase retries unless a test asks for them: each would take a scripted reply.
        pew_workspace.settings.agent = original.model_copy(update={"low_score": 0.0, **agent})
        # Fragments alone by default: the hop and token arithmetic below is about control flow.
        retrieval.parent_page, retrieval.page_context_tokens = parent_page, page_tokens
        llm = llm or ScriptedLLM(replies=list(replies))
        events = []
        result = ask(pew_workspace, llm, question, memory=memory, trace_dir=tmp_path / "logs",
                     on_event=events.append, control=control)
        return result, events, llm

    yield go
    pew_workspace.settings.agent = original
    retrieval.parent_page, retrieval.page_context_tokens = parent_page_was, page_tokens_was


def kinds(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_answer_after_the_initial_retrieval_cites_its_page(run):
    result, events, llm = run([answer("Most expect their children to be better off [p. 5].")])
    assert result.stop_reason == "answered" and len(result.hops) == 1
    assert result.hops[0].modality == "auto" and result.hops[0].fragments
    assert result.citations[0]["page"] == 5 and result.citations[0]["file"] == "PH_2016.06.08_Economy-Final.pdf"
    assert "better off" in result.answer and not result.answer.startswith("Answer:")
    assert "<fragments>" in llm.prompts[0] and "Action Input: {\"query\"" in llm.prompts[0]
    assert "Tool Args" not in llm.prompts[0], "no JSON schema for small models to copy"


def test_with_parent_pages_the_model_reads_the_page_text_around_the_fragments(run):
    _, _, llm = run([answer("Better off [p. 5].")], parent_page=True, page_tokens=1200)
    prompt = llm.prompts[0]
    assert "p.5, page text]" in prompt
    page_block = prompt[prompt.index("p.5, page text]"):].split("\n[", 1)[0]
    assert len(page_block) > 400, "more than the fragment: the page around it"


def test_hop_event_arrives_before_any_llm_call(run):
    _, events, _ = run([answer("x [p. 5]")])
    order = [type(e).__name__ for e in events]
    assert order.index("HopStart") < order.index("HopEnd") < order.index("LLMCall")
    assert isinstance(events[-1], AnswerEvent)


def test_hop_cap_stops_and_forces_an_answer(run):
    replies = [action("TableSearch", "share of Latinos expecting upward mobility"),
               action("TextSearch", "children better off"),  # told to answer; searches anyway
               "From the fragments: better off [p. 5]"]
    result, events, llm = run(replies, max_hops=2)
    assert len(result.hops) == 2 and result.stop_reason == "hop_cap"
    assert [s.reason for s in kinds(events, Stop)] == ["hop_cap"]
    assert "No more searches: hop cap" in llm.prompts[1]
    assert llm.prompts[2].startswith("Answer the question using only the fragments below")
    assert result.answer == "From the fragments: better off [p. 5]"


def test_a_hop_with_no_new_fragment_stops_the_search(run):
    replies = [action("TextSearch", "upward mobility children"), action("TextSearch", "upward mobility children"),
               answer("They expect better [p. 5].")]
    result, events, _ = run(replies, max_hops=5)
    assert len(result.hops) == 3 and result.stop_reason == "no_new_fragments"
    assert kinds(events, HopEnd)[-1].new_ids == []


def test_token_budget_stops_before_the_model_sees_too_much(run):
    result, events, llm = run(["Better off [p. 5]"], token_budget=300)
    assert result.stop_reason == "token_budget" and len(result.hops) == 1
    assert llm.prompts[0].startswith("Answer the question using only the fragments below")
    assert len(llm.prompts[0]) < 300 * 4 + 800


def test_low_scores_are_retried_once_with_a_paraphrase(run):
    replies = ["Latino parents' expectations for their kids' finances", answer("x [p. 5]")]
    result, events, llm = run(replies, low_score=0.99)
    [para] = kinds(events, Paraphrase)
    assert para.original == QUESTION and para.paraphrased.startswith("Latino parents")
    assert llm.prompts[0].startswith("Rewrite this search query")
    assert len(result.hops) == 1


def test_sufficiency_self_check_stops_when_the_model_says_yes(run):
    replies = ["yes", answer("x [p. 5]")]
    result, events, llm = run(replies, sufficiency_check="llm", max_hops=3)
    assert result.stop_reason == "sufficient" and llm.prompts[0].rstrip().endswith("Reply:")


def test_missing_parts_are_marked(run):
    result, _, _ = run([answer("72% expect better [p. 5]; the 2030 figure is <missing>.")])
    assert result.missing


def test_unparseable_output_is_retried_then_answered_from_fragments(run):
    replies = ["Thought: I will search\nAction: TextSearch", "Thought: again\nAction: TextSearch\nAction Input: {query:",
               "Better off [p. 5]"]
    result, events, llm = run(replies)
    assert result.stop_reason == "unparseable"
    assert "did not follow the format" in llm.prompts[1]
    assert result.answer == "Better off [p. 5]"


def test_a_failing_model_gives_an_answer_that_says_so(run):
    result, events, _ = run([TimeoutError("model timed out")] * 3)
    assert result.error and "timed out" in result.error
    assert "language model failed" in result.answer and "[p." in result.answer


def test_follow_up_questions_see_earlier_turns(run):
    from llama_index.core.memory import Memory

    memory = Memory.from_defaults(session_id="t")
    run([answer("They expect their children to be better off [p. 5].")], memory=memory)
    _, _, llm = run([answer("Yes [p. 5].")], question="And what about their own finances?", memory=memory)
    assert QUESTION in llm.prompts[0] and "better off [p. 5]" in llm.prompts[0]


def test_the_trace_holds_every_hop_and_loads_back(run, tmp_path):
    result, events, _ = run([action("TableSearch", "mobility"), answer("x [p. 5]")])
    spans = load_trace(result.trace)
    assert [s["kind"] for s in spans] == [e.kind for e in events]
    retrievers = [s for s in spans if s["span_kind"] == "RETRIEVER"]
    assert len(retrievers) == len(result.hops) == 2
    doc = retrievers[0]["attributes"]["retrieval.documents"][0]
    assert {"document.id", "document.content", "document.score", "document.metadata"} <= set(doc)
    assert all(s["start_time"] and s["end_time"] for s in spans)
    [summary] = list_runs(tmp_path / "logs")
    assert summary.run_id == result.run_id and summary.hops == 2 and summary.status == "done"


def test_an_answer_without_page_marks_gets_the_pages_holding_its_facts(run):
    result, _, _ = run([answer("72% say their children will be better off financially.")])
    assert result.citations and result.answer.endswith(f"[p. {result.citations[0]['page']}]")
    page_text = " ".join(f["text"] for h in result.hops for f in h.fragments if f["page"] == result.citations[0]["page"])
    assert "72%" in page_text


def test_not_in_the_documents_is_left_uncited(run):
    result, _, _ = run([answer("not in the documents")], question="What is the capital of Peru?")
    assert result.not_found and result.citations == [] and "[p." not in result.answer


def test_a_run_over_its_deadline_says_so(run, monkeypatch):
    import time as _time

    slow = ScriptedLLM(replies=[answer("x")])
    monkeypatch.setattr(type(slow), "complete", lambda self, *a, **k: _time.sleep(3))
    result, _, _ = run([], timeout_s=1.0, llm=slow)
    assert result.error == "no answer within 1 s" and "language model failed" in result.answer


# --- stopping a question, and the model's queue (issue 14) -------------------------------------------


class StopWhenQueued(RunControl):
    """A user who presses Stop when told that a question is ahead of theirs."""

    def queue_position(self, ahead: int) -> None:
        super().queue_position(ahead)
        if ahead:
            self.stop()


def test_a_waiting_question_hears_its_place_after_its_first_hop_and_stops_at_once(run):
    queue, release, holding = ModelQueue(), threading.Event(), threading.Event()

    def other_user() -> None:
        with queue.turn(RunControl()):
            holding.set()
            release.wait(30)

    threading.Thread(target=other_user, daemon=True).start()
    holding.wait(5)
    result, events, llm = run([answer("never read")], llm=QueuedLLM(replies=[answer("never read")], queue=queue),
                              control=StopWhenQueued())
    assert queue.load == 1, "the stopped question left the queue while the other still held the model"
    release.set()
    assert [e.kind for e in events] == ["run_start", "hop_start", "hop_end", "waiting", "stop", "answer"]
    waiting = next(e for e in events if isinstance(e, Waiting))
    assert waiting.ahead == 1 and llm.prompts == []
    assert result.stop_reason == "stopped" and result.answer == STOPPED and result.error is None
    assert [s["kind"] for s in load_trace(result.trace)][-2:] == ["stop", "answer"]
    assert summarize(Path(result.trace)).status == "stopped"


class RemoteLLM(ScriptedLLM):
    """A model behind a network call (no queue): the call waits until it is cancelled."""

    cancelled: Any = None
    started: Any = None

    async def achat(self, messages, **kwargs):
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("the call was not cancelled")


def test_stopping_a_question_cancels_a_remote_models_call(run):
    llm = RemoteLLM(replies=[], started=threading.Event(), cancelled=threading.Event())
    control = RunControl()
    threading.Thread(target=lambda: llm.started.wait(30) and control.stop(), daemon=True).start()
    result, events, _ = run([], llm=llm, control=control)
    assert llm.cancelled.is_set() and result.stop_reason == "stopped"
    assert [e.kind for e in events][-2:] == ["stop", "answer"] and not any(e.kind == "error" for e in events)


def test_the_first_model_call_reports_an_empty_queue(run):
    result, events, _ = run([answer("Better off [p. 5].")], llm=QueuedLLM(replies=[answer("Better off [p. 5].")],
                                                                          queue=ModelQueue()),
                            control=RunControl())
    [waiting] = kinds(events, Waiting)
    assert waiting.ahead == 0 and result.stop_reason == "answered"
    assert [e.kind for e in events].index("waiting") < [e.kind for e in events].index("llm")


def test_time_in_the_models_queue_does_not_count_against_the_deadline(run):
    """Other questions hold the model longer than this run's whole deadline; it still gets its answer."""
    queue, holding = ModelQueue(), threading.Event()

    def other_users() -> None:
        with queue.turn(RunControl()):
            holding.set()
            threading.Event().wait(6.0)

    threading.Thread(target=other_users, daemon=True).start()
    holding.wait(5)
    result, events, _ = run([answer("Better off [p. 5].")], timeout_s=4.0, control=RunControl(),
                            llm=QueuedLLM(replies=[answer("Better off [p. 5].")], queue=queue))
    assert result.error is None and result.stop_reason == "answered"
    waited = [e for e in events if isinstance(e, Waiting)]
    assert [e.ahead for e in waited] == [1, 0] and waited[-1].waited_s > 4.0
