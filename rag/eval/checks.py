"""What each check costs and buys, from one evaluation run with every check enforced.

A run that enforces every check records, for each page read, the answer the page gave and every check it
failed; the pages read do not depend on which checks are enforced up to the first page one of them lets
pass. So the same traces tell exactly what any subset of the checks would have answered: for each check,
the right answers it rejected and the wrong ones it stopped, and the accuracy and seconds of a subset.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rag.eval import mmlongbench
from rag.eval.answers import _percentiles
from rag.reader.verify import CHECKS
from rag.trace import load_trace


def page_reads(row: dict) -> tuple[float, list[dict]]:
    """A question's run start and its page reads, in order, from its trace."""
    spans = load_trace(Path(row["trace"]))
    start = next((s["event"]["t_start"] for s in spans if s["kind"] == "run_start"), 0.0)
    return start, [s["event"] for s in spans if s["kind"] == "read"]


def score(short: str, row: dict) -> float:
    """MMLongBench's score: partial credit for a string close to the gold (ANLS above 0.5)."""
    return mmlongbench.score(short, row["gold"], row["format"])


def table(rows: list[dict]) -> dict[str, Counter]:
    """Per check: the page answers it failed that were right, in whole or in part ("rejected right"), and wrong
    ("stopped wrong")."""
    counts = {name: Counter() for name in CHECKS}
    for row in rows:
        for read in page_reads(row)[1]:
            if not read.get("short") and not read.get("answer"):
                continue
            verdict = "rejected right" if score(read["short"] or read["answer"], row) else "stopped wrong"
            for name in read.get("checks", {}):
                if name in counts:
                    counts[name][verdict] += 1
    return counts


def with_checks(row: dict, enforced: set[str]) -> tuple[str, float]:
    """The short answer and seconds of a question had only `enforced` been enforced in its run."""
    start, reads = page_reads(row)
    for read in reads:
        if read.get("short") and not set(read.get("checks", {})) & enforced:
            return read["short"], read["t_end"] - start
    # no page passes: nor did any in the run, which enforced more; its answer stands (a refusal, or a skill's)
    return row["short_answer"], row["seconds"]


def simulate(rows: list[dict], enforced: set[str]) -> dict:
    """Accuracy (answerable, unanswerable) and p50 / p95 seconds of a subset of the checks."""
    answered = [(with_checks(r, enforced), r) for r in rows]
    ans = [score(s, r) for (s, _), r in answered if not r["unanswerable"]]
    una = [score(s, r) for (s, _), r in answered if r["unanswerable"]]
    seconds = _percentiles([t for (_, t), _ in answered])
    return {"answerable": sum(ans) / max(1, len(ans)), "unanswerable": sum(una) / max(1, len(una)),
            "p50_s": seconds["p50"], "p95_s": seconds["p95"]}


def markdown(rows: list[dict]) -> str:
    """The checks' table and the subsets it suggests: none, all, and those that stop more wrong than right."""
    counts = table(rows)
    kept = {n for n, c in counts.items() if c["stopped wrong"] > c["rejected right"]}
    lines = ["| check | right answers rejected | wrong answers stopped | kept |", "|---|---|---|---|"]
    lines += [f"| {n} | {c['rejected right']} | {c['stopped wrong']} | {'yes' if n in kept else 'no'} |"
              for n, c in counts.items()]
    lines += ["", "| checks enforced | answerable | unanswerable | p50 / p95 s |", "|---|---|---|---|"]
    for name, subset in (("none", set()), ("all", set(CHECKS)), (f"kept: {', '.join(sorted(kept))}", kept)):
        s = simulate(rows, subset)
        lines.append(f"| {name} | {s['answerable']:.1%} | {s['unanswerable']:.1%} | {s['p50_s']} / {s['p95_s']} |")
    return "\n".join(lines)
