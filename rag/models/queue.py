"""One embedded model, many askers: a fair FIFO in front of it that tells each waiting caller its place.

llama.cpp decodes one prompt at a time in one context. Callers take turns in the order their
questions were asked (a question's later calls keep its place, so the first asked is the first
answered), and while they wait they hear how many questions are ahead of them. A stopped question
leaves the queue at once.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rag.control import RunControl


class ModelQueue:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting: list[tuple[float, int]] = []  # (asked at, arrival number), first to serve first
        self._busy = False
        self._arrivals = itertools.count()
        self.serving: RunControl | None = None  # the control of the call the model is decoding
        self.served = 0  # calls given the model so far

    @contextmanager
    def turn(self, control: RunControl | None = None) -> Iterator[None]:
        """Hold the model for one call; `control` orders the call by its question and hears its place."""
        ticket = (control.asked_at if control else time.monotonic(), next(self._arrivals))
        with self._cond:
            bisect.insort(self._waiting, ticket)
            try:
                while ahead := self._busy + self._waiting.index(ticket):
                    _report(control, ahead)
                    self._cond.wait(timeout=0.2)
                _report(control, 0)
            except BaseException:  # stopped while waiting: the next in line may be first now
                self._waiting.remove(ticket)
                self._cond.notify_all()
                raise
            self._waiting.remove(ticket)
            self._busy, self.serving = True, control
            self.served += 1
        try:
            yield
        finally:
            with self._cond:
                self._busy, self.serving = False, None
                self._cond.notify_all()

    @property
    def load(self) -> int:
        """Questions with the model now: the one it serves and those waiting."""
        with self._cond:
            return self._busy + len(self._waiting)


def _report(control: RunControl | None, ahead: int) -> None:
    if control is not None:
        control.check()  # a stopped question leaves the queue
        control.queue_position(ahead)
