"""Traces: every run newest first; one run's hop tree and timeline; two runs side by side."""

from __future__ import annotations

import re
from pathlib import Path

import streamlit as st

from app_pages.common import workspace
from app_pages.trace_views import compare_settings, detail, runs_table, summary, timeline, when
from rag.trace import list_runs, load_trace, summarize


def linked_trace(ws) -> Path | None:
    """The trace named in the URL (?run=RUN_ID from the chat, ?trace=PATH from an evaluation), if it
    is a trace file of this app's folders."""
    run, asked = st.query_params.get("run"), st.query_params.get("trace")
    if run and re.fullmatch(r"[\w-]+", run):
        asked = str(ws.settings.trace_dir / f"{run}.jsonl")
    if not asked:
        return None
    path = Path(asked).resolve()
    roots = [ws.settings.trace_dir.resolve(), ws.settings.eval_dir.resolve()]
    if path.suffix == ".jsonl" and path.is_file() and any(path.is_relative_to(r) for r in roots):
        return path
    st.warning("That trace is not in this app's trace or evaluation folders.")
    return None


ws = workspace()
st.title("Traces")
if linked := linked_trace(ws):
    detail(ws, summarize(linked), key="linked")
    st.divider()
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
    if len(picked) == 2:
        compare_settings(by_id[picked[0]], by_id[picked[1]])
