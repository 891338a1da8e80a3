"""Which pages the model reads, in which order, and how much of each.

Pages the question names come first, then the pages of the fragments the search found, best first.
A page longer than the budget is read as a window: the lines around those that hold the most of the
question and of the fragments found there, so a long 10-K page costs what a slide does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from pydantic import BaseModel

from rag.reader.question import LAST_PAGE, Question
from rag.reader.text import content_words
from rag.records import Hit


class PageRef(BaseModel):
    doc_id: str
    file: str
    page: int
    score: float = 0.0
    named: bool = False

    @property
    def key(self) -> tuple[str, int]:
        return self.doc_id, self.page


def candidates(named: list[PageRef], hits: list[Hit], read: set[tuple[str, int]]) -> list[PageRef]:
    """Named pages, then the found fragments' pages in their hits' order, each once, unread ones only."""
    found = [PageRef(doc_id=h.fragment.doc_id, file=h.fragment.file, page=h.fragment.page, score=h.score)
             for h in hits]
    out: dict[tuple[str, int], PageRef] = {}
    for ref in named + found:
        if ref.key not in read and ref.key not in out:
            out[ref.key] = ref
    return list(out.values())


# a page number printed in a header (a first line starting with it: "28 Chapter 3") or a footer (a last line
# ending with it: "Version 1.3 9", "- 17 -", "Page 17")
_HEADER_NUMBER = re.compile(r"^(?:page\s*)?[-–]?\s*(\d{1,5})(?![\d.,:%/])", re.IGNORECASE)
_FOOTER_NUMBER = re.compile(r"(?:^|\s)(?:page\s*)?[-–]?\s*(\d{1,5})\s*[-–]?$", re.IGNORECASE)
MIN_NUMBERED = 3  # pages that must print their number at the same offset before "page N" means the printed N


def printed_offset(texts: dict[int, str]) -> int | None:
    """How far a document's printed page numbers are from its page positions (position - printed), when most
    pages that print a number alone on a first or last line agree: a paper printing "6985" on its 5th page,
    a manual whose cover is unnumbered. None when too few pages print one."""
    offsets = Counter()
    for page, text in texts.items():
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        printed = {int(m.group(1)) for ln in lines[:2] if (m := _HEADER_NUMBER.match(ln))} | \
                  {int(m.group(1)) for ln in lines[-2:] if (m := _FOOTER_NUMBER.search(ln))}
        offsets.update({page - n for n in printed})
    if not offsets:
        return None
    offset, agree = offsets.most_common(1)[0]
    return offset if agree >= MIN_NUMBERED and agree * 2 >= sum(offsets.values()) else None


def named_positions(question: Question, pages: int, offset: Callable[[], int | None]) -> list[int]:
    """The positions of the pages a question names in a document of `pages` pages: "page 17" is first the page
    that prints 17 (when the printed numbers run at an `offset()` from the positions), then the 17th; "the
    first page" and "the last page" are positions."""
    shift = offset() if set(question.pages) - set(question.positions) else None
    out: list[int] = []
    for p in question.pages:
        at = [pages] if p == LAST_PAGE else [p] if p in question.positions or not shift else [p + shift, p]
        out += [n for n in at if 1 <= n <= pages and n not in out]
    return out


def window(text: str, focus: str, count_tokens: Callable[[str], int], budget: int) -> str:
    """The page, or the run of its lines within `budget` tokens centred on the line most like `focus`."""
    if count_tokens(text) <= budget:
        return text
    lines = [ln if count_tokens(ln) <= budget else ln[: budget * 3] for ln in text.splitlines() if ln.strip()]
    wanted = set(content_words(focus))
    scores = [len(wanted & set(content_words(ln))) for ln in lines]
    centre = max(range(len(lines)), key=lambda n: (scores[n], -n)) if lines else 0
    lo = hi = centre
    used = count_tokens(lines[centre]) if lines else 0
    while True:
        grown = False
        for n in (hi + 1, lo - 1):
            if 0 <= n < len(lines) and not (lo <= n <= hi):
                cost = count_tokens(lines[n]) + 1
                if used + cost <= budget:
                    used += cost
                    lo, hi = min(lo, n), max(hi, n)
                    grown = True
        if not grown:
            break
    return "\n".join(lines[lo : hi + 1])
