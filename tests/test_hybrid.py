"""Hybrid BM25 + dense search, parent pages, adaptive top-K and the page context, on real stores."""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest
from conftest import BESTBUY, PEW, local_settings, pages_of

from rag.reader.question import named_pages
from rag.records import LAST_PAGE
from rag.retrieve import adaptive_k
from rag.sparse import SparseIndex
from rag.store import PAGES
from rag.workspace import Workspace

_WORDS = re.compile(r"[a-z]{6,}")


def _search_ids(ws, query, doc=None, **switches):
    saved = ws.settings.retrieval.model_dump()
    for name, value in switches.items():
        setattr(ws.settings.retrieval, name, value)
    try:
        return [h.fragment.id for h in ws.search(query, modality="text", k=6, doc_ids=doc).hits]
    finally:
        for name in switches:
            setattr(ws.settings.retrieval, name, saved[name])


def test_bm25_finds_paragraphs_by_their_rare_words_more_often_than_dense_search(pew_workspace):
    """Queries made of three words that only one paragraph of the report uses: what a user does
    who remembers a name or a term. BM25's exact matching finds what the embedding blurs."""
    texts = {n.node_id: n.get_content() for n in pew_workspace.store.nodes("text")}
    df = Counter(w for text in texts.values() for w in set(_WORDS.findall(text.lower())))
    cases = []
    for fid, text in texts.items():
        rare = [w for w in dict.fromkeys(_WORDS.findall(text.lower())) if df[w] == 1][:3]
        if len(rare) == 3:
            cases.append((fid, " ".join(rare)))
    cases = cases[:20]
    found = {hybrid: sum(fid in _search_ids(pew_workspace, q, hybrid=hybrid, parent_page=False) for fid, q in cases)
             for hybrid in (False, True)}
    assert len(cases) == 20 and found[True] >= 18 and found[True] > found[False]


def test_hybrid_hits_keep_their_cosine_and_are_ordered_by_fused_rank(pew_workspace):
    result = pew_workspace.search("share of Latinos who say their finances are in excellent shape")
    assert all(-1 <= h.score <= 1 and h.rank is not None for h in result.hits)
    assert [h.order for h in result.hits] == sorted((h.order for h in result.hits), reverse=True)


def test_with_parent_pages_each_page_gives_one_fragment(pew_workspace):
    hits = pew_workspace.search("Latino economic optimism", modality="text", k=6).hits
    pages = [h.fragment.page for h in hits]
    assert len(hits) == 6 and len(set(pages)) == 6


def test_a_page_found_by_its_text_gives_its_best_fragment_of_the_modality(pew_workspace):
    retriever = pew_workspace.retriever
    doc = pew_workspace.store.documents()[0].doc_id
    hit = retriever._best_on_page("text", (doc, 5), pew_workspace.embed_model.get_query_embedding("mobility"))
    assert hit.fragment.page == 5 and hit.collection == "text" and 0 < hit.score <= 1


def test_bm25_index_follows_adds_and_deletes_and_survives_a_restart(tmp_path, embed_model, monkeypatch):
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    pew = ws.ingest(pages_of(PEW, [4, 5]), "pew.pdf")
    folder = tmp_path / "bm25" / PAGES
    assert [p.name for p in folder.iterdir()], "built when the document became ready"
    bestbuy = ws.ingest(pages_of(BESTBUY, [40]), "bestbuy.pdf")

    def bm25_docs(workspace, query):
        index = workspace.retriever.sparse[PAGES]
        ready = [d.doc_id for d in workspace.store.documents()]
        found = index.retriever(ready, None, 5).retrieve(query)
        return {n.node.ref_doc_id for n in found if n.score > 0}

    assert bestbuy.doc_id in bm25_docs(ws, "gross profit")
    assert len(list(folder.iterdir())) >= 2, "the older set's index stays while another process may read it"
    only_pew = ws.retriever.sparse[PAGES].retriever([pew.doc_id, bestbuy.doc_id], [pew.doc_id], 5)
    assert {n.node.ref_doc_id for n in only_pew.retrieve("gross profit") if n.score > 0} <= {pew.doc_id}

    for saved in folder.iterdir():
        os.utime(saved, (1, 1))  # as if last opened long ago
    ws.store.delete(bestbuy.doc_id)
    assert bestbuy.doc_id not in bm25_docs(ws, "gross profit")
    assert len(list(folder.iterdir())) == 1, "indexes unopened for the grace period are removed"

    assert _search_ids(ws, "Latino optimism finances")  # builds the indexes of the new set
    monkeypatch.setattr(SparseIndex, "_build", lambda *a: pytest.fail("rebuilt instead of loaded"))
    restarted = Workspace(local_settings(tmp_path), embed_model=embed_model)
    assert _search_ids(restarted, "Latino optimism finances")
    monkeypatch.undo()

    (folder / next(folder.iterdir()).name / "params.index.json").write_text("{torn")
    again = Workspace(local_settings(tmp_path), embed_model=embed_model)
    assert _search_ids(again, "Latino optimism finances"), "a damaged index is rebuilt from Chroma"


