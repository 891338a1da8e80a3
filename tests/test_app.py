"""The Streamlit pages driven by AppTest over a real store with a real PDF.

The chat tests use the scripted LLM only to stay fast; answer quality is the slow tests' job.
"""

from __future__ import annotations

import json
import threading
from urllib.parse import parse_qs

import pymupdf
import pytest
from conftest import EVAL, PEW, pages_of
from scripted_llm import QueuedLLM, ScriptedLLM, answered, done
from streamlit.testing.v1 import AppTest

from app_pages.common import conversations, live_runs, status_news, workspace
from rag.agent.events import HopEnd, HopStart, LLMCall, Waiting
from rag.trace import list_runs
from rag.ui.helpers import answer_markdown, crop_png, page_png
from rag.workspace import Workspace

QUESTION = "How do Latinos see their personal finances?"
PEW_CUT = pages_of(PEW, [4, 5, 10, 19])  # text, charts (p. 1-2) and tables (p. 3-4)


def _warmed() -> threading.Thread:
    """The warm-up's thread, as if done at once: what a caller joins."""
    thread = threading.Thread(target=lambda: None)
    thread.start()
    return thread


def open_workspace(data_dir, monkeypatch, embed_model):
    """Point the app's cached workspace at a temp store: the same factory the app calls."""
    monkeypatch.setenv("RAG_DATA_DIR", str(data_dir / "data"))
    monkeypatch.setenv("RAG_LOG_DIR", str(data_dir / "logs"))
    monkeypatch.setenv("RAG_EVAL_DIR", str(data_dir / "eval"))
    monkeypatch.setenv("RAG_EMBED_PROVIDER", "local")
    monkeypatch.delenv("CHROMA_HOST", raising=False)
    # The tests here give the app a scripted model: the warm-up must not load the real one meanwhile
    # (tests/test_workspace_warm_up.py and the browser tests check the warm-up itself).
    monkeypatch.setattr(Workspace, "warm_up", lambda self: _warmed())
    workspace.clear()
    live_runs.clear()
    ws = workspace()
    ws.embed_model = embed_model  # the session's model, already loaded
    return ws


@pytest.fixture
def empty_ws(tmp_path, monkeypatch, embed_model):
    yield open_workspace(tmp_path, monkeypatch, embed_model)
    workspace.clear()


@pytest.fixture(scope="module")
def pew_ws(tmp_path_factory, embed_model):
    with pytest.MonkeyPatch.context() as monkeypatch:
        ws = open_workspace(tmp_path_factory.mktemp("app"), monkeypatch, embed_model)
        assert ws.ingest(PEW_CUT, "pew-cut.pdf").outcome == "ingested"
        yield ws
    workspace.clear()


def app(page: str | None = None) -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def ask(ws, replies, question=QUESTION) -> AppTest:
    ws.llm = ScriptedLLM(replies=list(replies))
    at = app()
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at


def cited_page(ws) -> int:
    """A page the first hop will surely retrieve, so a scripted answer can cite it."""
    return ws.search(QUESTION).hits[0].fragment.page


def trace_link_run(at: AppTest) -> str:
    """The run id the last answer's "Open the trace" link names."""
    [link] = [x for x in at.chat_message[-1].get("page_link") if "run=" in x.proto.query_string]
    return parse_qs(link.proto.query_string)["run"][0]


def text_of(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in [*at.markdown, *at.caption])


# --- pages ---------------------------------------------------------------------------------


