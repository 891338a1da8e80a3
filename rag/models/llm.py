"""Language models, chosen by the environment: an OpenAI-compatible server when
OPENAI_BASE_URL is set, OpenAI when OPENAI_API_KEY is set, otherwise the embedded local
model (Qwen2.5-Coder-1.5B-Instruct on llama.cpp). The local model is never swapped for a
remote one behind the user's back.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from llama_index.core.llms import (
    LLM,
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from pydantic import PrivateAttr

from rag.control import RunControl
from rag.models.gguf import GGUF_NAME, ensure_gguf
from rag.models.queue import ModelQueue
from rag.settings import Settings

# A ReAct step ends where the model would start inventing the tool's answer.
REACT_STOP = ["Observation:"]
# Decoding fills both cores for seconds; at a lower priority it yields them to what a user waits on
# first (the page, the query's embedding and search), and still has them whenever they are idle.
DECODE_NICE = 5


def _lower_priority() -> None:
    """Lower this thread's priority (Linux nices threads one by one; the threads llama.cpp starts from
    it inherit the value)."""
    if sys.platform == "linux":
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), DECODE_NICE)


class LocalLlamaCpp(CustomLLM):
    """A GGUF model in-process through llama.cpp, with the chat template the GGUF carries.

    LlamaIndex's LlamaCPP class formats prompts as "user: …" instead of the model's own
    template and ignores per-call stop sequences, so this wraps create_chat_completion.
    Calls take turns in a fair queue (one llama.cpp context decodes one prompt at a time); a copy
    made by `for_run` tells its question's place in it and stops when the question is stopped.
    """

    model_name: str = GGUF_NAME
    context_window: int = 4096
    max_tokens: int = 700
    temperature: float = 0.0
    stop: list[str] = REACT_STOP
    _llm: Any = PrivateAttr()
    _queue: ModelQueue = PrivateAttr(default_factory=ModelQueue)
    _control: RunControl | None = PrivateAttr(default=None)
    _decoder: ThreadPoolExecutor = PrivateAttr(
        default_factory=lambda: ThreadPoolExecutor(1, "decode", initializer=_lower_priority))

    def __init__(self, model_path: Path, n_threads: int = 2, cache_mb: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from rag.models.kept_states import KeptStatesLlama

        # A page asked about again (another question, another user) costs its question, not its text.
        self._llm = KeptStatesLlama(model_path=str(model_path), n_ctx=self.context_window, n_threads=n_threads,
                                    cache_mb=cache_mb, verbose=False)
        self._llm.eval = self._stoppable(self._llm.eval)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.context_window, num_output=self.max_tokens,
                           is_chat_model=True, model_name=self.model_name)

    def for_run(self, control: RunControl) -> LocalLlamaCpp:
        """The same model and queue, for one question: its calls keep the question's place in the
        queue, report it to `control`, and end at the next token once the question is stopped."""
        run = self.model_copy()  # private attributes are shared: one llama.cpp context, one queue
        run._control = control
        return run

    @property
    def queue(self) -> ModelQueue:
        return self._queue

    def _complete(self, args: dict) -> dict:
        with self._queue.turn(self._control):
            return self._decoder.submit(self._llm.create_chat_completion, **args).result()

    def _stoppable(self, decode):
        """llama.cpp's decode step, run once for the prompt and once per generated token: the question
        being served ends there when it has been stopped, instead of generating to the end."""
        queue = self._queue

        def eval(tokens):
            if queue.serving is not None:
                queue.serving.check()
            return decode(tokens)

        return eval

    def _args(self, messages: Sequence[ChatMessage], kwargs: dict) -> dict:
        return {
            "messages": [{"role": m.role.value, "content": m.content or ""} for m in messages],
            "temperature": kwargs.get("temperature", self.temperature),
            "max_tokens": self._room(messages, kwargs.get("max_tokens", self.max_tokens)),
            "stop": kwargs.get("stop", self.stop),
        }

    def _room(self, messages: Sequence[ChatMessage], wanted: int) -> int:
        """Output tokens that still fit the context: llama.cpp 0.3 crashes the process (SIGSEGV)
        when generation runs past n_ctx, instead of stopping."""
        text = "".join(m.content or "" for m in messages)
        prompt = len(self._llm.tokenize(text.encode(), add_bos=False)) + 8 * len(messages) + 8
        room = self.context_window - prompt
        if room < 16:
            raise ValueError(f"Requested tokens ({prompt}) exceed context window of {self.context_window}")
        return min(wanted, room)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        out = self._complete(self._args(messages, kwargs))
        content = out["choices"][0]["message"]["content"] or ""
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=content), raw=out)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        def generate() -> ChatResponseGen:
            text = ""
            with self._queue.turn(self._control):
                chunks = self._llm.create_chat_completion(**self._args(messages, kwargs), stream=True)
                while (chunk := self._decoder.submit(next, chunks, None).result()) is not None:
                    delta = chunk["choices"][0]["delta"].get("content") or ""
                    text += delta
                    yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
                                       delta=delta, raw=chunk)

        return generate()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        response = self.chat([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs)
        return CompletionResponse(text=response.message.content or "", raw=response.raw)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        def generate() -> CompletionResponseGen:
            for r in self.stream_chat([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs):
                yield CompletionResponse(text=r.message.content or "", delta=r.delta)

        return generate()

    def json_chat(self, messages: Sequence[ChatMessage], schema: dict, max_tokens: int,
                  on_text: Callable[[str], None] | None = None) -> dict:
        """A reply that is JSON fitting the schema, enforced by a llama.cpp grammar; `on_text` hears it grow."""
        args = self._args(messages, {"max_tokens": max_tokens, "stop": []})
        args["response_format"] = {"type": "json_object", "schema": schema}
        if on_text is None:
            return self._complete(args)
        text, generated = "", 0
        with self._queue.turn(self._control):
            chunks = self._llm.create_chat_completion(**args, stream=True)
            while (chunk := self._decoder.submit(next, chunks, None).result()) is not None:
                if delta := chunk["choices"][0]["delta"].get("content") or "":
                    text, generated = text + delta, generated + 1
                    on_text(text)
            prompt = self._llm.n_tokens - generated  # a stream reports no usage: the context holds both
        return {"choices": [{"message": {"content": text}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": generated}}

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode(), add_bos=False))

    # Decoding takes seconds: off the event loop, so hop events reach the UI meanwhile.
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self.chat, messages, **kwargs)

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return await asyncio.to_thread(self.complete, prompt, formatted, **kwargs)


def for_run(llm: LLM, control: RunControl) -> LLM:
    """The model as one question uses it: the embedded model's queue hears the question's control.
    A remote server keeps its own queue; its calls are stopped by cancelling the run."""
    return llm.for_run(control) if hasattr(llm, "for_run") else llm


def model_load(llm: LLM) -> int:
    """Questions with the embedded model now; a remote server's queue is not ours to see (0)."""
    queue = getattr(llm, "queue", None)
    return queue.load if isinstance(queue, ModelQueue) else 0


