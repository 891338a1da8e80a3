"""Upload PDFs: each is searchable within seconds; the library shows how far each is read."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from app_pages.common import chart_card, page_image, workspace
from rag.pipeline import worker
from rag.pipeline.progress import IngestEstimate
from rag.records import MODALITY_NAMES, DocumentInfo, IngestReport, StatementFrame
from rag.workspace import Workspace

STAGE_NAMES = {"searchable": "searchable by keyword", "vectors": "searchable", "complete": "complete"}


def ingest_with_progress(ws: Workspace, data: bytes, name: str, password: str | None = None) -> IngestReport:
    """Make one file searchable (its text layer: seconds) with a bar; the rest is queued for the worker."""
    bar = st.progress(0.0, text=f"{name}: reading its text …")
    estimate = IngestEstimate()

    def progress(stage: str, n: int, total: int) -> None:
        estimate(stage, n, total)
        bar.progress(min(estimate.share(), 1.0), text=f"{name}: {estimate.text()}")

    report = ws.ingest(data, name, progress, password=password, wait="searchable")
    worker.queue_rest(ws.settings, report)
    bar.empty()
    return report


def unlock(ws: Workspace, file) -> IngestReport | None:
    """Ask for an encrypted PDF's password: it is used to read the file, never kept."""
    with st.form(f"unlock_{file.file_id}", border=False):
        password = st.text_input(f"Password for {file.name}", type="password")
        if st.form_submit_button("Unlock", icon=":material/lock_open:") and password:
            return ingest_with_progress(ws, file.getvalue(), file.name, password)
    return None


def show_report(report: IngestReport) -> None:
    if report.outcome == "error":
        st.error(f"**{report.file}** was not added: {report.error}", icon=":material/block:")
    elif report.outcome == "skipped":
        st.info(f"**{report.file}** is already in the library ({report.pages} pages).", icon=":material/recycling:")
    else:
        searchable = report.stage_seconds.get("searchable", report.seconds)
        st.success(f"**{report.file}** · {report.pages} pages · {counts(report.fragments)} · searchable after "
                   f"{searchable:.1f} s: ask away. Tables, charts and scanned pages are read in the background "
                   "(see the library below).", icon=":material/check_circle:")
    for note in report.notes:
        st.caption(f"{report.file}: {note}")
    for warning in report.warnings:
        st.warning(f"**{report.file}**: {warning}")


def charts_read(ws: Workspace, doc_id: str) -> None:
    """The document's charts with the values read off them, to check against the pictures."""
    charts = [t for t in ws.store.tables(doc_id) if t.chart is not None]
    if not charts:
        return
    unsure = sum(t.chart.ambiguous for t in charts)
    label = f"{len(charts)} chart{'s' * (len(charts) != 1)} read as data" + (f" ({unsure} partly)" if unsure else "")
    with st.expander(label, icon=":material/bar_chart:"):
        for table in charts:
            chart_card(ws, doc_id, table)


def statements_read(frames: list[StatementFrame]) -> None:
    """The document's statements as the metric skill reads them: rows by period, scale, page."""
    frames = [f for f in frames if f.kind != "sentence"]
    statements = [f for f in frames if f.kind != "other"]
    if not statements:
        return
    others = len(frames) - len(statements)
    label = f"{len(statements)} statement page{'s' * (len(statements) != 1)} read as data" + \
        (f" (and {others} other tables by year)" if others else "")
    with st.expander(label, icon=":material/table:"):
        for frame in statements:
            scale = f" · {frame.currency or ''} in {frame.scale}s".replace("  ", " ") if frame.scale else ""
            st.caption(f"p. {frame.page} · {frame.title} · {frame.kind.replace('_', ' ')}{scale}")
            st.dataframe(frame.to_dataframe(printed=True), hide_index=True)


def sentences_read(frames: list[StatementFrame]) -> None:
    """The sentences that print a figure per year, as the metric skill reads them: one row each, with its page."""
    said = [f for f in frames if f.kind == "sentence"]
    if not said:
        return
    rows = [{"page": f.page, "figure": f.rows[0].label, "unit": " ".join(filter(None, [f.currency, f.scale])),
             **{p.header: c for p, c in zip(f.periods, f.rows[0].cells)}} for f in said]
    with st.expander(f"{len(said)} figure{'s' * (len(said) != 1)} by year read from sentences",
                     icon=":material/short_text:"):
        table = pd.DataFrame(rows).fillna("")
        years = sorted(set(table.columns) - {"page", "figure", "unit"}, reverse=True)  # the latest first
        st.dataframe(table[["page", "figure", "unit", *years]], hide_index=True)