def test_adaptive_k_keeps_the_high_component_within_floor_and_ceiling():
    assert adaptive_k([0.81, 0.8, 0.79, 0.42, 0.41, 0.4, 0.39, 0.38], floor=2, ceiling=10) == 3
    assert adaptive_k([0.9, 0.3, 0.29, 0.28, 0.27], floor=2, ceiling=10) == 2
    assert adaptive_k([0.9 - i * 0.001 for i in range(20)] + [0.1] * 10, floor=2, ceiling=10) <= 10
    assert adaptive_k([0.5, 0.5, 0.5, 0.5], floor=2, ceiling=10) == 4
    assert adaptive_k([0.7], floor=2, ceiling=10) == 1


def test_adaptive_k_search_keeps_a_variable_number(pew_workspace):
    retrieval = pew_workspace.settings.retrieval
    retrieval.adaptive_k = True
    try:
        counts = {len(pew_workspace.search(q, modality="text").hits)
                  for q in ("economic mobility of children", "survey margin of error", "unemployment rate")}
    finally:
        retrieval.adaptive_k = False
    assert all(retrieval.adaptive_k_min <= c <= retrieval.adaptive_k_max for c in counts)


def test_pages_are_stored_whole_and_deleted_with_their_document(workspace):
    report = workspace.ingest(pages_of(PEW, [4, 5]), "pew.pdf")
    texts = workspace.store.page_texts(report.doc_id, [1, 2])
    assert set(texts) == {1, 2} and all(len(t) > 500 for t in texts.values())
    assert workspace.store.count(PAGES) == 2
    workspace.store.delete(report.doc_id)
    assert workspace.store.count(PAGES) == 0 and PAGES not in workspace.store.collections


@pytest.mark.parametrize(("question", "pages"), [
    ("What is on page 5?", [5]), ("the words at the top of page two", [2]),
    ("the governor named on the first page", [1]), ("who signed on the last page?", [LAST_PAGE]),
    ("slide 3, then pages 7", [3, 7]), ("revenue in 2023 per share", []),
])
def test_questions_that_name_a_page(question, pages):
    assert named_pages(question) == pages


def test_a_named_page_is_found_by_its_printed_number(pew_workspace):
    # The report's page 3 in the file is numbered "2" in its margin; nothing else points there.
    hits = pew_workspace.search("What is the heading on page 2?", modality="text").hits
    assert 3 in [h.fragment.page for h in hits[:3]]


def test_a_search_scoped_to_one_document_never_returns_another(workspace):
    # BM25 fills its top-k with zero-score documents when few match: those must not leak in.
    pew = workspace.ingest(pages_of(PEW, [4, 5, 19]), "pew.pdf")
    workspace.ingest(pages_of(BESTBUY, [39, 40]), "bestbuy.pdf")
    for question in ("How do Latinos see economic upward mobility for their children?", "total sample size"):
        result = workspace.search(question, doc_ids=[pew.doc_id])
        files = {h.fragment.file for hits in result.per_collection.values() for h in hits}
        assert files == {"pew.pdf"}, files
