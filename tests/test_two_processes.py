"""Two processes on one embedded store: `rag ingest` makes documents searchable in one while another
searches. Both build keyword indexes of the growing set; one never deletes an index under the other's
reader, so every hit carries its metadata. (Vectors have one writer: an embedded Chroma store is not
process-safe, so the process that hosts the worker embeds; here no worker runs.)"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from conftest import BESTBUY, PEW, ROOT, local_settings, pages_of, pdf_bytes

from rag.sparse import SparseIndex
from rag.store import PAGES
from rag.workspace import Workspace

QUERIES = ["gross profit", "Latino optimism finances", "total current liabilities", "personal finances 2015"]


def test_searches_beside_an_ingest_in_another_process(tmp_path, embed_model):
    store = tmp_path / "store"
    ws = Workspace(local_settings(store), embed_model=embed_model)
    # A large set, so that each keyword index takes a while to build: the two processes' builds overlap.
    assert ws.ingest(pdf_bytes(BESTBUY), "bestbuy.pdf", wait="searchable").outcome == "ingested"
    files = []
    for n, (name, pages) in enumerate([(PEW, [4, 5]), (BESTBUY, [40]), (PEW, [10]), (BESTBUY, [41, 42]),
                                       (PEW, [19, 20]), (BESTBUY, [43]), (PEW, [6, 7])]):
        files.append(tmp_path / f"cut-{n}.pdf")
        files[-1].write_bytes(pages_of(name, pages))
    env = {**os.environ, "RAG_EMBED_PROVIDER": "local", "RAG_WORKER": "off", "PYTHONPATH": str(ROOT)}
    env.pop("CHROMA_HOST", None)
    ingest = subprocess.Popen([sys.executable, "-m", "rag", "--store", str(store), "ingest",
                               *map(str, files)], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    searches, hits = 0, 0
    while ingest.poll() is None or searches < len(QUERIES):
        result = ws.retriever.search(QUERIES[searches % len(QUERIES)])
        assert all(h.fragment.file and h.fragment.page for h in result.hits), result.hits
        searches, hits = searches + 1, hits + len(result.hits)
    assert ingest.returncode == 0, ingest.stderr.read().decode()[-2000:]
    assert len(ws.store.documents()) == 1 + len(files)
    found = {h.fragment.file for h in ws.retriever.search("Latino optimism finances").hits}
    assert found & {f.name for f in files}, "the other process's documents are found"
    assert hits and searches > len(QUERIES), (searches, "searches ran while the other process ingested")


def test_an_index_another_process_opened_outlives_a_newer_one_and_same_set_builds_do_not_clash(tmp_path, embed_model):
    """Two SparseIndex objects on one folder stand for two processes: they share nothing but the disk."""
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    docs = [ws.ingest(pages_of(PEW, pages), f"pew-{n}.pdf", wait="searchable").doc_id
            for n, pages in enumerate([[4, 5], [10], [19]])]
    folder = tmp_path / "bm25-shared"
    nodes = partial(ws.store.nodes, PAGES)
    reader, writer = SparseIndex(nodes, folder), SparseIndex(nodes, folder)
    assert reader.retriever(docs[:1], None, 3) is not None
    opened = {p.name for p in folder.iterdir()}
    assert writer.retriever(docs[:2], None, 3) is not None
    assert opened <= {p.name for p in folder.iterdir()}, "the index the reader opened is still on disk"

    builders = [SparseIndex(nodes, folder) for _ in range(4)]
    with ThreadPoolExecutor(len(builders)) as pool:  # the same new set, built at once by four "processes"
        built = list(pool.map(lambda index: index.retriever(docs, None, 3), builders))
    assert all(r is not None and r.retrieve("Latino optimism") for r in built)
    assert len([p for p in folder.iterdir() if not p.name.startswith(".")]) == 3, "one folder per set"
