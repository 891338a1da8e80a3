"""A document's stages on a real store: searchable from its text layer, then vectors, then complete, with the
same fragments as one whole parse; enrichment that fails keeps the searchable stage and can be retried."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
import time

from conftest import BESTBUY, PEW, ROOT, local_settings, pages_of

from rag.ingest import parse_pdf
from rag.pipeline import worker as queue_worker
from rag.pipeline.priority import asking, give_way
from rag.records import MODALITIES, TEXT_ONLY
from rag.store import PAGES
from rag.workspace import Workspace

STATEMENTS = pages_of(BESTBUY, list(range(37, 47)))  # ten pages: parsed by the worker processes, four at a time


def stored(ws: Workspace, doc_id: str) -> dict[str, dict[str, str]]:
    """Every record of a document, by collection: id → text."""
    return {name: {n.node_id: n.get_content() for n in ws.store.nodes(name, doc_ids=[doc_id])}
            for name in (*MODALITIES, PAGES)}


def test_a_document_is_searchable_by_keyword_at_once_then_complete_as_one_whole_parse(tmp_path, embed_model):
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    report = ws.ingest(STATEMENTS, "statements.pdf", wait="searchable")
    assert report.outcome == "ingested" and report.stage == "searchable" and report.fragments["table"] == 0
    info = ws.store.get(report.doc_id)
    assert info.page_states == TEXT_ONLY * 10 and info.stage_seconds["searchable"] > 0
    assert "pages 1–10 of statements.pdf are still being read (tables, charts)" == info.still_reading()
    assert ws.store.count("text") == 0, "nothing is embedded yet"
    hits = ws.search("total current liabilities", modality="text").hits
    assert hits and hits[0].fragment.doc_id == report.doc_id and 0 < hits[0].score <= 1, "keyword search, scored"

    seen = []

    def watch() -> None:  # enrichment gives way between steps: a look at the store each time
        seen.append(ws.store.get(report.doc_id).stage)
        if seen[-1] == "vectors" and seen.count("vectors") == 1:
            seen.append(len(ws.search("merchandise inventories", modality="text").hits))

    ws.enrich(report.doc_id, give_way=watch)
    assert seen[0] == "searchable" and "vectors" in seen and seen[seen.index("vectors") + 1] > 0
    done = ws.store.get(report.doc_id)
    assert done.stage == "complete" and not done.pages_left() and done.version == 2
    assert done.stage_seconds["searchable"] <= done.stage_seconds["vectors"] <= done.stage_seconds["complete"]

    whole = parse_pdf(STATEMENTS, "statements.pdf", ws.settings.ingest)
    records = stored(ws, report.doc_id)
    for modality in MODALITIES:
        assert records[modality] == {f.id: f.text for f in whole.fragments if f.modality == modality}, modality
        assert done.fragments[modality] == len(records[modality])
    assert len(records[PAGES]) == sum(bool(t.strip()) for t in whole.search_texts.values())
    assert [t.table_id for t in ws.store.tables(report.doc_id)] == [t.table_id for t in whole.tables]
    assert ws.store.page_texts(report.doc_id, list(range(1, 11))) == whole.page_texts
    assert not (ws.store.files / "pending" / f"{report.doc_id}.json").exists()


def test_reading_that_fails_keeps_the_searchable_stage_says_why_and_can_be_retried(tmp_path, embed_model):
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    pdf = pages_of(PEW, [4, 5])
    report = ws.ingest(pdf, "pew.pdf", wait="searchable")
    kept = ws.store.pdf_path(report.doc_id)
    kept.unlink()  # the stored copy is gone (a disk error, a cleaned folder): reading it fails for real
    report = ws.ingest(pdf, "pew.pdf")  # asked to complete: it resumes, and fails
    assert report.outcome == "error" and report.stage == "searchable" and "FileNotFoundError" in report.error
    info = ws.store.get(report.doc_id)
    assert info.stage == "searchable" and "FileNotFoundError" in info.error and info.visible
    assert ws.search("personal finances", modality="text").hits, "still searchable"
    assert ws.store.unfinished() == [], "a failed document waits for a retry, not for a restart"

    kept.write_bytes(pdf)
    queue_worker.retry(ws, report.doc_id)  # the Retry button: the error is cleared and the document queued
    assert ws.store.get(report.doc_id).error is None
    worker = queue_worker.Worker(ws)
    threading.Thread(target=worker.run, kwargs={"idle_exit_s": 1.0}, daemon=True).start()
    deadline = time.time() + 120
    while (info := ws.store.get(report.doc_id)).stage != "complete":
        assert time.time() < deadline and not info.error, info
        time.sleep(0.2)
    assert ws.store.get(report.doc_id).fragments["image_caption"] > 0


def test_a_deleted_document_being_read_leaves_nothing_behind(tmp_path, embed_model):
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    report = ws.ingest(STATEMENTS, "statements.pdf", wait="searchable")
    calls = []

    def delete_midway() -> None:
        calls.append(1)
        if len(calls) == 3:
            ws.store.delete(report.doc_id)

    try:
        ws.enrich(report.doc_id, give_way=delete_midway)
    except Exception as exc:  # noqa: BLE001
        assert "deleted while it was being read" in str(exc)
    assert ws.store.get(report.doc_id) is None
    assert all(ws.store.count(name) == 0 for name in (*MODALITIES, PAGES))
    assert not [p for p in ws.store.files.rglob("*") if report.doc_id in p.name]


def test_enrichment_gives_way_while_a_question_runs_in_another_process(tmp_path):
    """A real lock between two processes: give_way returns only after the question's process let go."""
    done = tmp_path / "released"
    script = (f"import time, pathlib; from rag.pipeline.priority import asking\n"
              f"with asking(pathlib.Path({str(tmp_path)!r})):\n"
              f"    print('asking', flush=True); time.sleep(1.5)\n"
              f"    pathlib.Path({str(done)!r}).write_text('x')\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "asking"
    give_way(tmp_path)
    assert done.exists(), "enrichment went on while the question ran"
    proc.wait()


def test_a_question_holds_the_lock_enrichment_waits_for(tmp_path, embed_model):
    from scripted_llm import ScriptedLLM

    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    ws.ingest(pages_of(PEW, [4]), "pew.pdf", wait="searchable")
    probes = []

    def probe(prompt: str) -> str:
        with open(tmp_path / "asking.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                probes.append("free")
            except BlockingIOError:
                probes.append("held")
        return '{"found": false, "line": "", "answer": ""}'

    ws.llm = ScriptedLLM(replies=[probe] * 6)
    answer = ws.ask("How do Latinos rate their personal finances?")
    assert probes and set(probes) == {"held"}
    assert answer.still_reading.startswith("Page 1 of pew.pdf is still being read")
    with asking(tmp_path):
        pass  # and it is free again afterwards: the shared lock can be taken and dropped
