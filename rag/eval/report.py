"""Evaluation reports: markdown tables and plotly charts, for one run or several side by side.

The Evaluate page draws the same figures, so the CLI report and the app agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go
from plotly.subplots import make_subplots

BREAKDOWN = ("overall", "answerable", "unanswerable", "single_page", "multi_page")
SOURCES = ("text", "layout", "table", "chart", "figure")


def load_run(out_dir: Path) -> tuple[dict, list[dict]]:
    """A results folder's summary and per-question rows."""
    out_dir = Path(out_dir)
    summary = json.loads((out_dir / "results.json").read_text())
    rows_path = out_dir / "questions.jsonl"
    rows = [json.loads(line) for line in rows_path.read_text().splitlines() if line.strip()] if rows_path.exists() else []
    return summary, rows


def label(summary: dict) -> str:
    if summary.get("mode") == "agent":
        return f"agent, max {summary.get('max_hops')} hops"
    return summary.get("mode", "?")


def _pct(value) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def summary_table(summaries: list[dict], scoring: str = "strict") -> str:
    """One row per run: accuracy by both scorers, by breakdown and source (the chosen scorer), recall,
    coverage, latency, hops. Runs made before MMLongBench scoring existed show "–" there."""
    head = ["run", "n", "acc", "answerable", "unanswerable", "MMLB acc", "MMLB answerable", "MMLB unanswerable",
            *SOURCES, "single-page", "multi-page", "retrieval recall", "evidence in context",
            "latency s (p50 / p95)", "first hop s (p50 / p95)", "hops", "tokens in/out"]
    lines = [f"Sources and pages scored by: {scoring}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        strict, mmlb = s["accuracy"], s.get("accuracy_mmlongbench", {})
        acc = mmlb if scoring == "mmlongbench" else strict
        latency, first = s["latency_s"], s.get("first_hop_s", {})
        cells = [label(s), str(s["questions"]), _pct(strict["overall"]), _pct(strict["answerable"]),
                 _pct(strict["unanswerable"]), _pct(mmlb.get("overall")), _pct(mmlb.get("answerable")),
                 _pct(mmlb.get("unanswerable")), *(_pct(acc.get("by_source", {}).get(k)) for k in SOURCES),
                 _pct(acc.get("single_page")), _pct(acc.get("multi_page")), _pct(s["retrieval_recall"]),
                 _pct(s["evidence_in_context"]), f"{latency.get('p50')} / {latency.get('p95')}",
                 f"{first.get('p50', '–')} / {first.get('p95', '–')}", str(s["hops_mean"]),
                 f"{s['tokens_mean']['prompt']}/{s['tokens_mean']['completion']}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def kinds_table(summary: dict) -> str:
    """Per document kind and, where the set names them, per task (MMLongBench scoring); then which skill
    answered how many questions and how many right."""
    lines = []
    for field, title in (("by_kind", "kind"), ("by_task", "task")):
        if summary.get(field):
            lines += [""] if lines else []
            lines += [f"| {title} | n | answerable | unanswerable | overall | p50 s | tokens p50 |",
                      "|---|---|---|---|---|---|---|"]
            lines += [f"| {kind} | {k['questions']} | {_pct(k['answerable'])} | {_pct(k['unanswerable'])} | "
                      f"{_pct(k['overall'])} | {k['p50_s']} | {k.get('tokens_p50')} |" for kind, k in summary[field].items()]
    if summary.get("by_metric"):
        lines += ["", "| metric (scored in the unit asked) | n | right | p50 / p95 s | tokens p50 |", "|---|---|---|---|---|"]
        lines += [f"| {kind} | {k['questions']} | {k['right']} | {k['p50_s']} / {k['p95_s']} | {k['tokens_p50']} |"
                  for kind, k in summary["by_metric"].items()]
    lines += ["", "| skill | answered | right |", "|---|---|---|"]
    lines += [f"| {name} | {k['answered']} | {k['right']} |" for name, k in summary.get("skills", {}).items()]
    return "\n".join(lines)


def questions_table(rows: list[dict], base: Path | None = None) -> str:
    lines = ["| # | question | gold | short answer | ok | MMLB | failure | s | trace |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        trace = Path(r["trace"])
        link = trace.relative_to(base) if base and trace.is_relative_to(base) else trace
        cells = [str(r["n"]), _cell(r["question"], 90), _cell(str(r["gold"]), 40), _cell(r["short_answer"] or r["answer"], 40),
                 "✓" if r["correct"] else "✗", f"{r.get('score_mmlongbench', 0):.2f}", r["failure"] or "", f"{r['seconds']:.0f}", f"[trace]({link})"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(text: str, width: int) -> str:
    text = " ".join(str(text).split()).replace("|", "/")
    return text if len(text) <= width else text[: width - 1] + "…"


def failures_table(summaries: list[dict]) -> str:
    kinds = sorted({k for s in summaries for k in s.get("failures", {})})
    lines = ["| run | " + " | ".join(kinds) + " |", "|" + "---|" * (len(kinds) + 1)]
    for s in summaries:
        lines.append(f"| {label(s)} | " + " | ".join(str(s["failures"].get(k, 0)) for k in kinds) + " |")
    return "\n".join(lines)


def accuracy_figure(summaries: list[dict]) -> go.Figure:
    """Accuracy by breakdown and by evidence source, one bar colour per run."""
    fig = go.Figure()
    keys = [*BREAKDOWN, *SOURCES]
    for s in summaries:
        acc = s["accuracy"]
        values = [acc.get(k) if k in BREAKDOWN else acc["by_source"].get(k) for k in keys]
        fig.add_bar(name=label(s), x=[k.replace("_", "-") for k in keys], y=values)
    fig.update_layout(barmode="group", yaxis_title="accuracy", yaxis_range=[0, 1], title="Answer accuracy")
    return fig


def ablation_figure(summaries: list[dict]) -> go.Figure | None:
    """Accuracy and mean latency against the agent's max hops, when several were run."""
    runs = sorted((s for s in summaries if s.get("mode") == "agent" and s.get("max_hops")), key=lambda s: s["max_hops"])
    if len({s["max_hops"] for s in runs}) < 2:
        return None
    hops = [s["max_hops"] for s in runs]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_scatter(x=hops, y=[s["accuracy"]["overall"] for s in runs], name="accuracy", mode="lines+markers")
    fig.add_scatter(x=hops, y=[s["latency_s"]["mean"] for s in runs], name="latency s", mode="lines+markers",
                    secondary_y=True)
    fig.update_layout(title="Max-hops ablation", xaxis_title="max hops", xaxis_dtick=1)
    fig.update_yaxes(title_text="accuracy", range=[0, 1], secondary_y=False)
    fig.update_yaxes(title_text="mean latency (s)", secondary_y=True)
    return fig


def latency_figure(rows: list[dict]) -> go.Figure:
    fig = go.Figure(go.Histogram(x=[r["seconds"] for r in rows], nbinsx=30))
    fig.update_layout(title="Latency per question", xaxis_title="seconds", yaxis_title="questions")
    return fig


def write_reports(out_dir: Path, summary: dict, rows: list[dict]) -> None:
    md = [f"# Evaluation: {label(summary)}", "", f"Model: {summary.get('model')}; questions: {summary.get('qa')}", "",
          summary_table([summary]), "", "## By document kind and task", "", kinds_table(summary), "",
          "## Failures", "", failures_table([summary]), "", "## Questions", "",
          questions_table(rows, out_dir)]
    (out_dir / "report.md").write_text("\n".join(md) + "\n")
    _write_html(out_dir / "report.html", f"Evaluation: {label(summary)}", [accuracy_figure([summary]), latency_figure(rows)],
                summary_table([summary]))


def write_comparison(dirs: list[Path], out: Path) -> str:
    """Several runs side by side: report.md and report.html in `out`; returns the markdown."""
    summaries = [load_run(d)[0] for d in dirs]
    md = "\n".join(["# Evaluation comparison", "", summary_table(summaries), "", "## Failures", "",
                    failures_table(summaries), ""])
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(md)
    figures = [accuracy_figure(summaries), ablation_figure(summaries)]
    _write_html(out / "report.html", "Evaluation comparison", [f for f in figures if f], summary_table(summaries))
    return md


def _write_html(path: Path, title: str, figures: list[go.Figure], table_md: str) -> None:
    rows = [line.strip("|").split("|") for line in table_md.splitlines() if line.startswith("|") and not line.startswith("|---")]
    table = "<table>" + "".join(
        "<tr>" + "".join(f"<{'th' if i == 0 else 'td'}>{c.strip()}</{'th' if i == 0 else 'td'}>" for c in row) + "</tr>"
        for i, row in enumerate(rows)) + "</table>"
    charts = "".join(f.to_html(full_html=False, include_plotlyjs=n == 0) for n, f in enumerate(figures))
    path.write_text(f"<!doctype html><meta charset=utf-8><title>{title}</title><style>table{{border-collapse:collapse}}"
                    f"td,th{{border:1px solid #ccc;padding:2px 6px}}</style><h1>{title}</h1>{table}{charts}")
