"""A document's structure: its pages, its outline, and per page its tables and figures.

Questions ask about the document itself ("how many chapters", "what the chart on page 4 is called", "which
section starts on page 12"): no passage answers those, the structure does (the reader's counts, and the agent's
DocumentOutline tool). The outline is the PDF's own table of contents when it has one, else headings
found by font size and weight. Built once per document from the stored PDF and the store's tables and
figures, and kept in memory.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pymupdf
from pydantic import BaseModel, Field

_NUMBERED_HEADING = re.compile(r"^(\d+(\.\d+)*\.?|[A-Z]\.|appendix\s+\w+|chapter\s+\w+|part\s+\w+)\s+\S", re.I)
_BOLD = re.compile(r"bold|medi|black|heavy|semibd|demi", re.I)
_lock = threading.Lock()


class Heading(BaseModel):
    level: int
    title: str
    page: int


class PageContents(BaseModel):
    page: int
    label: str = ""
    tables: list[str] = Field(default_factory=list)
    figures: list[str] = Field(default_factory=list)


class Outline(BaseModel):
    doc_id: str
    file: str
    pages: int
    from_toc: bool
    headings: list[Heading]
    contents: list[PageContents]

    def lines(self) -> list[tuple[int, str]]:
        """(page, line) pairs the reader can number: the document, its headings, each page's tables and figures."""
        out = [(1, f"The document {self.file} has {self.pages} pages, {len(self.headings)} headings, "
                   f"{sum(len(c.tables) for c in self.contents)} tables and "
                   f"{sum(len(c.figures) for c in self.contents)} figures.")]
        out += [(h.page, f"{'  ' * (h.level - 1)}heading: {h.title} (p.{h.page})") for h in self.headings]
        for c in self.contents:
            label = f" (printed page {c.label})" if c.label and c.label != str(c.page) else ""
            for kind, names in (("table", c.tables), ("figure", c.figures)):
                if names:
                    listed = "; ".join(n[:90] for n in names)
                    out.append((c.page, f"p.{c.page}{label}: {len(names)} {kind}{'s' * (len(names) != 1)}: {listed}"))
        return out

    def text(self, max_lines: int = 80) -> str:
        return "\n".join(line for _, line in self.lines()[:max_lines])


def outline(store, doc_id: str) -> Outline:
    """The outline of a stored document (cached: documents never change under their id)."""
    with _lock:
        return _outline(store, doc_id)


@lru_cache(maxsize=64)
def _cached(pdf: Path, doc_id: str, file: str, figures_json: str, tables_json: str, labels_json: str) -> Outline:
    with pymupdf.open(pdf) as doc:
        toc = doc.get_toc(simple=True)
        headings = [Heading(level=lvl, title=t.strip(), page=p) for lvl, t, p in toc if t.strip() and p > 0]
        if not headings:
            headings = detect_headings(doc)
        pages = doc.page_count
    figures, tables, labels = json.loads(figures_json), json.loads(tables_json), json.loads(labels_json)
    contents = [PageContents(page=p, label=labels.get(str(p), ""), tables=tables.get(str(p), []),
                             figures=figures.get(str(p), []))
                for p in range(1, pages + 1)]
    return Outline(doc_id=doc_id, file=file, pages=pages, from_toc=bool(toc), headings=headings, contents=contents)


def _outline(store, doc_id: str) -> Outline:
    info = store.get(doc_id)
    figures: dict[str, list[str]] = {}
    for figure in sorted(store.fragments("image_caption", doc_id), key=lambda f: f.page):
        caption = figure.extra.get("caption") or figure.text
        figures.setdefault(str(figure.page), []).append(" ".join(str(caption).split())[:120] or "untitled figure")
    tables: dict[str, list[str]] = {}
    for table in store.tables(doc_id):
        name = " | ".join(h for h in table.header if h and not h.startswith("col"))[:120] or "untitled table"
        tables.setdefault(str(table.page), []).append(name)
    labels = {str(page): label for page, label in store.page_labels(doc_id).items()}
    return _cached(store.pdf_path(doc_id), doc_id, info.file if info else doc_id, json.dumps(figures),
                   json.dumps(tables), json.dumps(labels))


def detect_headings(doc: pymupdf.Document, max_headings: int = 60) -> list[Heading]:
    """Lines set larger or bolder than the body text, short, and not numbers: the document's headings."""
    lines, sizes = [], Counter()
    for number, page in enumerate(doc, 1):
        for block in page.get_text("dict", flags=0)["blocks"]:
            for line in block.get("lines", []):
                spans = [s for s in line["spans"] if s["text"].strip()]
                if not spans:
                    continue
                text = " ".join(s["text"].strip() for s in spans)
                size = max(s["size"] for s in spans)
                bold = all(s["flags"] & 16 or _BOLD.search(s["font"]) for s in spans)
                sizes[round(size)] += len(text)
                lines.append((number, text, size, bold))
    if not sizes:
        return []
    body = sizes.most_common(1)[0][0]
    found, previous = [], ""
    for number, text, size, bold in lines:
        letters = sum(c.isalpha() for c in text)
        numbered, previous = (previous if re.fullmatch(r"\d+(\.\d+)*\.?", previous) else ""), text
        if not 3 <= len(text) <= 90 or letters < 0.5 * len(text):
            continue
        text = f"{numbered} {text}".strip()  # "1" and "Introduction" set as two lines
        if size >= body * 1.3 or (bold and (size >= body * 1.05 or _NUMBERED_HEADING.match(text))):
            level = 1 if size >= body * 1.3 else 2
            if not found or (found[-1].title, found[-1].page) != (text, number):
                found.append(Heading(level=level, title=text, page=number))
    return found[:max_headings]
