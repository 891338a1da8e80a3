"""The real Chroma store: idempotent ingest, delete, model mismatch, rollback, crash recovery."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import PEW, ROOT, local_settings, pages_of
from llama_index.core.embeddings import MockEmbedding

from rag.pipeline.progress import IngestEstimate
from rag.records import MODALITIES
from rag.store import _OWNER, EmbeddingMismatchError, Store
from rag.workspace import Workspace

SMALL = pages_of(PEW, [3, 4, 5, 6])


def _counts(ws: Workspace) -> dict[str, int]:
    return {m: ws.store.count(m) for m in MODALITIES}


def test_ingest_keeps_the_pdf_and_counts_match_the_collections(workspace):
    report = workspace.ingest(SMALL, PEW)
    assert report.outcome == "ingested" and report.pages == 4
    assert _counts(workspace) == report.fragments
    assert workspace.store.pdf_path(report.doc_id).read_bytes() == SMALL
    [doc] = workspace.store.documents()
    assert (doc.file, doc.stage, doc.fragments) == (PEW, "complete", report.fragments)


def test_table_rows_come_back_from_the_store_with_their_cells(workspace):
    report = workspace.ingest(SMALL, PEW)
    rows = workspace.store.fragments("table", report.doc_id)
    assert rows and all(f.cells and f.text.endswith(" | ".join(c.line for c in f.cells)) for f in rows)
    assert any(c.number is not None and c.unit == "%" for f in rows for c in f.cells)


def test_ingesting_the_same_file_twice_is_a_no_op(workspace):
    first = workspace.ingest(SMALL, PEW)
    second = workspace.ingest(SMALL, "renamed copy.pdf")
    assert second.outcome == "skipped" and second.doc_id == first.doc_id
    assert _counts(workspace) == first.fragments
    assert len(workspace.store.documents()) == 1


def test_delete_removes_every_fragment_and_file(workspace):
    report = workspace.ingest(SMALL, PEW)
    workspace.store.delete(report.doc_id)
    assert _counts(workspace) == {m: 0 for m in MODALITIES}
    assert workspace.store.documents() == []
    assert not workspace.store.pdf_path(report.doc_id).exists()
    assert workspace.ingest(SMALL, PEW).outcome == "ingested"


def test_a_store_refuses_a_different_embedding_model(workspace, tmp_path):
    workspace.ingest(SMALL, PEW)
    other = MockEmbedding(embed_dim=384, model_name="some-other-model")
    with pytest.raises(EmbeddingMismatchError, match="all-MiniLM.*some-other-model"):
        Store(local_settings(tmp_path), other)


@pytest.mark.parametrize("data", [b"", b"plain text", b"%PDF-1.4\n" + b"\xff" * 500])
def test_a_bad_file_leaves_the_store_unchanged(workspace, data):
    workspace.ingest(SMALL, PEW)
    before = (_counts(workspace), workspace.store.documents())
    report = workspace.ingest(data, "bad.pdf")
    assert report.outcome == "error" and report.error
    assert (_counts(workspace), workspace.store.documents()) == before


class _FailingEmbedding(MockEmbedding):
    """Fails on the third batch, as a crash or a full disk would midway through indexing."""

    calls: int = 0

    def _get_text_embeddings(self, texts):
        self.calls += 1
        if self.calls == 3:
            raise OSError("disk full")
        return super()._get_text_embeddings(texts)


def test_a_failure_while_reading_keeps_the_searchable_document_with_its_error(tmp_path):
    ws = Workspace(local_settings(tmp_path), embed_model=_FailingEmbedding(embed_dim=8, model_name="m"))
    report = ws.ingest(SMALL, PEW)
    assert report.outcome == "error" and "disk full" in report.error and report.stage == "searchable"
    assert _counts(ws) == {m: 0 for m in MODALITIES}, "nothing half-written"
    [doc] = ws.store.documents()
    assert doc.stage == "searchable" and "disk full" in doc.error
    assert ws.store.fragments("text", doc.doc_id), "its text layer is still found by keyword"


def test_a_document_left_indexing_by_a_dead_process_is_removed_on_open(workspace, tmp_path, embed_model):
    report = workspace.ingest(SMALL, PEW)
    info = workspace.store.get(report.doc_id)
    info.stage = "indexing"
    workspace.store.register(info, owner=_OWNER.rsplit(":", 2)[0] + ":999999999:dead")
    assert workspace.store.documents() == []  # never visible while indexing
    assert workspace.search("Latino finances").hits == []
    reopened = Store(workspace.settings, embed_model)
    assert reopened.documents(include_indexing=True) == []
    assert {m: reopened.count(m) for m in MODALITIES} == {m: 0 for m in MODALITIES}


def test_an_indexing_document_of_a_live_process_is_left_alone(workspace, embed_model):
    report = workspace.ingest(SMALL, PEW)
    info = workspace.store.get(report.doc_id)
    info.stage = "indexing"
    workspace.store.register(info)
    Store(workspace.settings, embed_model)
    assert workspace.store.get(report.doc_id).stage == "indexing"
    again = workspace.ingest(SMALL, PEW)
    assert again.outcome == "error" and "being indexed" in again.error


class _CountingEmbedding(MockEmbedding):
    texts: list = []

    def _get_text_embeddings(self, texts):
        self.texts.extend(texts)
        return super()._get_text_embeddings(texts)


def test_each_distinct_text_is_embedded_once_and_every_fragment_is_written(tmp_path):
    model = _CountingEmbedding(embed_dim=8, model_name="m", texts=[])
    ws = Workspace(local_settings(tmp_path), embed_model=model)
    stages = []
    report = ws.ingest(pages_of("PIP_Seniors-and-Tech-Use_040314.pdf", [8, 9, 10]), "seniors.pdf",
                       progress=lambda stage, done, total: stages.append((stage, done, total)))
    assert report.outcome == "ingested" and _counts(ws) == report.fragments
    assert len(model.texts) == len(set(model.texts)), "a repeated line is embedded once"
    texts = [n.get_content() for m in ("text", "table") for n in ws.store.nodes(m)]
    assert len(set(texts)) < len(texts), "the pages do repeat lines; each copy is still a fragment"
    assert set(texts) <= set(model.texts)
    embedded = [(done, total) for stage, done, total in stages if stage == "embed"]
    written = [(done, total) for stage, done, total in stages if stage == "write"]
    assert embedded[-1][0] == embedded[-1][1] == len(model.texts)
    assert written[-1] == (3, 3), "pages written whole"


def test_the_estimate_says_what_is_done_and_how_long_is_left():
    now = [100.0]
    estimate = IngestEstimate(clock=lambda: now[0])
    assert estimate.text() == "estimating the time left"
    now[0] = 110.0
    estimate("parse", 20, 40)
    estimate("embed", 100, 800)
    assert estimate.text() == "20 of 40 pages parsed · 100 of 800 texts embedded · about 23 s left"
    estimate("parse", 40, 40)
    estimate("embed", 900, 900)
    estimate("write", 950, 950)
    assert estimate.share() == 1.0 and estimate.text().endswith("about 0 s left")


def test_texts_are_embedded_while_worker_processes_parse_the_rest(tmp_path):
    model = _CountingEmbedding(embed_dim=8, model_name="m", texts=[])
    ws = Workspace(local_settings(tmp_path), embed_model=model)
    stages = []
    report = ws.ingest(pages_of("BESTBUY_2023_10K.pdf", list(range(20, 44))), "bestbuy.pdf",
                       progress=lambda stage, done, total: stages.append((stage, done, total)))
    assert report.outcome == "ingested" and _counts(ws) == report.fragments
    last_parse = max(i for i, (stage, _, _) in enumerate(stages) if stage == "parse")
    early = [done for stage, done, _ in stages[:last_parse] if stage == "embed"]
    assert early and early[-1] > 0, "some texts were embedded before the last pages were parsed"
    assert len(model.texts) == len(set(model.texts))
    assert [d == t for s, d, t in stages if s == "embed"][-1], "the count ends at its total"


_OPEN_ON_SCHEDULE = """
import sys, time
from pathlib import Path
from rag.settings import Settings
from rag.store import make_client
base, go, ready, rounds = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
ready.touch()
while not go.exists():
    time.sleep(0.001)
start = float(go.read_text())
for k in range(rounds):
    time.sleep(max(0.0, start + k * 0.5 - time.time()))
    make_client(Settings.from_env(embed_provider="local", chroma_host=None, data_dir=base / str(k)))
"""


def test_processes_opening_a_new_store_at_the_same_moment_all_succeed(tmp_path):
    """Chroma builds its tables on first open; unguarded, one such moment in six fails a process."""
    rounds, ready, go = 24, [tmp_path / f"ready{i}" for i in range(4)], tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_ON_SCHEDULE, str(tmp_path), str(go), str(r), str(rounds)],
                              cwd=ROOT, stderr=subprocess.PIPE, text=True) for r in ready]
    while not all(r.exists() for r in ready) and all(p.poll() is None for p in procs):
        time.sleep(0.01)
    (tmp_path / "start").write_text(str(time.time() + 0.5))
    (tmp_path / "start").rename(go)
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [e[-300:] for e in errors if e]
