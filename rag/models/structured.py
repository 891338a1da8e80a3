"""Constrained JSON replies from any of our LLMs, and token counts in the model's own tokenizer.

- The embedded model: a llama.cpp grammar built from the JSON schema (`LocalLlamaCpp.json_chat`), so the
  reply always parses and every enum (evidence ids) is one that exists.
- OpenAI and OpenAI-compatible servers: `response_format` with the JSON schema (OpenAI structured
  outputs; vLLM and Ollama accept it too); a server that refuses it gets JSON mode with the schema
  (llama-cpp-python's server builds a grammar from it), then a plain request, both with the schema in
  the prompt. Every reply is validated against the pydantic model either way.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from llama_index.core.llms import ChatMessage
from llama_index.core.utils import get_tokenizer
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class ModelCall(BaseModel):
    """One model call as it went, for the step that asked for it to report: what for, when, how long, its tokens
    and its reply."""

    purpose: str
    t_start: float
    t_end: float
    llm_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    output: str = ""
    constraint: str = ""  # for JSON replies: grammar, json_schema, json_object or prompt


class StructuredReply(BaseModel):
    """What a constrained call returned: the parsed value (None when it would not parse), the raw reply, and the
    call's record."""

    value: Any = None
    text: str = ""
    raw: Any = None
    error: str | None = None
    constraint: str = ""  # how the reply was held to the schema: grammar, json_schema, json_object or prompt
    call: ModelCall | None = None


class JsonModel(Protocol):
    """A model that gives one reply held to a schema, with its call's record; `page`: the page the reply is
    written for (an answer shown as it grows says which)."""

    async def json(self, purpose: str, messages: list[ChatMessage], schema_model: type[BaseModel], max_tokens: int,
                   page: int = 0) -> StructuredReply: ...


class Recorded:
    """A JsonModel whose calls are kept in order, for the one who handed it down to report as values; `page`:
    the page its replies are written for."""

    def __init__(self, model: JsonModel, page: int = 0) -> None:
        self.model, self.page = model, page
        self.calls: list[ModelCall] = []

    async def json(self, purpose: str, messages: list[ChatMessage], schema_model: type[BaseModel], max_tokens: int,
                   page: int = 0) -> StructuredReply:
        reply = await self.model.json(purpose, messages, schema_model, max_tokens, page or self.page)
        if reply.call is not None:
            self.calls.append(reply.call)
        return reply


def schema_of(model: type[BaseModel]) -> dict:
    """A JSON schema without titles: fewer tokens in a grammar, and accepted by strict servers."""
    schema = model.model_json_schema()

    def strip(node):
        if isinstance(node, dict):
            node.pop("title", None)
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(schema)
    schema["additionalProperties"] = False
    return schema


async def ask_json(llm, messages: list[ChatMessage], model: type[T], max_tokens: int = 200,
                   on_text: Callable[[str], None] | None = None, purpose: str = "") -> StructuredReply:
    """One constrained call, with its record (for `purpose`); a reply that does not validate comes back with its
    error, not raised. `on_text` hears the embedded model's reply as it grows."""
    t0, start = time.perf_counter(), time.time()
    schema = schema_of(model)
    if hasattr(llm, "json_chat"):
        raw = await asyncio.to_thread(llm.json_chat, messages, schema, max_tokens, on_text)
        text, constraint = raw["choices"][0]["message"]["content"] or "", "grammar"
    else:
        raw, text, constraint = await _remote_json(llm, messages, schema, max_tokens)
    call = model_call(purpose, t0, start, raw, text, constraint)
    return parse(text, model, raw).model_copy(update={"constraint": constraint, "call": call})


def model_call(purpose: str, t0: float, start: float, raw, output: str, constraint: str = "") -> ModelCall:
    """A finished call's record: `t0` its perf_counter and `start` its wall clock when it began."""
    prompt_tokens, completion_tokens = usage(raw)
    return ModelCall(purpose=purpose, t_start=start, t_end=time.time(),
                     llm_ms=round((time.perf_counter() - t0) * 1000, 1), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, output=output,
                     constraint=constraint)


def usage(raw) -> tuple[int, int]:
    """Token counts from an OpenAI-style or llama.cpp response, whichever shape it has."""
    if raw is None:
        return 0, 0
    found = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
    if found is None:
        return 0, 0
    get = found.get if isinstance(found, dict) else lambda k, d=0: getattr(found, k, d)
    return int(get("prompt_tokens", 0) or 0), int(get("completion_tokens", 0) or 0)


def parse(text: str, model: type[T], raw: Any = None) -> StructuredReply:
    try:
        return StructuredReply(value=model.model_validate_json(_FENCE.sub("", text.strip())), text=text, raw=raw)
    except (ValidationError, ValueError) as exc:
        return StructuredReply(text=text, raw=raw, error=f"{type(exc).__name__}: {str(exc)[:300]}")


async def _remote_json(llm, messages, schema: dict, max_tokens: int) -> tuple[Any, str, str]:
    formats = [{"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
               {"type": "json_object", "schema": schema}, None]  # llama-cpp-python's server: a grammar from it
    said = [*messages[:-1], ChatMessage(role=messages[-1].role, content=(  # for JSON without this schema
        f"{messages[-1].content}\nReply with JSON only, matching this schema: {json.dumps(schema)}"))]
    last: Exception | None = None
    for fmt in formats:
        kwargs = {"max_tokens": max_tokens} | ({"response_format": fmt} if fmt else {})
        try:
            response = await llm.achat(messages if fmt and fmt["type"] == "json_schema" else said, **kwargs)
            return response.raw, response.message.content or "", fmt["type"] if fmt else "prompt"
        except Exception as exc:  # a server that does not know this response_format answers 400
            if not _unsupported(exc):
                raise
            last = exc
    raise last  # pragma: no cover - the plain request raised something else already


def _unsupported(exc: Exception) -> bool:
    status, text = getattr(exc, "status_code", None), str(exc).lower()
    # llama.cpp's server answers an unknown response_format with a 500 that names it
    return (status in (400, 422) or (status == 500 and "response_format" in text)) and "context" not in text


def token_counter(llm) -> Callable[[str], int]:
    """Token counts in the model's own tokenizer where we have it (the embedded model), else tiktoken's."""
    if hasattr(llm, "count_tokens"):
        return llm.count_tokens
    tokenize = get_tokenizer()
    return lambda text: len(tokenize(text))
