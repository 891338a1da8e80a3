"""The Chroma store: three fragment collections, a document registry, and the PDFs themselves.

A document is written in three steps — registry entry marked "indexing", fragments,
registry entry marked "ready" — and searches only see ready documents, so a crash
midway never leaves a half-indexed document visible; the next open removes the rest.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import chromadb
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import BaseNode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from llama_index.vector_stores.chroma import ChromaVectorStore

from rag.ids import page_id
from rag.records import MODALITIES, Cell, DocumentInfo, Fragment, Modality, ParsedDocument, Table
from rag.settings import Settings
from rag.timing import timed

REGISTRY = "documents"
PAGES = "pages"  # each page's whole text: the parent of its fragments
# The token tells this process apart from an earlier one that had the same pid.
_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
_STALE_AFTER_S = 3600
_WRITE_BATCH = 1000  # nodes per Chroma write: one transaction each, well under Chroma's batch limit


class StoreError(Exception):
    """A store problem worth showing to the user as is."""


class EmbeddingMismatchError(StoreError):
    pass


def make_client(settings: Settings):
    chroma_settings = chromadb.config.Settings(anonymized_telemetry=False)
    if settings.chroma_host:
        return chromadb.HttpClient(host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings)
    path = settings.data_dir / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    # Chroma creates its tables on first open without a lock of its own: two processes opening
    # a new store at once (the app and a CLI ingest) would otherwise fail one of them.
    with open(settings.data_dir / "chroma.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


class Store:
    def __init__(self, settings: Settings, embed_model: BaseEmbedding, client=None) -> None:
        self.settings = settings
        self.embed_model = embed_model
        self.client = client or make_client(settings)
        self.files = settings.data_dir
        for sub in ("pdfs", "tables", "pages"):
            (self.files / sub).mkdir(parents=True, exist_ok=True)
        self.collections = {m: self._collection(m) for m in MODALITIES}
        self.pages = self._collection(PAGES)
        self.vector_stores = {
            name: ChromaVectorStore(chroma_collection=c)
            for name, c in {**self.collections, PAGES: self.pages}.items()
        }
        self.registry = self.client.get_or_create_collection(REGISTRY, embedding_function=None)
        self._check_model()
        self.recover()

    @property
    def model_key(self) -> str:
        return self.embed_model.model_name

    def _collection(self, name: str):
        hnsw = self.settings.store
        return self.client.get_or_create_collection(
            name,
            configuration={
                "hnsw": {
                    "space": "cosine",
                    "max_neighbors": hnsw.hnsw_m,
                    "ef_construction": hnsw.hnsw_ef_construction,
                    "ef_search": hnsw.hnsw_ef_search,
                }
            },
            embedding_function=None,
        )

    def _check_model(self) -> None:
        """A store answers to one embedding model: mixing vector spaces gives silent nonsense."""
        for collection in (*self.collections.values(), self.pages):
            built_with = (collection.metadata or {}).get("embed_model")
            if built_with and built_with != self.model_key:
                raise EmbeddingMismatchError(
                    f"this store was built with the embedding model '{built_with}' but "
                    f"'{self.model_key}' is active; use the same model or a new --store"
                )
            if not built_with:
                collection.modify(metadata={"embed_model": self.model_key})

    # registry

    def documents(self, include_indexing: bool = False) -> list[DocumentInfo]:
        got = self.registry.get(include=["metadatas"])
        docs = [_info(doc_id, meta) for doc_id, meta in zip(got["ids"], got["metadatas"])]
        return sorted(
            (d for d in docs if include_indexing or d.status == "ready"), key=lambda d: d.added_at
        )

    def get(self, doc_id: str) -> DocumentInfo | None:
        got = self.registry.get(ids=[doc_id], include=["metadatas"])
        return _info(got["ids"][0], got["metadatas"][0]) if got["ids"] else None

    def resolve(self, prefix_or_name: str) -> DocumentInfo:
        """A doc id, an unambiguous id prefix, or a file name."""
        matches = [
            d for d in self.documents() if d.doc_id.startswith(prefix_or_name) or d.file == prefix_or_name
        ]
        if len(matches) != 1:
            raise StoreError(f"no single document matches '{prefix_or_name}' ({len(matches)} found)")
        return matches[0]

    def _register(self, info: DocumentInfo, owner: str = _OWNER) -> None:
        info.owner = owner
        meta = {
            "file": info.file, "pages": info.pages, "status": info.status,
            "embed_model": info.embed_model, "added_at": info.added_at, "owner": owner,
            **{f"n_{m}": n for m, n in info.fragments.items()},
        }
        self.registry.upsert(ids=[info.doc_id], embeddings=[[1.0]], metadatas=[meta], documents=[info.file])

    # writing

    def add(
        self,
        parsed: ParsedDocument,
        data: bytes,
        progress: Callable[[str, int, int], None] | None = None,
        vectors: dict[str, list[float]] | None = None,
    ) -> tuple[DocumentInfo, bool]:
        """Index a parsed document; returns (info, added). Adding a ready document is a no-op.
        `progress(stage, done, total)` hears "embed" and "write"; `vectors` holds texts embedded already."""
        existing = self.get(parsed.doc_id)
        if existing and existing.status == "ready":
            return existing, False
        if existing and not _abandoned(existing.model_dump()):
            raise StoreError("this document is being indexed right now by another upload")
        if existing:
            self.delete(parsed.doc_id)
        info = DocumentInfo(
            doc_id=parsed.doc_id, file=parsed.file, pages=parsed.pages, fragments=parsed.counts(),
            status="indexing", embed_model=self.model_key, added_at=time.time(),
        )
        self._register(info)
        try:
            self._write_files(parsed, data)
            self._write_nodes(parsed, progress, vectors)
        except BaseException:
            self.delete(parsed.doc_id)
            raise
        info.status = "ready"
        self._register(info)
        return info, True

    def _write_files(self, parsed: ParsedDocument, data: bytes) -> None:
        _atomic_write(self.pdf_path(parsed.doc_id), data)
        tables = json.dumps([t.model_dump() for t in parsed.tables])
        _atomic_write(self._tables_path(parsed.doc_id), tables.encode())
        _atomic_write(self._pages_path(parsed.doc_id), json.dumps(parsed.page_texts).encode())

    def _write_nodes(self, parsed: ParsedDocument, progress, vectors: dict[str, list[float]] | None) -> None:
        """Embed what is not embedded yet (fragments, then the pages' whole texts) and write it all."""
        items = [(f.modality, f.text, f) for f in parsed.fragments]
        items += [(PAGES, text, page) for page, text in sorted(parsed.search_texts.items()) if text.strip()]
        embed = (lambda d, n: progress("embed", d, n)) if progress else None
        texts, batch = [text for _, text, _ in items], self.settings.ingest.embed_batch
        vectors = embed_texts(self.embed_model, texts, batch, parsed.timings, embed, vectors)
        written = 0
        for name, store in self.vector_stores.items():
            nodes = [
                _node(item, vectors[text]) if name != PAGES else _page_node(parsed, item, text, vectors[text])
                for kind, text, item in items if kind == name
            ]
            for start in range(0, len(nodes), _WRITE_BATCH):
                with timed(parsed.timings, "write"):
                    store.add(nodes[start : start + _WRITE_BATCH])
                written += len(nodes[start : start + _WRITE_BATCH])
                if progress:
                    progress("write", written, len(items))

    def delete(self, doc_id: str) -> None:
        for store in self.vector_stores.values():
            store.delete(ref_doc_id=doc_id)
        for path in (self.pdf_path(doc_id), self._tables_path(doc_id), self._pages_path(doc_id)):
            path.unlink(missing_ok=True)
        self.registry.delete(ids=[doc_id])

    def recover(self) -> list[str]:
        """Remove documents whose indexing died midway (killed process, power loss)."""
        removed = []
        got = self.registry.get(where={"status": "indexing"}, include=["metadatas"])
        for doc_id, meta in zip(got["ids"], got["metadatas"]):
            if _abandoned(meta):
                self.delete(doc_id)
                removed.append(doc_id)
        return removed

    # reading

    def pdf_path(self, doc_id: str) -> Path:
        return self.files / "pdfs" / f"{doc_id}.pdf"

    def _tables_path(self, doc_id: str) -> Path:
        return self.files / "tables" / f"{doc_id}.json"

    def _pages_path(self, doc_id: str) -> Path:
        return self.files / "pages" / f"{doc_id}.json"

    def tables(self, doc_id: str) -> list[Table]:
        path = self._tables_path(doc_id)
        return [Table.model_validate(t) for t in json.loads(path.read_text())] if path.exists() else []

    def count(self, name: str) -> int:
        """Records in a collection: a modality's fragments, or PAGES."""
        return self._collection_named(name).count()

    def nodes(self, name: str, ids: list[str] | None = None, doc_ids: list[str] | None = None,
              page: int | None = None, embeddings: bool = False) -> list[BaseNode]:
        """A collection's records as nodes (`name`: a modality or PAGES): by id, in the caller's order,
        or those of some documents, or of one page of them; with their vectors when asked."""
        if (ids is not None and not ids) or (doc_ids is not None and not doc_ids):
            return []
        where = [{"doc_id": {"$in": doc_ids}}] if doc_ids is not None else []
        where += [{"page": page}] if page is not None else []
        include = ["documents", "metadatas", *(["embeddings"] if embeddings else [])]
        got = self._collection_named(name).get(
            ids=ids, where=(where[0] if len(where) == 1 else {"$and": where}) if where else None, include=include)
        vectors = got["embeddings"] if embeddings else [None] * len(got["ids"])
        found = {i: _record_node(m, t, v) for i, m, t, v in zip(got["ids"], got["metadatas"], got["documents"], vectors)}
        return [found[i] for i in ids if i in found] if ids is not None else list(found.values())

    def fragments(self, modality: Modality, doc_id: str) -> list[Fragment]:
        return [fragment_from_node(n) for n in self.nodes(modality, doc_ids=[doc_id])]

    def page_labels(self, doc_id: str) -> dict[int, str]:
        """The page numbers printed on a document's pages, where they differ from none."""
        return {n.metadata["page"]: n.metadata.get("label", "") for n in self.nodes(PAGES, doc_ids=[doc_id])}

    def labelled_pages(self, labels: list[str], doc_ids: list[str]) -> list[tuple[str, int]]:
        """(doc id, page) of the pages whose printed number is one of `labels`."""
        if not labels or not doc_ids:
            return []
        got = self.pages.get(where={"$and": [{"label": {"$in": labels}}, {"doc_id": {"$in": doc_ids}}]},
                             include=["metadatas"])
        return [(m["doc_id"], m["page"]) for m in got["metadatas"]]

    def nearest(self, modality: Modality, queries: list[list[float]], k: int) -> list[list[str]]:
        """The HNSW index's k nearest ids for each query vector."""
        return self.collections[modality].query(query_embeddings=queries, n_results=k)["ids"]

    def _collection_named(self, name: str):
        return self.pages if name == PAGES else self.collections[name]

    def page_texts(self, doc_id: str, pages: list[int]) -> dict[int, str]:
        """What a model reads of some pages of a document, by page number."""
        path = self._pages_path(doc_id)
        if path.exists():
            texts = json.loads(path.read_text())
            return {p: texts[str(p)] for p in pages if str(p) in texts}
        if not pages:
            return {}
        # A Chroma server whose writer's data folder is not shared here: the searched page text.
        return {n.metadata["page"]: n.get_content() for n in self.nodes(PAGES, ids=[page_id(doc_id, p) for p in pages])}


def _node(fragment: Fragment, vector: list[float]) -> TextNode:
    return TextNode(
        id_=fragment.id,
        text=fragment.text,
        embedding=vector,
        metadata={
            "file": fragment.file,
            "page": fragment.page,
            "modality": fragment.modality,
            "bbox": json.dumps([round(v, 2) for v in fragment.bbox]),
            "extra": json.dumps(fragment.extra),
            **({"cells": json.dumps([c.model_dump() for c in fragment.cells])} if fragment.cells else {}),
        },
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=fragment.doc_id)},
    )


