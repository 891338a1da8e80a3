"""Traces: every run newest first; one run's hop tree and timeline; two runs side by side."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from app_pages.common import render_event, workspace
from rag.trace import RunSummary, list_runs, load_trace
from rag.ui_helpers import answer_markdown, events_from_trace, timeline_rows
from rag.workspace import Workspace

COLORS = {"AGENT": "#9aa5b1", "RETRIEVER": "#2e9e5b", "LLM": "#d9822b"}


def when(run: RunSummary) -> str:
    return datetime.fromisoformat(run.started).astimezone().strftime("%Y-%m-%d %H:%M:%S") if run.started else "?"


def runs_table(runs: list[RunSummary]) -> None:
    st.dataframe(
        [{"time": when(r), "question": r.question, "hops": r.hops, "latency (s)": r.latency_s,
          "tokens": r.prompt_tokens + r.completion_tokens, "status": r.status} for r in runs],
        hide_index=True, width="stretch",
    )


def timeline(spans: list[dict], key: str) -> None:
    """A waterfall: one lane per hop, bars from each span's start to its end, colored by span kind."""
    rows = timeline_rows(spans)
    fig = go.Figure()
    for kind, color in COLORS.items():
        bars = [r for r in rows if r["span_kind"] == kind]
        fig.add_bar(name=kind.lower(), orientation="h", y=[r["lane"] for r in bars], x=[r["ms"] for r in bars],
                    base=[r["start_ms"] for r in bars], marker_color=color, text=[r["label"] for r in bars],
                    hovertemplate="%{text}<br>%{base:.0f} ms → +%{x:.0f} ms<extra></extra>")
    fig.update_layout(barmode="overlay", height=120 + 40 * len({r["lane"] for r in rows}),
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, xaxis_title="ms since the question",
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
                      yaxis={"autorange": "reversed"})
    fig.update_traces(textposition="none")
    st.plotly_chart(fig, key=key, width="stretch")


def summary(run: RunSummary) -> None:
    st.markdown(f"**{run.question}**  \n:gray[{when(run)} · {run.run_id}]")
    hops, latency, tokens, status = st.columns(4)
    hops.metric("Hops", run.hops)
    latency.metric("Latency", f"{run.latency_s:.1f} s" if run.latency_s is not None else "–")
    tokens.metric("Tokens", run.prompt_tokens + run.completion_tokens)
    status.metric("Status", run.status)


def hop_tree(ws: Workspace, spans: list[dict]) -> None:
    """The run as a tree: one expander per hop holding its search, evidence and model calls."""
    events = events_from_trace(spans)
    for hop in sorted({e.hop for e in events}):
        in_hop = [e for e in events if e.hop == hop and e.kind not in ("run_start", "answer")]
        if not in_hop:
            continue
        query = next((e.query for e in in_hop if e.kind == "hop_start"), "")
        with st.expander(f"Hop {hop} · {query}" if hop else "Before the first search"):
            for event in in_hop:
                render_event(ws, event)
    answer = next((e for e in events if e.kind == "answer"), None)
    if answer:
        st.markdown(f"**Answer** · {answer_markdown(answer.answer)}")


def detail(ws: Workspace, run: RunSummary) -> None:
    spans = load_trace(Path(run.path))
    summary(run)
    timeline(spans, key=f"timeline_{run.run_id}")
    hop_tree(ws, spans)
    st.download_button("Download the raw trace (JSONL)", Path(run.path).read_bytes(), file_name=Path(run.path).name,
                       mime="application/jsonl", icon=":material/download:")


ws = workspace()
st.title("Traces")
runs = list_runs(ws.settings.trace_dir)
if not runs:
    st.info("No runs yet: every question asked in the Chat is traced here.", icon=":material/timeline:")
    st.page_link("app_pages/chat.py", label="Go to Chat", icon=":material/forum:")
    st.stop()

runs_table(runs)
by_id = {r.run_id: r for r in runs}


def label(run_id: str) -> str:
    return f"{when(by_id[run_id])} · {by_id[run_id].question[:80]}"


one, two = st.tabs(["Run detail", "Compare two runs"])
with one:
    detail(ws, by_id[st.selectbox("Run", list(by_id), format_func=label)])
with two:
    picked = st.multiselect("Pick two runs", list(by_id), format_func=label, max_selections=2,
                            default=list(by_id)[:2] if len(by_id) > 1 else None)
    for column, run_id in zip(st.columns(2), picked):
        with column:
            summary(by_id[run_id])
            timeline(load_trace(Path(by_id[run_id].path)), key=f"compare_{run_id}")
