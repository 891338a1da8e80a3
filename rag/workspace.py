"""The library's front door: models, store and retriever wired from one Settings object.

The CLI, the agent and the UI all go through a Workspace, so they behave the same.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from functools import cached_property
from pathlib import PurePath

from rag.embed import make_embedding
from rag.ingest import IngestError, doc_id_for, parse_pdf
from rag.ingest.pdf import unlocked_copy
from rag.records import IngestReport, ParsedDocument, SearchResult
from rag.retrieve import Retriever
from rag.settings import Settings
from rag.store import EarlyEmbedder, Store
from rag.timing import timed
from rag.trace import redact

_LOG = logging.getLogger("rag.ingest")

# (stage, done, total): stage is "parse" (pages), "ocr" (pages read with OCR: called before each,
# then once with done == total) or "embed" (fragments).
IngestProgress = Callable[[str, int, int], None]


def safe_name(name: str) -> str:
    """A display name without directories or control characters; keeps any script."""
    base = PurePath(name.replace("\\", "/")).name
    base = "".join(ch for ch in unicodedata.normalize("NFC", base) if unicodedata.category(ch)[0] != "C")
    return base.strip(" .")[:200] or "document.pdf"


class Workspace:
    """Models, store and indexes, built once and shared; `settings` are this workspace's defaults.

    A run with settings of its own (a browser session's) gets a view: `with_settings` shares every
    built part and changes only the settings its searches and answers read.
    """

    def __init__(self, settings: Settings | None = None, embed_model=None) -> None:
        self.settings = settings or Settings.from_env()
        self._base: Workspace | None = None
        self._llm, self._llm_lock = None, threading.Lock()
        if embed_model is not None:
            self.embed_model = embed_model

    def with_settings(self, settings: Settings) -> Workspace:
        view = Workspace.__new__(Workspace)
        view.settings, view._base = settings, self._base or self
        return view

    @cached_property
    def embed_model(self):
        return self._base.embed_model if self._base else make_embedding(self.settings)

    @cached_property
    def store(self) -> Store:
        return self._base.store if self._base else Store(self.settings, self.embed_model)

    @cached_property
    def retriever(self) -> Retriever:
        return self._base.retriever if self._base else Retriever(self.store, self.settings.retrieval)

    def ingest(self, data: bytes, name: str, progress: IngestProgress | None = None,
               password: str | None = None) -> IngestReport:
        """Parse and index one PDF; refusals come back as status "error", never raised."""
        t0 = time.perf_counter()
        file = safe_name(name)
        existing = self.store.get(doc_id_for(data)) if data else None
        if existing and existing.status == "ready":
            return IngestReport(
                doc_id=existing.doc_id, file=existing.file, pages=existing.pages,
                fragments=existing.fragments, status="skipped",
            )
        early = EarlyEmbedder(self.embed_model, self.settings.ingest.embed_batch, progress)
        try:
            parsed = parse_pdf(data, file, self.settings.ingest, progress=progress, password=password,
                               on_part=early.add)
        except IngestError as exc:
            return IngestReport(file=file, status="error", error=str(exc), seconds=time.perf_counter() - t0)
        parsed.timings["embed"] = early.seconds.get("embed", 0.0)
        try:
            kept = unlocked_copy(data, password) if password else data
            self.store.add(parsed, kept, _counting_on(progress, len(early.vectors)), vectors=early.vectors)
            with timed(parsed.timings, "bm25"):
                self.retriever.warm()
        except Exception as exc:  # the store rolled the document back; report, don't crash the batch
            return IngestReport(file=file, status="error", error=redact(f"indexing failed: {exc}"),
                                seconds=time.perf_counter() - t0)
        warnings = _warnings(parsed)
        for warning in warnings:
            _LOG.warning("%s: %s", file, warning)
        return IngestReport(
            doc_id=parsed.doc_id, file=file, pages=parsed.pages, fragments=parsed.counts(),
            seconds=time.perf_counter() - t0, status="ingested", timings=parsed.timings,
            warnings=warnings, notes=_notes(parsed), ocr_pages=parsed.ocr_pages,
        )

    @property
    def llm(self):
        """The language model, loaded once, by whichever thread asks first (the warm-up or a question)."""
        if self._base:
            return self._base.llm
        with self._llm_lock:
            if self._llm is None:
                from rag.models.llm import make_llm

                model = make_llm(self.settings, progress=lambda msg: print(msg, file=sys.stderr))
                self._llm = self._llm or model  # one set meanwhile (a test's) wins
        return self._llm

    @llm.setter
    def llm(self, model) -> None:
        self._llm = model

    def warm_up(self) -> threading.Thread:
        """Open the store and load the embedder now, then in the background the search indexes and the
        language model, so that the first question waits for none of them."""
        _ = self.store

        def load() -> None:
            try:
                self.retriever.warm()
                _ = self.llm
            except Exception:  # noqa: BLE001 - the first question loads it again and shows the error
                logging.getLogger("rag").exception("warm-up failed")

        thread = threading.Thread(target=load, name="warm-up", daemon=True)
        thread.start()
        return thread

    @property
    def llm_name(self) -> str:
        from rag.models.llm import describe

        return describe(self.settings)

    def ask(self, question: str, memory=None, doc_ids=None, on_event=None, settings: Settings | None = None,
            control=None, mode: str = "agent"):
        """Answer one question with these settings (the workspace's own by default); `control` (a
        RunControl) stops it and hears its place in the model's queue."""
        from rag.agent.run import ask

        ws = self.with_settings(settings) if settings is not None else self
        return ask(ws, self.llm, question, memory=memory, doc_ids=doc_ids, trace_dir=ws.settings.trace_dir,
                   on_event=on_event, model_name=self.llm_name, control=control, mode=mode)

    def search(self, query: str, modality: str = "auto", k: int | None = None,
               doc_ids: list[str] | None = None, settings: Settings | None = None) -> SearchResult:
        retrieval = (settings or self.settings).retrieval
        return self.retriever.search(query, modality=modality, k=k, doc_ids=doc_ids, settings=retrieval)


_MAX_WARNINGS = 10


def _counting_on(progress: IngestProgress | None, embedded: int) -> IngestProgress | None:
    """The store counts the texts it embeds itself; the bar counts those embedded during parsing too."""
    if progress is None:
        return None
    return lambda stage, done, total: progress(stage, done + embedded, total + embedded) if stage == "embed" \
        else progress(stage, done, total)


def _warnings(parsed: ParsedDocument) -> list[str]:
    unread = [p for p in parsed.empty_pages if p in parsed.ocr_pages]
    no_layer = [p for p in parsed.empty_pages if p not in parsed.ocr_pages]
    warnings = [f"no text layer on page(s) {_pages(no_layer)}"] if no_layer else []
    if unread:
        warnings.append(f"no text found on page(s) {_pages(unread)}, even with OCR")
    warnings += parsed.warnings[:_MAX_WARNINGS]
    if len(parsed.warnings) > _MAX_WARNINGS:
        warnings.append(f"… and {len(parsed.warnings) - _MAX_WARNINGS} more failed steps")
    return warnings


def _notes(parsed: ParsedDocument) -> list[str]:
    if not parsed.ocr_pages:
        return []
    n = len(parsed.ocr_pages)
    return [f"{n} page{'s' * (n != 1)} read with OCR ({parsed.timings.get('ocr', 0.0):.1f} s): {_pages(parsed.ocr_pages)}"]


def _pages(pages: list[int]) -> str:
    return ", ".join(map(str, pages[:10])) + (" …" if len(pages) > 10 else "")
