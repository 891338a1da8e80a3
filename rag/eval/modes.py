"""The answering modes an evaluation compares, each a strategy (rag/agent/strategy.py) of the one run pipeline
with the same reader.

- `agent`: the ReAct agent, the full system.
- `single-pass`: the router's top-10 at 6:2:2, then the reader; no ReAct step.
- `text-only`: the paper's baseline: the PDF's plain page text, split into ~160-token
  chunks in one collection, top-10, then the reader. No tables, no figures, no router.
- `oracle`: the gold evidence pages' text as the store keeps it: what the reader can do when
  retrieval is perfect.
- `oracle-agent`: the agent (plans, lookups, ReAct steps), every search of it answered by the gold pages:
  what the whole agent can do when retrieval is perfect.

Every mode yields the same events (hops, reader steps, answer), so traces, the UI and `collect` work
unchanged, and the reader's evidence budget bounds every mode's context alike.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator
from pathlib import Path

import pymupdf
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import QueryBundle

from rag.agent.events import HopEvent
from rag.agent.run import stream_answer
from rag.agent.strategy import AGENT, Search, Strategy
from rag.eval import MODES
from rag.ids import fragment_id
from rag.records import Fragment, Hit, SearchResult

PLAIN_CHUNK_TOKENS = 160  # ten chunks ≈ the token count of the system's own top-10


def stream_mode(
    ws, llm, mode: str, question: str, doc_ids: list[str] | None = None, trace_dir: Path = Path("logs"),
    model_name: str = "", gold_pages: list[int] | None = None,
) -> AsyncIterator[HopEvent]:
    """Answer one question in the given mode, yielding its events; the last is the AnswerEvent."""
    return stream_answer(ws, llm, question, doc_ids=doc_ids, trace_dir=trace_dir, model_name=model_name,
                         strategy=strategy(mode, gold_pages or []))


class SinglePass(Strategy):
    """The router's first hop, its pages read; no plan, no ReAct step."""

    name: str = "single-pass"
    react: bool = False


class TextOnly(SinglePass):
    name: str = "text-only"
    first_hop: str = "text-only"

    def searcher(self, workspace, doc_ids: list[str] | None, pages: list[int]) -> Search:
        return PlainTextSearch(plain_index(workspace), doc_ids)


class Oracle(SinglePass):
    name: str = "oracle"
    first_hop: str = "oracle"
    gold_pages: list[int] = []

    def searcher(self, workspace, doc_ids: list[str] | None, pages: list[int]) -> Search:
        return GoldPages(workspace, doc_ids, self.gold_pages)


class OracleAgent(Oracle):
    name: str = "oracle-agent"
    react: bool = True
    first_hop: str = "auto"  # routed, as the agent's own; its search gives only the gold pages

    def searcher(self, workspace, doc_ids: list[str] | None, pages: list[int]) -> Search:
        return GoldPagesRanked(workspace, doc_ids, self.gold_pages)


def strategy(mode: str, gold_pages: list[int]) -> Strategy:
    """The strategy of an evaluation mode (the oracles' searches give the question's gold pages)."""
    strategies = {"agent": AGENT, "single-pass": SinglePass(), "text-only": TextOnly(),
                  "oracle": Oracle(gold_pages=gold_pages), "oracle-agent": OracleAgent(gold_pages=gold_pages)}
    if mode not in strategies:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    return strategies[mode]


class PlainTextSearch:
    def __init__(self, index: PlainTextIndex, doc_ids: list[str] | None) -> None:
        self.index, self.doc_ids = index, doc_ids

    def search(self, query: str, modality: str) -> SearchResult:
        return SearchResult(query=query, route=["plain text"], hits=self.index.search(query, self.doc_ids))


class GoldPages:
    def __init__(self, ws, doc_ids: list[str] | None, pages: list[int]) -> None:
        self.ws, self.doc_ids, self.pages = ws, doc_ids, pages

    def search(self, query: str, modality: str) -> SearchResult:
        return SearchResult(query=query, route=["gold pages"], hits=oracle_hits(self.ws, self.doc_ids, self.pages))


