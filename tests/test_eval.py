"""The evaluation harness: each mode's context on a real store, the summary's breakdowns, and a
real end-to-end `python -m rag eval` with the embedded model (resume, reports, JSON shape)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DEV_QA, PDFS, PEW
from test_cli import rag

from rag.eval.answers import failure, summarize
from rag.eval.modes import oracle_hits, plain_index, stream_mode
from rag.eval.qa import load_questions
from rag.eval.report import kinds_table
from rag.trace import load_trace


def pew_doc(ws) -> str:
    return next(d.doc_id for d in ws.store.documents() if d.file == PEW)


def test_oracle_search_gives_the_gold_pages_text(pew_workspace):
    hits = oracle_hits(pew_workspace, [pew_doc(pew_workspace)], [5, 4])
    assert [h.fragment.page for h in hits] == [4, 5]
    assert "mobility" in " ".join(h.fragment.text for h in hits).lower()


def test_text_only_searches_plain_page_text(pew_workspace):
    hits = plain_index(pew_workspace).search("economic upward mobility for their children", [pew_doc(pew_workspace)])
    assert len(hits) == 10 and {h.fragment.modality for h in hits} == {"text"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert "mobility" in hits[0].fragment.text.lower()


def test_every_mode_yields_the_same_kind_of_run(pew_workspace, tmp_path, monkeypatch):
    """The modes differ only in their first hop's search; the scripted model reads the first page."""
    from scripted_llm import ScriptedLLM, found_on_page

    from rag.agent.run import drain

    question = "How do Latinos see economic upward mobility for their children?"
    for mode, route in (("single-pass", None), ("text-only", ["plain text"]), ("oracle", ["gold pages"])):
        llm = ScriptedLLM(replies=[found_on_page()])
        events = stream_mode(pew_workspace, llm, mode, question, [pew_doc(pew_workspace)], tmp_path, gold_pages=[5])
        result = drain(events, question, tmp_path)
        assert len(result.hops) == 1 and result.stop_reason == "single_pass" and result.short_answer, mode
        assert route is None or route == [e for e in load_trace(result.trace) if e["kind"] == "hop_end"][0]["event"]["route"]


def test_the_oracle_agent_plans_and_every_part_searches_the_gold_pages(pew_workspace, tmp_path):
    """The whole agent with perfect retrieval (scripted model): the plan's two parts are two hops, each given
    the gold pages and nothing else, and code composes what the pages gave."""
    from scripted_llm import ScriptedLLM
    from test_agent_plan import PARTS, QUESTION

    from rag.agent.run import drain

    def read(prompt: str) -> str:  # each part's share as the gold pages print it: 81% on p. 4, 61% on p. 5
        page, asked = prompt.split("<page>")[1].split("</page>")[0], prompt.rsplit("Question:", 1)[1]
        value = "81%" if "Hispanic adults" in asked else "61%"
        return json.dumps({"found": value in page, "answer": value if value in page else ""})

    gold = [4, 5]
    llm = ScriptedLLM(replies=[json.dumps({"parts": PARTS}), *[read] * 4])
    result = drain(stream_mode(pew_workspace, llm, "oracle-agent", QUESTION, [pew_doc(pew_workspace)], tmp_path,
                               gold_pages=gold), QUESTION, tmp_path)
    ends = [e["event"] for e in load_trace(result.trace) if e["kind"] == "hop_end"]
    assert [e["query"] for e in ends] == PARTS and all(e["route"] == ["gold pages"] for e in ends)
    assert {f.page for h in result.hops for f in h.fragments} == set(gold)
    assert result.plan == ["difference", *PARTS] and result.short_answer == "20", result.answer
    assert {c.page for c in result.citations} == set(gold)

    one = PARTS[0]  # a question of one fact: the first hop, routed over the gold pages, then its page read
    result = drain(stream_mode(pew_workspace, ScriptedLLM(replies=[read]), "oracle-agent", one,
                               [pew_doc(pew_workspace)], tmp_path, gold_pages=gold), one, tmp_path)
    assert not result.error and result.short_answer == "81" and result.citations[0].page == 4, result.answer


