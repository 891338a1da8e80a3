"""Evaluate: compare evaluation runs (modes, the hop ablation) and open any question's trace."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from app_pages.common import session_settings, workspace
from rag.eval import MODES
from rag.eval.report import ablation_figure, accuracy_figure, label, load_run, summary_table
from rag.workspace import Workspace


def result_dirs(root: Path) -> list[Path]:
    """Every folder under root (two levels deep) that holds a finished run."""
    if not root.is_dir():
        return []
    found = [p.parent for p in [*root.glob("*/results.json"), *root.glob("*/*/results.json")]]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def run_small_eval(ws: Workspace) -> None:
    """Questions in MMLongBench-Doc's JSON format about documents already in the store."""
    from rag.eval.answers import evaluate_answers

    qa = st.file_uploader("Questions (JSON: question, answer, answer_format, doc_id, evidence pages)", type="json")
    mode_col, limit_col = st.columns(2)
    mode = mode_col.selectbox("Mode", MODES, help="The agent uses the sidebar's max hops.")
    limit = limit_col.number_input("Questions", 1, 200, 3)
    if not (qa and st.button("Run", icon=":material/play_arrow:")):
        return
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        f.write(qa.getvalue())
    ws = ws.with_settings(session_settings())  # the sidebar's settings, this session's own
    name = f"agent-hops{ws.settings.agent.max_hops}" if mode == "agent" else mode
    out = ws.settings.eval_dir / f"app-{Path(qa.name).stem}-{name}"
    bar = st.progress(0.0, text="Starting…")

    def progress(done: int, total: int, row: dict, accuracy: float) -> None:
        bar.progress(done / total, text=f"{done}/{total} questions · accuracy so far {accuracy:.0%}")

    try:
        evaluate_answers(ws, Path(f.name), None, out, mode=mode, limit=int(limit), progress=progress)
        st.success(f"Done: results in {out}")
    except (ValueError, RuntimeError) as exc:
        st.error(str(exc))


def questions_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{
        "#": r["n"], "question": r["question"], "gold": str(r["gold"]), "answer": r["short_answer"] or r["answer"],
        "correct": r["correct"], "failure": r["failure"] or "", "sources": ", ".join(r["sources"]),
        "seconds": r["seconds"], "trace": f"traces?trace={Path(r['trace']).resolve()}",
    } for r in rows])


ws = workspace()
st.title("Evaluate")
root = ws.settings.eval_dir
with st.expander("Run an evaluation on the documents in the store"):
    run_small_eval(ws)
dirs = result_dirs(root)
if not dirs:
    st.info(f"No evaluation results in {root} yet. Run one above, or from the command line: "
            "`python -m rag eval --qa QUESTIONS.json --mode single-pass`.", icon=":material/analytics:")
    st.stop()

picked = st.multiselect("Runs", dirs, default=dirs[: min(4, len(dirs))], format_func=lambda p: str(p.relative_to(root)))
runs = {d: load_run(d) for d in picked}
summaries = [s for s, _ in runs.values()]
if summaries:
    st.plotly_chart(accuracy_figure(summaries), width="stretch")
    if ablation := ablation_figure(summaries):
        st.plotly_chart(ablation, width="stretch")
    st.markdown(summary_table(summaries))
    shown = st.selectbox("Questions of", list(runs), format_func=lambda d: f"{label(runs[d][0])} · {d.name}")
    st.dataframe(questions_frame(runs[shown][1]), hide_index=True, width="stretch",
                 column_config={"trace": st.column_config.LinkColumn("trace", display_text="open trace"),
                                "correct": st.column_config.CheckboxColumn("correct")})
