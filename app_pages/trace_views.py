"""Views of one traced run, shared by the Traces and Evaluate pages."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from app_pages.common import render_event
from rag.trace import RunSummary, load_trace
from rag.ui.helpers import (
    answer_markdown,
    events_from_trace,
    flat_settings,
    is_reader_step,
    settings_diff,
    timeline_rows,
)
from rag.workspace import Workspace

COLORS = {"AGENT": "#9aa5b1", "QUEUE": "#c9ced6", "RETRIEVER": "#2e9e5b", "LLM": "#d9822b"}


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
    preset, hops, latency, tokens, status = st.columns(5)
    preset.metric("Preset", run.settings.get("preset", "–"), help="The settings preset of the run's model: "
                  "embedded (one page's best lines a call) or server (whole pages, more of them)")
    hops.metric("Hops", run.hops)
    latency.metric("Latency", f"{run.latency_s:.1f} s" if run.latency_s is not None else "–")
    tokens.metric("Tokens", run.prompt_tokens + run.completion_tokens)
    status.metric("Status", run.status)


def settings_table(run: RunSummary, key: str) -> None:
    """The settings the run used, as its trace recorded them."""
    with st.expander("Settings of this run", icon=":material/tune:"):
        if not run.settings:
            st.caption("This trace does not record its settings.")
            return
        st.dataframe([{"setting": k, "value": str(v)} for k, v in flat_settings(run.settings).items()],
                     hide_index=True, width="stretch", key=f"settings_{key}_{run.run_id}")


def compare_settings(first: RunSummary, second: RunSummary) -> None:
    rows = settings_diff(first.settings, second.settings)
    st.markdown("**Settings that differ**")
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch", key="settings_diff")
    else:
        st.caption("Both runs used the same settings.")


def hop_tree(ws: Workspace, spans: list[dict]) -> None:
    """The run as a tree: one expander per hop holding its search, evidence and model calls, then the
    reader's steps (pages read and what each gave, programs run) in one of their own."""
    events = events_from_trace(spans)
    reading = [e for e in events if is_reader_step(e)]
    answer = next((e for e in events if e.kind == "answer"), None)
    cited = frozenset(c.fragment_id for c in answer.citations if c.fragment_id) if answer else frozenset()
    for hop in sorted({e.hop for e in events}):
        in_hop = [e for e in events if e.hop == hop and e.kind not in ("run_start", "answer") and not is_reader_step(e)]
        if not in_hop:
            continue
        query = next((e.query for e in in_hop if e.kind == "hop_start"), "")
        with st.expander(f"Hop {hop} · {query}" if hop else "Before the first search"):
            for event in in_hop:
                render_event(ws, event, cited)
    if reading:
        with st.expander("Reader · pages read, answers checked, programs run", expanded=True):
            for event in reading:
                render_event(ws, event)
    if answer:
        st.markdown(f"**Answer** · {answer_markdown(answer.answer)}")


def detail(ws: Workspace, run: RunSummary, key: str = "detail") -> None:
    spans = load_trace(Path(run.path))
    summary(run)
    settings_table(run, key)
    timeline(spans, key=f"timeline_{key}_{run.run_id}")
    hop_tree(ws, spans)
    st.download_button("Download the raw trace (JSONL)", Path(run.path).read_bytes(), file_name=Path(run.path).name,
                       mime="application/jsonl", icon=":material/download:", key=f"download_{key}_{run.run_id}")