def test_a_strategy_of_ones_own_is_the_runs_only_search(pew_workspace, tmp_path):
    """The workflow reads the strategy's record and searches only through the search it hands over (scripted
    model); the trace names the strategy; a mode nobody defined is refused by name."""
    from scripted_llm import ScriptedLLM, found_on_page

    from rag.agent.run import run_question
    from rag.agent.strategy import Strategy
    from rag.eval.modes import GoldPages, strategy

    asked = []

    class Recorded(GoldPages):
        def search(self, query, modality):
            asked.append((query, modality))
            return super().search(query, modality)

    class FirstPageOnly(Strategy):
        name: str = "gold page 5"
        react: bool = False
        first_hop: str = "oracle"

        def searcher(self, workspace, doc_ids, pages):
            return Recorded(workspace, doc_ids, [5])

    question = "How do Latinos see economic upward mobility for their children?"
    result = run_question(pew_workspace, ScriptedLLM(replies=[found_on_page()]), question,
                          doc_ids=[pew_doc(pew_workspace)], trace_dir=tmp_path, strategy=FirstPageOnly())
    assert asked == [(question, "oracle")] and {f.page for h in result.hops for f in h.fragments} == {5}
    assert result.stop_reason == "single_pass" and result.citations[0].page == 5
    assert load_trace(result.trace)[0]["event"]["settings"]["mode"] == "gold page 5"
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        strategy("fast", [])


def row(n, correct, sources, pages, unanswerable=False, **extra):
    base = {"n": n, "correct": correct, "correct_prose": correct, "sources": sources, "pages": pages,
            "unanswerable": unanswerable, "retrieval_hit": None if unanswerable else correct,
            "evidence_in_context": None if unanswerable else True, "coverage": {}, "seconds": 10.0 + n,
            "hops": 1, "tokens": {"prompt": 100, "completion": 10}, "error": None, "short_answer": "x",
            "answer": "x", "format": "Str"}
    base.update(extra)
    base["failure"] = failure(base)
    return base


def test_summary_breaks_accuracy_down_by_source_pages_and_answerability():
    rows = [row(0, True, ["table"], [3]), row(1, False, ["table", "chart"], [3, 4]),
            row(2, True, [], [], unanswerable=True), row(3, False, ["text"], [7], evidence_in_context=False)]
    for r, mmlb in zip(rows, (1.0, 0.5, 1.0, 0.0)):
        r["score_mmlongbench"] = mmlb
    s = summarize(rows)
    assert s["accuracy_mmlongbench"]["overall"] == 0.625 and s["accuracy_mmlongbench"]["by_source"]["table"] == 0.75
    assert s["accuracy"]["overall"] == 0.5 and s["accuracy"]["unanswerable"] == 1.0
    assert s["accuracy"]["by_source"] == {"chart": 0.0, "table": 0.5, "text": 0.0}
    assert s["count"]["by_source"] == {"chart": 1, "table": 2, "text": 1}
    assert s["accuracy"]["single_page"] == 0.5 and s["accuracy"]["multi_page"] == 0.0
    assert s["failures"] == {"retrieval missed the page": 1, "wrong answer": 1}
    assert s["latency_s"]["mean"] == 11.5 and s["latency_s"]["p50"] == 11.5 and s["latency_s"]["p95"] == 13.0
    assert s["retrieval_recall"] == pytest.approx(1 / 3, abs=0.001)