def test_sidebar_settings_are_each_sessions_own(empty_ws):
    at, other = app(), app()
    assert "qwen" in at.sidebar.markdown[0].value.lower() and "MiniLM" in at.sidebar.markdown[0].value
    assert at.sidebar.get("metric")[0].value == "0"
    at.sidebar.slider(key="max_hops").set_value(5).run()
    at.sidebar.slider(key="k_per_collection").set_value(9).run()
    at.sidebar.number_input(key="ratio_table").set_value(4).run()
    at.sidebar.toggle(key="hybrid").set_value(False).run()
    mine = at.session_state["settings"]
    assert (mine.agent.max_hops, mine.retrieval.k_per_collection, mine.retrieval.ratio["table"]) == (5, 9, 4)
    assert mine.retrieval.hybrid is False
    other.run()
    theirs, server = other.session_state["settings"], empty_ws.settings
    for settings in (theirs, server):  # another session, and the server's defaults, are untouched
        assert (settings.agent.max_hops, settings.retrieval.k_per_collection, settings.retrieval.ratio["table"]) == (3, 6, 2)
        assert settings.retrieval.hybrid is True
    assert other.sidebar.slider(key="max_hops").value == 3


def test_chat_without_documents_sends_the_user_to_upload(empty_ws):
    at = app()
    assert "No documents yet" in at.info[0].value
    assert at.get("page_link")[0].proto.page == "upload"
    assert not at.chat_input


def test_upload_reports_each_file_and_refuses_bad_ones_alone(empty_ws):
    at = app("app_pages/upload.py")
    at.file_uploader[0].set_value([("pew-cut.pdf", PEW_CUT, "application/pdf"),
                                   ("broken.pdf", b"%PDF-1.7 garbage", "application/pdf"),
                                   ("notes.pdf", b"just text", "application/pdf")]).run()
    assert not at.exception, at.exception
    [ok] = at.success
    assert "pew-cut.pdf" in ok.value and "4 pages" in ok.value and "text" in ok.value and " s" in ok.value
    assert sorted(e.value.split("**")[1] for e in at.error) == ["broken.pdf", "notes.pdf"]
    assert [d.file for d in empty_ws.store.documents()] == ["pew-cut.pdf"]
    assert at.sidebar.get("metric")[0].value == "1"
    assert at.image, "the library shows a page thumbnail"

    at.file_uploader[0].set_value(("again.pdf", PEW_CUT, "application/pdf")).run()
    assert "already in the library" in at.info[0].value

    at.button(key=f"delete_{empty_ws.store.documents()[0].doc_id}").click().run()
    assert empty_ws.store.documents() == [] and "No documents yet" in text_of(at)


