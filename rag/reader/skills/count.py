"""A count of things a page enumerates ("how many countries are listed"): the model copies the items, code
keeps those written on the page and counts them; the list is shown as the program. When the page lists
none of them (it may print the count itself), the next skill reads it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rag import prompts
from rag.reader.answer import Solution
from rag.reader.question import Question
from rag.reader.skills.base import Call, PageView, Read, page_messages
from rag.reader.verify import words_on_page

MAX_ITEMS = 30


class Items(BaseModel):
    found: bool
    items: list[str] = Field(json_schema_extra={"maxItems": MAX_ITEMS})


class Count:
    name = "count"

    def applies(self, question: Question) -> bool:
        return bool(question.counted) and question.asked == "number" and not question.structural

    async def solve(self, question: Question, view: PageView, call: Call) -> Read:
        reply = await call("list to count", page_messages(prompts.COUNT_SYSTEM, question, view), Items, 220)
        if reply.value is None or not reply.value.found:
            return Read(said=reply.text[:300], defer=True, reason="the page lists none of them")
        items = [i for i in dict.fromkeys(x.strip() for x in reply.value.items) if i and words_on_page(i, view.text)]
        if not items:
            return Read(said=reply.text, defer=True, reason="none of the items is on the page")
        program = f"items = {items!r}\nans = len(items)"
        return Read(said=reply.text, solution=Solution(skill=self.name, asked="number", value=str(len(items)),
                                                       program=program, pages=[view.ref], by="code"))
