"""The embedded model's queue: first asked, first served; every waiting question hears its place;
a stopped question leaves at once. Plain threads, no model: this is the queue's own contract."""

from __future__ import annotations

import threading
import time

import pytest

from rag.control import RunControl, RunStopped
from rag.models.queue import ModelQueue


class Asker:
    """A question that makes one model call in its own thread and records what it hears."""

    def __init__(self, queue: ModelQueue, served: list, control: RunControl | None = None) -> None:
        self.heard: list[int] = []
        self.control = control or RunControl()
        self.control.on_queue = lambda ahead, waited: self.heard.append(ahead)
        self.error: Exception | None = None
        self.release = threading.Event()
        self.thread = threading.Thread(target=self._call, args=(queue, served), daemon=True)

    def _call(self, queue: ModelQueue, served: list) -> None:
        try:
            with queue.turn(self.control):
                served.append(self)
                self.release.wait(10)
        except RunStopped as exc:
            self.error = exc

    def start(self) -> Asker:
        self.thread.start()
        return self


def until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_questions_are_served_in_the_order_asked_and_hear_how_many_are_ahead():
    queue, served = ModelQueue(), []
    first = Asker(queue, served).start()
    until(lambda: served == [first])
    waiting = []
    for n in range(3):
        waiting.append(Asker(queue, served).start())
        until(lambda: queue.load == n + 2)
    until(lambda: [a.heard for a in waiting] == [[1], [2], [3]])
    for n, asker in enumerate(askers := [first, *waiting]):
        until(lambda: len(served) == n + 1)
        # each waiter must hear its new place before the next release, or a slow thread skips one
        until(lambda: [a.heard[-1] for a in askers[n:]] == list(range(len(askers) - n)))
        asker.release.set()
        asker.thread.join(5)
    assert served == [first, *waiting]
    assert first.heard == [0]
    assert [a.heard for a in waiting] == [[1, 0], [2, 1, 0], [3, 2, 1, 0]]
    assert queue.load == 0


def test_a_later_call_of_an_earlier_question_goes_before_later_questions():
    queue, served = ModelQueue(), []
    early = RunControl()  # asked first; its second model call comes while others wait
    time.sleep(0.01)
    holder = Asker(queue, served).start()
    until(lambda: served == [holder])
    late = Asker(queue, served).start()
    until(lambda: late.heard == [1])
    again = Asker(queue, served, control=early).start()
    until(lambda: again.heard == [1] and late.heard == [1, 2])  # the later question moved back one place
    for asker in (holder, again, late):
        asker.release.set()
    for asker in (holder, again, late):
        asker.thread.join(5)
    assert served == [holder, again, late]


def test_a_stopped_question_leaves_the_queue_and_the_next_moves_up():
    queue, served = ModelQueue(), []
    holder = Asker(queue, served).start()
    until(lambda: served == [holder])
    quitter = Asker(queue, served).start()
    patient = Asker(queue, served).start()
    until(lambda: patient.heard == [2])
    quitter.control.stop()
    quitter.thread.join(5)
    assert isinstance(quitter.error, RunStopped) and quitter not in served
    until(lambda: patient.heard == [2, 1])
    holder.release.set()
    patient.release.set()
    patient.thread.join(5)
    assert served == [holder, patient] and queue.load == 0


def test_a_control_reports_changes_only_and_the_wait_when_the_turn_comes():
    heard = []
    control = RunControl(on_queue=lambda ahead, waited: heard.append((ahead, waited)))
    control.queue_position(0)  # the first news of a run, even with nothing ahead
    control.queue_position(0)
    control.queue_position(2)
    control.queue_position(2)
    time.sleep(0.05)
    control.queue_position(0)
    assert [a for a, _ in heard] == [0, 2, 0] and heard[0][1] == 0 and heard[-1][1] >= 0.05
    control.stop()
    with pytest.raises(RunStopped):
        control.check()
