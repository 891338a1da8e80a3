"""Page reading with one free reply: the model says whether the page answers and, in a few words of the
page, what the answer is; code puts the reply in the form asked (rag/reader/normalise.py) and checks that
it stands on the page. The floor of the general path: what a reader with no skills would keep."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rag import prompts
from rag.reader.answer import Solution, valued
from rag.reader.normalise import normalised
from rag.reader.question import Question
from rag.reader.skills.base import JsonModel, PageView, Read, page_messages, register
from rag.reader.verify import as_printed, in_asked_column, items_on_page, verdicts

ANSWER_CHARS = 200
REPLY_TOKENS = 80  # a short answer and its JSON; a reply that runs on is cut here and kept as far as it went


class FreeReply(BaseModel):
    found: bool
    answer: str = Field("", json_schema_extra={"maxLength": ANSWER_CHARS})


@register
class ReadFree:
    name, reads = "read_free", "page"

    def applies(self, question: Question) -> bool:
        return True

    async def solve(self, question: Question, view: PageView, model: JsonModel) -> Read:
        system, page = page_messages(prompts.READ_FREE_SYSTEM, question, view)
        asked = page.model_copy(update={"content": page.content + prompts.READ_FREE_TASK})
        reply = await model.json("read page", [system, asked], FreeReply, REPLY_TOKENS)
        said = reply.text
        if reply.value is None:
            return Read(said=said[:300], reason=f"the reply did not parse ({reply.error})")
        if not reply.value.found or not reply.value.answer.strip():
            return Read(said=said, reason="the page does not hold the answer")
        if not any(c.isalnum() for c in reply.value.answer):  # a brace or a bracket the reply ran into
            return Read(said=said, reason="the reply holds no word and no number")
        return _solution(question, view, normalised(reply.value.answer, question), said)


def _solution(question: Question, view: PageView, answer: str | list[str], said: str) -> Read:
    """The normalised reply as a solution, with each check's verdict (the reader enforces those switched on)."""
    asked, page = question.asked, view.whole
    if answer == []:
        return Read(said=said, reason="the list is empty")
    if isinstance(answer, list):
        _, failed = items_on_page(answer, page)
        return Read(said=said, failed=failed, solution=Solution(skill=ReadFree.name, asked="list", items=answer,
                                                                pages=[view.ref]))
    value = in_asked_column(as_printed(answer, page), page, question.years) if asked == "number" else answer
    checked = "text" if asked == "yes_no" else asked  # a Yes/No stands by the page's words, not by a quoted line
    failed = {} if value in ("Yes", "No") else verdicts(value, "", page, checked, question.terms, question.years,
                                                                view.text, question.counts)
    shown, short = valued(value, page, question) if asked == "number" or question.date_form else (value, "")
    return Read(said=said, failed=failed, solution=Solution(skill=ReadFree.name, asked=asked, value=shown,
                                                            short_value=short, line=value, pages=[view.ref]))
