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
from collections.abc import Callable
from typing import Any, TypeVar

from llama_index.core.llms import ChatMessage
from llama_index.core.utils import get_tokenizer
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class StructuredReply(BaseModel):
    """What a constrained call returned: the parsed value (None when it would not parse) and the raw reply."""

    value: Any = None
    text: str = ""
    raw: Any = None
    error: str | None = None
    constraint: str = ""  # how the reply was held to the schema: grammar, json_schema, json_object or prompt


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
                   on_text: Callable[[str], None] | None = None) -> StructuredReply:
    """One constrained call; a reply that does not validate comes back with its error, not raised.
    `on_text` hears the embedded model's reply as it grows."""
    schema = schema_of(model)
    if hasattr(llm, "json_chat"):
        raw = await asyncio.to_thread(llm.json_chat, messages, schema, max_tokens, on_text)
        text, constraint = raw["choices"][0]["message"]["content"] or "", "grammar"
    else:
        raw, text, constraint = await _remote_json(llm, messages, schema, max_tokens)
    return parse(text, model, raw).model_copy(update={"constraint": constraint})


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
