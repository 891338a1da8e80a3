"""The Chroma store: three fragment collections, a page collection, a document registry, and the files
beside them (the PDFs, their tables, statement frames and page texts).

A document becomes visible in stages (`DocumentInfo`), which rag/pipeline/stages.py writes; the store
keeps what each stage gives. "indexing" (invisible), then "searchable": its text-layer paragraphs and
pages, kept in `pending/<doc>.json` until they are embedded (Chroma holds only embedded records) and
found by keyword meanwhile. Embedded, they move into Chroma ("vectors"); then each chunk of pages read
completely replaces what the text layer gave of those pages, by id ("complete" once every page is). Each
step can be done twice without harm, so enrichment that dies midway resumes where it stopped; the next
open removes a document that died before it was searchable.
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
from llama_index.core.schema import BaseNode, MetadataMode, NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
from llama_index.vector_stores.chroma import ChromaVectorStore

from rag.ids import page_id
from rag.ingest.statements import load_frames, pdf_frames, save_frames
from rag.records import (DONE, MODALITIES, Cell, DocumentInfo, Fragment, Modality, ParsedDocument,
                         StatementFrame, Table)
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
        for sub in ("pdfs", "tables", "frames", "pages", "pending"):
            (self.files / sub).mkdir(parents=True, exist_ok=True)
        self.collections = {m: self._collection(m) for m in MODALITIES}
        self.pages = self._collection(PAGES)
        self.vector_stores = {
            name: ChromaVectorStore(chroma_collection=c)
            for name, c in {**self.collections, PAGES: self.pages}.items()
        }
        self.registry = self.client.get_or_create_collection(REGISTRY, embedding_function=None)
        self._pending_cache: dict[str, tuple[int, list[dict]]] = {}
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
        """The documents searches see (from "searchable" on), oldest first; with those being indexed too."""
        got = self.registry.get(include=["metadatas"])
        docs = [_info(doc_id, meta) for doc_id, meta in zip(got["ids"], got["metadatas"])]
        return sorted((d for d in docs if include_indexing or d.visible), key=lambda d: d.added_at)

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

    def unfinished(self) -> list[DocumentInfo]:
        """Visible documents whose enrichment has neither ended nor failed."""
        return [d for d in self.documents() if d.stage != "complete" and not d.error]

    def register(self, info: DocumentInfo, owner: str = _OWNER) -> None:
        """Write a document's registry entry, as this process's."""
        info.owner = owner
        meta = {
            "file": info.file, "pages": info.pages, "status": info.stage, "page_states": info.page_states,
            "error": info.error or "", "warnings": json.dumps(info.warnings), "notes": json.dumps(info.notes),
            "stages": json.dumps(info.stage_seconds),
            "version": info.version, "embed_model": info.embed_model, "added_at": info.added_at, "owner": owner,
            **{f"n_{m}": n for m, n in info.fragments.items()},
        }
        self.registry.upsert(ids=[info.doc_id], embeddings=[[1.0]], metadatas=[meta], documents=[info.file])

    def update(self, doc_id: str, **changes) -> DocumentInfo | None:
        """Change a document's registry entry (its stage, error, seconds); None when it was deleted meanwhile."""
        info = self.get(doc_id)
        if info is None:
            return None
        info = info.model_copy(update=changes)
        self.register(info, info.owner)
        return info

    # writing: what the stages (rag/pipeline/stages.py) write

    def write_text_layer(self, parsed: ParsedDocument, data: bytes) -> None:
        """The PDF, its page texts and its text layer's paragraphs, kept in `pending/` (found by keyword)
        until they are embedded."""
        self._write_files(parsed, data)
        pending = [(f.modality, _node(f, None)) for f in parsed.fragments]
        pending += [(PAGES, _page_node(parsed, p, text, None)) for p, text in sorted(parsed.search_texts.items())
                    if text.strip()]
        records = [{"name": name, "id": n.node_id, "text": n.get_content(), "meta": _flat(n)} for name, n in pending]
        _atomic_write(self._pending_path(parsed.doc_id), json.dumps(records).encode())

    def being_written(self, info: DocumentInfo) -> bool:
        """Whether the live process that registered this invisible document is still writing it."""
        return not _abandoned(info.model_dump())

    def pending_texts(self, doc_id: str) -> list[str]:
        """The texts the searchable stage left to embed (none once they are)."""
        return [r["text"] for r in self._pending(doc_id)]

    def write_pending(self, doc_id: str, vectors: dict[str, list[float]]) -> None:
        """The vectors stage: the searchable stage's records, embedded, move into Chroma."""
        by_name: dict[str, list[BaseNode]] = {}
        for r in self._pending(doc_id):
            by_name.setdefault(r["name"], []).append(_record_node(r["meta"], r["text"], vectors[r["text"]]))
        for name, nodes in by_name.items():
            self._upsert(name, nodes)
        self._pending_path(doc_id).unlink(missing_ok=True)

    def vectors_on(self, doc_id: str, pages: list[int]) -> dict[str, list[float]]:
        """text → vector of what is embedded on some pages of a document: a page read again embeds only
        what is new on it."""
        where = {"$and": [{"doc_id": doc_id}, {"page": {"$in": pages}}]}
        known = {}
        for name in (*MODALITIES, PAGES):
            got = self._collection_named(name).get(where=where, include=["documents", "embeddings"])
            known.update(zip(got["documents"], (list(map(float, v)) for v in got["embeddings"])))
        return known

    def replace_pages(self, doc_id: str, pages: list[int], part: ParsedDocument,
                      vectors: dict[str, list[float]]) -> DocumentInfo | None:
        """Pages read completely: their records replace what the text layer gave (upserted by id, the rest
        of those pages deleted), their tables and page texts go in, and the registry marks them done.
        None when the document was deleted meanwhile."""
        info = self.get(doc_id)
        if info is None:
            return None
        where = {"$and": [{"doc_id": doc_id}, {"page": {"$in": pages}}]}
        counts = dict(info.fragments)
        for name in (*MODALITIES, PAGES):
            if name == PAGES:
                new = [_page_node(part, p, text, vectors[text]) for p, text in sorted(part.search_texts.items())
                       if text.strip()]
            else:
                new = [_node(f, vectors[f.text]) for f in part.fragments if f.modality == name]
            old = set(self._collection_named(name).get(where=where, include=[])["ids"])
            if stale := old - {n.node_id for n in new}:
                self._collection_named(name).delete(ids=sorted(stale))
            self._upsert(name, new)
            if name != PAGES:
                counts[name] = counts.get(name, 0) - len(old) + len(new)
        tables = sorted([t for t in self.tables(doc_id) if t.page not in pages] + part.tables, key=lambda t: t.page)
        _atomic_write(self._tables_path(doc_id), json.dumps([t.model_dump() for t in tables]).encode())
        texts = {**self.page_texts(doc_id, list(range(1, info.pages + 1))), **part.page_texts}
        _atomic_write(self._pages_path(doc_id), json.dumps(dict(sorted(texts.items()))).encode())
        states = "".join(DONE if n in pages else s for n, s in enumerate(info.page_states, 1))
        return self.update(doc_id, fragments=counts, page_states=states, warnings=info.warnings + part.warnings)

    def _upsert(self, name: str, nodes: list[BaseNode]) -> None:
        collection = self._collection_named(name)
        for start in range(0, len(nodes), _WRITE_BATCH):
            batch = nodes[start : start + _WRITE_BATCH]
            collection.upsert(ids=[n.node_id for n in batch], embeddings=[n.get_embedding() for n in batch],
                              metadatas=[_flat(n) for n in batch],
                              documents=[n.get_content(metadata_mode=MetadataMode.NONE) for n in batch])

    def _write_files(self, parsed: ParsedDocument, data: bytes) -> None:
        _atomic_write(self.pdf_path(parsed.doc_id), data)
        tables = json.dumps([t.model_dump() for t in parsed.tables])
        _atomic_write(self._tables_path(parsed.doc_id), tables.encode())
        self._write_frames(parsed.doc_id, parsed.frames)
        _atomic_write(self._pages_path(parsed.doc_id), json.dumps(parsed.page_texts).encode())

    def _write_frames(self, doc_id: str, frames: list[StatementFrame]) -> None:
        path = self._frames_path(doc_id)
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        save_frames(frames, tmp)
        os.replace(tmp, path)

    def delete(self, doc_id: str) -> None:
        self.registry.delete(ids=[doc_id])  # first: searches and enrichment stop seeing it
        for store in self.vector_stores.values():
            store.delete(ref_doc_id=doc_id)
        for path in (self.pdf_path(doc_id), self._tables_path(doc_id), self._frames_path(doc_id),
                     self._pages_path(doc_id), self._pending_path(doc_id)):
            path.unlink(missing_ok=True)

    def recover(self) -> list[str]:
        """Remove documents that died before they were searchable (killed process, power loss)."""
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

    def _frames_path(self, doc_id: str) -> Path:
        return self.files / "frames" / f"{doc_id}.sqlite"

    def _pages_path(self, doc_id: str) -> Path:
        return self.files / "pages" / f"{doc_id}.json"

    def _pending_path(self, doc_id: str) -> Path:
        return self.files / "pending" / f"{doc_id}.json"

    def _pending_docs(self) -> list[str]:
        return [p.stem for p in (self.files / "pending").glob("*.json")]

    def _pending(self, doc_id: str) -> list[dict]:
        """The searchable stage's records of a document not embedded yet, read once per version of the file."""
        path = self._pending_path(doc_id)
        try:
            stamp = path.stat().st_mtime_ns
        except FileNotFoundError:
            return []
        if self._pending_cache.get(doc_id, (None,))[0] != stamp:
            self._pending_cache[doc_id] = (stamp, json.loads(path.read_text()))
        return self._pending_cache[doc_id][1]

    def tables(self, doc_id: str) -> list[Table]:
        path = self._tables_path(doc_id)
        return [Table.model_validate(t) for t in json.loads(path.read_text())] if path.exists() else []

    def frames(self, doc_id: str) -> list[StatementFrame]:
        """A document's statement frames; for one stored before they were kept, read from its PDF once."""
        path = self._frames_path(doc_id)
        if path.exists():
            return load_frames(path)
        if not self.pdf_path(doc_id).exists():
            return []
        info = self.get(doc_id)
        frames = pdf_frames(self.pdf_path(doc_id), doc_id, info.file if info else "")
        self._write_frames(doc_id, frames)
        return frames

    def count(self, name: str) -> int:
        """Records in a collection: a modality's fragments, or PAGES."""
        return self._collection_named(name).count()

    def nodes(self, name: str, ids: list[str] | None = None, doc_ids: list[str] | None = None,
              page: int | None = None, embeddings: bool = False) -> list[BaseNode]:
        """A collection's records as nodes (`name`: a modality or PAGES): by id, in the caller's order,
        or those of some documents, or of one page of them. With their vectors when asked, so embedded
        ones only; else the searchable stage's records not embedded yet too."""
        if (ids is not None and not ids) or (doc_ids is not None and not doc_ids):
            return []
        where = [{"doc_id": {"$in": doc_ids}}] if doc_ids is not None else []
        where += [{"page": page}] if page is not None else []
        include = ["documents", "metadatas", *(["embeddings"] if embeddings else [])]
        got = self._collection_named(name).get(
            ids=ids, where=(where[0] if len(where) == 1 else {"$and": where}) if where else None, include=include)
        vectors = got["embeddings"] if embeddings else [None] * len(got["ids"])
        found = {i: _record_node(m, t, v) for i, m, t, v in zip(got["ids"], got["metadatas"], got["documents"], vectors)}
        if not embeddings:
            for doc_id in self._pending_docs() if doc_ids is None else doc_ids:
                found.update({r["id"]: _record_node(r["meta"], r["text"], None) for r in self._pending(doc_id)
                              if r["name"] == name and page in (None, r["meta"]["page"])
                              and (ids is None or r["id"] in ids)})
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
        found = [(m["doc_id"], m["page"]) for m in got["metadatas"]]
        return found + [(d, r["meta"]["page"]) for d in doc_ids for r in self._pending(d)
                        if r["name"] == PAGES and r["meta"].get("label") in labels]

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


