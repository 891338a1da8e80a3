"""Questions being answered right now, each in its own thread, outliving the page that asked.

A browser tab that reloads, or a rerun caused by a click (Stop, a sidebar slider), finds the question
again by its conversation and follows it from its first event; when the run ends, its turn is saved
to the conversation whether anyone is still watching or not.
"""

from __future__ import annotations

import asyncio
import threading
import time

from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import Memory

from rag.agent.events import HopEvent
from rag.agent.run import AgentAnswer, error_text
from rag.control import RunControl
from rag.settings import Settings
from rag.ui.conversations import Conversations, Turn


class LiveRun:
    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.control = RunControl()
        self.started = time.monotonic()
        self.events: list[HopEvent] = []
        self.answer: AgentAnswer | None = None
        self.error: str | None = None
        self._news = threading.Condition()
        self._over = False

    def stop(self) -> None:
        self.control.stop()

    @property
    def over(self) -> bool:
        return self._over

    def wait(self, seen: int, timeout: float) -> list[HopEvent]:
        """The events after the first `seen`, as soon as there are any (or the run ends, or time is up)."""
        with self._news:
            self._news.wait_for(lambda: len(self.events) > seen or self._over, timeout)
            return self.events[seen:]

    def _event(self, event: HopEvent) -> None:
        with self._news:
            self.events.append(event)
            self._news.notify_all()

    def _turn(self, answer: AgentAnswer | None, error: str | None) -> Turn:
        """The finished turn, as the conversation keeps it."""
        status = "error" if error or (answer and answer.error) else (
            "stopped" if answer and answer.stop_reason == "stopped" else "done")
        return self.turn.model_copy(update={
            "status": status, "answer": answer, "error": error, "run_id": answer.run_id if answer else None,
            "events": [e.model_dump(mode="json") for e in self.events]})

    def _end(self, answer: AgentAnswer | None, error: str | None) -> None:
        with self._news:
            self.answer, self.error, self._over = answer, error, True
            self._news.notify_all()


class LiveRuns:
    """The questions this server is answering, one at most per conversation."""

    def __init__(self, conversations: Conversations) -> None:
        self.conversations = conversations
        self._runs: dict[str, LiveRun] = {}
        self._lock = threading.Lock()

    def get(self, conversation_id: str | None) -> LiveRun | None:
        with self._lock:
            return self._runs.get(conversation_id) if conversation_id else None

    def start(self, workspace, conversation_id: str, question: str, settings: Settings,
              doc_ids: list[str] | None = None) -> LiveRun:
        """Save the question as a running turn and answer it in a thread with these settings."""
        memory = follow_up_memory(self.conversations.turns(conversation_id), conversation_id)
        run = LiveRun(self.conversations.start_turn(conversation_id, question))
        with self._lock:
            self._runs[conversation_id] = run

        def answer() -> None:
            result, error = None, None
            try:
                result = workspace.ask(question, memory=memory, doc_ids=doc_ids, on_event=run._event,
                                       settings=settings, control=run.control)
            # A cancelled workflow raises CancelledError, a BaseException: the turn still ends, with the error.
            except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001 - saved with the turn, shown in the chat
                error = error_text(exc)
            # Saved before it is over: whoever sees it end finds it in the conversation.
            try:
                self.conversations.save(run._turn(result, error))
            finally:
                with self._lock:
                    self._runs.pop(conversation_id, None)
                run._end(result, error)

        threading.Thread(target=answer, name=f"question-{conversation_id}", daemon=True).start()
        return run


def follow_up_memory(turns: list[Turn], session_id: str) -> Memory:
    """The conversation so far as the agent's memory: questions and answers, not the fragments."""
    memory = Memory.from_defaults(session_id=session_id)
    for turn in turns:
        if turn.answer and turn.status == "done":
            memory.put_messages([ChatMessage(role=MessageRole.USER, content=turn.question),
                                 ChatMessage(role=MessageRole.ASSISTANT, content=turn.answer.answer)])
    return memory
