"""What every skill shares: how it calls the model, what it reads of a page, and what reading gives."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from llama_index.core.llms import ChatMessage, MessageRole
from pydantic import BaseModel, Field

from rag import prompts
from rag.guard import withhold_instructions
from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.question import Question

# (purpose, messages, pydantic model, max tokens) → a constrained reply (rag.models.structured), for one page
Call = Callable[[str, list[ChatMessage], type[BaseModel], int], Awaitable[Any]]


class PageView(BaseModel):
    """A page as a skill reads it: the lines the model reads, and the whole page (where code looks for the
    scale its figures are in)."""

    ref: PageRef
    text: str
    whole: str


class Read(BaseModel):
    """What one page gave a skill: a solution, or why not (and what the model said, for the trace)."""

    solution: Solution | None = None
    said: str = ""
    reason: str = ""
    failed: dict[str, str] = Field(default_factory=dict, description="the checks the solution failed, by name")


class PageSkill(Protocol):
    name: str

    def applies(self, question: Question) -> bool: ...

    async def solve(self, question: Question, view: PageView, call: Call) -> Read: ...


def page_messages(system: str, question: Question, view: PageView) -> list[ChatMessage]:
    """The fixed task first (llama.cpp reuses its cached prefix from one call to the next), then the page."""
    prompt = prompts.PAGE.format(page=view.ref.page, file=view.ref.file, text=withhold_instructions(view.text),
                                 question=question.task or question.text)
    return [ChatMessage(role=MessageRole.SYSTEM, content=system), ChatMessage(role=MessageRole.USER, content=prompt)]
