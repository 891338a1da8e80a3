"""Wall-clock helpers shared by ingestion, retrieval and the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def timed(seconds: dict[str, float], step: str) -> Iterator[None]:
    """Add the block's wall time to seconds[step]."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        seconds[step] = seconds.get(step, 0.0) + time.perf_counter() - t0


def ms_since(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
