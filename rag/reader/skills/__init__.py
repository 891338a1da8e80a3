"""Skills: one general mechanism each, chosen by what the question asks, not by the order of an if chain.

A page skill reads one page (`solve(question, page, text, call)` → Solution or a reason it is not
there); a document skill answers from the document's structure before any page is read.
"""

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


def page_skill(question: Question, enabled: set[str]) -> PageSkill:
    """The skill that reads pages for this question: arithmetic when it asks for it, else reading."""
    from rag.reader.skills.compute import Compute
    from rag.reader.skills.read_page import ReadPage

    for skill in (Compute(), ReadPage()):
        if skill.name in enabled | {"read_page"} and skill.applies(question):
            return skill
    return ReadPage()
