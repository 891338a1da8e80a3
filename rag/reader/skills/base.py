"""What every skill shares: how it calls the model, and what reading one page gives."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from llama_index.core.llms import ChatMessage
from pydantic import BaseModel

from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.question import Question

# (purpose, messages, pydantic model, max tokens) → a constrained reply (rag.models.structured)
Call = Callable[[str, list[ChatMessage], type[BaseModel], int], Awaitable[Any]]


class Read(BaseModel):
    """What one page gave: a solution, or why not (and what the model said, for the trace)."""

    solution: Solution | None = None
    said: str = ""
    reason: str = ""


class PageSkill(Protocol):
    name: str

    def applies(self, question: Question) -> bool: ...

    async def solve(self, question: Question, page: PageRef, text: str, call: Call) -> Read: ...
