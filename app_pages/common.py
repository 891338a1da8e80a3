"""What every page shares: the cached workspace, the sidebar, and evidence cards for hop events."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.agent.events import (
    AnswerEvent,
    Computation,
    Draft,
    HopEnd,
    HopEvent,
    HopStart,
    LLMCall,
    PageRead,
    Planned,
    Stop,
    Waiting,
)
from rag.control import queue_text
from rag.pipeline import worker
from rag.records import MODALITY_NAMES, Cell, Hit, Table
from rag.settings import Settings
from rag.ui.conversations import Conversations
from rag.ui.helpers import crop_png, page_png
from rag.ui.live import LiveRuns
from rag.workspace import Workspace


@st.cache_resource(show_spinner="Opening the document store…")
def workspace() -> Workspace:
    """One workspace per server: settings from the environment (RAG_DATA_DIR, RAG_LOG_DIR, …). The
    store and the embedder open now; the indexes and the language model load in the background."""
    ws = Workspace()
    ws.warm_up()
    if ws.settings.local_worker:  # tables, charts and OCR of uploads are read here, in the background
        worker.host(ws)
    return ws


@st.cache_resource(show_spinner=False)
def live_runs() -> LiveRuns:
    """The questions this server is answering, and the saved conversations they are written to."""
    return LiveRuns(Conversations.of(workspace().settings))


def conversations() -> Conversations:
    return live_runs().conversations


def session_settings() -> Settings:
    """This browser session's settings: the server's defaults, copied once, then changed only by
    this session's sidebar. The store, the BM25 indexes and the models stay shared."""
    if "settings" not in st.session_state:
        st.session_state.settings = workspace().settings.model_copy(deep=True)
    return st.session_state.settings


def sidebar(ws: Workspace) -> None:
    with st.sidebar:
        st.markdown(f"**LLM** · {ws.llm_name}  \n**Embeddings** · {ws.embed_model.model_name}")
        st.metric("Documents in the store", len(ws.store.documents()))
        st.subheader("Agent settings")
        settings = session_settings()
        agent, retrieval = settings.agent, settings.retrieval
        retrieval.k_per_collection = st.slider(
            "Results per collection (k)", 1, 20, retrieval.k_per_collection, key="k_per_collection")
        agent.max_hops = st.slider("Max hops", 1, 6, agent.max_hops, key="max_hops")
        st.caption("Context mix text : table : figure (the routed modality gets the largest share)")
        for col, modality in zip(st.columns(3), ("text", "table", "image_caption")):
            retrieval.ratio[modality] = col.number_input(
                MODALITY_NAMES[modality], 0, 10, retrieval.ratio[modality], key=f"ratio_{modality}")
        st.subheader("Retrieval")
        retrieval.hybrid = st.toggle("Hybrid: BM25 beside dense search", retrieval.hybrid, key="hybrid")
        retrieval.parent_page = st.toggle(
            "Parent pages", retrieval.parent_page, key="parent_page",
            help="Rank pages by their fragments and whole text; each page gives its best fragment.")
        retrieval.adaptive_k = st.toggle(
            "Adaptive k", retrieval.adaptive_k, key="adaptive_k",
            help="A Gaussian mixture over the similarities decides how many fragments each collection keeps.")
        st.subheader("Reader")
        reader = settings.reader
        reader.page_tokens = st.number_input(
            "Page text the model reads (tokens)", 100, 4000, reader.page_tokens, step=50, key="page_tokens",
            help="A longer page is read as its best lines: every token costs time on a CPU.")
        reader.max_pages = st.slider("Pages read at most", 1, 6, reader.max_pages, key="max_pages")
        reader.budget_s = float(st.slider(
            "Seconds to read in (time budget)", 5, 120, int(reader.budget_s), key="budget_s",
            help="Another page is begun only when the model's measured speed says it ends within this time."))
        st.caption(f"Preset: {settings.preset}")
        st.caption("These settings are this browser tab's own: other users of the server keep theirs.")


@st.cache_data(max_entries=256, show_spinner=False)
def page_image(pdf: str, page: int, dpi: int = 72, highlight: tuple | None = None) -> bytes:
    return page_png(pdf, page, dpi, highlight)


@st.cache_data(max_entries=256, show_spinner=False)
def figure_crop(pdf: str, page: int, bbox: tuple) -> bytes:
    return crop_png(pdf, page, bbox)


def fragment_card(ws: Workspace, hit: Hit, picked: bool = False) -> None:
    f = hit.fragment
    with st.container(border=True):
        mark = ":green-background[:material/check: cited] · " if picked else ""
        st.caption(f"{mark}{MODALITY_NAMES[f.modality]} · p. {f.page} · score {hit.score:.2f} · {f.file}")
        if f.modality == "table" and f.cells:
            row_table(f.cells)
        elif f.modality == "image_caption":
            pdf = ws.store.pdf_path(f.doc_id)
            if pdf.exists():
                st.image(figure_crop(str(pdf), f.page, tuple(f.bbox)), width=260)
            caption, inside = f.extra.get("caption", f.text), f.extra.get("chart_text", "")
            if caption:
                st.markdown(f"*{_escape(str(caption))}*")
            table = chart_table(ws, f.doc_id, str(f.extra.get("chart_table_id", "")))
            if table is not None:
                chart_values(table)
            elif inside:
                st.caption(f"In the chart: {_escape(_shorten(str(inside), 300))}")
        else:
            st.markdown(_escape(_shorten(f.text, 400)))


