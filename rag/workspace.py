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
from typing import Literal

from rag.embed import make_embedding
from rag.ingest import IngestError, doc_id_for
from rag.pipeline.priority import asking
from rag.pipeline.stages import DocumentGone, Interrupted, enrich, make_searchable
from rag.reader.question import named_pages
from rag.records import DocumentInfo, IngestReport, ParsedDocument, SearchResult
from rag.retrieve import Retriever
from rag.settings import Settings
from rag.store import Store
from rag.timing import timed

# A page's worth of text (about 600 tokens) whose reading the warm-up times: the model's speed on a page
SPEED_PROBE = "\n".join(f"Line {n}: in year {2000 + n} the output of plant {n % 7} rose by {n % 9}.{n % 5} percent, "
                         f"to {n * 37 % 1000:,} units." for n in range(24))
from rag.trace import redact

_LOG = logging.getLogger("rag.ingest")

# (stage, done, total): stage is "parse" (pages), "ocr" (pages read with OCR: called before each,
# then once with done == total) or "embed" (texts).
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
               password: str | None = None, wait: Literal["searchable", "complete"] = "complete") -> IngestReport:
        """Make one PDF searchable from its text layer (seconds), then with `wait="complete"` read the rest
        here (tables, charts, OCR, figures); with "searchable" the rest is left to a worker (rag/pipeline/worker.py).
        A searchable document is not read again; one left unfinished is enriched. Refusals come back as
        outcome "error", never raised."""
        t0, started = time.perf_counter(), time.time()
        file = safe_name(name)
        existing = self.store.get(doc_id_for(data)) if data else None
        if existing and existing.visible:
            if existing.stage == "complete" or wait == "searchable":
                return _report(existing, "skipped", time.perf_counter() - t0)
            parsed = ParsedDocument(doc_id=existing.doc_id, file=existing.file, pages=existing.pages, fragments=[])
        else:
            try:
                info, parsed = make_searchable(self.store, data, file, self.settings.ingest, password, started,
                                               then=self.retriever.warm)
            except IngestError as exc:
                return IngestReport(file=file, outcome="error", error=str(exc), seconds=time.perf_counter() - t0)
            except Exception as exc:  # the store rolled the document back; report, don't crash the batch
                return IngestReport(file=file, outcome="error", error=redact(f"indexing failed: {exc}"),
                                    seconds=time.perf_counter() - t0)
        if wait == "complete":
            try:
                parsed.add(self.enrich(parsed.doc_id, progress))
            except IngestError as exc:  # nothing to search after all (a scan OCR found no text on): removed
                self.store.delete(parsed.doc_id)
                return IngestReport(file=file, outcome="error", error=str(exc), seconds=time.perf_counter() - t0)
            except Exception as exc:  # noqa: BLE001 - it stays searchable, with the error and a retry
                report = _report(self.store.get(parsed.doc_id), "error", time.perf_counter() - t0)
                return report.model_copy(update={"error": _failure(exc)})
        info = self.store.get(parsed.doc_id)
        for warning in info.warnings:
            _LOG.warning("%s: %s", file, warning)
        return _report(info, "ingested", time.perf_counter() - t0, parsed)

    def enrich(self, doc_id: str, progress: IngestProgress | None = None, give_way=None) -> ParsedDocument:
        """Read a searchable document to complete (tables, charts, OCR, figures) from where it stopped. A
        failure is kept with the document, which keeps the stage it reached, and raised."""
        try:
            read = enrich(self.store, doc_id, self.settings.ingest, give_way, progress)
        except (DocumentGone, Interrupted):
            raise
        except Exception as exc:
            self.store.update(doc_id, error=_failure(exc))
            raise
        with timed(read.timings, "bm25"):
            self.retriever.warm()
        return read

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
                self._first_call()
            except Exception:  # noqa: BLE001 - the first question loads it again and shows the error
                logging.getLogger("rag").exception("warm-up failed")

        thread = threading.Thread(target=load, name="warm-up", daemon=True)
        thread.start()
        return thread

    def _first_call(self) -> None:
        """The local model loaded and asked for one token: its first call reads its weights into memory (some
        seconds), which the first question would otherwise wait for. Then its speed on a page's worth of text,
        so that the first page read is sized by this machine's speed, not a guess. A remote model is not called,
        nor the local one once a question has: on a large store the indexes load first, and a question asked
        meanwhile would wait behind the timed text."""
        from rag.models.llm import LocalLlamaCpp
        from rag.reader import SPEED

        if not isinstance(llm := self.llm, LocalLlamaCpp) or llm.queue.served:
            return
        llm.complete("Hello", max_tokens=1)
        if llm.queue.served > 1:
            return
        start = time.time()
        llm.complete(SPEED_PROBE, max_tokens=1)
        SPEED.saw(llm.count_tokens(SPEED_PROBE), time.time() - start)

    @property
    def llm_name(self) -> str:
        from rag.models.llm import describe

        return describe(self.settings)

    def ask(self, question: str, memory=None, doc_ids=None, on_event=None, settings: Settings | None = None,
            control=None):
        """Answer one question with these settings (the workspace's own by default); `control` (a
        RunControl) stops it and hears its place in the model's queue."""
        from rag.agent.run import run_question

        ws = self.with_settings(settings) if settings is not None else self
        with asking(ws.settings.data_dir):  # documents being read in the background wait meanwhile
            return run_question(ws, self.llm, question, memory=memory, doc_ids=doc_ids, trace_dir=ws.settings.trace_dir,
                       on_event=on_event, model_name=self.llm_name, control=control)

    def search(self, query: str, modality: str = "auto", k: int | None = None, doc_ids: list[str] | None = None,
               settings: Settings | None = None, pages: list[int] | None = None) -> SearchResult:
        """A search; the pages the query names ("on page 5", or `pages` given) rank first."""
        retrieval = (settings or self.settings).retrieval
        return self.retriever.search(query, modality=modality, k=k, doc_ids=doc_ids, settings=retrieval,
                                     pages=named_pages(query) if pages is None else pages)


def _report(info: DocumentInfo, outcome: str, seconds: float, parsed: ParsedDocument | None = None) -> IngestReport:
    return IngestReport(
        doc_id=info.doc_id, file=info.file, pages=info.pages, fragments=info.fragments, seconds=seconds,
        outcome=outcome, stage=info.stage, stage_seconds=info.stage_seconds, error=info.error,
        timings=parsed.timings if parsed else {}, warnings=info.warnings if parsed else [],
        notes=info.notes, ocr_pages=parsed.ocr_pages if parsed else [],
    )


def _failure(exc: Exception) -> str:
    """What stopped a document's reading, in one line a user can read."""
    return str(exc) if isinstance(exc, IngestError) else redact(f"reading failed: {type(exc).__name__}: {exc}")[:300]
