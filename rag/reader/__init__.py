"""The reader: the model reads the best pages one at a time and says what it found; code checks it.

    understand(question) → a document skill (the outline counts) or, page by page, a page skill
    (ReadPage, or Compute where arithmetic is asked) → Solution → the sentence and the short answer

"Not in the documents" means that no page read held an answer, never that a word of the question is
missing from the documents.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rag.reader.answer import PageReading, Solution, not_found
from rag.reader.pages import PageRef, window
from rag.reader.question import Question, understand
from rag.reader.skills import Call, Read, page_skill
from rag.settings import ReaderSettings

__all__ = ["PageReader", "PageRef", "Question", "Solution", "understand"]


class PageReader:
    """Reads one question's pages, one per call of `read`, and remembers which it read."""

    def __init__(self, question: Question, settings: ReaderSettings, page_text: Callable[[PageRef], str],
                 count_tokens: Callable[[str], int], call: Call, emit: Callable[[PageReading], None]) -> None:
        self.question, self.settings = question, settings
        self.page_text, self.count_tokens = page_text, count_tokens
        self.call, self.emit = call, emit
        self.skill = page_skill(question, set(settings.skills))
        self.read_pages: list[PageRef] = []

    @property
    def read_keys(self) -> set[tuple[str, int]]:
        return {p.key for p in self.read_pages}

    async def read(self, page: PageRef, focus: str) -> Read:
        """The page skill on one page (a window of it when it is long), reported to `emit`."""
        text = window(self.page_text(page), f"{self.question.text}\n{focus}", self.count_tokens,
                      self.settings.page_tokens)
        start = time.time()
        got = await self.skill.solve(self.question, page, text, self.call) if text.strip() else \
            Read(reason="the page has no text")
        self.read_pages.append(page)
        answer = got.solution.sentence() if got.solution else ""
        self.emit(PageReading(doc_id=page.doc_id, file=page.file, page=page.page, skill=self.skill.name,
                              found=got.solution is not None, answer=answer, reason=got.reason, said=got.said,
                              tokens=self.count_tokens(text), t_start=start, t_end=time.time()))
        return got

    def nothing_found(self, reason: str = "") -> tuple[str, str]:
        return not_found(self.read_pages, reason)