def test_upload_names_a_failed_step_and_keeps_the_document(empty_ws, monkeypatch):
    import rag.ingest

    def boom(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(rag.ingest, "find_page_tables", boom)
    at = app("app_pages/upload.py")
    at.file_uploader[0].set_value(("pew-cut.pdf", PEW_CUT, "application/pdf")).run()
    assert not at.exception, at.exception
    assert "pew-cut.pdf" in at.success[0].value and "searchable after" in at.success[0].value
    [doc] = empty_ws.store.documents()
    wait_until_read(empty_ws, doc.doc_id)  # by the worker the app hosts
    at.run()
    warned = [c.value for c in at.caption]
    assert any("page 3: table extraction failed (ValueError: boom)" in w for w in warned), warned
    assert any("complete" in m.value for m in at.markdown), "the library shows the stage"


def test_the_library_shows_a_notes_figures_by_year_apart_from_the_statements(empty_ws):
    netflix = EVAL / "fin" / "pdfs" / "NETFLIX_2015_10K.pdf"
    assert empty_ws.ingest(pages_of(netflix, [40, 47]), "netflix-notes.pdf").outcome == "ingested"
    at = app("app_pages/upload.py")
    [said] = [e for e in at.expander if "by year read from sentences" in e.label]
    table = said.dataframe[0].value
    row = table[table["figure"] == "Advertising expenses"].iloc[0]
    assert (row["page"], row["unit"], row["2015"]) == (2, "$ million", "714.3")
    [statements] = [e for e in at.expander if "statement page" in e.label]
    assert "sentence" not in " ".join(c.value for c in statements.caption)


def wait_until_read(ws, doc_id: str, timeout: float = 120) -> None:
    import time

    deadline = time.time() + timeout
    while (info := ws.store.get(doc_id)).stage != "complete":
        assert time.time() < deadline and not info.error, info
        time.sleep(0.2)


def test_the_library_shows_a_documents_charts_and_tables_as_data(pew_ws):
    """(After the empty store's tests: the app caches one workspace, and theirs would replace this one.)
    pew-cut read to complete: its charts (pp. 1-2) and its ruled tables (pp. 3-4), each as rows by column."""
    at = app("app_pages/upload.py")
    labels = [e.label for e in at.expander]
    assert any("charts read as data" in label for label in labels), labels
    [tables] = [e for e in at.expander if "table" in e.label and "read as data" in e.label and "statement" not in e.label]
    assert tables.dataframe and all(c.value.startswith("p. ") for c in tables.caption)


def test_chat_shows_hops_the_pages_read_then_a_cited_answer(pew_ws):
    at = ask(pew_ws, answered())
    user, bot = at.chat_message
    assert user.markdown[0].value == QUESTION
    [status], [citation] = bot.status, bot.expander
    assert status.caption[0].value.startswith("Route: "), "the path the question takes comes first"
    assert "Hop 1" in status.markdown[0].value and "score" in status.caption[2].value
    assert "fragments" in status.caption[1].value and "ms" in status.caption[1].value
    assert any("LLM (read page)" in c.value and "tokens" in c.value for c in status.caption)
    tables = [df.value for df in status.table]
    assert any(len(df) == 1 for df in tables), "a table row is a one-row table under its header"
    assert any("2008" in df.columns or "Sample size" in df.columns for df in tables)
    assert status.image, "a figure hit shows its crop"
    [read] = [m.value for m in status.markdown if "Read p." in m.value]
    assert "read_free" in read and "the answer:" in read, "the page read and what the model found there"
    [answer] = [m.value for m in bot.markdown if "[p. " in m.value and "Read p." not in m.value]
    page = int(answer.split("[p. ")[1].split("]")[0])
    assert f"Read p. {page}" in read and citation.label.startswith(f"Cited page {page} ·") and citation.image

    at.run()  # a rerun draws the conversation from session state: same evidence, same answer
    [status], [citation] = at.chat_message[1].status, at.chat_message[1].expander
    assert status.label == "Evidence · 1 hop(s)" and status.table and citation.image
    assert any("cited" in c.value for c in status.caption), "the cited fragment is marked"


def test_a_cell_looked_up_by_code_shows_its_program_and_the_cell_it_read(pew_ws):
    """No model call (the scripted model has no reply): the table's cell, its program and its input row."""
    at = ask(pew_ws, [], "What was the total sample size of Latinos in the survey?")
    [status] = at.chat_message[1].status
    assert any("value(table, row='Total Latinos'" in c.value for c in status.code)
    [cells] = [df.value for df in status.table if "input" in df.value.columns]
    assert list(cells["printed"]) == ["1,500"] and list(cells["page"]) == ["p. 4"]


def test_a_failing_model_is_a_chat_message_not_a_traceback(pew_ws):
    at = ask(pew_ws, [TimeoutError("model timed out")] * 3)
    [error] = at.chat_message[1].error
    assert "timed out" in error.value and not at.exception
    assert "language model failed" in at.chat_message[1].markdown[-1].value


def test_each_session_asks_with_its_own_settings_and_the_trace_records_them(pew_ws):
    pew_ws.llm = ScriptedLLM(replies=[*answered(), *answered()])
    one, two = app(), app()
    one.sidebar.slider(key="max_hops").set_value(1).run()
    one.sidebar.toggle(key="hybrid").set_value(False).run()
    one.chat_input[0].set_value(QUESTION).run()
    two.chat_input[0].set_value(QUESTION).run()
    assert not one.exception and not two.exception
    runs = {r.run_id: r for r in list_runs(pew_ws.settings.trace_dir)}
    first, second = (runs[trace_link_run(at)] for at in (one, two))
    assert (first.settings["agent"]["max_hops"], first.settings["retrieval"]["hybrid"]) == (1, False)
    assert (second.settings["agent"]["max_hops"], second.settings["retrieval"]["hybrid"]) == (3, True)
    assert pew_ws.settings.agent.max_hops == 3 and pew_ws.settings.retrieval.hybrid is True


def test_traces_list_runs_and_show_detail_timeline_and_compare(pew_ws):
    ask(pew_ws, answered())
    ask(pew_ws, answered(), question="What about their children?")
    at = app("app_pages/traces.py")
    runs = at.dataframe[0].value
    assert list(runs["question"][:2]) == ["What about their children?", QUESTION]
    assert {"time", "hops", "latency (s)", "tokens", "status"} <= set(runs.columns)
    charts = at.get("plotly_chart")
    assert len(charts) == 3, "one timeline in the detail, two in the comparison"
    assert at.expander[1].label == "Before the first search", "the route, before any hop"
    assert at.expander[2].label.startswith("Hop 1") and at.get("download_button")


def test_traces_show_each_runs_settings_and_the_comparison_diffs_them(pew_ws):
    fewer = pew_ws.settings.model_copy(deep=True)
    fewer.agent.max_hops, fewer.retrieval.hybrid = 2, False
    pew_ws.llm = ScriptedLLM(replies=[*answered(), *answered()])
    pew_ws.ask(QUESTION)
    pew_ws.ask(QUESTION, settings=fewer)
    at = app("app_pages/traces.py")
    assert not at.exception, at.exception
    assert at.expander[0].label == "Settings of this run"
    shown = at.dataframe[1].value  # the runs table, then the detail's settings
    assert dict(zip(shown["setting"], shown["value"]))["agent.max_hops"] == "2"
    diff = at.dataframe[-1].value
    assert {r["setting"]: (r["first run"], r["second run"]) for _, r in diff.iterrows()} == {
        "agent.max_hops": ("2", "3"), "retrieval.hybrid": ("False", "True")}


def write_run(ws, name: str, mode: str, hops: int | None, correct: list[bool]) -> None:
    """A results folder as `rag eval` writes it, over questions whose traces are real runs."""
    from rag.eval.answers import failure, summarize
    from rag.eval.report import write_reports

    traces = sorted(ws.settings.trace_dir.glob("*.jsonl"))
    rows = []
    for n, ok in enumerate(correct):
        row = {"n": n, "question": f"Question {n}?", "gold": "42", "format": "Int", "sources": ["table"],
               "pages": [3], "unanswerable": False, "answer": "42 [p. 3]" if ok else "41", "short_answer": "",
               "correct": ok, "correct_prose": ok, "retrieval_hit": True, "evidence_in_context": True,
               "coverage": {"table": True}, "seconds": 10.0 * (hops or 1), "first_hop_s": 0.1, "hops": hops or 1,
               "tokens": {"prompt": 900, "completion": 20}, "stop": "answered", "error": None,
               "trace": str(traces[n % len(traces)])}
        row["failure"] = failure(row)
        rows.append(row)
    out = ws.settings.eval_dir / name
    out.mkdir(parents=True)
    summary = {"mode": mode, "max_hops": hops, "model": "test", "qa": "qa.json", **summarize(rows)}
    (out / "results.json").write_text(json.dumps(summary))
    (out / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    write_reports(out, summary, rows)


def test_evaluate_compares_modes_and_the_hop_ablation_and_links_traces(pew_ws):
    ask(pew_ws, answered())
    write_run(pew_ws, "single-pass", "single-pass", None, [True, False, False])
    write_run(pew_ws, "agent-hops1", "agent", 1, [True, False, False])
    write_run(pew_ws, "agent-hops2", "agent", 2, [True, True, False])
    at = app("app_pages/evaluate.py")
    assert len(at.get("plotly_chart")) == 2, "accuracy by source and mode, and the hop ablation"
    table = "\n".join(m.value for m in at.markdown)
    assert "| single-pass | 3 | 33% |" in table and "| agent, max 2 hops | 3 | 67% |" in table
    questions = at.dataframe[0].value
    assert list(questions["correct"]) in ([True, False, False], [True, True, False])
    link = questions["trace"][0]
    assert link.startswith("traces?trace=") and link.endswith(".jsonl")

    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["trace"] = link.split("=", 1)[1]
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception, at.exception
    assert at.get("plotly_chart") and "Hop 1" in at.expander[2].label


@pytest.mark.slow
def test_evaluate_runs_a_small_eval_on_the_stored_documents_with_the_real_model(pew_ws):
    from rag.models.gguf import ensure_gguf
    from rag.models.llm import LocalLlamaCpp

    pew_ws.llm = LocalLlamaCpp(ensure_gguf(pew_ws.settings.llm.model_dir), max_tokens=200)
    question = {"doc_id": "pew-cut.pdf", "question": "How do Latinos see their personal finances?",
                "answer": "Not answerable", "answer_format": "None", "evidence_pages_1based": [],
                "evidence_sources": [], "unanswerable": True}
    other = {**question, "doc_id": "not-in-the-store.pdf"}
    at = app("app_pages/evaluate.py")
    at.file_uploader[0].set_value(("qa.json", json.dumps([other, question]).encode(), "application/json")).run()
    at.selectbox[0].set_value("single-pass")
    at.button[0].click().run(timeout=300)
    assert not at.exception, at.exception
    assert "Done: results in" in at.success[0].value
    [summary] = [json.loads(p.read_text()) for p in pew_ws.settings.eval_dir.glob("app-qa-single-pass/results.json")]
    assert summary["questions"] == 1 and summary["mode"] == "single-pass", "only the stored document's question"


def test_a_trace_link_outside_the_app_folders_is_refused(pew_ws, tmp_path):
    outside = tmp_path / "secret.jsonl"
    outside.write_text("{}")
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["trace"] = str(outside)
    at.switch_page("app_pages/traces.py").run()
    assert "not in this app's trace or evaluation folders" in at.warning[0].value


# --- conversations (last in the module: the restart test drops the app's cached workspace) -----------


def test_a_conversation_is_listed_followed_up_and_its_link_reopens_it(pew_ws, monkeypatch):
    pew_ws.llm = ScriptedLLM(replies=[done(), *answered(), done(), *answered()])
    monkeypatch.setattr(pew_ws.settings.agent, "low_score", 0.0)  # no paraphrase: only the scripted replies
    monkeypatch.setattr(pew_ws.settings.agent, "sufficiency_check", "react")  # the follow-up's ReAct step sees history
    at = app()
    at.chat_input[0].set_value(QUESTION).run()
    cid = at.query_params["conversation"]
    at.chat_input[0].set_value("And their children?").run()
    assert not at.exception, at.exception
    assert QUESTION in pew_ws.llm.prompts[2] and "[p." in pew_ws.llm.prompts[2], "a follow-up sees the earlier turn"
    assert [m.markdown[0].value for m in at.chat_message[::2]] == [QUESTION, "And their children?"]
    listed = [x for x in at.sidebar.get("page_link") if f"conversation={cid}" in x.proto.query_string]
    assert listed and QUESTION[:40] in listed[0].proto.label
    assert conversations().get(cid).turns == 2

    reloaded = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    reloaded.query_params["conversation"] = cid
    reloaded.switch_page("app_pages/chat.py").run()  # a new session: a reload, or a colleague's link
    assert shown_turns(reloaded) == shown_turns(at)


def test_reopening_a_conversation_while_its_question_runs_follows_it_and_stop_ends_it(pew_ws):
    import threading

    from rag.models.queue import ModelQueue

    queue = ModelQueue()
    other = queue.turn()
    other.__enter__()  # another question holds the model: this one waits in the queue
    pew_ws.llm = QueuedLLM(replies=answered(), queue=queue)
    cid = conversations().create(QUESTION)
    live = live_runs().start(pew_ws, cid, QUESTION, pew_ws.settings)
    threading.Timer(3.0, live.stop).start()  # the Stop button's callback, from another session
    at = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    at.query_params["conversation"] = cid
    at.switch_page("app_pages/chat.py").run()
    assert not at.exception, at.exception
    other.__exit__(None, None, None)
    [turn] = conversations().turns(cid)
    kinds = [e["kind"] for e in turn.events]
    assert turn.status == "stopped" and kinds[1] == "waiting" and kinds[-2:] == ["stop", "answer"]
    assert turn.events[1]["ahead"] == 1 and pew_ws.llm.prompts == []
    assert "Stopped before an answer was written." in at.chat_message[1].markdown[-1].value


def test_a_conversation_survives_a_restart_and_can_be_deleted(pew_ws):
    pew_ws.llm = ScriptedLLM(replies=answered())
    at = app()
    at.chat_input[0].set_value(QUESTION).run()
    cid, before = at.query_params["conversation"], shown_turns(at)
    workspace.clear()  # a restart: the store, the conversations and the live runs are opened anew
    live_runs.clear()
    after = AppTest.from_file("../streamlit_app.py", default_timeout=60)
    after.query_params["conversation"] = cid
    after.switch_page("app_pages/chat.py").run()
    assert workspace() is not pew_ws and shown_turns(after) == before
    after.button(key="delete_conversation").click().run()
    assert conversations().get(cid) is None and "conversation" not in after.query_params
    assert not after.chat_message


def shown_turns(at: AppTest) -> list[tuple]:
    """What the chat shows of each message: its text, its hop box's title and its trace link."""
    shown = []
    for message in at.chat_message:
        links = [x.proto.query_string for x in message.get("page_link")]
        shown.append((message.markdown[0].value if message.markdown else "", [s.label for s in message.status],
                      message.markdown[-1].value if message.markdown else "", links))
    return shown


# --- helpers -------------------------------------------------------------------------------


def test_answer_markdown_marks_missing_and_keeps_dollars():
    assert answer_markdown("$5 then <missing>") == r"\$5 then :red-background[missing]"


def test_highlighted_page_has_red_where_the_bbox_is(tmp_path):
    pdf = tmp_path / "a.pdf"
    doc = pymupdf.open()
    doc.new_page(width=200, height=200).insert_text((20, 40), "hello")
    doc.save(pdf)
    png = pymupdf.Pixmap(page_png(pdf, 1, dpi=72, highlight=(50, 50, 150, 150)))
    assert png.pixel(50, 100)[:3] != (255, 255, 255) and png.pixel(190, 190)[:3] == (255, 255, 255)
    crop = pymupdf.Pixmap(crop_png(pdf, 1, (20, 20, 120, 70), dpi=72, pad=0))
    assert (crop.width, crop.height) == (100, 50)


def test_the_status_title_keeps_the_queue_place_beside_the_hops_news_until_the_model_answers():
    # A run says its place at once, then searches: its hop's news must not hide the wait.
    news = [Waiting(hop=0, ahead=2), HopStart(hop=1, query="q", modality="auto"),
            HopEnd(hop=1, query="q", modality="auto")]
    label, queue = status_news(news, "Starting …", "")
    assert label.startswith("Hop 1: 0 fragments found")
    assert queue == "Waiting for the model — 2 questions ahead"
    label, queue = status_news([Waiting(hop=1, ahead=0, waited_s=3.2)], label, queue)
    assert queue == "The model is reading your question (waited 3 s)"
    assert status_news([LLMCall(hop=1)], label, queue) == (label, "")
