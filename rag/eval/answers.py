"""End-to-end evaluation: answer every question in one mode, score it, keep its trace.

Per question, OUT/questions.jsonl gets one line as soon as it finishes (so `--resume`
continues an interrupted run), with the prose answer, the short answer it is scored on,
the trace path, and where it failed. OUT/results.json holds the summary, OUT/report.md and
OUT/report.html the tables and charts (see rag.eval.report).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

from rag.agent.run import drain
from rag.eval import mmlongbench, units
from rag.eval.modes import MODES, plain_index, strategy, stream_mode
from rag.eval.qa import SOURCE_MODALITY, GoldQuestion, ingest_referenced, load_questions
from rag.eval.retrieval import RETRIEVAL_K, modality_hits
from rag.eval.score import numbers, says_not_answerable, score
from rag.records import MODALITIES
from rag.trace import load_trace

SOURCE_NAMES = {"Pure-text (Plain-text)": "text", "Pure-text": "text", "Generalized-text (Layout)": "layout",
                "Layout": "layout", "Table": "table", "Chart": "chart", "Figure": "figure"}
# (questions done, total, last row, running accuracy)
EvalProgress = Callable[[int, int, dict, float], None]


def evaluate_answers(
    ws, qa_path: Path, pdf_dir: Path | None, out_dir: Path, mode: str = "agent", limit: int | None = None,
    resume: bool = False, progress: EvalProgress | None = None, scoring: str = "strict", library: bool = False,
) -> dict:
    """Every question answered in `mode`, searching its own document, or with `library` every document in the
    store (the chat's "all documents": which one answers is the agent's to find)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    questions = load_questions(qa_path)
    doc_ids = ingest_referenced(ws, questions, pdf_dir)
    questions = [q for q in questions if q.doc_id in doc_ids][:limit]
    if not questions:
        raise ValueError("none of the questions' documents is in the store or in the PDF folder")
    config = {"mode": mode, "max_hops": ws.settings.agent.max_hops if strategy(mode, []).react else None,
              "model": ws.llm_name, "qa": Path(qa_path).name, "limit": limit, "library": library}
    rows_path = _prepare(Path(out_dir), config, resume)
    if mode == "text-only":  # build the baseline's index first, so no question's latency pays for it
        plain_index(ws).prepare(list(doc_ids.values()))
    done = _load(rows_path)
    ws.warm_up().join()  # as the app does at start: no question's seconds pay for loading the model
    bar = tqdm(questions, desc=f"eval {mode}", unit="q", disable=None)
    for n, q in enumerate(bar):
        if n not in done:
            done[n] = run_one(ws, q, doc_ids[q.doc_id], n, mode, Path(out_dir) / "traces", library)
            with rows_path.open("a") as f:
                f.write(json.dumps(done[n], ensure_ascii=False) + "\n")
        accuracy = _rate([r[SCORE_KEY[scoring]] for r in done.values()])
        bar.set_postfix(accuracy=f"{accuracy:.2f}")
        if progress:
            progress(len(done), len(questions), done[n], accuracy)
    rows = [done[n] for n in range(len(questions))]
    return _finish(Path(out_dir), config, rows)


def rescore(out_dir: Path) -> dict:
    """Score a finished run's answers again with the current scorer, and rewrite its reports."""
    from rag.eval.report import load_run

    summary, rows = load_run(out_dir)
    for r in rows:
        _score(r)
    (Path(out_dir) / "questions.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return _finish(Path(out_dir), summary, rows)


def _finish(out_dir: Path, config: dict, rows: list[dict]) -> dict:
    """The run's summary in results.json, and its reports."""
    from rag.eval.report import write_reports

    summary = {**config, **summarize(rows)}
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2))
    write_reports(out_dir, summary, rows)
    return summary


