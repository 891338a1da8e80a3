"""What a photo shows ("how many people in the pictures…") and the colours a page prints in ("the quote colored in
blue") are not in its words: say so, guess nothing."""

from __future__ import annotations

from rag.reader.question import Question
from rag.reader.skills.base import Call, Documents, Read, register

PICTURES_UNREAD = ("the pages' pictures and colours cannot be read here: the reader sees a page's words, table rows "
                   "and chart values, not what its photos show or the colours it prints them in")


@register
class Pictures:
    name, reads = "pictures", "documents"

    async def answer(self, question: Question, documents: Documents, hits, call: Call) -> Read | None:
        return Read(reason=PICTURES_UNREAD, final=True) if question.pictures else None
