"""Questions first: enrichment waits while a question runs.

A question holds a shared lock on RAG_DATA_DIR/asking.lock while it runs (`asking`). Enrichment, between two
chunks of pages or two batches of texts, takes the exclusive lock for an instant (`give_way`), which it gets
only when no question holds the shared one. They are the kernel's locks: a process that dies drops its own.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_NAME = "asking.lock"


@contextmanager
def asking(data_dir: Path) -> Iterator[None]:
    """Held while a question runs."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / _NAME, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        yield


def give_way(data_dir: Path, longest_s: float = 300.0) -> float:
    """Wait while questions run (at most `longest_s`, so that a stream of them cannot starve enrichment);
    the seconds waited."""
    t0 = time.monotonic()
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / _NAME, "a") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() - t0 > longest_s:
                    break
                time.sleep(0.2)
    return time.monotonic() - t0
