"""Bad uploads through the library, the CLI and the app: one clear message each, the store and
the other documents unchanged, the app still answering. And a kill -9 in the middle of ingest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pymupdf
import pytest
from conftest import PDFS, PEW, ROOT, local_settings, pages_of
from test_cli import rag

from rag.records import MODALITIES
from rag.store import Store
from rag.workspace import Workspace

GOOD = pages_of(PEW, [4, 5])
ZERO_PAGES = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
              b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")


def locked_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "confidential quarterly revenue grew by 17 percent in the north region")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="open-sesame", owner_pw="owner-pw")


def scanned_pdf() -> bytes:
    """A real page rendered to pixels and put back as an image: no text layer at all."""
    src = pymupdf.open(PDFS / PEW)
    pix = src[3].get_pixmap(dpi=60)
    doc = pymupdf.open()
    doc.new_page(width=pix.width, height=pix.height).insert_image(pymupdf.Rect(0, 0, pix.width, pix.height), pixmap=pix)
    return doc.tobytes()


BAD = {
    "corrupt.pdf": (b"%PDF-1.7\n" + b"\x00garbage" * 300, "corrupt"),
    "locked.pdf": (locked_pdf(), "encrypted and needs a password"),
    "zero.pdf": (ZERO_PAGES, "no pages"),
    "scan.pdf": (scanned_pdf(), "no text layer"),  # with OCR off; tests/test_ocr.py reads it with OCR on
    "photo.pdf": (b"\x89PNG\r\n\x1a\n" + b"\x00" * 500, "not a PDF"),
    "empty.pdf": (b"", "empty"),
    "huge.pdf": ((PDFS / PEW).read_bytes(), "over the 1 MB limit"),
}


def snapshot(ws: Workspace) -> tuple:
    return ({m: ws.store.count(m) for m in MODALITIES}, [d.doc_id for d in ws.store.documents(include_indexing=True)],
            sorted(p.name for p in ws.store.files.rglob("*") if p.is_file()))


@pytest.fixture
def one_doc_ws(tmp_path, embed_model):
    settings = local_settings(tmp_path / "data")
    settings.ingest.max_file_mb = 1
    settings.ingest.ocr = "off"
    ws = Workspace(settings, embed_model=embed_model)
    assert ws.ingest(GOOD, "good.pdf").outcome == "ingested"
    return ws


@pytest.mark.parametrize("name", list(BAD))
def test_library_refuses_each_bad_file_alone(one_doc_ws, name):
    data, message = BAD[name]
    before = snapshot(one_doc_ws)
    report = one_doc_ws.ingest(data, name)
    assert report.outcome == "error" and message in report.error and "\n" not in report.error
    assert snapshot(one_doc_ws) == before
    assert one_doc_ws.search("upward mobility for their children").hits, "the other document still answers"


def test_an_encrypted_pdf_goes_in_with_its_password_and_renders(one_doc_ws):
    wrong = one_doc_ws.ingest(locked_pdf(), "locked.pdf", password="guess")
    assert wrong.outcome == "error" and wrong.error == "the password is wrong"
    report = one_doc_ws.ingest(locked_pdf(), "locked.pdf", password="open-sesame")
    assert report.outcome == "ingested"
    assert one_doc_ws.search("quarterly revenue north region").hits[0].fragment.file == "locked.pdf"
    with pymupdf.open(one_doc_ws.store.pdf_path(report.doc_id)) as kept:
        assert not kept.needs_pass, "kept unlocked so pages can be shown without asking again"


@pytest.mark.parametrize(("raw", "shown"), [("../../etc/evil.pdf", "evil.pdf"), ("отчёт 年报 2023.pdf", "отчёт 年报 2023.pdf"),
                                            ("..\\..\\win.pdf", "win.pdf")])
def test_odd_names_stay_inside_the_store_and_keep_their_script(tmp_path, embed_model, raw, shown):
    ws = Workspace(local_settings(tmp_path / "data"), embed_model=embed_model)
    report = ws.ingest(GOOD, raw)
    assert report.outcome == "ingested" and report.file == shown
    assert [d.file for d in ws.store.documents()] == [shown]
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and tmp_path / "data" not in p.parents]
    assert outside == []


def test_cli_reports_each_bad_file_and_keeps_going(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for name, (data, _) in BAD.items():
        (folder / name).write_bytes(data)
    (folder / "good.pdf").write_bytes(GOOD)
    proc = rag(tmp_path / "store", "ingest", *sorted(str(p) for p in folder.iterdir()), "--json", check=False,
               env={"RAG_MAX_FILE_MB": "1", "RAG_OCR": "off"})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    reports = {d["file"]: d for d in json.loads(proc.stdout)["documents"]}
    assert reports["good.pdf"]["outcome"] == "ingested"
    for name, (_, message) in BAD.items():
        assert reports[name]["outcome"] == "error" and message in reports[name]["error"], name
    docs = json.loads(rag(tmp_path / "store", "docs", "--json").stdout)["documents"]
    assert [d["file"] for d in docs] == ["good.pdf"]
    unlocked = rag(tmp_path / "store", "ingest", str(folder / "locked.pdf"), "--password", "open-sesame", "--json")
    assert json.loads(unlocked.stdout)["documents"][0]["outcome"] == "ingested"


def test_a_killed_ingest_leaves_no_half_document_and_can_be_redone(tmp_path):
    """SIGKILL while the document's records are going in: the next process sees it searchable (never half
    of a stage), and ingesting it again reads it to complete."""
    data_dir = tmp_path / "data"
    pdf = tmp_path / "big.pdf"
    pdf.write_bytes(pages_of(PEW, list(range(1, 21))))
    env = {**os.environ, "RAG_EMBED_PROVIDER": "local", "PYTHONPATH": str(ROOT)}
    env.pop("CHROMA_HOST", None)
    proc = subprocess.Popen([sys.executable, "-m", "rag", "--store", str(data_dir), "ingest", str(pdf), "--wait", "complete"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not _mid_write(data_dir):  # the embedded records are going in
        assert proc.poll() is None and time.time() < deadline, \
            f"ingest ended before it could be killed: {proc.stderr.read()[-2000:] if proc.poll() else ''}"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    from rag.embed import local_minilm

    store = Store(local_settings(data_dir), local_minilm())  # a restart: recovery runs on open
    [doc] = store.documents(include_indexing=True)
    assert doc.stage in ("searchable", "vectors") and doc.pages_left() and not doc.error
    assert store.fragments("text", doc.doc_id), "found by keyword meanwhile"
    out = json.loads(rag(data_dir, "ingest", str(pdf), "--wait", "complete", "--json").stdout)["documents"][0]
    assert out["outcome"] == "ingested" and out["stage"] == "complete" and out["pages"] == 20
    docs = json.loads(rag(data_dir, "docs", "--json").stdout)["documents"]
    assert len(docs) == 1 and docs[0]["fragments"] == out["fragments"] and docs[0]["stage"] == "complete"
    fresh = json.loads(rag(tmp_path / "fresh", "ingest", str(pdf), "--wait", "complete", "--json").stdout)
    assert fresh["documents"][0]["fragments"] == out["fragments"], "as if it had never been killed"


def _mid_write(data_dir) -> bool:
    from rag.store import make_client

    if not (data_dir / "chroma").exists():
        return False
    try:
        return make_client(local_settings(data_dir)).get_collection("text").count() > 0
    except Exception:  # not created yet, or busy
        return False


def test_app_upload_shows_one_message_per_bad_file_then_unlocks_and_still_answers(tmp_path, monkeypatch, embed_model):
    from scripted_llm import ScriptedLLM
    from test_app import app, open_workspace

    from app_pages.common import workspace

    monkeypatch.setenv("RAG_MAX_FILE_MB", "1")
    monkeypatch.setenv("RAG_OCR", "off")
    ws = open_workspace(tmp_path, monkeypatch, embed_model)
    try:
        at = app("app_pages/upload.py")
        at.file_uploader[0].set_value([(name, data, "application/pdf") for name, (data, _) in BAD.items()]
                                      + [("good.pdf", GOOD, "application/pdf")]).run()
        assert not at.exception, at.exception
        errors = {e.value.split("**")[1]: e.value for e in at.error}
        assert set(errors) == set(BAD)
        for name, (_, message) in BAD.items():
            assert message in errors[name] and "Traceback" not in errors[name]
        assert [d.file for d in ws.store.documents()] == ["good.pdf"]

        at.text_input[0].set_value("guess")
        at.button[0].click().run()
        assert any("the password is wrong" in e.value for e in at.error)
        at.text_input[0].set_value("open-sesame")
        at.button[0].click().run()
        assert not at.exception, at.exception
        assert sorted(d.file for d in ws.store.documents()) == ["good.pdf", "locked.pdf"]

        ws.llm = ScriptedLLM(replies=['{"found": true, "answer": "the north region"}'] * 2)  # checked on each page read
        at.switch_page("app_pages/chat.py").run()
        at.chat_input[0].set_value("In which region did revenue grow?").run()
        assert not at.exception
        [answer] = [m.value for m in at.chat_message[1].markdown if "[p. " in m.value and "Read p." not in m.value]
        assert "north region" in answer.lower(), answer
        assert "locked.pdf" in at.chat_message[1].expander[0].label
    finally:
        workspace.clear()
