"""Entry point: `streamlit run streamlit_app.py`. A thin shell over rag.workspace.Workspace.

Every page has its own address: /chat (where / leads too), /upload, /traces, /evaluate; a saved
conversation is /chat?conversation=ID and a run's trace /traces?run=RUN_ID.
"""

import streamlit as st

from app_pages.common import sidebar, workspace
from app_pages.conversations import conversation_list


def home() -> None:
    """/ opens the chat at its own address, keeping the query (a conversation, say)."""
    st.switch_page(CHAT, query_params=st.query_params.to_dict())


st.set_page_config(page_title="Report RAG", page_icon=":material/description:", layout="wide")

CHAT = st.Page("app_pages/chat.py", title="Chat", icon=":material/forum:", url_path="chat")
page = st.navigation([
    st.Page(home, title="Home", url_path="home", default=True, visibility="hidden"),
    CHAT,
    st.Page("app_pages/upload.py", title="Upload", icon=":material/upload_file:"),
    st.Page("app_pages/traces.py", title="Traces", icon=":material/timeline:"),
    st.Page("app_pages/evaluate.py", title="Evaluate", icon=":material/analytics:"),
])
ws = workspace()
conversation_list(ws)
sidebar(ws)
page.run()
