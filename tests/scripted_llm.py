"""A scripted stand-in LLM, for unit tests of the agent's control flow ONLY.

It returns the replies it was given, in order, and records every prompt, so a test can
drive the agent down one path (search, stop, retry, fail) and check what it did. Answer
quality is never tested with it: the end-to-end tests run the real local model.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from pydantic import Field

from rag.control import RunControl


class ScriptedLLM(CustomLLM):
    replies: list[str | Exception | Callable[[str], str]]
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted", is_chat_model=False)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        if not self.replies:
            raise AssertionError(f"the script ran out; last prompt:\n{prompt[-500:]}")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):  # a reply that depends on what the prompt shows (e.g. copying from evidence)
            reply = reply(prompt)
        return CompletionResponse(text=reply, raw={"usage": {"prompt_tokens": len(prompt) // 4,
                                                             "completion_tokens": len(reply) // 4}})

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted, **kwargs)


class JsonReplies:
    """A scripted JSON model (rag/models/structured.py `JsonModel`) for a skill or the reader: `reply` gives the
    reply to (purpose, messages, schema model, max tokens)."""

    def __init__(self, reply: Callable) -> None:
        self.reply = reply

    async def json(self, purpose, messages, schema_model, max_tokens, page=0):
        return await self.reply(purpose, messages, schema_model, max_tokens)


class QueuedLLM(ScriptedLLM):
    """The scripted LLM behind a ModelQueue, as the embedded model is, for the queue's control flow."""

    queue: Any = None
    control: Any = None

    def for_run(self, control):
        run = self.model_copy()  # the script and the queue are shared
        run.control = control
        return run

    def complete(self, prompt, formatted=False, **kwargs):
        with self.queue.turn(self.control):
            return super().complete(prompt, formatted, **kwargs)

    async def achat(self, messages, **kwargs):
        return await asyncio.to_thread(self.chat, messages, **kwargs)


class StopWhenQueued(RunControl):
    """A user who presses Stop `after` seconds after being told that a question is ahead of theirs."""

    def __init__(self, after: float = 0.0) -> None:
        super().__init__()
        self.after = after

    def queue_position(self, ahead: int) -> None:
        super().queue_position(ahead)
        if ahead and self.after:
            threading.Timer(self.after, self.stop).start()
        elif ahead:
            self.stop()


@contextmanager
def model_held(queue) -> Iterator[None]:
    """Another user's question holds the model's queue until the block ends."""
    release, holding = threading.Event(), threading.Event()

    def other_user() -> None:
        with queue.turn(RunControl()):
            holding.set()
            release.wait(30)

    threading.Thread(target=other_user, daemon=True).start()
    holding.wait(5)
    try:
        yield
    finally:
        release.set()


def action(tool: str, query: str, thought: str = "I need more.") -> str:
    return f'Thought: {thought}\nAction: {tool}\nAction Input: {{"query": "{query}"}}'


def answered() -> list:
    """A whole scripted reading: the first page read holds the answer (found_on_page)."""
    return [found_on_page()]


def done() -> str:
    return "Thought: The evidence covers the question.\nAnswer: done"


def found_on_page(words: int = 3):
    """The page reader's reply: found, with the first words of the page's longest line as the answer."""
    def reply(prompt: str) -> str:
        text = prompt.split("<page>")[1].split("</page>")[0]
        line = max(text.splitlines(), key=len).strip()
        return json.dumps({"found": True, "answer": " ".join(line.split()[:words])})
    return reply