def embed_texts(model: BaseEmbedding, texts: list[str], batch: int, seconds: dict[str, float],
                progress: Callable[[int, int], None] | None = None,
                known: dict[str, list[float]] | None = None) -> dict[str, list[float]]:
    """Text → vector for each distinct text not known yet. Reports repeat lines (running headers, table
    labels), and texts of similar length batched together pad less: about twice the throughput."""
    vectors = dict(known or {})
    todo = sorted({t for t in texts if t not in vectors}, key=len)
    if progress and not todo:
        progress(0, 0)
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        with timed(seconds, "embed"):
            vectors.update(zip(chunk, model.get_text_embedding_batch(chunk)))
        if progress:
            progress(start + len(chunk), len(todo))
    return vectors


# Enough texts to sort by length, few enough that embedding starts while the workers still parse:
# a batch (settings.ingest.embed_batch) would make small documents wait for the end.
_EARLY_TEXTS = 128


class EarlyEmbedder:
    """Embeds the texts of pages parsed so far while worker processes parse the rest, so that both
    cores work. Texts wait until some are there (_EARLY_TEXTS): batches still sort by length."""

    def __init__(self, model: BaseEmbedding, batch: int,
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.model, self.batch, self.progress = model, batch, progress
        self.vectors: dict[str, list[float]] = {}
        self.seconds: dict[str, float] = {}
        self._waiting: list[str] = []
        self._seen: set[str] = set()
        self._parsed = 0

    def add(self, part: ParsedDocument, pages: int) -> None:
        texts = [f.text for f in part.fragments] + [t for t in part.search_texts.values() if t.strip()]
        self._seen.update(texts)
        self._waiting += texts
        self._parsed += part.pages
        if len(self._waiting) < _EARLY_TEXTS:
            return
        self.vectors = embed_texts(self.model, self._waiting, self.batch, self.seconds, known=self.vectors)
        self._waiting = []
        if self.progress:  # the total is a guess until every page is parsed
            expected = round(len(self._seen) * pages / max(self._parsed, 1))
            self.progress("embed", len(self.vectors), max(expected, len(self.vectors)))


def _page_node(parsed: ParsedDocument, page: int, text: str, vector: list[float]) -> TextNode:
    return TextNode(
        id_=page_id(parsed.doc_id, page), text=text, embedding=vector,
        metadata={"file": parsed.file, "page": page, "label": parsed.page_labels.get(page, "")},
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=parsed.doc_id)},
    )


