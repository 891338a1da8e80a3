"""`understand(question)`: what code can tell from a question before any model reads a page.

The one place that reads the raw question. Nothing here looks at a document or a benchmark's answer
format: the record says what kind of answer is asked, which pages are named, and whether arithmetic is.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from rag.reader.cascade.question import analyse

Asked = Literal["number", "text", "list", "yes_no"]
LAST_PAGE = -1
MAX_NAMED_PAGES = 12

_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
_NUM = rf"(\d{{1,5}}|{'|'.join(_NUMBERS)})"
_PAGE_REF = re.compile(rf"\b(?:pages?|p\.|pp\.|slides?)\s*{_NUM}(?:\s*(?:-|–|to|and|&)\s*{_NUM})?\b", re.IGNORECASE)
_ORDINAL_REF = re.compile(rf"\b({'|'.join(_ORDINALS)}|last|final)\s+(?:page|slide)\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_UNIT = re.compile(r"\b(?:in|as(?: a)?)\s+(percentages?|percent|millions?|billions?|thousands?|dollars?|usd|"
                   r"years?|months?|days?|hours?|minutes?|seconds?|km|kg|mw|kw|gb|mb|%)\b", re.IGNORECASE)
_MOST = re.compile(r"\b(most|highest|largest|biggest|greatest|maximum|top|best|more)\b", re.IGNORECASE)
_LEAST = re.compile(r"\b(least|lowest|smallest|fewest|minimum|worst|less|fewer)\b", re.IGNORECASE)
_DECIMALS = re.compile(r"\b(\d|one|two|three|four)\s+decimal", re.IGNORECASE)
_COUNTED = re.compile(r"\bhow many ([a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2})", re.IGNORECASE)
_PICTURES = re.compile(r"\b(people|persons?|faces?|animals?|cars?|logos?|icons?)\b.{0,40}\b(pictures?|photos?|images?)\b"
                       r"|\b(pictures?|photos?|images?)\b.{0,40}\b(people|persons?|faces?|animals?)\b", re.IGNORECASE)


class Question(BaseModel):
    """A question as code understands it."""

    text: str
    asked: Asked = "text"
    unit: str | None = Field(None, description="the unit the question asks the answer in, when it names one")
    pages: list[int] = Field(default_factory=list, description="pages it names, 1-based; -1 for the last")
    years: list[str] = Field(default_factory=list)
    arithmetic: bool = False
    direction: Literal["most", "least"] | None = None
    counted: str | None = Field(None, description="what 'how many …' counts")
    structural: bool = False
    pictures: bool = Field(False, description="the answer needs what a picture shows, not its words")
    decimals: int | None = Field(None, description="decimal places the answer is asked to")


def understand(question: str) -> Question:
    info = analyse(question)
    asked = "text" if info.answer_type == "choice" else info.answer_type
    unit = _UNIT.search(question)
    most, least = _MOST.search(question), _LEAST.search(question)
    direction = "most" if most and not least else "least" if least and not most else None
    counted = _COUNTED.search(question)
    return Question(
        text=question, asked=asked, unit=unit.group(1).lower() if unit else None, pages=named_pages(question),
        years=list(dict.fromkeys(_YEAR.findall(question))), arithmetic=info.compute and asked == "number",
        direction=direction, counted=counted.group(1).lower() if counted else None, structural=info.structural,
        pictures=bool(_PICTURES.search(question)),
        decimals=_number(decimals.group(1)) if (decimals := _DECIMALS.search(question)) else None,
    )


def named_pages(question: str) -> list[int]:
    """Pages the question names: "page 5", "page two", "pages 30-35", "the last page" (-1)."""
    pages: list[int] = []
    for first, last in _PAGE_REF.findall(question):
        a = _number(first)
        b = _number(last) if last else a
        pages += list(range(a, min(b, a + MAX_NAMED_PAGES - 1) + 1)) if b >= a else [a, b]
    for word in _ORDINAL_REF.findall(question):
        pages.append(LAST_PAGE if word.lower() in ("last", "final") else _ORDINALS.index(word.lower()))
    return list(dict.fromkeys(pages))


def _number(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS.index(text.lower())