def _prepare(out_dir: Path, config: dict, resume: bool) -> Path:
    """A fresh run starts over; a resumed one must be the same experiment."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_path, config_path = out_dir / "questions.jsonl", out_dir / "run.json"
    if resume and config_path.exists():
        before = json.loads(config_path.read_text())
        changed = [k for k in ("mode", "max_hops", "model", "qa", "library") if before.get(k) != config.get(k)]
        if changed:
            raise ValueError(f"cannot resume {out_dir}: it was run with another {', '.join(changed)}")
    elif rows_path.exists():
        rows_path.unlink()
    config_path.write_text(json.dumps(config, indent=2))
    return rows_path


def run_one(ws, q: GoldQuestion, doc_id: str, n: int, mode: str, trace_dir: Path, library: bool = False) -> dict:
    events = stream_mode(ws, ws.llm, mode, q.question, doc_ids=None if library else [doc_id], trace_dir=trace_dir,
                         model_name=ws.llm_name, gold_pages=q.evidence_pages_1based)
    result = drain(events, q.question, trace_dir)
    short = "" if result.error else result.short_answer
    gold = set(q.evidence_pages_1based)
    context = [f for h in result.hops for f in h.fragments]
    row = {
        "n": n, "question": q.question, "doc": q.doc_id, "kind": q.doc_type, "gold": q.answer, "format": q.answer_format,
        "sources": [SOURCE_NAMES.get(s, s.lower()) for s in q.evidence_sources], "pages": sorted(gold),
        "unanswerable": q.unanswerable, "answer": result.answer, "short_answer": short,
        "retrieval_hit": _retrieval_hit(ws, q, doc_id, mode),
        "evidence_in_context": bool(gold & {f.page for f in context}) if gold else None,
        "coverage": {m: any(f.page in gold and f.modality == m for f in context)
                     for m in {SOURCE_MODALITY.get(s, "text") for s in q.evidence_sources}} if gold else {},
        "seconds": result.total_s, "first_hop_s": result.first_hop_s, "hops": len(result.hops),
        "tokens": result.tokens, "stop": result.stop_reason, "error": result.error, "trace": result.trace,
        "cited": sorted({c.file for c in result.citations}),
        "answer_type": result.answer_type, "program": result.program, "skill": result.skill, "plan": result.plan,
        **({"unit": q.unit, "metric": units.metric_kind(q.question, q.unit)} if q.unit else {}),
        **({"task": q.task} if q.task else {}),
        "time": time_parts(load_trace(Path(result.trace))),
    }
    return _score(row)


def time_parts(spans: list[dict]) -> dict:
    """Where one question's seconds and tokens went, from its trace: searching, the model by purpose (a
    page read, a ReAct step, a paraphrase), the wait for the model, and how many calls of each."""
    parts: dict[str, float] = defaultdict(float)
    for span in spans:
        event = span.get("event", {})
        if span["kind"] == "hop_end":
            parts["search_s"] += event.get("retrieval_ms", 0) / 1000
        elif span["kind"] == "llm":
            parts[f"model_s.{event.get('purpose')}"] += event.get("llm_ms", 0) / 1000
            parts[f"calls.{event.get('purpose')}"] += 1
            parts["prompt_tokens"] += event.get("prompt_tokens", 0)
            parts["completion_tokens"] += event.get("completion_tokens", 0)
        elif span["kind"] == "waiting" and not event.get("ahead"):
            parts["waited_s"] += event.get("waited_s", 0)
    return {k: round(v, 3) for k, v in parts.items()}


SCORE_KEY = {"strict": "correct", "mmlongbench": "score_mmlongbench", "units": "score_units"}


def _score(row: dict) -> dict:
    """Score the short answer by both scorers (the prose when there is none, strictly); name the failure."""
    row["correct"] = score(row["short_answer"] or row["answer"], row["gold"], row["format"])
    row["correct_prose"] = score(row["answer"], row["gold"], row["format"])
    row["score_mmlongbench"] = mmlongbench.score(row["short_answer"], row["gold"], row["format"])
    if row.get("unit"):
        row["score_units"] = units.score(row["short_answer"], str(row["gold"]), row["unit"])
    row["failure"] = failure(row)
    return row


def _retrieval_hit(ws, q: GoldQuestion, doc_id: str, mode: str) -> bool | None:
    """The paper's retrieval-recall: a gold page in the top-6 of the evidence's collection."""
    gold = set(q.evidence_pages_1based)
    if not gold or q.unanswerable or mode.startswith("oracle"):
        return None
    if mode == "text-only":
        hits = plain_index(ws).search(q.question, [doc_id], k=RETRIEVAL_K)
        return bool(gold & {h.fragment.page for h in hits})
    return any(modality_hits(ws, q, doc_id, RETRIEVAL_K)[0].values())


def failure(row: dict) -> str | None:
    """Where a wrong answer went wrong, as far as the record can tell."""
    if row["correct"]:
        return None
    if row["error"]:
        return "error"
    if row["unanswerable"]:
        return "answered the unanswerable"
    if not row["evidence_in_context"]:
        return "retrieval missed the page"
    said = row["short_answer"] or row["answer"]
    if says_not_answerable(said):
        return "model missed the evidence"
    if row["correct_prose"]:
        return "short-answer format"
    if row["format"] in ("Int", "Float") and numbers(said):
        return "wrong number"
    return "wrong answer"


def _load(path: Path) -> dict[int, dict]:
    if not path.exists():
        return {}
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a line torn by a kill: that question runs again
            continue
    return {r["n"]: r for r in rows}


def _rate(values: list) -> float | None:
    values = [float(v) for v in values if v is not None]
    return round(sum(values) / len(values), 3) if values else None


def accuracy(rows: list[dict], key: str) -> dict:
    """Mean score by breakdown: answerable or not, evidence source, single or multi page."""
    answerable = [r for r in rows if not r["unanswerable"]]
    by_source = defaultdict(list)
    for r in answerable:
        for source in set(r["sources"]):
            by_source[source].append(r.get(key))
    return {
        "overall": _rate([r.get(key) for r in rows]),
        "answerable": _rate([r.get(key) for r in answerable]),
        "unanswerable": _rate([r.get(key) for r in rows if r["unanswerable"]]),
        "by_source": {k: _rate(v) for k, v in sorted(by_source.items())},
        "single_page": _rate([r.get(key) for r in answerable if len(r["pages"]) == 1]),
        "multi_page": _rate([r.get(key) for r in answerable if len(r["pages"]) > 1]),
        "by_composition": {kind: _rate([r.get(key) for r in answerable if _composition(r) == kind])
                           for kind in sorted({_composition(r) for r in answerable})},
    }


def _composition(row: dict) -> str:
    """A row's plan kind (difference, sum, …), or "one fact"."""
    return (row.get("plan") or ["one fact"])[0]


