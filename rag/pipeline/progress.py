"""Ingestion progress: pages parsed, texts embedded, fragments written, and the time left; a terminal
bar (only on a terminal: scripts and CI get clean output)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm

# Shares of a document's ingestion time by stage (bench ingest on the dev PDFs); embedding runs
# alongside parsing, so the two shares overlap in time and the estimate is rough until both move.
_WEIGHTS = {"parse": 0.5, "embed": 0.4, "write": 0.1}


class IngestEstimate:
    """Fed the progress(stage, done, total) calls of one ingestion: how far it is, how long is left."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.start = clock, clock()
        self.done: dict[str, int] = {}
        self.total: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.done[stage], self.total[stage] = done, total

    def share(self) -> float:
        return sum(w * min(self.done.get(s, 0) / max(self.total.get(s, 0), 1), 1.0)
                   for s, w in _WEIGHTS.items())

    def seconds_left(self) -> float | None:
        share, elapsed = self.share(), self.clock() - self.start
        return elapsed * (1 - share) / share if share >= 0.05 and elapsed >= 1 else None

    def text(self) -> str:
        parts = [f"{self.done[s]} of {self.total[s]} {what}" for s, what in
                 (("parse", "pages parsed"), ("embed", "texts embedded"), ("write", "fragments indexed"))
                 if s in self.total]
        left = self.seconds_left()
        parts.append(f"about {_duration(left)} left" if left is not None else "estimating the time left")
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


@contextmanager
def ingest_bar(name: str, enabled: bool = True) -> Iterator:
    """Yields a progress(stage, done, total) callback drawing one bar with the estimate's text."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    estimate = IngestEstimate()
    name = name[:30]
    bar = tqdm(total=100, desc=name, bar_format="{percentage:3.0f}%|{bar}| {desc}", leave=False)

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "ocr":
            if done < total:
                bar.set_description_str(f"{name}: reading page {done + 1} of {total} with OCR")
            return
        estimate(stage, done, total)
        bar.update(round(100 * estimate.share()) - bar.n)
        bar.set_description_str(f"{name}: {estimate.text()}")

    try:
        yield progress
    finally:
        bar.close()
