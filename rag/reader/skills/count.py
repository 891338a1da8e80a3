"""A count of things on a page ("how many examples / offices / people …"): the count as the page prints it, read
and checked as any figure; else the things themselves, listed by the model, each found on the page, and counted
by code. A small model copies a count a page prints but cannot count what it only lists."""

from __future__ import annotations

import re

from rag.reader.answer import Solution
from rag.reader.question import Question
from rag.reader.skills.base import Call, PageView, Read, register
from rag.reader.skills.read_page import ReadPage

_MORE = re.compile(r"\bhow many (?:more|fewer|less)\b", re.I)  # a difference of two counts: a plan's
_HOW_MANY = re.compile(r"\bhow many\b", re.I)


@register
class Count:
    name, reads = "count", "page"

    def applies(self, question: Question) -> bool:
        return question.counts and question.asked == "number" and not _MORE.search(question.text) and \
            not (question.structural or question.printed or question.pictures or question.colour)

    async def solve(self, question: Question, view: PageView, call: Call) -> Read:
        printed = await ReadPage().solve(question, view, call)
        if printed.solution and not printed.failed:
            return printed
        listed = await ReadPage().solve(listing(question), view, call)
        items = listed.solution.items if listed.solution and not listed.failed else []
        if not items:
            return printed
        program = f"items = {items!r}\nans = len(items)"
        return Read(said=listed.said, solution=Solution(skill=self.name, asked="number", value=str(len(items)),
                                                        program=program, by="code", pages=[view.ref]))


def listing(question: Question) -> Question:
    """The question that lists what the count counts: "how many X are …" asked as "which X are …"."""
    task = _HOW_MANY.sub("which", question.task or question.text, count=1)
    return question.model_copy(update={"task": task[:1].upper() + task[1:], "asked": "list"})
