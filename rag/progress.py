"""Terminal progress bars (only on a terminal: scripts and CI get clean output)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def ingest_bar(name: str, enabled: bool = True) -> Iterator:
    """Yields a progress(stage, done, total) callback drawing one bar per stage."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        unit = "fragment" if stage == "embed" else "page"
        bar = bars.get(stage) or bars.setdefault(
            stage, tqdm(total=total, desc=f"{name[:30]} {stage}", unit=unit, leave=False)
        )
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        for bar in bars.values():
            bar.close()
