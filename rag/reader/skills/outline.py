"""Counts of the document itself ("how many appendices / figures on pages 30-35 / pages"): a program over
its outline (rag/outline.py), a list literal and len, so the count is code's, shown like any computation."""

from __future__ import annotations

import re

from rag.outline import Outline
from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.program import ComputeError, run_program
from rag.reader.question import Question
from rag.reader.skills.base import Call, Documents, Read, register

_APPENDIX = re.compile(r"^appendix\s+([A-Z0-9]+)\b", re.I)


@register
class OutlineCount:
    name, reads = "outline", "documents"

    async def answer(self, question: Question, documents: Documents, hits, call: Call) -> Read | None:
        """How many pages, figures, tables or appendices, counted by code in the one document's outline."""
        if not question.structural or len(documents.docs) != 1:
            return None
        doc = documents.docs[0]
        program = counting_program(question, documents.outline(doc.doc_id))
        try:
            value = run_program(program) if program else None
        except ComputeError:
            return None
        if value is None:
            return None
        return Read(solution=Solution(skill=self.name, asked="number", value=str(value), program=program, by="code",
                                      pages=[PageRef(doc_id=doc.doc_id, file=doc.file, page=1)]))


def counting_program(question: Question, doc: Outline) -> str | None:
    """The program that counts what the question asks of the document, or None."""
    what = question.structural
    if what is None:
        return None
    if what in ("page", "slide"):
        return f"pages = {doc.pages}\nans = pages"
    if what == "appendix":
        letters = list(dict.fromkeys(m.group(1).upper() for h in doc.headings if (m := _APPENDIX.match(h.title))))
        return f"appendices = {letters!r}\nans = len(appendices)" if letters else None
    pages = [p for p in question.pages if p > 0] or range(1, doc.pages + 1)
    kind = "tables" if what == "table" else "figures"
    found = [name for c in doc.contents if c.page in pages for name in getattr(c, kind)]
    return f"{kind} = {found!r}\nans = len({kind})"
