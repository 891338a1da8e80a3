"""What a photo or a drawing shows ("how many dogs does the cover photo show", "the shape of the blue arrows") is not in the page's
words: say so, guess nothing. (The colours words are printed in are read: skills/colours.py.)"""

from __future__ import annotations

from rag.reader.question import Question
from rag.reader.skills.base import Documents, JsonModel, Read, register

PICTURES_UNREAD = ("what the pages' pictures show cannot be read here: the reader sees a page's words and their "
                   "colours, table rows and chart values, not what its photos or drawings show")


@register
class Pictures:
    name, reads = "pictures", "documents"

    def applies(self, question: Question) -> bool:
        return question.pictures

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None:
        return Read(reason=PICTURES_UNREAD, final=True)
