"""Counts of the document itself ("how many appendices / figures on pages 30-35 / pages"): a program over
its outline (rag/outline.py), a list literal and len, so the count is code's, shown like any computation."""

from __future__ import annotations

import re

from rag.outline import Outline
from rag.reader.question import Question

_APPENDIX = re.compile(r"^appendix\s+([A-Z0-9]+)\b", re.I)


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
