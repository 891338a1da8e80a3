"""Words and numbers of document text and answers: the reader's one stemmer and one number parser."""

from __future__ import annotations

import re

from rag.reader.cascade.question import STOPWORDS

_WORD = re.compile(r"[a-z][a-z0-9'’-]*|\d[\d,.]*")
# "1,234.5", "(12)", "-3", ".5"; a number glued to letters ("COVID-19", "Q3") is a name, not a value
NUMBER = re.compile(r"(?<![A-Za-z\d.])(?<![A-Za-z]-)[-−]?\(?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|(?<![\w.])\.\d+")
# what may follow a value as its unit: "%", "MW", "million", "$" before it is kept by the number itself
_UNIT_AFTER = re.compile(r"^\s?(%|percent\b|per ?cent\b|(?:[kMGT]?(?:W|Wh|Hz|B|bps)|mAh|MP|fps|mm|cm|km|m|kg|mg|g|lbs?|oz|"
                         r"ml|mL|V|A|°[CF])\b|(?:thousand|million|billion|trillion|years?|months?|weeks?|days?|hours?|"
                         r"minutes?|seconds?|inch(?:es)?|feet|meters?|kilometers?|miles?|points?|people|users?|"
                         r"employees?|times)\b)")


def stem(word: str) -> str:
    """A crude stem shared by every comparison of words: case, possessive and plural endings dropped."""
    word = word.lower().removesuffix("'s").removesuffix("’s")
    for ending in ("ies", "es", "s", "ing", "ed"):
        if len(word) > len(ending) + 3 and word.endswith(ending) and not word.endswith("ss"):
            return word[: -len(ending)]
    return word


def content_words(text: str) -> list[str]:
    """The stems of the words that carry meaning (no stop words, no one-letter words, no numbers)."""
    words = [w.strip("'’-.,") for w in _WORD.findall(text.lower())]
    return [stem(w) for w in words if len(w) > 1 and w not in STOPWORDS and not w[0].isdigit()]


def numbers(text: str) -> list[float]:
    """Every number written in a text, as a float: "$9,912" = 9912, "(12)" = -12 is kept as 12."""
    out = []
    for raw in NUMBER.findall(text):
        clean = raw.replace(",", "").replace("$", "").replace("(", "").replace("−", "-")
        try:
            out.append(float(clean))
        except ValueError:
            continue
    return out


def plain_number(value: float) -> str:
    """A number as a short answer: no thousands separators, no trailing zeros."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def unit_after(line: str, value: str) -> str:
    """The unit a line writes right after a value ("4.2 MW" → "MW"), or ""."""
    at = line.find(value)
    if at < 0:
        return ""
    match = _UNIT_AFTER.match(line[at + len(value):])
    return match.group(1) if match else ""


_SCALE = re.compile(r"(?:(\$|dollars?)[\w ,]{0,20}?\s)?\b(?:amounts\s+)?in\s+(thousands|millions|billions)\b"
                    r"(\s+of\s+(?:u\.s\.\s+)?dollars)?", re.I)


def page_scale(text: str) -> tuple[str, str]:
    """The currency and scale a page states for its figures ("$ in millions" → ("$", "million")), or ("", "")."""
    match = _SCALE.search(text)
    if not match:
        return "", ""
    return ("$" if match.group(1) or match.group(3) else ""), match.group(2).lower().removesuffix("s")
