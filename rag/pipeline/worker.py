"""Enrichment in the background: a task queue (Huey) and the workers that read documents to complete.

- The queue is SQLite in the store's folder (`jobs.sqlite`, no server), or Redis for a team
  (`RAG_QUEUE_URL=redis://…`, with a Chroma server and a data folder the machines share).
- A worker is a Huey consumer. The app's server hosts one (an embedded Chroma store wants a single process
  writing it, and that is the one that serves it); `python -m rag worker` runs one anywhere else, and
  `rag ingest` starts one when no process hosts one for the store.
- A task reads one document to complete from where it stands. One worker at a time reads a document (a
  lock file its process drops when it dies), and a worker that starts queues every document left
  unfinished: a killed worker's documents resume where they stopped.
- Questions come first: a worker waits while a question runs (rag/pipeline/priority.py) and runs at low priority.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Protocol

from huey import RedisHuey, SqliteHuey
from huey.consumer import Consumer, ConsumerStopped

from rag.pipeline.priority import give_way
from rag.pipeline.stages import DocumentGone, Interrupted
from rag.records import IngestReport
from rag.settings import Settings
from rag.store import Store
from rag.trace import redact

_LOG = logging.getLogger("rag.pipeline.worker")


class Library(Protocol):
    """What a worker reads documents with: a store, its settings, a view with other settings, and the
    reading itself. The process hosting a worker hands it one (a rag.workspace.Workspace): the worker sits
    below the workspace and imports none."""

    settings: Settings
    store: Store

    def with_settings(self, settings: Settings) -> Library: ...

    def enrich(self, doc_id: str, progress=None, give_way=None): ...


_HOSTED: dict[str, Library] = {}  # store → the library of the process hosting a worker for it
_QUEUES: dict[str, tuple] = {}
_STOPPING = threading.Event()  # this process is ending: its workers stop between two steps


def store_key(settings: Settings) -> str:
    return f"{settings.chroma_host}:{settings.chroma_port}" if settings.chroma_host else str(settings.data_dir.resolve())


def enqueue(settings: Settings, doc_id: str) -> None:
    """Queue a document's enrichment (again, after a failure: its error is cleared)."""
    _, task = _queue(settings)
    task(settings.model_dump_json(include=_SHIPPED), doc_id)


def queue_rest(settings: Settings, report: IngestReport) -> bool:
    """Queue the rest of a document's reading when its ingest stopped at a searchable stage; True if queued.
    The one rule the UI and the CLI follow."""
    if report.error or report.stage not in ("searchable", "vectors"):
        return False
    enqueue(settings, report.doc_id)
    return True


def resume(ws: Library) -> list[str]:
    """Queue every document whose enrichment stopped midway (a killed worker); failed ones wait for a retry."""
    left = [d.doc_id for d in ws.store.unfinished() if not _locked(ws.settings, d.doc_id)]
    for doc_id in left:
        enqueue(ws.settings, doc_id)
    return left


def retry(ws: Library, doc_id: str) -> None:
    ws.store.update(doc_id, error=None)
    enqueue(ws.settings, doc_id)


class Worker:
    """A Huey consumer in this process: threads that read one document each at a time."""

    def __init__(self, ws: Library, threads: int = 1) -> None:
        self.ws = ws
        self.huey, _ = _queue(ws.settings)
        self.consumer = _Consumer(self.huey, workers=threads, periodic=False, max_delay=1.0, shutdown_timeout=60)
        self.busy = 0
        self.huey.signal()(self._count)

    def start(self) -> None:
        """In the background (the app's server): hosts the worker and queues what was left unfinished."""
        _HOSTED[store_key(self.ws.settings)] = self.ws
        self.consumer.start()
        atexit.register(self.stop)
        resume(self.ws)

    def stop(self) -> None:
        """Stop between two steps of the document being read (it resumes later), not inside one: a process
        that exits under a thread running the embedder's native code is aborted."""
        _STOPPING.set()
        self.consumer.stop(graceful=True)

    def run(self, idle_exit_s: float | None = None) -> None:
        """In the foreground (`rag worker`) until stopped, or until the queue has been empty this long."""
        os.nice(10)  # questions asked on this machine come first
        self.start()
        idle_since = health = time.monotonic()
        while True:
            try:
                health = self.consumer.loop(health)
            except ConsumerStopped:
                return
            if self.busy or self.huey.pending_count():
                idle_since = time.monotonic()
            elif idle_exit_s is not None and time.monotonic() - idle_since > idle_exit_s:
                self.consumer.stop(graceful=True)
                return

    def _count(self, signal: str, task, *args) -> None:
        self.busy += {"executing": 1, "complete": -1, "error": -1, "interrupted": -1}.get(signal, 0)


