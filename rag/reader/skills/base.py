"""What every skill shares: the model it is handed (one JSON reply a call, rag/models/structured.py), what it
reads, what it gives, and the registry a skill's file adds it to with `@register`."""

from __future__ import annotations

from typing import Literal, Protocol

from llama_index.core.llms import ChatMessage, MessageRole
from pydantic import BaseModel, Field

from rag import prompts
from rag.guard import withhold_instructions
from rag.models.structured import JsonModel
from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.question import Question
from rag.records import DocumentInfo, StatementFrame


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
    final: bool = Field(False, description="no page is read after it: the pages' words cannot answer")


class PageSkill(Protocol):
    """Reads one page for a question it applies to."""

    name: str
    reads: Literal["page"]

    def applies(self, question: Question) -> bool: ...

    async def solve(self, question: Question, view: PageView, model: JsonModel) -> Read: ...


class Documents(Protocol):
    """What a document skill may ask of the searched documents."""

    docs: list[DocumentInfo]

    def frames(self, hits, names: list[str] = (), asked: str = "") -> list[StatementFrame]:
        """The statements of the filing the question asks about (`asked`: its text, naming a company, form or year)."""
        ...

    def outline(self, doc_id: str): ...

    def words(self) -> set[str]:
        """The stems the documents print (rag/reader/skills/names.py `vocabulary`)."""
        ...

    def printed(self, doc_id: str) -> dict[int, str]:
        """Per page, the text as printed (rag/reader/occurrences.py `page_texts`)."""
        ...


class DocumentSkill(Protocol):
    """Answers from what the store knows of the searched documents (their outline, their statements) before
    any page is read. `applies` is its test of the question alone, which puts it on the route
    (rag/reader/route.py); `answer`, asked only then, gives None when the documents show it does not apply
    after all, else a solution, or why not (said with the answer when no page holds one)."""

    name: str
    reads: Literal["documents"]

    def applies(self, question: Question) -> bool: ...

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None: ...


SKILLS: dict[str, PageSkill | DocumentSkill] = {}


def register(cls):
    """A skill's class decorator: the reader finds it by its name; `ReaderSettings.skills` switches it on and
    orders it."""
    SKILLS[cls.name] = cls()
    return cls


def page_messages(system: str, question: Question, view: PageView) -> list[ChatMessage]:
    """The fixed task first (llama.cpp reuses its cached prefix from one call to the next), then the page."""
    prompt = prompts.PAGE.format(page=view.ref.page, file=view.ref.file, text=withhold_instructions(view.text),
                                 question=question.task or question.text)
    return [ChatMessage(role=MessageRole.SYSTEM, content=system), ChatMessage(role=MessageRole.USER, content=prompt)]


def few_shot(system: str, examples: list[tuple[str, str]], text: str) -> list[ChatMessage]:
    """The fixed task and its worked examples first (llama.cpp reuses the cached prefix), then the question."""
    shown = [ChatMessage(role=role, content=said) for pair in examples
             for role, said in zip((MessageRole.USER, MessageRole.ASSISTANT), pair)]
    return [ChatMessage(role=MessageRole.SYSTEM, content=system), *shown,
            ChatMessage(role=MessageRole.USER, content=text)]