class GoldPagesRanked(GoldPages):
    """The search's own fragments, only those of the gold pages, ranked by the query, so that each part of a
    plan reads the gold page that answers it first; a gold page no fragment found follows as its text."""

    def search(self, query: str, modality: str) -> SearchResult:
        found = self.ws.search(query, modality=modality, doc_ids=self.doc_ids, pages=self.pages)
        hits = [h for h in found.hits if h.fragment.page in self.pages]
        seen = {h.fragment.page for h in hits}
        rest = [h.model_copy(update={"score": 0.0}) for h in oracle_hits(self.ws, self.doc_ids, self.pages)
                if h.fragment.page not in seen]
        return SearchResult(query=query, route=["gold pages"], hits=hits + rest)


def page_fragment(doc, page_no: int, text: str, n: int = 0) -> Fragment:
    return Fragment(id=fragment_id(doc.doc_id, "plain", page_no, n), doc_id=doc.doc_id, file=doc.file, page=page_no,
                    modality="text", bbox=(0.0, 0.0, 0.0, 0.0), text=text)


def oracle_hits(ws, doc_ids: list[str] | None, pages: list[int]) -> list[Hit]:
    """The gold pages as the store keeps them: a scanned page's OCR text and a table's rows included,
    which the PDF's own text layer lacks."""
    if not doc_ids or not pages:
        return []
    doc = ws.store.get(doc_ids[0])
    texts = {p: t.strip() for p, t in ws.store.page_texts(doc.doc_id, sorted(set(pages))).items()}
    return [Hit(fragment=page_fragment(doc, p, t), score=1.0, collection="text") for p, t in texts.items() if t]


class PlainTextIndex:
    """The text-only baseline's one collection: each page's plain text in ~160-token chunks,
    embedded with the system's embedding model, built in memory on first use per document."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.indexes: dict[str, VectorStoreIndex] = {}

    def prepare(self, doc_ids: list[str]) -> None:
        for doc_id in doc_ids:
            self._index(doc_id)

    def _index(self, doc_id: str) -> VectorStoreIndex:
        if doc_id not in self.indexes:
            doc = self.ws.store.get(doc_id)
            with pymupdf.open(self.ws.store.pdf_path(doc_id)) as pdf:
                texts = [(n, page.get_text()) for n, page in enumerate(pdf, 1)]
            pages = [Document(text=text, metadata={"page": n}) for n, text in texts if text.strip()]
            nodes = SentenceSplitter(chunk_size=PLAIN_CHUNK_TOKENS, chunk_overlap=16).get_nodes_from_documents(pages)
            for n, node in enumerate(nodes):
                node.metadata.update(doc_id=doc_id, file=doc.file, n=n)
            self.indexes[doc_id] = VectorStoreIndex(nodes, embed_model=self.ws.embed_model)
        return self.indexes[doc_id]

    def search(self, query: str, doc_ids: list[str] | None, k: int = 10) -> list[Hit]:
        doc_ids = doc_ids or [d.doc_id for d in self.ws.store.documents()]
        embedding = self.ws.embed_model.get_query_embedding(query)
        hits = []
        for doc_id in doc_ids:
            nodes = self._index(doc_id).as_retriever(similarity_top_k=k).retrieve(QueryBundle(query, embedding=embedding))
            doc = self.ws.store.get(doc_id)
            hits += [Hit(fragment=page_fragment(doc, n.node.metadata["page"], n.node.get_content(), n.node.metadata["n"]),
                         score=n.score or 0.0, collection="text") for n in nodes]
        return sorted(hits, key=lambda h: h.score, reverse=True)[:k]


_PLAIN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def plain_index(ws) -> PlainTextIndex:
    if ws not in _PLAIN:
        _PLAIN[ws] = PlainTextIndex(ws)
    return _PLAIN[ws]
