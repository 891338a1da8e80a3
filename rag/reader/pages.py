"""Which pages the model reads, in which order, and which of their lines.

Pages the question names come first, then the pages of the fragments the search found, best first. A
page longer than the budget is read as its best lines: each line is ranked against the question by its
words (rare ones on the page count most) and by the embedder's similarity, fused by rank; the best are
kept within the budget, each with the line above it (a row's heading, a value's label) and the page's
first lines (its title, the scale its figures are in), in page order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from pydantic import BaseModel

from rag.records import Hit
from rag.text import content_words

# (question, lines) → each line's similarity to the question (the embedder's cosine)
Similarity = Callable[[str, list[str]], list[float]]
HEAD_LINES = 2
GAP = "…"
WHOLE = 1.5  # a page up to this many times the budget is read whole, not cut to its best lines


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


def best_lines(text: str, question: str, terms: list[str], similarity: Similarity | None,
               count_tokens: Callable[[str], int], budget: int, whole: float = WHOLE) -> str:
    """The page whole when it fits the budget (or `whole` times it), else its best lines within the budget."""
    if count_tokens(text) <= budget * whole:
        return text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    scores = rank_lines(lines, question, terms, similarity)
    kept: set[int] = set()
    used = 0
    for n in [*range(min(HEAD_LINES, len(lines))), *sorted(range(len(lines)), key=lambda i: -scores[i])]:
        for i in (n, n - 1) if n >= HEAD_LINES else (n,):
            if i not in kept and i >= 0 and used + (cost := count_tokens(lines[i]) + 1) <= budget:
                kept.add(i)
                used += cost
        if used >= budget * 0.95:
            break
    out, last = [], -1
    for i in sorted(kept):
        if i > last + 1:
            out.append(GAP)
        out.append(lines[i])
        last = i
    return "\n".join(out + ([GAP] if last < len(lines) - 1 else []))


def rank_lines(lines: list[str], question: str, terms: list[str], similarity: Similarity | None) -> list[float]:
    """Each line's fused rank: its share of the question's words, weighted by how rare each is on the page,
    and its similarity to the question."""
    words = [set(content_words(ln)) for ln in lines]
    df = Counter(w for ws in words for w in ws)
    lexical = [sum(math.log(1 + len(lines) / df[t]) for t in terms if t in ws) for ws in words]
    ranked = [lexical] + ([similarity(question, lines)] if similarity else [])
    fused = [0.0] * len(lines)
    for scores in ranked:
        for rank, i in enumerate(sorted(range(len(lines)), key=lambda i: -scores[i])):
            fused[i] += 1 / (60 + rank) if scores[i] > 0 else 0.0
    return fused