def _record_node(metadata: dict, text: str, vector) -> BaseNode:
    node = metadata_dict_to_node(metadata, text=text)
    if vector is not None:
        node.embedding = list(map(float, vector))
    return node


def fragment_from_node(node) -> Fragment:
    """The one way a stored record becomes a Fragment again."""
    meta = node.metadata
    return Fragment(
        id=node.node_id,
        doc_id=node.ref_doc_id,
        file=meta["file"],
        page=meta["page"],
        modality=meta["modality"],
        bbox=tuple(json.loads(meta["bbox"])),
        text=node.get_content(),
        extra=json.loads(meta.get("extra") or "{}"),
        cells=_cells(meta, node.get_content()),
    )


def _cells(meta: dict, text: str) -> list[Cell]:
    if "cells" in meta:
        return [Cell(**c) for c in json.loads(meta["cells"])]
    if meta["modality"] != "table":
        return []
    # A row stored before fragments kept their cells: read back from "H1: v1 | v2" (a value holding
    # " | " or ": " splits wrongly, which is why cells are stored now).
    return [Cell.read(*part.split(": ", 1)) if ": " in part else Cell.read("", part) for part in text.split(" | ")]


def _info(doc_id: str, meta: dict) -> DocumentInfo:
    return DocumentInfo(
        doc_id=doc_id, file=meta["file"], pages=meta["pages"], status=meta["status"],
        embed_model=meta.get("embed_model", ""), added_at=meta.get("added_at", 0.0), owner=meta.get("owner", ""),
        fragments={m: meta.get(f"n_{m}", 0) for m in MODALITIES},
    )


def _abandoned(meta: dict) -> bool:
    owner = str(meta.get("owner", ""))
    if owner == _OWNER:
        return False
    host, pid, _token = (owner.split(":") + ["", ""])[:3]
    if host == socket.gethostname() and pid.isdigit():
        return int(pid) == os.getpid() or not _alive(int(pid))
    return time.time() - float(meta.get("added_at", 0)) > _STALE_AFTER_S


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
