"""What a skill found, and the two forms of it: the sentence a person reads and the short answer scored."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from rag.reader.pages import PageRef
from rag.text import numbers, plain_number

NOT_ANSWERABLE = "Not answerable"
NOT_IN_DOCUMENTS = "Not in the documents"
PICTURES_UNREAD = ("the pages' pictures cannot be read here: the reader sees a page's words, table rows and chart "
                   "values, not what its photos show")


class PageReading(BaseModel):
    """One page read: what the model said, and whether code found the answer on the page."""

    doc_id: str
    file: str
    page: int
    skill: str
    found: bool
    answer: str = ""
    reason: str = ""
    said: str = ""
    tokens: int = 0
    t_start: float = 0.0
    t_end: float | None = None


class Solution(BaseModel):
    """A skill's answer: its value as read (with its unit), where it stands, and how it was reached."""

    skill: str
    asked: str = "text"
    value: str = ""
    items: list[str] = Field(default_factory=list)
    line: str = ""
    program: str | None = None
    pages: list[PageRef] = Field(default_factory=list)
    by: Literal["model", "code"] = "model"

    def citations(self) -> str:
        return " ".join(f"[p. {p.page}]" for p in self.pages)

    def sentence(self) -> str:
        body = "; ".join(self.items) if self.asked == "list" else self.value
        return f"{body} {self.citations()}".strip()

    def short(self) -> str:
        """The benchmark's extracted answer: a bare number, a list, Yes/No, or the answer's words."""
        if self.asked == "list":
            return json.dumps(self.items, ensure_ascii=False)
        if self.asked == "number" and len(found := numbers(self.value)) == 1:  # a date or a range stays whole
            return plain_number(found[0])
        return self.value.strip()


def not_found(pages: list[PageRef], reason: str = "") -> tuple[str, str]:
    """The answer when no page read held one: it says which pages were read."""
    read = ", ".join(f"p. {p.page}" for p in pages)
    why = reason or (f"no page read ({read}) holds the answer" if read else "the search found no page to read")
    return f"{NOT_IN_DOCUMENTS}: {why}.", NOT_ANSWERABLE
