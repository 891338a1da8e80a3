"""What a skill found, and its two forms: the sentence a person reads and the short answer scored.

A value is given as printed, with the unit and the scale its page states ("$5,466,312 thousand [p. 45]");
where the question asks for another scale, code converts it and shows both ("$5,466.3 million ($5,466,312
thousand) [p. 45]"). The short answer is the shortest span that answers: a bare number, a list, Yes/No.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Literal

from dateutil.parser import parse as parse_date
from pydantic import BaseModel, Field

from rag.reader.pages import PageRef
from rag.reader.question import Question
from rag.text import NUMBER, numbers, page_scale, plain_number, unit_after

NOT_ANSWERABLE = "Not answerable"
NOT_IN_DOCUMENTS = "Not in the documents"
SCALES = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}


class PageReading(BaseModel):
    """One page read: what the model said, and whether code found the answer on the page."""

    doc_id: str
    file: str
    page: int
    skill: str
    found: bool
    answer: str = Field("", description="what the page gave, as a person reads it, whether or not it stood")
    short: str = Field("", description="the same as scored")
    checks: dict[str, str] = Field(default_factory=dict, description="every check the answer failed, enforced or not")
    reason: str = ""
    said: str = ""
    tokens: int = 0
    t_start: float = 0.0
    t_end: float | None = None


class Cited(BaseModel):
    """A value a program used, as printed and where: the chat's table of inputs and the answer's citations."""

    name: str = "value"
    row: str = ""
    period: str = ""
    printed: str = ""
    statement: str = ""
    page: int | None = None
    doc_id: str = ""
    file: str = ""


class Solution(BaseModel):
    """A skill's answer: its value as shown (with its unit), the short form, where it stands, how it came."""

    skill: str
    asked: str = "text"
    value: str = ""
    short_value: str = ""
    items: list[str] = Field(default_factory=list)
    line: str = ""
    program: str | None = None
    inputs: list[Cited] = Field(default_factory=list)
    pages: list[PageRef] = Field(default_factory=list)
    by: Literal["model", "code"] = "model"

    def citations(self) -> str:
        return " ".join(f"[p. {p.page}]" for p in self.pages)

    def sentence(self) -> str:
        body = "; ".join(self.items) if self.asked == "list" else self.value
        if self.pages and all(f"[p. {p.page}]" in body for p in self.pages):  # each value cited where it stands
            return body
        return f"{body} {self.citations()}".strip()

    def short(self) -> str:
        """The benchmark's extracted answer: a bare number, a list, Yes/No, or the answer's words."""
        if self.asked == "list":
            return json.dumps(self.items, ensure_ascii=False)
        if self.short_value:
            return self.short_value
        if self.asked == "number" and len(found := numbers(self.value)) == 1:  # a date or a range stays whole
            return plain_number(found[0])
        return self.value.strip()


def valued(printed: str, page: str, question: Question) -> tuple[str, str]:
    """A value as shown and as scored: the number as printed with the unit after it on the page, or the
    currency and scale the page states for its figures; converted by code to the scale asked; a date in the
    form asked."""
    if question.date_form and (date := dated(printed, question.date_form)):
        return (printed if date == printed else f"{date} ({printed})"), date
    match = NUMBER.search(printed)
    if not match or len(numbers(printed)) > 1:  # a date or a range stays whole
        return printed, ""
    number, rest = match.group().strip(), printed[match.end():].strip()
    currency, page_scale_ = page_scale(page)
    # a statement prints "$" on its first and total rows only: its scale line and any "$" figure say dollars
    dollars = re.search(rf"\$\s?{re.escape(number.lstrip('$'))}(?![\d,])", page) or page_scale_ and re.search(r"\$\s?\d", page)
    currency = currency or ("$" if dollars else "")
    scale = next((s for s in SCALES if s and rest.lower().startswith(s)), "")
    if not rest and (unit := unit_after(page, number)):
        shown = f"{printed}{unit}" if unit == "%" else f"{printed} {unit}"
        scale = unit if unit in SCALES else ""
    elif not rest and page_scale_:
        scale = page_scale_
        shown = f"{currency}{printed} {scale}" if "$" not in printed else f"{printed} {scale}"
    else:
        shown = printed
    value = numbers(number)[0]
    if question.scale and (scale or currency or "$" in printed) and scale != question.scale:
        converted = value * SCALES[scale] / SCALES[question.scale]
        money = currency or ("$" if "$" in printed else "")
        return f"{money}{_grouped(converted, question.decimals)} {question.scale} ({shown})", \
            plain_number(round(converted, question.decimals if question.decimals is not None else 2))
    if question.decimals is not None:
        return shown, f"{value:.{question.decimals}f}"
    return shown, plain_number(value)


def dated(printed: str, form: str) -> str | None:
    """A printed date in the form asked ("01/05/2022" as "%Y-%m-%d" → "2022-01-05"), or None if it is none."""
    try:
        return parse_date(printed, default=datetime(1900, 1, 1)).strftime(form)
    except (ValueError, OverflowError):
        return None


def _grouped(value: float, decimals: int | None) -> str:
    places = decimals if decimals is not None else (0 if value == int(value) else 1 if abs(value) >= 100 else 2)
    return f"{value:,.{places}f}"


def not_found(pages: list[PageRef], reason: str = "", before: str = "") -> tuple[str, str]:
    """The answer when no page read held one: it says which pages were read, after what a skill before page
    reading found missing (`before`: "no row for …")."""
    read = ", ".join(f"p. {p.page}" for p in pages)
    why = reason or (f"no page read ({read}) holds the answer" if read else "the search found no page to read")
    return f"{NOT_IN_DOCUMENTS}: {before + '; ' if before else ''}{why}.", NOT_ANSWERABLE
