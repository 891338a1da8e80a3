"""What a document prints, found by code in its text: a phrase's occurrences page by page, its web addresses and
e-mail addresses. The text is the PDF's own text layer where a page has one (a stored page's text
repeats a table's header on every row), the OCR's words on a page without one."""

from __future__ import annotations

import re

import pymupdf

KINDS = {
    "url": re.compile(r"(?:https?://|www\.)[^\s<>\"'()\[\]{}]+|(?<![@\w.-])[a-z0-9][\w-]*(?:\.[\w-]+)*\."
                      r"(?:com|org|net|edu|gov|int|io|info|biz|co\.uk|co\.id|com\.au)\b(?:/[^\s<>\"'()]*)?", re.I),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b", re.I),
}
KIND_NAMES = {"url": "web address", "email": "e-mail address"}
_TRAILING = ".,;:!?)]}'\""
_MIN_LAYER = 20  # fewer characters than this in a page's text layer: a scan, read from its OCR


def page_texts(doc: pymupdf.Document, stored: dict[int, str]) -> dict[int, str]:
    """Each page's text as printed: its text layer, or the stored (OCR) text of a page without one."""
    layer = {n: page.get_text() for n, page in enumerate(doc, 1)}
    return {n: text if len(text.strip()) >= _MIN_LAYER else stored.get(n, "") for n, text in layer.items()}


def phrase_pattern(phrase: str) -> re.Pattern:
    """A phrase as printed: any spacing, a word's plural, a hyphen printed or not ("Annexes B7" for "Annex
    B-7"); an acronym in capitals matches only in capitals."""
    words = [re.escape(w).replace(r"\-", r"[-‐–]?") + (r"(?:e?s)?" if w.isalpha() else "") for w in phrase.split()]
    acronym = sum(c.isupper() for c in phrase) >= 2 and not any(c.islower() for c in phrase)
    return re.compile(r"(?<![\w-])" + r"\s+".join(words) + r"(?![\w-]*\w)", 0 if acronym else re.I)


def found(texts: dict[int, str], what: str, kind: bool) -> dict[int, list[str]]:
    """Per page that prints it, what it prints: the phrase as printed each time, or each URL / address."""
    pattern = KINDS[what] if kind else phrase_pattern(what)
    out: dict[int, list[str]] = {}
    for page, text in sorted(texts.items()):
        hits = [m.group().rstrip(_TRAILING) for m in pattern.finditer(text)]
        if hits := [h for h in hits if h]:
            out[page] = hits
    return out


def distinct(items: list[str]) -> list[str]:
    """Items once each, a web address with or without its scheme and "www." one item."""
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(re.sub(r"^(?:https?://)?(?:www\.)?", "", item.lower()).rstrip("/"), item)
    return list(seen.values())
