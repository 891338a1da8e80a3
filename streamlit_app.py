"""Entry point: `streamlit run streamlit_app.py`. A thin shell over rag.workspace.Workspace."""

import streamlit as st

from app_pages.common import sidebar, workspace

st.set_page_config(page_title="Report RAG", page_icon=":material/description:", layout="wide")

page = st.navigation([
    st.Page("app_pages/chat.py", title="Chat", icon=":material/forum:", default=True),
    st.Page("app_pages/upload.py", title="Upload", icon=":material/upload_file:"),
    st.Page("app_pages/traces.py", title="Traces", icon=":material/timeline:"),
    st.Page("app_pages/evaluate.py", title="Evaluate", icon=":material/analytics:"),
])
sidebar(workspace())
page.run()
