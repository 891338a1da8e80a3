"""What the asker holds of a running question: a stop switch, and news of its place in the model's queue.

One RunControl per question. The UI calls `stop()` from any thread; the run and the model check
`stopped`. The embedded model's queue reports the question's place through `queue_position`, which
passes each change on to `on_queue` (the run turns it into a Waiting event).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any


class RunStopped(Exception):
    """The asker stopped the question."""

    def __init__(self) -> None:
        super().__init__("stopped by the user")


class RunControl:
    def __init__(self, on_queue: Callable[[int, float], None] | None = None) -> None:
        self.on_queue = on_queue  # (questions ahead, seconds waited when the turn came)
        self.asked_at = time.monotonic()  # the queue serves questions in the order they were asked
        self._stop = threading.Event()
        self._ahead: int | None = None
        self._since = 0.0

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def check(self) -> None:
        if self.stopped:
            raise RunStopped

    def queue_position(self, ahead: int) -> None:
        """Called by the model's queue: `ahead` questions before this one (0: the model is its own).
        Each change is passed on; so is the first news of a run, even when nothing is ahead."""
        if ahead == self._ahead:
            return
        now = time.monotonic()
        if ahead and not self._ahead:
            self._since = now
        waited = now - self._since if not ahead and self._ahead else 0.0
        self._ahead = ahead
        if self.on_queue is not None:
            self.on_queue(ahead, waited)


def queue_text(ahead: int, waited_s: float = 0.0) -> str:
    """A question's place in the embedded model's queue, as the chat and the CLI say it."""
    if ahead:
        return f"Waiting for the model — {ahead} question{'s' * (ahead != 1)} ahead"
    return f"The model is reading your question (waited {waited_s:.0f} s)" if waited_s >= 0.5 else \
        "The model is reading your question"


class QueueTimeOff:
    """A run's deadline stands still while its question waits for the model: the wait is the other
    questions' time, and the run gets all of its own."""

    def __init__(self, deadline: asyncio.Timeout) -> None:
        self.deadline = deadline
        self.left: float | None = None

    def see(self, event) -> None:
        if getattr(event, "kind", None) != "waiting" or self.deadline.when() is None and self.left is None:
            return
        now = asyncio.get_running_loop().time()
        if event.ahead and self.left is None:
            self.left = self.deadline.when() - now
            self.deadline.reschedule(None)
        elif not event.ahead and self.left is not None:
            self.deadline.reschedule(now + self.left)
            self.left = None


_END = object()


async def controlled(handler, control: RunControl, waiting: Callable[[int, float], Any],
                     ahead_now: int = 0) -> AsyncIterator:
    """A workflow run's events as they come, with the model queue's news merged in (made into events
    by `waiting`), and the run cancelled as soon as `control` is stopped (a remote model, or a search,
    has no queue to leave). `ahead_now`, the questions with the model when this one is asked, is told
    at once: the run searches before it needs the model, and its asker should know the wait to come."""
    news: asyncio.Queue = asyncio.Queue()
    loop = asyncio.get_running_loop()

    def tell(ahead: int, waited: float) -> None:  # called from the model's thread
        with contextlib.suppress(RuntimeError):  # the run is over and its loop closed
            loop.call_soon_threadsafe(news.put_nowait, waiting(ahead, waited))

    async def pump() -> None:
        try:
            async for event in handler.stream_events():
                news.put_nowait(event)
        finally:
            news.put_nowait(_END)

    async def stop_when_asked() -> None:
        while not control.stopped:
            await asyncio.sleep(0.1)
        with contextlib.suppress(Exception):
            await handler.cancel_run()

    control.on_queue = tell
    if ahead_now:
        control.queue_position(ahead_now)
    tasks = [asyncio.create_task(pump()), asyncio.create_task(stop_when_asked())]
    try:
        while (event := await news.get()) is not _END:
            yield event
        await tasks[0]  # the stream's own error, if it had one
    finally:
        control.on_queue = None
        for task in tasks:
            task.cancel()
