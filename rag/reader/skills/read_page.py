"""Page reading, the default skill: the model reads a page's lines and copies what answers the question;
code checks that the answer stands on them, and gives a value with the unit and scale its page states."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, create_model

from rag import prompts
from rag.reader.answer import Solution, valued
from rag.reader.question import Question
from rag.reader.skills.base import Call, PageView, Read, page_messages
from rag.reader.verify import as_printed, in_asked_column, values_on_page, why_not
from rag.text import NUMBER

LINE_CHARS = 200
TEXT_CHARS = {False: 80, True: 200}  # a span, or the one sentence an open question gets
NUMBER_CHARS = 24  # room, in reply tokens, for a figure and its unit
# A figure as a page prints it, with a unit word or two: a small model's runaway digits
# ("41,190,000,000,000,0…", "0.41234567890123…") cannot be written.
NUMBER_PATTERN = (r"^[-(]?[$€£]?([0-9]{1,3}(,[0-9]{3}){1,4}|[0-9]{1,7})([.][0-9]{1,4})?[)]?"
                  r"( ?[%a-zA-Z]{1,12}){0,2}$")
MAX_ITEMS = 12
# Room for the JSON around the answer (a digit is a token); a reply cut short keeps only the answer begun.
REPLY_TOKENS = {"number": 16 + NUMBER_CHARS, "yes_no": 70, "list": 160, "text": 16 + TEXT_CHARS[False] // 2}


def reply_model(question: Question) -> type[BaseModel]:
    """The JSON the model must reply with, by the kind of answer asked (the grammar holds it): one of the
    options offered, a list, Yes/No, a number, or words. Only a yes/no copies the line that decides it:
    every generated token costs on a CPU."""
    asked = question.asked
    if question.options and asked == "text":
        answer = (Literal[tuple(question.options)], ...)
    else:
        answer = {
            "list": (list[str], Field(json_schema_extra={"maxItems": MAX_ITEMS})),
            "yes_no": (Literal["Yes", "No"], ...),
            "number": (str, Field(json_schema_extra={"pattern": NUMBER_PATTERN})),
        }.get(asked, (str, Field(json_schema_extra={"maxLength": TEXT_CHARS[question.open]})))
    line = {"line": (str, Field("", json_schema_extra={"maxLength": LINE_CHARS}))} if asked == "yes_no" else {}
    return create_model(f"Page{asked.title()}", found=(bool, ...), answer=answer, **line)


class ReadPage:
    name = "read_page"

    def applies(self, question: Question) -> bool:
        return True

    async def solve(self, question: Question, view: PageView, call: Call) -> Read:
        asked, text = question.asked, view.text
        reply = await call("read page", page_messages(prompts.READ_PAGE_SYSTEM, question, view), reply_model(question),
                           REPLY_TOKENS[asked] + (60 if question.open else 0))
        found, said = reply.value or _cut_short(reply.text, asked), reply.text
        if found is None:
            return Read(said=said[:300], reason=f"the reply did not parse ({reply.error})")
        if not found.found:
            return Read(said=said, reason="the page does not hold the answer")
        if asked == "list":
            items = [i for i in dict.fromkeys(x.strip() for x in found.answer) if i and not why_not(i, "", text, "text", [])]
            if not items:
                return Read(said=said, reason="none of its items is on the page")
            return Read(said=said, solution=Solution(skill=self.name, asked=asked, items=items, pages=[view.ref]))
        value = in_asked_column(as_printed(str(found.answer).strip(), text), view.whole, question.years)
        # checked against the whole page: the lines read were chosen for the question's words, so on them
        # every line looks like one about what is asked
        reason = why_not(value, getattr(found, "line", ""), view.whole, asked, question.terms, question.years)
        if reason or not values_on_page(value, text):
            return Read(said=said, reason=reason or "its numbers are not in the lines read")
        shown, short = valued(value, view.whole, question) if asked in ("number", "text") and _a_value(value) else (value, "")
        return Read(said=said, solution=Solution(skill=self.name, asked=asked, value=shown, short_value=short,
                                                 line=value, pages=[view.ref]))


def _a_value(answer: str) -> bool:
    """An answer that is a figure (with at most a unit or scale word), not words with a number in them."""
    match = NUMBER.search(answer)
    return bool(match) and len(answer[match.end():].split()) <= 2 and not answer[:match.start()].strip(" $€£")


def _cut_short(reply: str, asked: str) -> BaseModel | None:
    """The answer of a reply cut off by its token bound while the model ran on ("10,573.000000…"): what it
    had written is kept, for code to check on the page like any answer."""
    begun = re.match(r'\s*\{\s*"found"\s*:\s*true\s*,\s*"answer"\s*:\s*"([^"]+)$', reply)
    if asked not in ("number", "text") or not begun:
        return None
    return create_model("CutShort", found=(bool, True), answer=(str, begun.group(1)))()
