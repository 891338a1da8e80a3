"""The reader: the model reads the best lines of the best pages, one page a call, and says what it found;
code checks it, converts its units and computes where that is asked.

    understand(question) → route (rag/reader/route.py) → a document skill (the outline's counts) or, page by
    page, the page skills that apply (rag/reader/skills) over the page's best lines → Solution → the sentence
    and the short answer

The reader is handed the model (one JSON reply a call) and gives back what it read as values: each page read
as a `Reading` (the skill's `Read`, the page's record, the model calls made for it), for the step that asked to
report.

"Not in the documents" means that no page read held an answer, never that a word of the question is
missing from the documents.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from pydantic import BaseModel, Field

from rag.models.structured import JsonModel, ModelCall, Recorded
from rag.reader.answer import PageReading, Solution, not_found
from rag.reader.cells import cell
from rag.reader.pages import WHOLE, PageRef, Similarity, best_lines
from rag.reader.ranks import ranked_item
from rag.reader.question import Question, understand
from rag.reader.route import Route, route
from rag.reader.skills import SKILLS, PageView, Read, page_skills
from rag.records import Table
from rag.settings import ReaderSettings

__all__ = ["PageReader", "PageRef", "Question", "Reading", "Route", "Solution", "route", "understand"]


class Pages(Protocol):
    """Where the reader takes a page's text and tables from when it reads it."""

    def text(self, page: PageRef) -> str: ...

    def tables(self, page: PageRef) -> list[Table]: ...


class Speed:
    """The model's page-reading speed in this process (page tokens a second, the reply included): the median of
    its last reads, so that a page read again from memory, in a fraction of a second, does not pass for the
    speed of reading one. The time budget and a late page's window are sized from it."""

    def __init__(self) -> None:
        self.seen: deque[float] = deque(maxlen=7)

    @property
    def rate(self) -> float | None:
        return statistics.median(self.seen) if self.seen else None

    def saw(self, tokens: int, seconds: float) -> None:
        if tokens > 50 and seconds > 0:
            self.seen.append(tokens / seconds)

    def seconds(self, tokens: int, default_rate: float) -> float:
        return tokens / (self.rate or default_rate)


SPEED = Speed()
MIN_WINDOW = 250  # a page's tokens read however late: its title and the lines most like the question
LOOKUP_PAGES = 6  # pages whose tables a plan's part looks its figure up in: a search's top 6


class Reading(BaseModel):
    """What one page read gave: the skill's read, the page's record (the trace's and the hop box's), and the
    model calls made for it, in order."""

    read: Read
    record: PageReading
    calls: list[ModelCall] = Field(default_factory=list)

    @property
    def solution(self) -> Solution | None:
        return self.read.solution


def _once(pages: list[PageRef]) -> list[PageRef]:
    """Each page once, where it first comes."""
    out: list[PageRef] = []
    for page in pages:
        if all(p.key != page.key for p in out):
            out.append(page)
    return out


