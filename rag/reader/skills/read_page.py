"""Page reading, the default skill: the model reads one page and says what answers the question;
code checks that the answer stands on that page and keeps the unit the page gives the value."""

from __future__ import annotations

from typing import Literal

from llama_index.core.llms import ChatMessage, MessageRole
from pydantic import BaseModel, Field, create_model

from rag import prompts
from rag.guard import withhold_instructions
from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.question import Question
from rag.reader.skills.base import Call, Read
from rag.reader.verify import why_not
from rag.text import NUMBER, page_scale, unit_after

LINE_CHARS = 300
ANSWER_CHARS = 160
NUMBER_CHARS = 40  # a value and its unit; a run of digits past it is a runaway, not a reading
MAX_ITEMS = 12


def reply_model(asked: str) -> type[BaseModel]:
    """The JSON the model must reply with, by the kind of answer asked (the grammar enforces it). Only a
    yes/no copies the line that decides it: every generated token costs on a CPU."""
    answer = {
        "list": (list[str], Field(json_schema_extra={"maxItems": MAX_ITEMS})),
        "yes_no": (Literal["Yes", "No", ""], ...),
        "number": (str, Field(json_schema_extra={"maxLength": NUMBER_CHARS})),
    }.get(asked, (str, Field(json_schema_extra={"maxLength": ANSWER_CHARS})))
    line = {"line": (str, Field("", json_schema_extra={"maxLength": LINE_CHARS}))} if asked == "yes_no" else {}
    return create_model(f"Page{asked.title()}", found=(bool, ...), answer=answer, **line)


def page_messages(system: str, question: Question, page: PageRef, text: str) -> list[ChatMessage]:
    prompt = prompts.PAGE.format(page=page.page, file=page.file, text=withhold_instructions(text),
                                 question=question.text)
    return [ChatMessage(role=MessageRole.SYSTEM, content=system), ChatMessage(role=MessageRole.USER, content=prompt)]


class ReadPage:
    name = "read_page"

    def applies(self, question: Question) -> bool:
        return True

    async def solve(self, question: Question, page: PageRef, text: str, call: Call) -> Read:
        asked = question.asked
        messages = page_messages(prompts.READ_PAGE_SYSTEM, question, page, text)
        reply = await call("read page", messages, reply_model(asked), 160)
        if reply.value is None:
            return Read(said=reply.text[:300], reason=f"the reply did not parse ({reply.error})")
        found = reply.value
        said = found.model_dump_json()
        if not found.found:
            return Read(said=said, reason="the page does not hold the answer")
        if asked == "list":
            items = [i for i in dict.fromkeys(x.strip() for x in found.answer) if i and not why_not(i, "", text, "text")]
            if not items:
                return Read(said=said, reason="none of its items is on the page")
            return Read(said=said, solution=Solution(skill=self.name, asked=asked, items=items, pages=[page]))
        value, line = str(found.answer).strip(), getattr(found, "line", "")
        if reason := why_not(value, line, text, asked, question.text):
            return Read(said=said, reason=reason)
        if asked == "number":
            value = with_unit(value, text)
        return Read(said=said, solution=Solution(skill=self.name, asked=asked, value=value, line=line or value,
                                                 pages=[page]))


def with_unit(value: str, page: str) -> str:
    """A bare number gets the unit the page writes after it ("4.2" in "4.2 MW" → "4.2 MW"), or else the
    scale the page states for its figures ("9,912" under "$ in millions" → "$9,912 million")."""
    match = NUMBER.search(value)
    if not match:
        return value
    currency, scale = page_scale(page)
    if (rest := value[match.end():].strip()):  # the model gave a unit: only the page's currency may be missing
        return f"{currency}{value}" if currency and scale and rest.startswith(scale) and "$" not in value else value
    number = match.group().strip()
    if unit := unit_after(page, number):
        return f"{value}{unit}" if unit == "%" else f"{value} {unit}"
    if scale and "$" not in value:
        return f"{currency}{value} {scale}"
    return f"{value} {scale}".strip()
