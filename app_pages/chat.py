"""Chat: each hop appears live with its evidence; answers link to the pages they cite."""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Iterator

import streamlit as st
from llama_index.core.memory import Memory

from app_pages.common import page_image, render_event, session_settings, status_label, workspace
from rag.agent.events import HopEvent
from rag.agent.run import AgentAnswer, error_text
from rag.settings import Settings
from rag.ui_helpers import answer_markdown
from rag.workspace import Workspace


def run_agent(ws: Workspace, question: str, memory: Memory, doc_ids: list[str] | None, settings: Settings
              ) -> Iterator[HopEvent | AgentAnswer | Exception]:
    """The agent's events as they happen (it runs in a worker thread), then its answer or exception."""
    events: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            events.put(ws.ask(question, memory=memory, doc_ids=doc_ids, on_event=events.put, settings=settings))
        except Exception as exc:  # noqa: BLE001 - shown in the chat, never as a traceback
            events.put(exc)

    threading.Thread(target=work, name="agent", daemon=True).start()
    while isinstance(item := events.get(), HopEvent):
        yield item
    yield item


def answer_live(ws: Workspace, question: str, doc_ids: list[str] | None) -> dict:
    """Stream one answer into the current chat message; returns it as a chat history entry."""
    message = {"role": "assistant", "events": [], "answer": None, "error": None}
    with st.status("Starting the agent (the first question also loads the language model) …",
                   expanded=True) as status:
        for item in run_agent(ws, question, st.session_state.memory, doc_ids, session_settings()):
            if isinstance(item, HopEvent):
                message["events"].append(item)
                render_event(ws, item)
                if label := status_label(item):
                    status.update(label=label, expanded=True)  # an update without it collapses the box
            elif isinstance(item, AgentAnswer):
                message["answer"] = item
            else:
                message["error"] = error_text(item)
        status.update(state="error" if message["error"] else "complete", expanded=False)
    show_answer(ws, message)
    return message


def show_answer(ws: Workspace, message: dict) -> None:
    answer: AgentAnswer | None = message["answer"]
    if message["error"] or (answer and answer.error):
        st.error(f"Could not get an answer from the language model: {message['error'] or answer.error}", icon=":material/error:")
    if not answer:
        return
    st.markdown(answer_markdown(answer.answer))
    for citation in answer.citations:
        show_citation(ws, citation)
    first = f"first evidence after {answer.first_hop_s:.1f} s · " if answer.first_hop_s is not None else ""
    st.caption(f"{first}answered in {answer.total_s:.1f} s · {len(answer.hops)} hop(s) · "
               f"{sum(answer.tokens.values())} tokens · stop: {answer.stop_reason}")
    st.page_link("app_pages/traces.py", label="Open the trace", icon=":material/timeline:",
                 query_params={"run": answer.run_id})


def show_citation(ws: Workspace, citation: dict) -> None:
    with st.expander(f"Cited page {citation['page']} · {citation['file']}", icon=":material/description:"):
        prefix = citation["fragment_id"].split(":")[0]
        doc = next((d for d in ws.store.documents() if d.doc_id.startswith(prefix)), None)
        if doc is None:
            st.caption("This document has been deleted from the library.")
            return
        pdf = str(ws.store.pdf_path(doc.doc_id))
        st.image(page_image(pdf, citation["page"], dpi=100, highlight=tuple(citation["bbox"])),
                 caption="The cited fragment is highlighted in red.", width=720)


def show_history(ws: Workspace) -> None:
    for message in st.session_state.messages:
        with st.chat_message(message["role"]):
            if message["role"] == "user":
                st.markdown(answer_markdown(message["content"]))
                continue
            if message["events"]:
                with st.status(f"Evidence · {sum(e.kind == 'hop_end' for e in message['events'])} hop(s)",
                               state="error" if message["error"] else "complete"):
                    for event in message["events"]:
                        render_event(ws, event)
            show_answer(ws, message)


def warm_up_llm(ws: Workspace) -> None:
    """Load the language model while the user types, once per session (Workspace.llm is cached)."""
    if "llm_warm_up" not in st.session_state:
        st.session_state.llm_warm_up = threading.Thread(target=lambda: ws.llm, name="llm-warm-up", daemon=True)
        st.session_state.llm_warm_up.start()


def new_conversation() -> None:
    st.session_state.messages = []
    st.session_state.memory = Memory.from_defaults(session_id=uuid.uuid4().hex)


ws = workspace()
docs = ws.store.documents()
title, reset = st.columns([5, 1], vertical_alignment="bottom")
title.title("Ask your reports")
if not docs:
    st.info("No documents yet. Upload a PDF report first, then come back to ask about it.", icon=":material/inbox:")
    st.page_link("app_pages/upload.py", label="Go to Upload", icon=":material/upload_file:")
    st.stop()
warm_up_llm(ws)
if "messages" not in st.session_state:
    new_conversation()
reset.button("New conversation", icon=":material/restart_alt:", on_click=new_conversation)
names = {d.doc_id: d.file for d in docs}
chosen = st.multiselect("Search in", list(names), format_func=names.get, placeholder="all documents")

show_history(ws)
if question := st.chat_input("Ask a question about your reports"):
    st.session_state.messages.append({"role": "user", "content": question})
    with st.chat_message("user"):
        st.markdown(answer_markdown(question))
    with st.chat_message("assistant"):
        st.session_state.messages.append(answer_live(ws, question, chosen or None))