def provider(settings: Settings) -> str:
    if os.environ.get("OPENAI_BASE_URL"):
        return "openai-compatible"
    if os.environ.get("OPENAI_API_KEY"):
        return "openai"
    return "local"


def describe(settings: Settings) -> str:
    """What the sidebar and traces show: never a key."""
    kind = provider(settings)
    if kind == "openai-compatible":
        return f"OpenAI-compatible {settings.llm.compatible_model} at {_public_url(os.environ['OPENAI_BASE_URL'])}"
    if kind == "openai":
        return f"OpenAI {settings.llm.openai_model}"
    return f"local {GGUF_NAME} (llama.cpp, CPU)"


def clients(settings: Settings, **credentials: str) -> dict:
    """One retry loop, the openai client's: backoff with jitter, Retry-After honoured, at most
    max_retries retries. LlamaIndex's OpenAI classes wrap each call in a second loop of their own
    (max_retries=2 meant six requests, six timeouts, and that loop logs the server's error body,
    which may quote the API key), so theirs is switched off with max_retries=0."""
    import openai

    args = {**credentials, "timeout": settings.llm.request_timeout_s, "max_retries": settings.llm.max_retries}
    return {"max_retries": 0, "openai_client": openai.OpenAI(**args),
            "async_openai_client": openai.AsyncOpenAI(**args)}


def _public_url(url: str) -> str:
    """The server's address without credentials a user may have put in it (user:pass@, ?key=)."""
    parts = urlsplit(url)
    netloc = f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname or ""
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def make_llm(settings: Settings, progress=None) -> LLM:
    cfg, agent = settings.llm, settings.agent
    common = {"temperature": agent.temperature, "max_tokens": agent.max_output_tokens}
    kind = provider(settings)
    if kind == "openai-compatible":
        from llama_index.llms.openai_like import OpenAILike

        credentials = {"api_key": os.environ.get("OPENAI_API_KEY") or "not-needed",
                       "base_url": os.environ["OPENAI_BASE_URL"]}
        return OpenAILike(
            model=cfg.compatible_model, api_base=credentials["base_url"], api_key=credentials["api_key"],
            is_chat_model=True, context_window=cfg.context_window, timeout=cfg.request_timeout_s,
            additional_kwargs={"stop": REACT_STOP}, **clients(settings, **credentials), **common,
        )
    if kind == "openai":
        from llama_index.llms.openai import OpenAI

        return OpenAI(model=cfg.openai_model, timeout=cfg.request_timeout_s,
                      additional_kwargs={"stop": REACT_STOP}, **clients(settings), **common)
    path = ensure_gguf(cfg.model_dir, progress)
    return LocalLlamaCpp(path, n_threads=cfg.threads, cache_mb=cfg.cache_mb, context_window=cfg.context_window,
                         **common)
