"""Counts of the document itself ("how many appendices / figures on pages 30-35 / pages"), where code counts
exactly: the pages, the appendices its headings name, and the figures or tables its captions number ("Figure
3:", "Table 2."), as a program over a list literal and len, shown like any computation. A document that numbers
no caption of the kind asked has its pages read: the pictures and grids ingestion finds are not what a reader
counts as its figures and tables."""

from __future__ import annotations

import re

from rag.outline import Outline
from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.program import ComputeError, run_program
from rag.reader.question import Question
from rag.reader.skills.base import Documents, JsonModel, Read, register

_APPENDIX = re.compile(r"^appendix\s+([A-Z0-9]+)\b", re.I)
# a caption's label where a line begins, followed by its title: "Figure 3: …", "Fig. 3. …", "TABLE II …"
_CAPTION = {"figures": re.compile(r"^\s*(?:figure|fig\.)\s*(\d+|[IVX]+)\s*[:.|\-–—]\s*\S", re.I | re.M),
            "tables": re.compile(r"^\s*table\s*(\d+|[IVX]+)\s*[:.|\-–—]\s*\S", re.I | re.M)}


@register
class OutlineCount:
    name, reads = "outline", "documents"

    def applies(self, question: Question) -> bool:
        return bool(question.structural)

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None:
        """How many pages, appendices, or numbered figures or tables, counted by code in the one document."""
        if len(documents.docs) != 1:
            return None
        doc = documents.docs[0]
        program = counting_program(question, documents.outline(doc.doc_id), documents.printed(doc.doc_id))
        try:
            value = run_program(program) if program else None
        except ComputeError:
            return None
        if value is None:
            return None
        return Read(solution=Solution(skill=self.name, asked="number", value=str(value), program=program, by="code",
                                      pages=[PageRef(doc_id=doc.doc_id, file=doc.file, page=1)]))


def counting_program(question: Question, doc: Outline, printed: dict[int, str]) -> str | None:
    """The program that counts what the question asks of the document, or None where code cannot count it."""
    what = question.structural
    if what in ("page", "slide"):
        return f"pages = {doc.pages}\nans = pages"
    if what == "appendix":
        letters = list(dict.fromkeys(m.group(1).upper() for h in doc.headings if (m := _APPENDIX.match(h.title))))
        return f"appendices = {letters!r}\nans = len(appendices)" if letters else None
    kind = "tables" if what == "table" else "figures" if what == "figure" else None
    if kind is None or not (labels := numbered(printed, kind)):
        return None
    pages = [p for p in question.pages if p > 0]
    found = [label for page, label in labels if not pages or page in pages]
    return f"{kind} = {found!r}\nans = len({kind})"


def numbered(printed: dict[int, str], kind: str) -> list[tuple[int, str]]:
    """(page, "Figure 3") for each caption of the kind the pages print, where it first stands; none unless the
    captions number 1, 2, … without a gap (a gap is a caption the text layer does not hold as a line)."""
    seen: dict[int, int] = {}
    for page, text in sorted(printed.items()):
        for match in _CAPTION[kind].finditer(text):
            seen.setdefault(_number(match.group(1)), page)
    if set(seen) != set(range(1, len(seen) + 1)):
        return []
    return [(page, f"{kind[:-1].title()} {n}") for n, page in sorted(seen.items())]


def _number(label: str) -> int:
    if label.isdigit():
        return int(label)
    values = [{"I": 1, "V": 5, "X": 10}[c] for c in label.upper()]
    return sum(-v if v < after else v for v, after in zip(values, values[1:] + [0]))
