"""Chat: each hop appears live with its evidence; answers link to the pages they cite and to their trace.

Questions run in background threads (rag/ui/live.py) and every turn is saved to its conversation
(rag/ui/conversations.py), so a reload, a click on Stop or a restart loses nothing that was answered.
"""

from __future__ import annotations

import threading
import time

import streamlit as st

from app_pages.common import (
    conversations,
    live_runs,
    page_image,
    render_event,
    session_settings,
    status_news,
    workspace,
)
from app_pages.conversations import PARAM, delete_conversation, open_conversation
from rag.agent.events import HopEvent
from rag.agent.run import AgentAnswer
from rag.records import Citation
from rag.ui.conversations import Turn
from rag.ui.helpers import answer_markdown
from rag.ui.live import LiveRun
from rag.workspace import Workspace


def follow(ws: Workspace, live: LiveRun) -> None:
    """A running question: its events so far, then each one as it comes, until its answer.

    The status box's title (the latest news, the elapsed time) is rewritten every half second and
    before the news is drawn, so the queue line does not wait for a hop's cards. Each rewrite lets
    Streamlit end this script run when the user clicks Stop or anything else, and the next run
    picks the question up again from its first event. The answer is drawn here as soon as it comes;
    the rerun that follows draws the saved turn over it element for element (`show_turn` keeps the
    Stop button's slot), so it neither waits for that rerun nor shows twice."""
    stop = st.empty()
    stop.button("Stop", key=f"stop_{live.turn.conversation_id}_{live.turn.n}", icon=":material/stop_circle:",
                on_click=live.stop, disabled=live.control.stopped, help="Stop this question (it keeps its evidence)")
    seen, label, queue = 0, "Starting the agent (the first question also loads the language model) …", ""
    with st.status(label, expanded=True) as status:
        while True:
            news = live.wait(seen, timeout=0.5)
            label, queue = status_news(news, label, queue)
            title = f"{label} · {queue}" if queue else label
            status.update(label=f"{title} · {time.monotonic() - live.started:.0f} s", expanded=True)
            for event in news:
                render_event(ws, event)
            seen += len(news)
            if live.over and seen == len(live.events):
                break
        status.update(label=evidence_title(live.events), state="error" if live.error else "complete", expanded=False)
    stop.empty()
    show_answer(ws, live.answer, live.error)


def show_turn(ws: Workspace, turn: Turn) -> None:
    """A finished turn as it was shown live: its hop box, answer, citations and trace link."""
    if turn.status == "running":  # saved when asked; its run ended with the process that ran it
        st.warning("This question was interrupted: the server restarted before it was answered. Ask it again.",
                   icon=":material/restart_alt:")
        return
    st.empty()  # where the Stop button was while it ran: the live view's elements stay in place
    events = turn.hop_events()
    if events:
        cited = frozenset(c.fragment_id for c in turn.answer.citations if c.fragment_id) if turn.answer else frozenset()
        with st.status(evidence_title(events), state="error" if turn.error else "complete"):
            for event in events:
                render_event(ws, event, cited)
    show_answer(ws, turn.answer, turn.error)


def show_answer(ws: Workspace, answer: AgentAnswer | None, error: str | None) -> None:
    if error or (answer and answer.error):
        st.error(f"Could not get an answer from the language model: {error or answer.error}", icon=":material/error:")
    if not answer:
        return
    st.markdown(answer_markdown(answer.answer))
    if answer.still_reading:
        st.caption(f":material/hourglass_top: {answer_markdown(answer.still_reading)}")
        if answer.ask_again:
            st.button("Ask again when they are read", key=f"again_{answer.run_id}", icon=":material/schedule:",
                      on_click=ask_when_read, args=(ws, answer.question),
                      help="The pages that matter to this question are not read whole yet.")
    for citation in answer.citations:
        show_citation(ws, citation)
    first = f"first evidence after {answer.first_hop_s:.1f} s · " if answer.first_hop_s is not None else ""
    st.caption(f"{first}answered in {answer.total_s:.1f} s · {len(answer.hops)} hop(s) · "
               f"{sum(answer.tokens.values())} tokens · stop: {answer.stop_reason or 'answered'}")
    st.page_link("app_pages/traces.py", label="Open the trace", icon=":material/timeline:",
                 query_params={"run": answer.run_id})