def test_a_set_that_names_each_questions_task_is_scored_per_task(tmp_path):
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps([{"doc_id": "a.pdf", "question": "How many?", "v2_task_type": "count"},
                              {"doc_id": "a.pdf", "question": "Which is larger?", "task": "compare"},
                              {"doc_id": "a.pdf", "question": "What is it?"}]))
    assert [q.task for q in load_questions(qa)] == ["count", "compare", None]
    rows = [row(0, True, ["text"], [2], task="count"), row(1, False, ["table"], [3], task="count"),
            row(2, True, [], [], unanswerable=True, task="compare")]
    for r in rows:
        r["score_mmlongbench"] = float(r["correct"])
    tasks = summarize(rows)["by_task"]
    assert tasks["count"]["questions"] == 2 and tasks["count"]["answerable"] == 0.5
    assert tasks["compare"]["unanswerable"] == 1.0
    assert "| count | 2 | 50% |" in kinds_table(summarize(rows))
    assert "by_task" not in summarize([row(0, True, ["text"], [2])])


def test_failure_names_where_an_answer_went_wrong():
    assert failure(row(0, False, ["text"], [2], short_answer="not answerable")) == "model missed the evidence"
    assert failure(row(0, False, ["text"], [2], format="Int", short_answer="41")) == "wrong number"
    assert failure(row(0, False, [], [], unanswerable=True)) == "answered the unanswerable"
    assert failure(row(0, False, ["text"], [2], error="timeout")) == "error"


@pytest.mark.slow
def test_eval_end_to_end_with_the_embedded_model(tmp_path):
    """The CLI as a user runs it: two modes, an interrupted run resumed, reports written."""
    questions = [q for q in json.loads(DEV_QA.read_text()) if q["doc_id"] == PEW][2:4]  # by code, by the model
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps(questions))
    store, out = tmp_path / "store", tmp_path / "single"
    base = ["eval", "--qa", str(qa), "--pdfs", str(PDFS), "--json"]
    rag(store, *base, "--mode", "single-pass", "--limit", "1", "--out", str(out))
    first = (out / "questions.jsonl").read_text()
    summary = json.loads(rag(store, *base, "--mode", "single-pass", "--resume", "--out", str(out)).stdout)
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert (out / "questions.jsonl").read_text().startswith(first) and len(rows) == 2, "resumed, not redone"
    assert summary["mode"] == "single-pass" and summary["questions"] == 2
    assert set(summary["accuracy"]) >= {"overall", "by_source", "answerable", "unanswerable"}
    assert set(summary["accuracy_mmlongbench"]) >= {"overall", "by_source", "answerable", "unanswerable"}
    assert set(summary["latency_s"]) >= {"mean", "sd", "p50", "p95"} and summary["latency_s"]["mean"] > 0
    assert summary["first_hop_s"]["p50"] < summary["latency_s"]["p50"]
    assert 0 <= summary["retrieval_recall"] <= 1
    for r in rows:
        assert r["answer"] and r["trace"] and json.loads(Path(r["trace"]).read_text().splitlines()[0])["kind"] == "run_start"
        assert r["hops"] == 1 and r["short_answer"]
        assert r["tokens"]["prompt"] > 100 or r["program"], "read by the model, else computed by code"
        assert 0 <= r["score_mmlongbench"] <= 1
    assert "| single-pass | 2 |" in (out / "report.md").read_text()
    assert "plotly" in (out / "report.html").read_text()

    refused = rag(store, *base, "--mode", "text-only", "--resume", "--out", str(out), check=False)
    assert refused.returncode == 1 and "cannot resume" in refused.stderr

    agent = json.loads(rag(store, *base, "--mode", "agent", "--max-hops", "2", "--limit", "1",
                           "--out", str(tmp_path / "agent")).stdout)
    assert agent["mode"] == "agent" and agent["max_hops"] == 2 and agent["questions"] == 1
    compared = rag(store, "report", str(out), str(tmp_path / "agent"), "--out", str(tmp_path / "cmp")).stdout
    assert "| single-pass | 2 |" in compared and "| agent, max 2 hops | 1 |" in compared
