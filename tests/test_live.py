"""A question answered in its own thread always ends its turn, whatever the run raises."""

from __future__ import annotations

import asyncio

import pytest

from rag.settings import Settings
from rag.ui.conversations import Conversations
from rag.ui.live import LiveRuns


class Raising:
    """A workspace whose run raises, as a cancelled workflow or a failing model would."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def ask(self, *args, **kwargs):
        raise self.exc


@pytest.mark.parametrize("exc", [asyncio.CancelledError(), RuntimeError("model server gone")])
def test_a_run_that_raises_ends_its_turn_with_the_error(tmp_path, exc):
    conversations = Conversations(tmp_path / "conversations.sqlite")
    cid = conversations.create("q")
    run = LiveRuns(conversations).start(Raising(exc), cid, "What was revenue?", Settings())
    run.wait(0, timeout=10)
    assert run.over, "the turn never ended"
    [turn] = conversations.turns(cid)
    assert turn.status == "error" and type(exc).__name__ in turn.error