def show_citation(ws: Workspace, citation: Citation) -> None:
    label = f" · {citation.evidence}" if citation.evidence else ""
    with st.expander(f"Cited page {citation.page} · {citation.file}{label}", icon=":material/description:"):
        if citation.text:
            st.markdown(f"> {answer_markdown(citation.text[:400])}")
        doc = ws.store.get(citation.doc_id) if citation.doc_id else None
        if doc is None:
            st.caption("This document has been deleted from the library.")
            return
        box = citation.bbox
        st.image(page_image(str(ws.store.pdf_path(doc.doc_id)), citation.page, dpi=100, highlight=box),
                 caption="The cited evidence is boxed in red." if box else None, width=720)


def evidence_title(events: list[HopEvent]) -> str:
    """The hop box's title once the run is over, the same live and redrawn, so the swap is not seen."""
    return f"Evidence · {sum(e.kind == 'hop_end' for e in events)} hop(s)"


def show_conversation(ws: Workspace, cid: str | None, live: LiveRun | None) -> None:
    for turn in conversations().turns(cid) if cid else []:
        with st.chat_message("user"):
            st.markdown(answer_markdown(turn.question))
        with st.chat_message("assistant"):
            if live and live.turn.n == turn.n:
                follow(ws, live)
            else:
                show_turn(ws, turn)
    if live:
        st.rerun()  # it is over: draw it from the conversation, with the input enabled again


def ask_when_read(ws: Workspace, question: str) -> None:
    """Ask this question again once the documents being read now are complete."""
    st.session_state.ask_when_read = (question, [d.doc_id for d in ws.store.documents() if d.stage != "complete"])


@st.fragment(run_every=2.0)
def waiting_to_ask(ws: Workspace) -> None:
    """The question waiting for pages to be read: asked as soon as they are."""
    if not (waiting := st.session_state.get("ask_when_read")):
        return
    question, doc_ids = waiting
    left = [d for d in ws.store.documents() if d.doc_id in doc_ids and d.stage != "complete"]
    if left:
        done, pages = sum(d.done_pages for d in left), sum(d.pages for d in left)
        st.info(f"“{question}” will be asked again once the pages are read ({done} of {pages}).",
                icon=":material/schedule:")
        return
    del st.session_state.ask_when_read
    st.session_state.ask_now = question
    st.rerun(scope="app")


def warm_up(ws: Workspace) -> None:
    """Run one search while the user types, once per session, so the first question's first hop shows
    at once: the router and the indexes of the documents there are now (an upload may have added
    some since the server started). The language model is loaded by the workspace's own warm-up."""
    if "warm_up" not in st.session_state:
        st.session_state.warm_up = threading.Thread(target=ws.search, args=("warm-up",), name="warm-up",
                                                    daemon=True)
        st.session_state.warm_up.start()


ws = workspace()
docs = ws.store.documents()
cid = open_conversation(ws)
title, delete = st.columns([6, 1], vertical_alignment="bottom")
title.title("Ask your reports")
if not docs:
    st.info("No documents yet. Upload a PDF report first, then come back to ask about it.", icon=":material/inbox:")
    st.page_link("app_pages/upload.py", label="Go to Upload", icon=":material/upload_file:")
    st.stop()
warm_up(ws)
if cid:
    delete.button("Delete", key="delete_conversation", icon=":material/delete:", on_click=delete_conversation, args=(ws, cid),
                  help="Delete this conversation (the traces of its runs stay)")
names = {d.doc_id: d.file for d in docs}
chosen = st.multiselect("Search in", list(names), format_func=names.get, placeholder="all documents")
live = live_runs().get(cid)
question = st.chat_input("Wait for the answer, or stop it" if live else "Ask a question about your reports",
                         disabled=live is not None) or (None if live else st.session_state.pop("ask_now", None))
if question and live:  # typed while the last question ran: one question at a time per conversation
    st.toast("Wait for the answer, or stop it, before asking again.", icon=":material/hourglass_top:")
elif question:
    if cid is None:
        cid = conversations().create(question)
        st.query_params[PARAM] = cid
    live = live_runs().start(ws, cid, question, session_settings().model_copy(deep=True), chosen or None)
waiting_to_ask(ws)
show_conversation(ws, cid, live)
