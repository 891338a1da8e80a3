"""A free reply in the form the question asks, by code: the model says what the page says in its own
words; code gives a figure as a figure, a list as items, Yes/No as Yes/No, one of the offered choices, a
date in the form asked. Nothing here rejects a reply: what does not fit the form stays as written."""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from rag.reader.question import Question, spelled_number
from rag.reader.wording import NUMBERS
from rag.text import NUMBER

_YES_NO = re.compile(r"^\W*(yes|no)\b", re.I)
_COUNT_WORD = re.compile(rf"\b({'|'.join(NUMBERS)})\b", re.I)
_ITEM_SPLIT = re.compile(r"\s*;\s*|\s*,\s+(?:and\s+|or\s+)?|\s+and\s+|\s*\n\s*")
_PERCENT = re.compile(r"^\s?(?:%|per ?cent\b)", re.I)
OPTION_MATCH = 80  # rapidfuzz partial ratio: the reply names the choice, up to case and spacing


def normalised(answer: str, question: Question) -> str | list[str]:
    """The reply in the asked form: a list of items, "Yes"/"No", a choice offered, a figure (with its % if
    the reply gave one), or the reply's words."""
    answer = answer.strip().strip('"').strip()
    if question.asked == "list":
        return [item.strip(" .") for item in _ITEM_SPLIT.split(answer) if item.strip(" .")]
    if question.asked == "yes_no" and (said := _YES_NO.match(answer)):
        return said.group(1).title()
    if question.options:
        best = max(question.options, key=lambda o: fuzz.partial_ratio(o.lower(), answer.lower()))
        return best if fuzz.partial_ratio(best.lower(), answer.lower()) >= OPTION_MATCH else answer
    if question.asked == "number":
        return figure(answer)
    return answer


def figure(answer: str) -> str:
    """The reply's first figure with the per cent it carries ("about 35 percent of them" → "35%"); a count
    spelled as a word as digits ("three offices" → "3"); else the reply as written."""
    if found := NUMBER.search(answer):
        percent = "%" if _PERCENT.match(answer[found.end():]) else ""
        return found.group().strip() + percent
    if word := _COUNT_WORD.search(answer):
        return str(spelled_number(word.group(1)))
    return answer
