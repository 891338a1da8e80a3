"""Page reading, the default skill: the model reads a page's lines and copies what answers the question;
code checks that the answer stands on them, and gives a value with the unit and scale its page states."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, create_model

from rag import prompts
from rag.reader.answer import Solution, valued
from rag.reader.question import Question
from rag.reader.skills.base import JsonModel, PageView, Read, page_messages, register
from rag.reader.verify import as_printed, in_asked_column, items_on_page, verdicts
from rag.text import NUMBER

LINE_CHARS = 300
# Bounds wide enough that no right answer is cut by them (a cut reply lost right sentences): a span, the one
# sentence an open question gets, a list.
TEXT_CHARS = {False: 300, True: 500}
# The figure alone, as the page prints it: its unit and scale come from the page, by code, so no word of
# the page (a planted one among them) rides along; and a small model's runaway digits
# ("41,190,000,000,000,0…", "0.41234567890123…") cannot be written.
NUMBER_PATTERN = r"^-?[(]?[$€£]?([0-9]{1,3}(,[0-9]{3}){1,4}|[0-9]{1,7})([.][0-9]{1,4})?[)]?%?$"
MAX_ITEMS = 12
# Reply tokens: the JSON around the answer and the longest answer the schema allows (a token is 3–4
# characters of a span, a digit is a token), so the schema, not the token bound, ends a reply.
REPLY_TOKENS = {"number": 48, "yes_no": 24 + LINE_CHARS // 3, "list": 320, "text": 24 + TEXT_CHARS[False] // 3}


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


@register
class ReadPage:
    name, reads = "read_page", "page"

    def applies(self, question: Question) -> bool:
        return True

    async def solve(self, question: Question, view: PageView, model: JsonModel) -> Read:
        asked, text = question.asked, view.text
        reply = await model.json("read page", page_messages(prompts.READ_PAGE_SYSTEM, question, view),
                                 reply_model(question), REPLY_TOKENS[asked] + (TEXT_CHARS[True] // 3 if question.open else 0))
        found, said = reply.value or _cut_short(reply.text, asked), reply.text
        if found is None:
            return Read(said=said[:300], reason=f"the reply did not parse ({reply.error})")
        if not found.found:
            return Read(said=said, reason="the page does not hold the answer")
        if asked == "list":
            items = [i for i in dict.fromkeys(x.strip() for x in found.answer) if i]
            kept, failed = items_on_page(items, text)
            solution = Solution(skill=self.name, asked=asked, items=kept or items, pages=[view.ref]) if items else None
            return Read(said=said, solution=solution, failed=failed, reason="" if items else "the list is empty")
        value = in_asked_column(as_printed(str(found.answer).strip(), text), view.whole, question.years)
        # checked against the whole page: the lines read were chosen for the question's words, so on them
        # every line looks like one about what is asked
        failed = verdicts(value, getattr(found, "line", ""), view.whole, asked, question.terms, question.years, text)
        if "empty" in failed:
            return Read(said=said, reason=failed["empty"])
        as_value = asked in ("number", "text") and (_a_value(value) or question.date_form)
        shown, short = valued(value, view.whole, question) if as_value else (value, "")
        return Read(said=said, failed=failed, solution=Solution(skill=self.name, asked=asked, value=shown,
                                                                short_value=short, line=value, pages=[view.ref]))


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
