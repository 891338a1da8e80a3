"""Which pages the model reads, in which order, and how much of each.

Pages the question names come first, then the pages of the fragments the search found, best first.
A page longer than the budget is read as a window: the lines around those that hold the most of the
question and of the fragments found there, so a long 10-K page costs what a slide does.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from rag.text import content_words
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
