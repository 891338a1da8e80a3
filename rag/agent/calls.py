"""The run's model and its event stream, handed once to the workflow's steps, its tools and its reader: every
model call timed, its tokens counted into the run, and reported as an event (a JSON reply's record by the step
that asked for it, from the values the reader and the skills return)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.workflow import Context

from rag.agent.events import Draft
from rag.agent.state import RunState, llm_call
from rag.models.structured import StructuredReply, ask_json, model_call, token_counter

_ANSWER_SO_FAR = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)')


class EventStream:
    """Where the run's events go: the workflow's stream, once the run has started."""

    def __init__(self) -> None:
        self.ctx: Context | None = None

    def emit(self, event) -> None:
        if self.ctx is not None:
            self.ctx.write_event_to_stream(event)


class ModelCalls:
    """The run's language model: chat, a prompt, or a JSON reply held by a schema."""

    def __init__(self, llm, state: RunState, stream: EventStream) -> None:
        self.llm, self.state, self.stream = llm, state, stream
        self.count_tokens = token_counter(llm)

    async def chat(self, messages: list[ChatMessage], purpose: str, **kwargs) -> str:
        t0, start = time.perf_counter(), time.time()
        response = await self.llm.achat(messages, **kwargs)
        text = response.message.content or ""
        self.stream.emit(llm_call(self.state, model_call(purpose, t0, start, response.raw, text)))
        return text

    async def complete(self, prompt: str, purpose: str, **kwargs) -> str:
        return await self.chat([ChatMessage(role=MessageRole.USER, content=prompt)], purpose, **kwargs)

    async def json(self, purpose: str, messages: list[ChatMessage], schema_model, max_tokens: int,
                   page: int = 0) -> StructuredReply:
        """A JSON reply with its call's record, for the step that asked to report; the answer a page read is
        writing goes out on the run's stream as it grows."""
        drafting = self._drafting(page, asyncio.get_running_loop()) if page else None
        return await ask_json(self.llm, messages, schema_model, max_tokens, on_text=drafting, purpose=purpose)

    def _drafting(self, page: int, loop: asyncio.AbstractEventLoop) -> Callable[[str], None]:
        """Hears the reply grow on the model's thread; the answer so far goes out on the workflow's loop."""
        last = [""]

        def seen(text: str) -> None:
            if (found := _ANSWER_SO_FAR.search(text)) and found.group(1) != last[0]:
                last[0] = found.group(1)
                draft = Draft(run_id=self.state.run_id, hop=self.state.hops, page=page, text=last[0].replace('\\"', '"'))
                loop.call_soon_threadsafe(self.stream.emit, draft)

        return seen
