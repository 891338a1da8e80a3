"""End-to-end evaluation: ask the agent every question, score its answer, keep the trace.

Results go to OUT/questions.jsonl, one line per question, appended as each finishes, so
an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from rag.eval.qa import Question, ingest_referenced, load_questions
from rag.eval.score import score


def evaluate_answers(ws, qa_path: Path, pdf_dir: Path, out_dir: Path, limit: int | None = None) -> dict:
    questions = load_questions(qa_path, limit)
    doc_ids = ingest_referenced(ws, questions, pdf_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results_path = out_dir / "questions.jsonl"
    done = _load(results_path)
    bar = tqdm(questions, desc="eval", unit="q", disable=None)
    for n, q in enumerate(bar):
        if n not in done:
            done[n] = _run_one(ws, q, doc_ids[q.doc_id], n)
            with results_path.open("a") as f:
                f.write(json.dumps(done[n]) + "\n")
        bar.set_postfix(accuracy=f"{_accuracy(list(done.values())):.2f}")
    summary = summarize([done[n] for n in range(len(questions))])
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2))
    return summary


def _run_one(ws, q: Question, doc_id: str, n: int) -> dict:
    result = ws.ask(q.question, doc_ids=[doc_id])
    pages = {f["page"] for h in result.hops for f in h.fragments}
    return {
        "n": n, "question": q.question, "doc": q.doc_id, "gold": q.answer, "format": q.answer_format,
        "source": q.source, "unanswerable": q.unanswerable, "answer": result.answer,
        "correct": score(result.answer, q.answer, q.answer_format),
        "evidence_retrieved": bool(set(q.evidence_pages_1based) & pages) if q.evidence_pages_1based else None,
        "seconds": result.total_s, "first_hop_s": result.first_hop_s, "hops": len(result.hops),
        "tokens": result.tokens, "stop": result.stop_reason, "error": result.error, "trace": result.trace,
    }


def _load(path: Path) -> dict[int, dict]:
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["n"]: r for r in rows}


def _accuracy(rows: list[dict]) -> float:
    return sum(r["correct"] for r in rows) / len(rows) if rows else 0.0


def summarize(rows: list[dict]) -> dict:
    by_source = defaultdict(list)
    for r in rows:
        by_source["unanswerable" if r["unanswerable"] else r["source"]].append(r)
    seconds = [r["seconds"] for r in rows]
    evidence = [r["evidence_retrieved"] for r in rows if r["evidence_retrieved"] is not None]
    return {
        "questions": len(rows),
        "accuracy": {
            "overall": round(_accuracy(rows), 3),
            "answerable": round(_accuracy([r for r in rows if not r["unanswerable"]]), 3),
            "unanswerable": round(_accuracy([r for r in rows if r["unanswerable"]]), 3),
            "by_source": {k: round(_accuracy(v), 3) for k, v in sorted(by_source.items())},
        },
        "retrieval_recall": round(sum(evidence) / len(evidence), 3) if evidence else None,
        "latency_s": {"mean": round(statistics.mean(seconds), 2) if seconds else None,
                      "sd": round(statistics.pstdev(seconds), 2) if seconds else None},
        "first_hop_s": {"mean": round(statistics.mean(r["first_hop_s"] or 0 for r in rows), 3) if rows else None},
        "hops_mean": round(statistics.mean(r["hops"] for r in rows), 2) if rows else None,
        "errors": sum(bool(r["error"]) for r in rows),
    }
