"""The one context builder: what the model reads of the evidence a run gathered.

Evidence is numbered (E1 = the best) so the model can point at it and code can check what it says
against it. It is rendered worst first, so the best evidence stands last, next to the question. The
builder owns the three things every prompt with document text needs: the numbering, the token budget
(counted in the model's own tokenizer) and the injection guard (document text is data, and sentences
addressed to the model are withheld).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from pydantic import BaseModel, Field

from rag.guard import withhold_instructions
from rag.records import BBox, Cell, Hit

MAX_ITEM_CHARS = 320
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"“(A-Z0-9•–-])")
_WORDS = re.compile(r"[a-z][a-z0-9'’-]+|\d[\d,.]*%?")
KIND = {"text": "text", "table": "table row", "image_caption": "figure", "page": "page line", "outline": "outline"}


class EvidenceItem(BaseModel):
    """One numbered piece of evidence: a sentence group, a table row, a figure, a page line, an outline line."""

    id: str = ""
    text: str
    kind: str
    doc_id: str
    file: str
    page: int
    score: float = 0.0
    fragment_id: str | None = None
    bbox: BBox | None = None
    cells: list[Cell] = Field(default_factory=list, description="a table row's cells, as ingestion read them")


class Evidence(BaseModel):
    items: list[EvidenceItem]
    many_files: bool = False
    best_last: bool = False

    def get(self, ids: Iterable[str]) -> list[EvidenceItem]:
        by_id = {item.id: item for item in self.items}
        return [by_id[i] for i in ids if i in by_id]

    def add(self, items: list[EvidenceItem]) -> list[EvidenceItem]:
        """More evidence found while reading, numbered after the rest; lines already here are not repeated."""
        seen = {same_text(i.text) for i in self.items}
        added = []
        for item in items:
            key = same_text(item.text)
            if key and key not in seen:
                seen.add(key)
                added.append(item.model_copy(update={"id": f"E{len(self.items) + len(added) + 1}"}))
        self.items += added
        return added

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self.items]

    def render(self, items: list[EvidenceItem] | None = None) -> str:
        """Items as the model reads them, in rank order (or reversed, the best next to the question)."""
        chosen = self.items if items is None else items
        lines = [f"[{i.id}] {self._where(i)} {KIND[i.kind]}: {withhold_instructions(i.text)}"
                 for i in (reversed(chosen) if self.best_last else chosen)]
        return "\n".join(lines) or "(no evidence found)"

    def _where(self, item: EvidenceItem) -> str:
        return f"{item.file} p.{item.page}" if self.many_files else f"p.{item.page}"


def from_hits(hits: list[Hit]) -> list[EvidenceItem]:
    """Fragments as evidence items: long paragraphs in sentence groups, rows and figures whole."""
    items = []
    for hit in hits:
        f = hit.fragment
        pieces = split_text(f.text) if f.modality == "text" else [f.text[: 2 * MAX_ITEM_CHARS]]
        items += [EvidenceItem(text=p, kind=f.modality, doc_id=f.doc_id, file=f.file, page=f.page, score=hit.score,
                               fragment_id=f.id, bbox=f.bbox, cells=f.cells) for p in pieces]
    return items


def page_lines(doc_id: str, file: str, page: int, text: str, score: float = 1.0) -> list[EvidenceItem]:
    """A page's text as items: its lines, short ones joined, so a question about a page sees all of it."""
    return [EvidenceItem(text=p, kind="page", doc_id=doc_id, file=file, page=page, score=score)
            for p in join_short_lines(text.splitlines())]


def rerank(items: list[EvidenceItem], terms: list[str], k: int = 10) -> list[EvidenceItem]:
    """Fuse the retrieval's order with how much of the question each item holds (rarer words and
    numbers count more), by reciprocal rank: the line that names the row and the year asked for
    comes first, where an embedding alone ranks a neighbouring row as high."""
    if not terms or not items:
        return items
    texts = [{_stem(w) for w in _WORDS.findall(i.text.lower())} for i in items]
    terms = list(dict.fromkeys(_stem(t) for t in terms))
    weight = {t: (2.0 if t[0].isdigit() else 1.0) / (1 + sum(t in words for words in texts)) for t in terms}
    overlap = [sum(w for t, w in weight.items() if t in words) for words in texts]
    by_overlap = sorted(range(len(items)), key=lambda n: -overlap[n])
    fused = {n: 1 / (k + n) for n in range(len(items))}
    for rank, n in enumerate(by_overlap):
        fused[n] += 1 / (k + rank)
    return [items[n] for n in sorted(fused, key=lambda n: -fused[n])]


def _stem(word: str) -> str:
    word = word.removesuffix("'s").removesuffix("’s")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def build(items: list[EvidenceItem], count_tokens: Callable[[str], int], budget: int,
          many_files: bool = False, best_last: bool = False) -> Evidence:
    """Number the items in rank order (duplicates dropped) until the token budget is spent."""
    kept, seen = [], set()
    for item in items:
        key = same_text(item.text)
        if not key or key in seen:
            continue
        cost = count_tokens(item.text) + 8  # the id, page and kind in front of it
        if cost > budget:
            break
        budget -= cost
        seen.add(key)
        kept.append(item.model_copy(update={"id": f"E{len(kept) + 1}"}))
    return Evidence(items=kept, many_files=many_files, best_last=best_last)


def same_text(text: str) -> str:
    """What makes two evidence lines the same line: their words, whatever the case and spacing."""
    return " ".join(text.lower().split())


def split_text(text: str, limit: int = MAX_ITEM_CHARS) -> list[str]:
    sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]
    pieces, current = [], ""
    for sentence in sentences:
        if current and len(current) + len(sentence) + 1 > limit:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return [p if len(p) <= 2 * limit else p[: 2 * limit] + " …" for p in pieces]


def join_short_lines(lines: list[str], short: int = 40, limit: int = 200) -> list[str]:
    out, current = [], ""
    for line in (ln.strip() for ln in lines):
        if not line:
            continue
        if current and (len(current) >= short or len(current) + len(line) > limit):
            out.append(current)
            current = ""
        current = f"{current} {line}".strip()
    if current:
        out.append(current)
    return [p[:MAX_ITEM_CHARS] for p in out]