def row_table(cells: list[Cell]) -> None:
    """A table row as a one-row table under its column headers (static HTML: it shows at once)."""
    st.table(pd.DataFrame([[c.value for c in cells]], columns=_unique([c.header for c in cells])), hide_index=True)


def chart_table(ws: Workspace, doc_id: str, table_id: str) -> Table | None:
    """The values read off a figure at ingestion, if it was read as a chart."""
    if not table_id:
        return None
    return next((t for t in ws.store.tables(doc_id) if t.table_id == table_id), None)


def chart_values(table: Table) -> None:
    """A chart's recovered values under its picture, so they can be checked against it."""
    chart = table.chart
    doubt = " · some labels could not be paired and are left out" if chart.ambiguous else ""
    st.caption(f"Values read off the chart ({chart.kind}){doubt}")
    st.table(table.to_dataframe().rename(columns={"category": ""}), hide_index=True)


def chart_card(ws: Workspace, doc_id: str, table: Table) -> None:
    """A chart as the Upload page lists it: its crop, its title, the values read off it."""
    with st.container(border=True):
        st.caption(f"p. {table.page} · {table.chart.title}")
        pdf = ws.store.pdf_path(doc_id)
        if pdf.exists():
            st.image(figure_crop(str(pdf), table.page, tuple(table.bbox)), width=320)
        chart_values(table)


def render_event(ws: Workspace, event: HopEvent, cited: frozenset[str] = frozenset()) -> None:
    """One hop event as it appears in the chat's status box and in a trace's hop tree: its headline,
    then its hits as cards; `cited` marks the fragments the answer's citations box."""
    headline = event.headline()
    if headline is None or (isinstance(event, Waiting) and event.ahead):  # the status title shows the queue
        return
    SHOW[event.style](_escape(headline))
    if isinstance(event, HopEnd):
        for hit in event.hits:
            fragment_card(ws, hit, hit.fragment.id in cited)
    elif isinstance(event, Planned):
        st.markdown("\n".join(_escape(part) for part in event.details()))  # a numbered list, not a caption
    elif isinstance(event, Computation):
        st.code(event.program, language="python")
        if event.inputs:  # each input as printed and where: the answer's citations open those pages
            st.table(pd.DataFrame([{"input": i.name, "row": i.row, "period": i.period, "printed": i.printed,
                                    "page": f"p. {i.page}"} for i in event.inputs]), hide_index=True)
    elif details := event.details():
        st.caption(" · ".join(_escape(d) for d in details))


SHOW = {
    "step": lambda text: st.markdown(f"**{text}**"),
    "note": st.caption,
    "thought": lambda text: st.markdown(f":gray[:material/psychology: {text}]"),
    "info": lambda text: st.info(text, icon=":material/search_off:"),
    "warning": st.warning,
}


def status_news(events: list[HopEvent], label: str, queue: str) -> tuple[str, str]:
    """The status box's title after these events, in two parts: what the run is doing, and its place in
    the model's queue. The place stays beside the hop's news until the model has answered a call: a run
    searches while it waits, and its hops must not hide the wait."""
    for event in events:
        if isinstance(event, Waiting):
            queue = queue_text(event.ahead, event.waited_s)
        elif isinstance(event, LLMCall):
            queue = ""
        else:
            label = status_label(event) or label
    return label, queue


def status_label(event: HopEvent) -> str | None:
    """What the status box's title says while this event is the latest news."""
    if isinstance(event, Planned):
        return f"Planned {len(event.parts)} parts: searching each …"
    if isinstance(event, HopStart):
        return f"Hop {event.hop}: searching {MODALITY_NAMES.get(event.modality, event.modality)} …"
    if isinstance(event, HopEnd):
        return f"Hop {event.hop}: {len(event.hits)} fragments found, deciding …"
    if isinstance(event, Stop):
        return "Reading the evidence …"
    if isinstance(event, Draft):
        return f"Reading p. {event.page}: “{_shorten(event.text, 120)}” …" if event.text else f"Reading p. {event.page} …"
    if isinstance(event, PageRead):
        return f"Read p. {event.page}: {'answer found' if event.found else 'no answer, reading on'} …"
    if isinstance(event, AnswerEvent):
        return f"Searched in {event.hop} hop{'s' * (event.hop != 1)}"
    return None


def _shorten(text: str, limit: int) -> str:
    return text[:limit] + ("…" if len(text) > limit else "")


def _escape(text: str) -> str:
    return text.replace("$", r"\$")


def _unique(names: list[str]) -> list[str]:
    """Column names a DataFrame accepts; repeated or blank ones stay blank-looking on screen."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        n = seen[name]
        out.append(name if n == 1 else (" " * n if not name.strip() else f"{name} ({n})"))
    return out