def host(ws: Library) -> Worker | None:
    """Host a worker for this workspace's store in the background, unless another process on this
    machine hosts one for an embedded store already."""
    if not claim_store(ws.settings):
        return None
    worker = Worker(ws)
    worker.start()
    return worker


def claim_store(settings: Settings) -> bool:
    """Whether this process may host a worker for the store: only one process writes an embedded Chroma
    store (the lock is held until the process ends); any number write a Chroma server."""
    if settings.chroma_host:
        return True
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    lock = open(settings.data_dir / "worker.lock", "a")  # noqa: SIM115 - held until the process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return False
    _WORKER_LOCKS.append(lock)
    return True


def ensure_worker(settings: Settings) -> bool:
    """Start `python -m rag worker` in the background when no process on this machine hosts one for the
    store; it ends when the queue has been empty for a minute. True when one was started."""
    if not settings.local_worker or _worker_running(settings):
        return False
    log = open(settings.data_dir / "worker.log", "a")  # noqa: SIM115 - the worker's, for as long as it runs
    command = [sys.executable, "-m", "rag", "--store", str(settings.data_dir), "worker", "--exit-when-idle", "60"]
    subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return True


# the task


# What a task carries of its uploader's settings: where the store is and how to read (no secrets live in Settings).
_SHIPPED = {"data_dir", "chroma_host", "chroma_port", "embed_provider", "openai_embed_model", "ingest", "store"}


def _enrich(shipped: str, doc_id: str) -> None:
    sent = Settings.model_validate_json(shipped)
    settings = Settings.from_env().model_copy(update={name: getattr(sent, name) for name in _SHIPPED})
    ws = _library(settings)
    ws = ws.with_settings(ws.settings.model_copy(update={"ingest": settings.ingest}))
    with _document_lock(settings, doc_id) as mine:
        info = ws.store.get(doc_id) if mine else None
        if info is None or info.stage == "complete" or info.error:
            return
        _LOG.info("reading %s: %d of %d pages left", info.file, len(info.pages_left()), info.pages)
        try:
            ws.enrich(doc_id, give_way=partial(_give_way, settings.data_dir))
        except DocumentGone:
            _LOG.info("%s was deleted while it was being read", info.file)
        except Interrupted:
            _LOG.info("%s: stopped at %d of %d pages; the next worker goes on", info.file,
                      ws.store.get(doc_id).done_pages if ws.store.get(doc_id) else 0, info.pages)
        except Exception as exc:  # noqa: BLE001 - kept with the document, which stays searchable
            _LOG.warning("%s: %s", info.file, redact(str(exc)))


def _give_way(data_dir: Path) -> None:
    if _STOPPING.is_set():
        raise Interrupted
    give_way(data_dir)


_OPENED: dict[str, Library] = {}  # store → a library opened here for a task of a store no worker here hosts


def _library(settings: Settings) -> Library:
    """The task's store's library: the hosted one, else one opened once, of the hosted one's kind."""
    key = store_key(settings)
    if key in _HOSTED:
        return _HOSTED[key]
    if key not in _OPENED:
        hosted = next(iter(_HOSTED.values()))
        _OPENED[key] = type(hosted)(settings)
    return _OPENED[key]


def _queue(settings: Settings):
    """The store's queue and its one task, made once per process."""
    key = store_key(settings)
    if key not in _QUEUES:
        if settings.queue_url:  # one Redis serves the queues of several stores
            name = "rag-" + hashlib.sha256(key.encode()).hexdigest()[:12]
            huey = RedisHuey(name, url=settings.queue_url, results=False)
        else:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            huey = SqliteHuey("rag", filename=str(settings.data_dir / "jobs.sqlite"), results=False)
        _QUEUES[key] = (huey, huey.task(name="enrich")(_enrich))
    return _QUEUES[key]


# locks: the kernel's, so a process that dies drops them


@contextmanager
def _document_lock(settings: Settings, doc_id: str) -> Iterator[bool]:
    """True while this process alone reads the document."""
    folder = settings.data_dir / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{doc_id}.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _locked(settings: Settings, doc_id: str) -> bool:
    with _document_lock(settings, doc_id) as mine:
        return not mine


_WORKER_LOCKS: list = []  # held for as long as this process hosts a worker


def _worker_running(settings: Settings) -> bool:
    path = settings.data_dir / "worker.lock"
    if not path.exists():
        return False
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


class _Consumer(Consumer):
    """Huey's consumer, hosted by a thread that is not the main one (the app's server) when need be: only
    the main thread may set signal handlers."""

    def _set_signal_handlers(self) -> None:
        if threading.current_thread() is threading.main_thread():
            super()._set_signal_handlers()