def tables_read(ws: Workspace, doc_id: str) -> None:
    """The document's other tables (read at the complete stage, ruled or not) as data, each with its page and title."""
    tables = [t for t in ws.store.tables(doc_id) if t.chart is None]
    if not tables:
        return
    with st.expander(f"{len(tables)} table{'s' * (len(tables) != 1)} read as data", icon=":material/table_rows:"):
        for table in tables:
            st.caption(" · ".join(filter(None, [f"p. {table.page}", table.title])))
            st.dataframe(table.to_dataframe(), hide_index=True)


def counts(fragments: dict[str, int]) -> str:
    return " · ".join(f"{n} {MODALITY_NAMES[m]}" for m, n in fragments.items())


def stage(ws: Workspace, doc: DocumentInfo) -> None:
    """How far the document is read: its stage, a bar while it is read, its error with a retry."""
    if doc.error:
        st.error(f"Reading stopped at {doc.done_pages} of {doc.pages} pages ({doc.error}); it stays "
                 f"{STAGE_NAMES[doc.stage]}.", icon=":material/error:")
        st.button("Retry", key=f"retry_{doc.doc_id}", icon=":material/refresh:", on_click=worker.retry, args=(ws, doc.doc_id))
    elif doc.stage == "searchable":
        st.progress(0.0, text=f":material/hourglass_top: {STAGE_NAMES[doc.stage]} · embedding its text, "
                    f"then reading tables, charts and scans: 0 of {doc.pages} pages")
    elif doc.stage != "complete":
        st.progress(doc.done_pages / doc.pages, text=f":material/hourglass_top: {STAGE_NAMES[doc.stage]} · "
                    f"reading tables, charts and scans: {doc.done_pages} of {doc.pages} pages")


def document_row(ws: Workspace, doc: DocumentInfo) -> None:
    thumb, info, action = st.columns([1, 6, 1], vertical_alignment="center")
    pdf = ws.store.pdf_path(doc.doc_id)
    if pdf.exists():
        thumb.image(page_image(str(pdf), 1, dpi=20))
    added = datetime.fromtimestamp(doc.added_at).strftime("%Y-%m-%d %H:%M") if doc.added_at else ""
    info.markdown(f"**{doc.file}** · :blue-badge[{STAGE_NAMES[doc.stage]}]  \n{doc.pages} pages · "
                  f"{counts(doc.fragments)}  \n:gray[added {added}]")
    action.button("Delete", key=f"delete_{doc.doc_id}", icon=":material/delete:", on_click=ws.store.delete, args=(doc.doc_id,))
    stage(ws, doc)
    for note in doc.notes:
        st.caption(note)
    for warning in doc.warnings[:3] if doc.stage == "complete" else []:
        st.caption(f":orange[{warning}]")
    charts_read(ws, doc.doc_id)
    frames = ws.store.frames(doc.doc_id)  # read once: the statements, then the sentences
    statements_read(frames)
    sentences_read(frames)
    tables_read(ws, doc.doc_id)


@st.fragment(run_every=1.0)
def library(ws: Workspace) -> None:
    """Redrawn every second, so the stages move while the worker reads."""
    docs = ws.store.documents()
    if not docs:
        st.caption("No documents yet: drop PDF reports above.")
    for doc in docs:
        with st.container(border=True):
            document_row(ws, doc)


ws = workspace()
st.title("Upload reports")
files = st.file_uploader("PDF reports", type="pdf", accept_multiple_files=True,
                         help="Several files at once; each is searchable in seconds, and read whole in the background.")
done: dict[str, IngestReport] = st.session_state.setdefault("ingested", {})
new = [f.file_id for f in files or [] if f.file_id not in done]
for file in files or []:
    if file.file_id in new:
        done[file.file_id] = ingest_with_progress(ws, file.getvalue(), file.name)
    show_report(done[file.file_id])
    if "password" in (done[file.file_id].error or "") and (report := unlock(ws, file)):
        done[file.file_id] = report
        st.rerun()
if any(done[f].outcome == "ingested" for f in new):
    st.rerun()  # the sidebar's document count was drawn before these files went in

st.subheader("Library")
library(ws)
