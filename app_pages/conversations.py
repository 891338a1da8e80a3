"""Saved conversations in the sidebar: open one, start a new one, delete the open one.

A conversation's link is /chat?conversation=ID: a reload, a restart or a colleague opening the link
shows the same questions, hop boxes, answers and trace links.
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from app_pages.common import conversations, live_runs
from rag.workspace import Workspace

PARAM = "conversation"
CHAT = "app_pages/chat.py"


def open_conversation(ws: Workspace) -> str | None:
    """The conversation the URL names, if it exists."""
    cid = st.query_params.get(PARAM)
    return cid if cid and conversations().get(cid) else None


def conversation_list(ws: Workspace, limit: int = 15) -> None:
    with st.sidebar:
        st.subheader("Conversations")
        st.page_link(CHAT, label="New conversation", icon=":material/add_comment:")
        current = st.query_params.get(PARAM)
        for info in conversations().list(limit):
            when = datetime.fromtimestamp(info.updated).strftime("%d %b %H:%M")
            st.page_link(CHAT, label=f"{info.title}  \n:gray[{when} · {info.turns} question(s)]",
                         icon=":material/chat:" if info.id != current else ":material/chat_bubble:",
                         query_params={PARAM: info.id}, disabled=info.id == current)


def delete_conversation(ws: Workspace, cid: str) -> None:
    """Stop its running question, if any, and delete it with all its turns (their traces stay)."""
    if live := live_runs().get(cid):
        live.stop()
    conversations().delete(cid)
    st.query_params.pop(PARAM, None)
