"""The agent's control flow on a real store, driven by a scripted LLM (see scripted_llm.py).

These tests check which step runs when — hops, stop rules, the ReAct step, the reader's pick, read,
verification and refusal — never answer quality: that is tests/test_reader_real.py, with the real model.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import (
    QueuedLLM,
    ScriptedLLM,
    StopWhenQueued,
    action,
    done,
    evidence_line,
    model_held,
    pick,
    read,
)

from rag.agent.events import (
    AnswerEvent,
    Computation,
    EvidencePicked,
    HopEnd,
    LLMCall,
    Paraphrase,
    Refusal,
    RunStart,
    Stop,
    Verification,
    Waiting,
)
from rag.agent.run import STOPPED, ask
from rag.control import RunControl
from rag.models.queue import ModelQueue
from rag.reader.cascade import numbers_written
from rag.trace import list_runs, load_trace, summarize

QUESTION = "How do Latinos see economic upward mobility for their children?"


@pytest.fixture
def run(pew_workspace, tmp_path):
    """ask() with agent settings overridden per test; returns (answer, events, llm)."""
    original, reader = pew_workspace.settings.agent, pew_workspace.settings.reader

    def go(replies, question=QUESTION, memory=None, llm=None, control=None, reader_settings=None, **agent):
        # No paraphrase retries unless a test asks for them: each would take a scripted reply.
        pew_workspace.settings.agent = original.model_copy(update={"low_score": 0.0, **agent})
        # The scripts here speak to the evidence-line cascade; tests/test_agent_pages.py drives the page reader.
        pew_workspace.settings.reader = reader.model_copy(update={"engine": "cascade", **(reader_settings or {})})
        llm = llm or ScriptedLLM(replies=list(replies))
        events = []
        result = ask(pew_workspace, llm, question, memory=memory, trace_dir=tmp_path / "logs",
                     on_event=events.append, control=control)
        return result, events, llm

    yield go
    pew_workspace.settings.agent, pew_workspace.settings.reader = original, reader


def kinds(events, kind):
    return [e for e in events if isinstance(e, kind)]


def evidence_text(events, ident: str) -> str:
    picked = kinds(events, EvidencePicked)[0]
    return next(e["text"] for e in picked.evidence if e["id"] == ident)


def test_covered_question_is_read_after_one_hop_and_cites_its_evidence(run):
    result, events, llm = run([pick("E1"), read()])
    assert [s.reason for s in kinds(events, Stop)] == ["sufficient"], "coverage: no ReAct step needed"
    assert len(result.hops) == 1 and result.hops[0].modality == "auto"
    [picked] = kinds(events, EvidencePicked)
    assert picked.ids == ["E1"] and picked.evidence[0]["text"]
    first_words = " ".join(picked.evidence[0]["text"].split()[:3])
    assert result.answer.startswith(f"{first_words} [p. ") and result.picked == ["E1"]
    assert result.citations[0]["page"] == picked.evidence[0]["page"]
    assert [c.purpose for c in kinds(events, LLMCall)] == ["pick evidence", "read answer"]
    assert "[E1]" in llm.prompts[0] and QUESTION in llm.prompts[0]


def test_the_first_hop_arrives_before_any_llm_call(run):
    _, events, _ = run([pick("E1"), read()])
    order = [type(e).__name__ for e in events]
    assert order.index("HopStart") < order.index("HopEnd") < order.index("LLMCall")
    assert isinstance(events[-1], AnswerEvent)


def test_react_step_searches_again_then_the_hop_cap_stops(run):
    replies = [action("TableSearch", "share of Latinos expecting upward mobility"), pick("E1"), read()]
    result, events, llm = run(replies, max_hops=2, sufficiency_check="react")
    assert len(result.hops) == 2 and result.hops[1].modality == "table"
    assert [s.reason for s in kinds(events, Stop)] == ["hop_cap"]
    assert llm.prompts[0].count("Action Input") >= 2 and "Observation" in llm.prompts[0]
    assert "Words of the question not found" in llm.prompts[0]


def test_the_react_step_never_asks_for_the_answer(run):
    _, _, llm = run([done(), pick("E1"), read()], sufficiency_check="react")
    assert "Answer: done" in llm.prompts[0] and "not in the documents" not in llm.prompts[0].lower()


def test_model_saying_done_is_the_sufficiency_self_check(run):
    result, events, _ = run([done(), pick("E1"), read()], sufficiency_check="react")
    assert result.stop_reason == "sufficient" and len(result.hops) == 1


def test_a_hop_with_no_new_fragment_stops_the_search(run):
    replies = [action("TextSearch", QUESTION), action("TextSearch", QUESTION), pick("E1"), read()]
    result, events, _ = run(replies, max_hops=5, sufficiency_check="react")
    assert result.stop_reason == "no_new_fragments" and len(result.hops) == 3
    assert kinds(events, HopEnd)[-1].new_ids == []


def test_token_budget_stops_the_search(run):
    result, _, _ = run([pick("E1"), read()], token_budget=50, sufficiency_check="react")
    assert result.stop_reason == "token_budget" and len(result.hops) == 1


def test_llm_sufficiency_check_as_in_the_paper(run):
    result, events, llm = run(["yes", pick("E1"), read()], sufficiency_check="llm")
    assert result.stop_reason == "sufficient" and "Reply yes or no" in llm.prompts[0]


def test_low_scores_are_retried_once_with_a_paraphrase(run):
    replies = ["Latino parents' expectations for their kids' finances", pick("E1"), read()]
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
    assert [f["id"] for f in result.hops[0].fragments] == [h.fragment.id for h in retried.hits]
    summary = summarize(Path(result.trace))
    assert summary.hops == 1 and 0 < summary.first_hop_s == round(first.t_end - kinds(events, RunStart)[0].t_start, 2)


def test_unparseable_react_output_is_retried_then_the_reader_still_answers(run):
    replies = ["Thought: I will search\nAction: TextSearch", "Thought: again\nAction: Nowhere\nAction Input: {}",
               pick("E1"), read()]
    result, events, llm = run(replies, sufficiency_check="react")
    assert result.stop_reason == "unparseable" and "did not follow the format" in llm.prompts[1]
    assert result.answer and not result.not_found


def test_picked_ids_are_never_outside_the_evidence(run):
    # A model (or server) replying with ids that do not exist gets nothing picked, and a refusal.
    result, events, _ = run([pick("E99"), pick("E77")])
    assert kinds(events, EvidencePicked)[0].ids == []
    assert result.not_found and result.short_answer == "Not answerable"


def test_an_answer_not_in_the_evidence_is_retried_then_the_next_evidence_then_refused(run):
    replies = [pick("E1"), read("85% in 2030"), read("85% in 2030"),  # retry told it is not in the evidence
               pick("E2"), read("nowhere said"), read("nowhere said")]
    result, events, llm = run(replies)
    verdicts = kinds(events, Verification)
    assert [v.ok for v in verdicts] == [False, False] and "does not occur" in verdicts[0].reason
    assert "is not written in the evidence" in llm.prompts[2]
    assert "Do not pick E1" in llm.prompts[3]
    assert result.not_found and kinds(events, Refusal)


def test_an_answer_from_another_page_than_the_one_the_question_names_is_not_taken(run, pew_workspace):
    [doc] = pew_workspace.store.documents()
    ids = {}

    def pick_on(on: bool):
        def reply(prompt: str) -> str:
            found = re.findall(r"^\[(E\d+)\] p\.(\d+) ", prompt, re.MULTILINE)
            ids[on] = next(i for i, page in found if (int(page) == doc.pages) == on)
            return pick(ids[on])
        return reply

    def read_picked(on: bool):
        return lambda prompt: read(ident=ids[on])(prompt)

    question = "What does the last page say about how the survey was conducted?"
    result, events, _ = run([pick_on(False), read_picked(False), pick_on(True), read_picked(True)],
                            question=question, coverage=0.0, reader_settings={"evidence_tokens": 1500})
    verdicts = kinds(events, Verification)
    assert [v.ok for v in verdicts] == [False, True] and "not on the page the question names" in verdicts[0].reason
    assert result.citations[0]["page"] == doc.pages


def test_refusal_when_the_question_names_what_the_documents_never_mention(run):
    result, events, llm = run([], question="How do Latinos see upward mobility in the 2031 survey by HAQ?")
    [refusal] = kinds(events, Refusal)
    assert "2031" in refusal.reason and "HAQ" in refusal.reason
    assert result.not_found and llm.prompts == [], "code refuses: no model call"


GAP = "What is the gap between the shares of Latinos who expect their children to be better off and less well off?"
ONE_REPLY_PROGRAM = {"operand_choice": False}  # the model names values and the expression in one reply
MODEL_CHOOSES = {"decide_margin": 0}  # no option is taken by code, however clearly it fits


def test_a_computation_is_planned_then_each_operand_chosen_like_a_lookup(run):
    plan = json.dumps({"quantities": [{"name": "better", "label": "share expecting better off"},
                                      {"name": "worse", "label": "share expecting less well off"}],
                       "expression": "better - worse"})
    result, events, llm = run([plan, json.dumps({"option": "1"}), json.dumps({"option": "1"})],
                              question=GAP, coverage=0.0, reader_settings=MODEL_CHOOSES)
    assert [c.purpose for c in kinds(events, LLMCall)] == ["plan computation", "pick evidence", "pick evidence"]
    assert "Evidence" not in llm.prompts[0], "the plan is written from the question alone"
    assert "share expecting less well off" in llm.prompts[2]
    [computation] = kinds(events, Computation)
    lines = computation.program.splitlines()
    a, b = [float(line.split("=")[1].split("#")[0]) for line in lines[:2]]
    assert computation.error is None and float(computation.result) == pytest.approx(a - b)
    assert lines[-1] == "ans = better - worse" and all("# E" in line for line in lines[:2])
    assert lines[0].split("# ")[1] != lines[1].split("# ")[1], "an option already chosen is not offered again"
    [picked] = kinds(events, EvidencePicked)
    assert picked.ids and all(i in computation.program for i in picked.ids)
    assert result.short_answer == computation.result


def test_a_numbers_options_come_from_further_down_the_evidence_than_a_model_reads(run):
    question = "What share of Latinos expect their children to be better off financially?"
    narrow_settings = {**MODEL_CHOOSES, "evidence_tokens": 120, "option_tokens": 0}
    _, _, narrow = run([json.dumps({"option": "1"})], question=question, coverage=0.0, reader_settings=narrow_settings)
    _, events, wide = run([json.dumps({"option": "1"})], question=question, coverage=0.0,
                          reader_settings={**narrow_settings, "option_tokens": 1500})
    offered = [len(re.findall(r"^\d+\. ", llm.prompts[-1], re.MULTILINE)) for llm in (narrow, wide)]
    assert offered[0] < offered[1] == 8, offered
    [picked] = kinds(events, EvidencePicked)
    assert picked.ids and picked.evidence[0]["text"], "an option past the read lines is still cited with its text"


WORSE = ("Among Hispanics shaped by their current financial situation, which situation involves the highest "
         "percentage that expects their future finances to get a lot worse?")


def test_which_row_has_the_highest_value_is_compared_by_code_over_the_charts_table(run):
    result, events, _ = run([], question=WORSE, coverage=0.0)
    assert kinds(events, LLMCall) == [], "neither the search nor the reader asks the model"
    [computation] = kinds(events, Computation)
    assert computation.program.endswith("ans = df['Get a lot worse'].dropna().idxmax()")
    assert result.short_answer == computation.result == "Poor financial condition"
    [picked] = kinds(events, EvidencePicked)
    assert picked.by == "code" and result.citations[0]["page"] == 16 and result.picked == picked.ids


def test_the_model_names_the_column_compared_when_the_headers_cannot(run):
    question = "Which group of Hispanics is the most optimistic about their children's financial future?"
    result, events, llm = run([json.dumps({"column": "2"})], question=question, coverage=0.0)
    assert [c.purpose for c in kinds(events, LLMCall)] == ["pick evidence"]
    assert "Which column" in llm.prompts[-1] and "2. Better off" in llm.prompts[-1]
    [computation] = kinds(events, Computation)
    assert "df['Better off']" in computation.program and kinds(events, EvidencePicked)[0].by == "model"
    assert result.short_answer == "High school graduate", "79%, the largest share expecting them to be better off"


def test_an_extreme_no_table_of_the_evidence_compares_is_refused_without_the_model(run):
    question = "Which Latino subgroup interviewed by SSRS has the highest share rating their finances as excellent?"
    result, events, _ = run([], question=question, coverage=0.0)  # SSRS is named in the report, in no table
    assert kinds(events, LLMCall) == [] and result.short_answer == "Not answerable"
    assert "no table of the evidence compares" in kinds(events, Refusal)[0].reason


def test_what_a_share_the_question_gives_stands_for_is_read_off_the_charts_table(run):
    result, events, _ = run([], question="How do 5% of Latinos see their children's financial future?", coverage=0.0)
    assert kinds(events, LLMCall) == [] and result.short_answer == "Less well-off"
    assert "(df == 5.0)" in kinds(events, Computation)[0].program


def test_the_group_with_the_biggest_drop_and_its_size_are_computed_over_the_charts_rows_by_year(run):
    question = ("From 2014 to 2015, which group had the most significant drop in the share of households saying "
                "their income was falling behind the cost of living, and what is the percentage dropped?")
    result, events, _ = run([], question=question, coverage=0.0)
    assert kinds(events, LLMCall) == []
    assert "(df['Falling behind · 2015'] - df['Falling behind · 2014'])" in kinds(events, Computation)[0].program
    assert result.short_answer == '["White", "10"]' and result.citations[0]["page"] == 11


def option_labelled(label: str):
    """A choice reply: the option whose label holds `label` (as a model reading the options would)."""
    def reply(prompt: str) -> str:
        return json.dumps({"option": re.search(rf"^(\d+)\. [^\n]*{re.escape(label)}", prompt, re.M).group(1)})
    return reply


def test_how_many_people_is_the_share_who_did_of_the_sample_the_survey_asked(run):
    question = "How many Latinos expect their children to be less well off financially?"
    result, events, _ = run([option_labelled("All Hispanics · Less well")], question=question, coverage=0.0,
                            reader_settings=MODEL_CHOOSES)
    [computation] = kinds(events, Computation)
    share = float(re.search(r"^share = (\S+)", computation.program, re.M).group(1))
    assert "sample = 1500  # p. 19" in computation.program and share == 5
    assert result.short_answer == computation.result == "75", "5% of the 1,500 Latinos asked"
    assert {c["page"] for c in result.citations} >= {19}, "the sample size is cited with the share"


def test_a_group_the_question_names_is_counted_in_its_own_sample(run):
    question = "How many foreign born Latinos expect their children to be less well off financially?"
    _, events, _ = run([option_labelled("Less well")] * 2, question=question, coverage=0.0,
                       reader_settings=MODEL_CHOOSES)
    [computation] = kinds(events, Computation)
    assert "sample = 795" in computation.program
    assert kinds(events, LLMCall) and all(c.purpose == "pick evidence" for c in kinds(events, LLMCall))
    _, events, _ = run([], question=question, coverage=0.0, reader_settings={"people_counts": False})
    assert not any("sample =" in (c.program or "") for c in kinds(events, Computation))


def program_over(ident: str, expression: str = "a - b"):
    """A program reply naming the first two numbers of an evidence line (as the schema allows)."""
    def reply(prompt: str) -> str:
        first, second = numbers_written(evidence_line(prompt, ident))[:2]
        return json.dumps({"values": [{"name": "a", "value": first}, {"name": "b", "value": second}],
                           "expression": expression})
    return reply


def test_computation_runs_a_program_over_values_named_from_the_evidence(run):
    result, events, llm = run([pick("E1"), pick("none"), program_over("E1")], question=GAP, coverage=0.0,
                              reader_settings=ONE_REPLY_PROGRAM)
    [computation] = kinds(events, Computation)
    a, b = [float(line.split("=")[1].split("#")[0]) for line in computation.program.splitlines()[:2]]
    assert computation.error is None and float(computation.result) == pytest.approx(a - b)
    assert computation.program.splitlines()[-1] == "ans = a - b" and "# E1" in computation.program
    assert result.short_answer == computation.result and result.program == computation.program
    assert '"a - b"' in llm.prompts[-1], "the prompt shows the form of an expression, not a value to copy"


def test_an_expression_with_numbers_not_in_the_evidence_is_not_an_answer(run):
    invented = [program_over(ident, "a - 123457") for ident in ("E1", "E1", "E2", "E2")]
    replies = [pick("E1"), pick("none"), *invented[:2], pick("E2"), pick("none"), *invented[2:]]
    result, events, _ = run(replies, question=GAP, coverage=0.0, reader_settings=ONE_REPLY_PROGRAM)
    verdicts = kinds(events, Verification)
    assert [v.ok for v in verdicts] == [False, False] and "123457" in verdicts[0].reason
    assert result.not_found


def test_a_refused_expression_is_reported_and_retried(run):
    replies = [pick("E1"), pick("none"), program_over("E1", "__import__('os')"), program_over("E1")]
    result, events, llm = run(replies, question=GAP, coverage=0.0, reader_settings=ONE_REPLY_PROGRAM)
    first, second = kinds(events, Computation)
    assert first.error and "not allowed" in first.error and second.error is None
    assert "previous expression failed" in llm.prompts[-1] and not result.not_found


def test_a_list_answer_is_scored_as_a_list_literal(run):
    def read_list(prompt: str) -> str:
        return json.dumps({"answer": numbers_written(evidence_line(prompt, "E1"))[:2]})

    question = "List the shares of Latinos who expect their children to be better off and less well off."
    result, events, _ = run([pick("E1"), pick("none"), read_list], question=question, coverage=0.0)
    short = json.loads(result.short_answer)
    assert isinstance(short, list) and len(short) == 2 and all(s in evidence_text(events, "E1") for s in short)


def test_a_failing_model_gives_an_answer_that_says_so(run):
    result, events, _ = run([TimeoutError("model timed out")] * 3)
    assert result.error and "timed out" in result.error
    assert "language model failed" in result.answer and "[p." in result.answer


def test_follow_up_questions_see_earlier_turns(run):
    from llama_index.core.memory import Memory

    memory = Memory.from_defaults(session_id="t")
    run([pick("E1"), read()], memory=memory)
    _, _, llm = run([done(), pick("E1"), read()], question="And what about their own finances?",
                    memory=memory, sufficiency_check="react")
    assert QUESTION in llm.prompts[0] and "[p." in llm.prompts[0]


def test_the_trace_holds_every_step_and_loads_back(run, tmp_path):
    result, events, _ = run([action("TableSearch", "mobility"), pick("E1"), read()],
                            sufficiency_check="react", max_hops=2)
    spans = load_trace(result.trace)
    assert [s["kind"] for s in spans] == [e.kind for e in events]
    assert {"evidence", "verify", "answer"} <= {s["kind"] for s in spans}
    retrievers = [s for s in spans if s["span_kind"] == "RETRIEVER"]
    assert len(retrievers) == len(result.hops) == 2
    doc = retrievers[0]["attributes"]["retrieval.documents"][0]
    assert {"document.id", "document.content", "document.score", "document.metadata"} <= set(doc)
    [summary] = list_runs(tmp_path / "logs")
    assert summary.run_id == result.run_id and summary.hops == 2 and summary.status == "done"


def test_a_run_over_its_deadline_says_so(run, monkeypatch):
    import time as _time

    slow = ScriptedLLM(replies=[pick("E1")])
    monkeypatch.setattr(type(slow), "complete", lambda self, *a, **k: _time.sleep(3))
    result, _, _ = run([], timeout_s=1.0, llm=slow)
    assert result.error == "no answer within 1 s" and "language model failed" in result.answer


# --- stopping a question, and the model's queue (issue 14) -------------------------------------------


def test_a_question_asked_while_another_holds_the_model_hears_its_place_at_once_and_stops_at_once(run):
    queue = ModelQueue()
    with model_held(queue):
        result, events, llm = run([], llm=QueuedLLM(replies=[pick("E1")], queue=queue), control=StopWhenQueued())
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
    result, events, _ = run([], llm=QueuedLLM(replies=[pick("E1"), read()], queue=ModelQueue()), control=RunControl())
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
                            llm=QueuedLLM(replies=[pick("E1"), read()], queue=queue))
    assert result.error is None and not result.not_found
    waited = [e for e in events if isinstance(e, Waiting)]
    assert [e.ahead for e in waited] == [1, 0] and waited[-1].waited_s > 4.0
