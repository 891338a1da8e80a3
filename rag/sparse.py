"""BM25 over each store collection, kept in step with it.

The store is the source of truth. An index is named by a fingerprint of the documents it covers and
their versions (a document's version changes when its words do: searchable, then complete), so after
an add, a delete or a finished enrichment the next search loads (or builds from the store) the index of
the new set, and a restart finds the saved one on disk instead of rebuilding.

Several processes share one store (the app, `rag ingest`, the worker): a saved index is never written
over. Each is built in a folder of its own and renamed into place whole; an index of an older set is
removed only once no process has opened it for `GRACE_S`, so a reader never sees one half deleted.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle
from llama_index.retrievers.bm25 import BM25Retriever

from rag.text import without_stopwords


class _Matching(BaseRetriever):
    """BM25 hits that match the query and belong to the allowed documents: bm25s fills its top-k with
    zero-score (masked) documents when fewer than k match, which would leak other documents in."""

    def __init__(self, bm25: BM25Retriever, allowed: set[str]) -> None:
        super().__init__()
        self._bm25, self._allowed = bm25, allowed

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # The index was built without stop words, but LlamaIndex tokenizes the query with them.
        query = QueryBundle(without_stopwords(query_bundle.query_str) or query_bundle.query_str)
        return [r for r in self._bm25.retrieve(query) if (r.score or 0) > 0 and r.node.ref_doc_id in self._allowed]


GRACE_S = 600.0


def fingerprint(keys: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16]


class SparseIndex:
    """One collection's BM25 index over the ready documents."""

    def __init__(self, nodes: Callable[..., list[BaseNode]], folder: Path) -> None:
        self._stored_nodes = nodes  # Store.nodes of one collection
        self.folder = folder
        self._lock = threading.Lock()
        self._key: str | None = None
        self._bm25: BM25Retriever | None = None
        self._doc_of: np.ndarray = np.array([])

    def retriever(self, ready: list[str], allowed: list[str] | None, k: int, key: str | None = None) -> BaseRetriever | None:
        """A BM25 retriever over the ready documents, limited to the allowed ones; `key` names what they
        hold (their ids and versions: a document read further is indexed again)."""
        base, doc_of = self._current(ready, key or fingerprint(ready))
        if base is None:
            return None
        mask = np.isin(doc_of, allowed if allowed is not None else ready)
        if not mask.any():
            return None
        bm25 = BM25Retriever(existing_bm25=base.bm25, similarity_top_k=min(k, int(mask.sum())),
                             corpus_weight_mask=mask.astype(int).tolist())
        return _Matching(bm25, set(allowed if allowed is not None else ready))

    def _current(self, ready: list[str], key: str) -> tuple[BM25Retriever | None, np.ndarray]:
        with self._lock:
            if key != self._key:
                self._bm25 = self._load(key) or self._build(key, ready)
                self._remove_unused(key)
                self._doc_of = np.array([c["doc_id"] for c in self._bm25.corpus] if self._bm25 else [])
                self._key = key
            return self._bm25, self._doc_of

    def _load(self, key: str) -> BM25Retriever | None:
        path = self.folder / key
        if not path.is_dir():
            return None
        try:
            os.utime(path)  # opened now: older sets' grace periods are counted from their last opening
            return BM25Retriever.from_persist_dir(str(path), show_progress=False)
        except Exception:  # a damaged folder: set aside (a process reading it fails alike), rebuilt from Chroma
            _rename(path, self.folder / f".{key}.{uuid.uuid4().hex}.damaged")
            return None

    def _build(self, key: str, ready: list[str]) -> BM25Retriever | None:
        nodes = self._nodes(ready)
        if not nodes:
            return None
        bm25 = BM25Retriever.from_defaults(nodes=nodes, language="en")
        own = self.folder / f".{key}.{uuid.uuid4().hex}.tmp"
        own.mkdir(parents=True)
        bm25.persist(str(own), show_progress=False)
        if not _rename(own, self.folder / key):  # another process saved the same set first: theirs stays
            shutil.rmtree(own, ignore_errors=True)
        return self._load(key)  # as a restart would see it: with its corpus, which retrieval needs

    def _remove_unused(self, current: str) -> None:
        cutoff = time.time() - GRACE_S
        for old in self.folder.iterdir() if self.folder.is_dir() else []:
            try:
                if old.name != current and old.stat().st_mtime < cutoff:
                    shutil.rmtree(old, ignore_errors=True)
            except FileNotFoundError:  # another process removed it first
                pass

    def _nodes(self, ready: list[str]) -> list[BaseNode]:
        nodes = self._stored_nodes(doc_ids=ready)
        for node in nodes:
            node.excluded_embed_metadata_keys = list(node.metadata)  # words of the text only
        return nodes


def _rename(source: Path, target: Path) -> bool:
    """Move a folder into place whole; False when the target exists (or the source went)."""
    try:
        source.rename(target)
        return True
    except OSError:
        return False