def by_kind(rows: list[dict], key: str, field: str = "kind") -> dict:
    """Per document kind (or per task, `field`): answerable, unanswerable and overall score, and the latency."""
    kinds = defaultdict(list)
    for r in rows:
        kinds[r.get(field) or "unknown"].append(r)
    return {kind: {"questions": len(group), "answerable": _rate([r.get(key) for r in group if not r["unanswerable"]]),
                   "unanswerable": _rate([r.get(key) for r in group if r["unanswerable"]]),
                   "overall": _rate([r.get(key) for r in group]),
                   "p50_s": _percentiles([r["seconds"] for r in group])["p50"],
                   "p95_s": _percentiles([r["seconds"] for r in group])["p95"],
                   "tokens_p50": _percentiles([model_tokens(r) for r in group])["p50"]}
            for kind, group in sorted(kinds.items())}


def by_metric(rows: list[dict]) -> dict:
    """An analyst's set per kind of metric asked (lookup, ratio, growth, average), scored in the unit asked."""
    kinds = defaultdict(list)
    for r in rows:
        kinds[r.get("metric") or "other"].append(r)
    return {kind: {"questions": len(group), "right": sum(bool(r.get("score_units")) for r in group),
                   "p50_s": _percentiles([r["seconds"] for r in group])["p50"],
                   "p95_s": _percentiles([r["seconds"] for r in group])["p95"],
                   "tokens_p50": _percentiles([model_tokens(r) for r in group])["p50"]}
            for kind, group in sorted(kinds.items())}


def model_tokens(row: dict) -> int:
    """The model tokens a question cost, prompt and generated: they do not depend on the machine."""
    return row["tokens"].get("prompt", 0) + row["tokens"].get("completion", 0)


def skills(rows: list[dict], key: str) -> dict:
    """Which skill answered how many questions, and how many of them right."""
    used = defaultdict(list)
    for r in rows:
        used[r.get("skill") or "unknown"].append(r.get(key) or 0)
    return {skill: {"answered": len(scores), "right": round(sum(scores), 1)} for skill, scores in sorted(used.items())}


def _percentiles(values: list[float]) -> dict:
    if not values:
        return {"mean": None, "sd": None, "p50": None, "p95": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"mean": round(statistics.mean(values), 2), "sd": round(statistics.pstdev(values), 2),
            "p50": round(statistics.median(values), 2), "p95": round(p95, 2)}


def summarize(rows: list[dict]) -> dict:
    answerable = [r for r in rows if not r["unanswerable"]]
    failures = defaultdict(int)
    for r in rows:
        if r["failure"]:
            failures[r["failure"]] += 1
    strict = accuracy(rows, "correct") | {"prose": _rate([r["correct_prose"] for r in rows])}
    sources = accuracy(rows, "correct")["by_source"]
    return {
        "questions": len(rows),
        "accuracy": strict,
        "accuracy_mmlongbench": accuracy(rows, "score_mmlongbench"),
        "count": {"answerable": len(answerable), "unanswerable": len(rows) - len(answerable),
                  "by_source": {k: sum(k in set(r["sources"]) for r in answerable) for k in sources}},
        "retrieval_recall": _rate([r["retrieval_hit"] for r in rows]),
        "evidence_in_context": _rate([r["evidence_in_context"] for r in answerable]),
        "coverage": {m: _rate([r["coverage"][m] for r in rows if m in r["coverage"]]) for m in MODALITIES},
        "latency_s": _percentiles([r["seconds"] for r in rows]),
        "first_hop_s": _percentiles([r["first_hop_s"] for r in rows if r.get("first_hop_s") is not None]),
        "hops_mean": round(statistics.mean(r["hops"] for r in rows), 2) if rows else None,
        "tokens_mean": {k: round(statistics.mean(r["tokens"].get(k, 0) for r in rows)) if rows else None
                        for k in ("prompt", "completion")},
        "tokens_per_question": _percentiles([model_tokens(r) for r in rows]),
        "time_parts_mean": {k: round(statistics.mean(r.get("time", {}).get(k, 0) for r in rows), 2)
                            for k in sorted({k for r in rows for k in r.get("time", {})})},
        "by_kind": by_kind(rows, "score_mmlongbench"),
        **({"by_task": by_kind(rows, "score_mmlongbench", "task")} if any(r.get("task") for r in rows) else {}),
        **({"accuracy_units": _rate([r["score_units"] for r in rows]), "by_metric": by_metric(rows)}
           if any(r.get("unit") for r in rows) else {}),
        "skills": skills(rows, "score_mmlongbench"),
        "errors": sum(bool(r["error"]) for r in rows),
        "failures": dict(sorted(failures.items())),
    }
