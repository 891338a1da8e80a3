"""A document's stages: searchable within seconds, then enriched where there is time.

- searchable: the text layer (`read_text_layer`), written by `Store.write_text_layer`: keyword search works,
  and the statements' figures are data (`Store.frames`).
- vectors: those texts embedded and moved into Chroma (`Store.write_pending`): hybrid search.
- complete: each chunk of pages read whole (tables, charts, figures, OCR: `parse_chunks`, in worker
  processes that start at once, beside the embedding), its new texts embedded, written over what the
  text layer gave of those pages (`Store.replace_pages`).

`enrich` starts from wherever a document stands, so a worker killed midway resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from llama_index.core.base.embeddings.base import BaseEmbedding

from rag.ingest import IngestError, parse_chunks, read_text_layer
from rag.ingest.pdf import Progress, unlocked_copy
from rag.records import TEXT_ONLY, UNREAD, DocumentInfo, ParsedDocument
from rag.settings import IngestSettings
from rag.store import Store, StoreError, embed_texts
from rag.timing import timed

GiveWay = Callable[[], None]


class Interrupted(Exception):
    """The worker is stopping: the document stays where it got to, and the next worker resumes it."""


class DocumentGone(IngestError):
    """The document was deleted while it was being enriched."""

    def __init__(self) -> None:
        super().__init__("the document was deleted while it was being read")


def make_searchable(store: Store, data: bytes, file: str, settings: IngestSettings, password: str | None = None,
                    started: float | None = None, then: Callable[[], None] | None = None,
                    ) -> tuple[DocumentInfo, ParsedDocument]:
    """The text layer of every page, written so that keyword search finds it (IngestError for a bad file);
    `then` runs once it is searchable (the keyword indexes' build), within the stage's seconds."""
    started = started or time.time()
    with timed(timings := {}, "parse"):
        parsed = read_text_layer(data, file, settings, password)
    parsed.timings = timings
    kept = unlocked_copy(data, password) if password else data
    with timed(parsed.timings, "write"):
        info, written = _searchable(store, parsed, kept, started)
    if written and then:
        with timed(parsed.timings, "bm25"):
            then()
        info = _stage(store, info, "searchable")
    return info, parsed


def _searchable(store: Store, parsed: ParsedDocument, data: bytes, started: float) -> tuple[DocumentInfo, bool]:
    """Written as "indexing" (invisible; removed if this process dies), then "searchable"; a document another
    upload made visible meanwhile is returned as it is (False: not written here)."""
    existing = store.get(parsed.doc_id)
    if existing and existing.visible:
        return existing, False
    if existing and store.being_written(existing):
        raise StoreError("this document is being indexed right now by another upload")
    if existing:
        store.delete(parsed.doc_id)
    states = "".join(UNREAD if p in parsed.unread_pages else TEXT_ONLY for p in range(1, parsed.pages + 1))
    info = DocumentInfo(doc_id=parsed.doc_id, file=parsed.file, pages=parsed.pages, fragments=parsed.counts(),
                        stage="indexing", page_states=states, warnings=parsed.warnings, version=1,
                        embed_model=store.model_key, added_at=started)
    store.register(info)
    try:
        store.write_text_layer(parsed, data)
    except BaseException:
        store.delete(parsed.doc_id)
        raise
    return _stage(store, info, "searchable"), True


def enrich(store: Store, doc_id: str, settings: IngestSettings, give_way: GiveWay | None = None,
           progress: Progress | None = None) -> ParsedDocument:
    """Take a searchable document to complete from where it stands; what was read on the way (pages read
    with OCR, empty ones, failed steps, seconds by step) comes back, without the fragments."""
    info = _current(store, doc_id)
    data = store.pdf_path(doc_id).read_bytes()
    read = ParsedDocument(doc_id=doc_id, file=info.file, pages=info.pages, fragments=[])
    pages, to_read = info.pages_left(), info.pages_left(UNREAD)
    parts = parse_chunks(data, info.file, settings, pages, to_read, progress=progress, give_way=give_way, doc_id=doc_id)
    embed = _Embedder(store.embed_model, settings.embed_batch, read.timings, give_way, progress)
    if texts := store.pending_texts(doc_id):
        store.write_pending(doc_id, embed(texts, {}))
        info = _stage(store, info, "vectors")
    written = 0
    for chunk, part in _grouped(parts, doc_id, info.file):
        texts = [f.text for f in part.fragments] + [t for t in part.search_texts.values() if t.strip()]
        vectors = embed(texts, store.vectors_on(doc_id, chunk))
        with timed(read.timings, "write"):
            _gone_unless(store.replace_pages(doc_id, chunk, part, vectors), store, doc_id)
        read.add(part.model_copy(update={"fragments": [], "tables": []}))
        written += len(chunk)
        if progress:
            progress("write", written, len(pages))
    if progress and to_read:
        progress("ocr", len(to_read), len(to_read))
    info = _current(store, doc_id)
    if not any(info.fragments.values()):
        raise IngestError("no extractable text: the PDF has no text layer and OCR found no text either")
    _stage(store, info, "complete", version=info.version + 1, warnings=_warnings(read, info.warnings), notes=_notes(read))
    return read


def _grouped(parts: Iterator[tuple[list[int], ParsedDocument]], doc_id: str, file: str,
             pages: int = 12) -> Iterator[tuple[list[int], ParsedDocument]]:
    """Parsed chunks joined into writes of about `pages` pages: each write costs the store a few round trips."""
    group, merged = [], ParsedDocument(doc_id=doc_id, file=file, pages=0, fragments=[])
    for chunk, part in parts:
        group += chunk
        merged.add(part)
        if len(group) >= pages:
            yield group, merged
            group, merged = [], ParsedDocument(doc_id=doc_id, file=file, pages=0, fragments=[])
    if group:
        yield group, merged


def _current(store: Store, doc_id: str) -> DocumentInfo:
    info = store.get(doc_id)
    if info is None:
        raise DocumentGone
    return info


def _stage(store: Store, info: DocumentInfo, stage: str, **changes) -> DocumentInfo:
    seconds = {**info.stage_seconds, stage: round(time.time() - info.added_at, 2)}
    return _gone_unless(store.update(info.doc_id, stage=stage, stage_seconds=seconds, **changes), store, info.doc_id)


def _gone_unless(info: DocumentInfo | None, store: Store, doc_id: str) -> DocumentInfo:
    """A document deleted while it was written to: what this write added goes too."""
    if info is None:
        store.delete(doc_id)
        raise DocumentGone
    return info


class _Embedder:
    """Embeds what is not known yet, a batch at a time, giving way to questions between batches; its
    progress counts every text embedded so far against every text seen so far."""

    def __init__(self, model: BaseEmbedding, batch: int, timings: dict[str, float], give_way: GiveWay | None,
                 progress: Progress | None) -> None:
        self.model, self.timings, self.give_way, self.progress = model, timings, give_way, progress
        self.batch = min(batch, _BATCH_GIVING_WAY) if give_way else batch
        self.done = self.total = 0

    def __call__(self, texts: list[str], known: dict[str, list[float]]) -> dict[str, list[float]]:
        base = self.done
        self.total += len({t for t in texts if t not in known})

        def between(done: int, _total: int) -> None:
            if self.give_way:
                self.give_way()
            self.done = base + done
            if self.progress:
                self.progress("embed", self.done, self.total)

        return embed_texts(self.model, texts, self.batch, self.timings, between, known)


_BATCH_GIVING_WAY = 64  # texts between two looks for a question: about a second of the embedder


_MAX_WARNINGS = 10


def _warnings(read: ParsedDocument, failed: list[str]) -> list[str]:
    """What a user should know went wrong: pages without text, then the steps that failed (a few)."""
    unread = [p for p in read.empty_pages if p in read.ocr_pages]
    no_layer = [p for p in read.empty_pages if p not in read.ocr_pages]
    warnings = [f"no text layer on page(s) {_pages(no_layer)}"] if no_layer else []
    if unread:
        warnings.append(f"no text found on page(s) {_pages(unread)}, even with OCR")
    warnings += failed[:_MAX_WARNINGS]
    if len(failed) > _MAX_WARNINGS:
        warnings.append(f"… and {len(failed) - _MAX_WARNINGS} more failed steps")
    return warnings


def _notes(read: ParsedDocument) -> list[str]:
    if not read.ocr_pages:
        return []
    n = len(read.ocr_pages)
    return [f"{n} page{'s' * (n != 1)} read with OCR ({read.timings.get('ocr', 0.0):.1f} s): {_pages(read.ocr_pages)}"]


def _pages(pages: list[int]) -> str:
    return ", ".join(map(str, pages[:10])) + (" …" if len(pages) > 10 else "")
