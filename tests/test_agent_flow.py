"""The agent's control flow on a real store, driven by a scripted LLM (see scripted_llm.py).

These tests check which step runs when (hops, stop rules, the ReAct step, paraphrases, failures, the
model's queue, stopping), never answer quality: that is tests/test_reader_real.py, with the real model.
The page reader's own steps are tests/test_agent_pages.py.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import QueuedLLM, ScriptedLLM, StopWhenQueued, action, done, found_on_page, model_held

from rag.agent.events import AnswerEvent, HopEnd, LLMCall, Paraphrase, RunStart, Stop, Waiting
from rag.agent.run import STOPPED, run_question
from rag.control import RunControl
from rag.models.queue import ModelQueue
from rag.trace import list_runs, load_trace, summarize

QUESTION = "How do Latinos see economic upward mobility for their children?"
READ = found_on_page()


@pytest.fixture
def run(pew_workspace, tmp_path):
    """ask() with agent settings overridden per test; returns (answer, events, llm)."""
    original = pew_workspace.settings.agent

    def go(replies, question=QUESTION, memory=None, llm=None, control=None, **agent):
        pew_workspace.settings.agent = original.model_copy(update=agent)
        llm = llm or ScriptedLLM(replies=list(replies))
        events = []
        result = run_question(pew_workspace, llm, question, memory=memory, trace_dir=tmp_path / "logs",
                     on_event=events.append, control=control)
        return result, events, llm

    yield go
    pew_workspace.settings.agent = original


def kinds(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_covered_question_is_read_after_one_hop_and_cites_its_page(run):
    result, events, llm = run([READ])
    assert [s.reason for s in kinds(events, Stop)] == ["sufficient"], "coverage: no ReAct step needed"
    assert len(result.hops) == 1 and result.hops[0].modality == "auto"
    assert [c.purpose for c in kinds(events, LLMCall)] == ["read page"]
    assert result.answer.endswith(f"[p. {result.citations[0].page}]") and QUESTION in llm.prompts[0]


def test_the_first_hop_arrives_before_any_llm_call(run):
    _, events, _ = run([READ])
    order = [type(e).__name__ for e in events]
    assert order.index("HopStart") < order.index("HopEnd") < order.index("LLMCall")
    assert isinstance(events[-1], AnswerEvent)


def test_react_step_searches_again_then_the_hop_cap_stops(run):
    replies = [action("TableSearch", "share of Latinos expecting upward mobility"), READ]
    result, events, llm = run(replies, max_hops=2, sufficiency_check="react")
    assert len(result.hops) == 2 and result.hops[1].modality == "table"
    assert [s.reason for s in kinds(events, Stop)] == ["hop_cap"]
    assert llm.prompts[0].count("Action Input") >= 2 and "Observation" in llm.prompts[0]
    assert "Words of the question not found" in llm.prompts[0]


def test_the_react_step_never_asks_for_the_answer(run):
    _, _, llm = run([done(), READ], sufficiency_check="react")
    assert "Answer: done" in llm.prompts[0] and "not in the documents" not in llm.prompts[0].lower()


def test_model_saying_done_is_the_sufficiency_self_check(run):
    result, events, _ = run([done(), READ], sufficiency_check="react")
    assert result.stop_reason == "sufficient" and len(result.hops) == 1


def test_a_hop_with_no_new_fragment_stops_the_search(run):
    replies = [action("TextSearch", QUESTION), action("TextSearch", QUESTION), READ]
    result, events, _ = run(replies, max_hops=5, sufficiency_check="react")
    assert result.stop_reason == "no_new_fragments" and len(result.hops) == 3
    assert kinds(events, HopEnd)[-1].new_ids == []


def test_token_budget_stops_the_search(run):
    result, _, _ = run([READ], token_budget=50, sufficiency_check="react")
    assert result.stop_reason == "token_budget" and len(result.hops) == 1


def test_llm_sufficiency_check_as_in_the_paper(run):
    result, events, llm = run(["yes", READ], sufficiency_check="llm")
    assert result.stop_reason == "sufficient" and "Reply yes or no" in llm.prompts[0]


def test_only_a_hop_that_found_nothing_is_retried_with_a_paraphrase(run):
    _, events, llm = run([READ])
    assert not kinds(events, Paraphrase) and len(llm.prompts) == 1, "a hop that found something: no paraphrase"


def test_low_scores_are_retried_once_with_a_paraphrase_as_in_the_paper(run):
    replies = ["Latino parents' expectations for their kids' finances", READ]
    result, events, llm = run(replies, low_score=0.99)
    [para] = kinds(events, Paraphrase)
    assert para.original == QUESTION and para.paraphrased.startswith("Latino parents")
    assert "Rewrite this search query" in llm.prompts[0]
    # The first results are shown before the paraphrase, which waits for the model; the retry's end
    # holds both searches' hits, and the run still counts one hop.
    order = [type(e).__name__ for e in events]
    assert order.index("HopEnd") < order.index("LLMCall") < order.index("Paraphrase")
    first, retried = kinds(events, HopEnd)
    assert first.hop == retried.hop == 1 and retried.query == QUESTION
    assert {h.fragment.id for h in retried.hits} >= set(retried.new_ids) and len(result.hops) == 1
    assert [f.id for f in result.hops[0].fragments] == [h.fragment.id for h in retried.hits]
    summary = summarize(Path(result.trace))
    assert summary.hops == 1 and 0 < summary.first_hop_s == round(first.t_end - kinds(events, RunStart)[0].t_start, 2)


def test_unparseable_react_output_is_retried_then_the_reader_still_answers(run):
    replies = ["Thought: I will search\nAction: TextSearch", "Thought: again\nAction: Nowhere\nAction Input: {}", READ]
    result, events, llm = run(replies, sufficiency_check="react")
    assert result.stop_reason == "unparseable" and "did not follow the format" in llm.prompts[1]
    assert result.answer and not result.not_found


def test_a_failing_model_gives_an_answer_that_says_so(run):
    result, events, _ = run([TimeoutError("model timed out")] * 3)
    assert result.error and "timed out" in result.error
    assert "language model failed" in result.answer and "[p." in result.answer


def test_follow_up_questions_see_earlier_turns(run):
    from llama_index.core.memory import Memory

    memory = Memory.from_defaults(session_id="t")
    run([READ], memory=memory)
    _, _, llm = run([done(), READ], question="And what about their own finances?",
                    memory=memory, sufficiency_check="react")
    assert QUESTION in llm.prompts[0] and "[p." in llm.prompts[0]


def test_the_trace_holds_every_step_and_loads_back(run, tmp_path):
    result, events, _ = run([action("TableSearch", "mobility"), READ], sufficiency_check="react", max_hops=2)
    spans = load_trace(result.trace)
    assert [s["kind"] for s in spans] == [e.kind for e in events if e.kind != "draft"]
    assert {"read", "answer"} <= {s["kind"] for s in spans}
    retrievers = [s for s in spans if s["span_kind"] == "RETRIEVER"]
    assert len(retrievers) == len(result.hops) == 2
    doc = retrievers[0]["attributes"]["retrieval.documents"][0]
    assert {"document.id", "document.content", "document.score", "document.metadata"} <= set(doc)
    [summary] = list_runs(tmp_path / "logs")
    assert summary.run_id == result.run_id and summary.hops == 2 and summary.status == "done"


def test_a_run_over_its_deadline_says_so(run, monkeypatch):
    import time as _time

    slow = ScriptedLLM(replies=[READ])
    monkeypatch.setattr(type(slow), "complete", lambda self, *a, **k: _time.sleep(3))
    result, _, _ = run([], timeout_s=1.0, llm=slow)
    assert result.error == "no answer within 1 s" and "language model failed" in result.answer


# --- stopping a question, and the model's queue (issue 14) -------------------------------------------


def test_a_question_asked_while_another_holds_the_model_hears_its_place_at_once_and_stops_at_once(run):
    queue = ModelQueue()
    with model_held(queue):
        result, events, llm = run([], llm=QueuedLLM(replies=[READ], queue=queue), control=StopWhenQueued())
        assert queue.load == 1, "the stopped question left the queue while the other still held the model"
    seen = [e.kind for e in events]  # the stop may come before or after the first hop's search
    assert seen[:2] == ["run_start", "waiting"] and seen[-2:] == ["stop", "answer"] and "llm" not in seen
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
    result, events, _ = run([], llm=QueuedLLM(replies=[READ], queue=ModelQueue()), control=RunControl())
    [waiting] = kinds(events, Waiting)
    assert waiting.ahead == 0 and not result.not_found
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
    result, events, _ = run([], timeout_s=4.0, control=RunControl(),
                            llm=QueuedLLM(replies=[READ], queue=queue))
    assert result.error is None and not result.not_found
    waited = [e for e in events if isinstance(e, Waiting)]
    assert [e.ahead for e in waited] == [1, 0] and waited[-1].waited_s > 4.0