class PageReader:
    """Reads one question's pages, one per call of `read`, and remembers which it read."""

    def __init__(self, question: Question, settings: ReaderSettings, pages: Pages, similarity: Similarity | None,
                 count_tokens: Callable[[str], int], model: JsonModel, skills: list[str] | None = None) -> None:
        self.question, self.settings, self.pages = question, settings, pages
        self.similarity, self.count_tokens, self.model = similarity, count_tokens, model
        self.skills = [SKILLS[n] for n in skills] if skills else page_skills(question, settings.skills)
        self.read_pages: list[PageRef] = []
        self.before = ""  # what a skill before page reading found missing ("no row for …")
        self._texts: dict[tuple[str, int], str] = {}  # fetched once: fits() and read() both want a page's text

    @property
    def read_keys(self) -> set[tuple[str, int]]:
        return {p.key for p in self.read_pages}

    async def read(self, page: PageRef, spent: float = 0.0) -> Reading:
        """The page's best lines read by the first skill that applies, and checked; `spent`: the question's
        seconds so far."""
        q, whole, window = self.question, self._text(page), self.window(spent)
        late = window < self.settings.page_tokens  # the time left bounds it: no page read whole beyond it
        text = best_lines(whole, q.text, q.terms, self.similarity, self.count_tokens, window, 1.0 if late else WHOLE)
        view, tokens = PageView(ref=page, text=text, whole=whole), self.count_tokens(text)
        start, skill, model = time.time(), self.skills[0], Recorded(self.model, page=page.page)
        by = skill.name
        if self.settings.cells and (found := self._by_code(page, whole)):
            got, by = Read(solution=found, said=found.line), found.skill  # looked up by code: no model call
        elif text.strip():
            got = await skill.solve(q, view, model)
            SPEED.saw(tokens, time.time() - start)
        else:
            got = Read(reason="the page has no text")
        given = got.solution
        if given and (enforced := [why for name, why in got.failed.items() if name in self.settings.checks]):
            got = got.model_copy(update={"solution": None, "reason": enforced[0]})
        self.read_pages.append(page)
        record = PageReading(doc_id=page.doc_id, file=page.file, page=page.page, skill=by,
                             found=got.solution is not None, answer=given.sentence() if given else "",
                             short=given.short() if given else "", checks=got.failed, reason=got.reason,
                             said=got.said, tokens=tokens, t_start=start, t_end=time.time())
        return Reading(read=got, record=record, calls=model.calls)

    def window(self, spent: float) -> int:
        """How many of a page's tokens the model reads: `page_tokens`, or as many as it reads at its measured
        speed in the seconds the question has left of `answer_s` (never fewer than MIN_WINDOW)."""
        left = self.settings.answer_s - spent
        fits = int(left * (SPEED.rate or self.settings.tokens_per_s))
        return max(MIN_WINDOW, min(self.settings.page_tokens, fits))

    def _by_code(self, page: PageRef, whole: str) -> Solution | None:
        """The cell the question names, or the item its tables rank at the extreme asked."""
        tables = self.pages.tables(page)
        return cell(self.question, tables, page, whole) or ranked_item(self.question, tables, page)

    def look_up(self, pages: list[PageRef]) -> Reading | None:
        """The figure the question names, looked up by code in these pages' tables before any page is read by
        the model (a plan's parts often stand in one table: the caller puts an earlier part's page first)."""
        if not self.settings.cells:
            return None
        for page in _once(pages)[:LOOKUP_PAGES]:
            start = time.time()
            if found := cell(self.question, self.pages.tables(page), page, self._text(page)):
                self.read_pages.append(page)
                record = PageReading(doc_id=page.doc_id, file=page.file, page=page.page, skill=found.skill,
                                     found=True, answer=found.sentence(), short=found.short(), said=found.line,
                                     t_start=start, t_end=time.time())
                return Reading(read=Read(solution=found, said=found.line), record=record)
        return None

    def fits(self, page: PageRef, spent: float) -> bool:
        """Whether reading `page` still fits the question's time budget, by the model's measured speed; the
        first page is always read."""
        if not self.read_pages:
            return True
        tokens = min(self.count_tokens(self._text(page)), int(self.settings.page_tokens * WHOLE))
        return spent + SPEED.seconds(tokens, self.settings.tokens_per_s) <= self.settings.budget_s

    def _text(self, page: PageRef) -> str:
        if page.key not in self._texts:
            self._texts[page.key] = self.pages.text(page)
        return self._texts[page.key]

    def out_of_time(self) -> str:
        read = ", ".join(f"p. {p.page}" for p in self.read_pages)
        return f"no page read ({read}) holds the answer, and the time to read more ({self.settings.budget_s:.0f} s) is spent"

    def nothing_found(self, reason: str = "") -> tuple[str, str]:
        return not_found(self.read_pages, reason, self.before)