def _node(fragment: Fragment, vector: list[float] | None) -> TextNode:
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


def _page_node(parsed: ParsedDocument, page: int, text: str, vector: list[float] | None) -> TextNode:
    return TextNode(
        id_=page_id(parsed.doc_id, page), text=text, embedding=vector,
        metadata={"file": parsed.file, "page": page, "label": parsed.page_labels.get(page, "")},
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=parsed.doc_id)},
    )


def _flat(node: BaseNode) -> dict:
    """A node's metadata as Chroma keeps it (LlamaIndex's own layout, so its Chroma reader reads it)."""
    return {k: "" if v is None else v for k, v in node_to_metadata_dict(node, remove_text=True, flat_metadata=True).items()}


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
    status = meta["status"]
    return DocumentInfo(
        doc_id=doc_id, file=meta["file"], pages=meta["pages"],
        stage="complete" if status == "ready" else status,  # a store written before stages
        page_states=meta.get("page_states", ""), error=meta.get("error") or None,
        warnings=json.loads(meta.get("warnings") or "[]"), notes=json.loads(meta.get("notes") or "[]"),
        stage_seconds=json.loads(meta.get("stages") or "{}"),
        version=meta.get("version", 0), embed_model=meta.get("embed_model", ""), added_at=meta.get("added_at", 0.0),
        owner=meta.get("owner", ""), fragments={m: meta.get(f"n_{m}", 0) for m in MODALITIES},
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
