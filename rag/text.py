"""Words and numbers of document text and answers: the one stemmer and the one number parser, for
ingestion's table cells and the reader alike."""

from __future__ import annotations

import re

STOPWORDS = set("""
a an the of in on at to for from by with and or not no nor but as is are was were be been being do does did
has have had what which who whom whose when where why how many much according report document paper survey
this that these those their there them they its it his her our your you we i me my among all any each both
between into than then so such very more most less least also only other about over under per please write
answer format list float integer int string directly yes e g eg one two three four five
""".split())

_WORD = re.compile(r"[a-z][a-z0-9'’-]*|\d[\d,.]*")
# "1,234.5", "(12)", "-3", ".5"; a number glued to letters ("COVID-19", "Q3") is a name, not a value
YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")  # "FY2021" names 2021
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


# The words that make a sentence a question, not what it asks about.
QUESTION_WORDS = set("""
what which who whom whose when where why how is are was were be been being do does did has have had can could
will would should shall may might must a an the of in on at to for from by with and or as that this these those
""".split())


def without_stopwords(text: str) -> str:
    """A question's words less those that make it a question ("what", "were", "the"): what a keyword search
    should match. Question words are rare in documents, so their weight would lift whatever passage holds one."""
    return " ".join(w for w in re.findall(r"[\w'’$%.,-]+", text) if w.lower().strip("'’.,") not in QUESTION_WORDS)


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


_HEADER_UNIT = re.compile(r"\(([^()]{1,24})\)\s*$")


def cell_number(header: str, value: str) -> tuple[float | None, str]:
    """The number a table cell holds and its unit, when the cell is a value and not words around one
    ("$9,912" → 9912, "$"; "40%" → 40, "%"; "Q3 2015" → None): the unit written after the value or the
    currency before it, else one the header states in brackets."""
    found = NUMBER.findall(value)
    if len(found) != 1:
        return None, ""
    raw = found[0]
    unit = unit_after(value, raw) or ("$" if "$" in raw else "")
    rest = value.replace(raw, "", 1).replace(unit, "", 1)
    if re.search(r"[A-Za-z]{2,}|\d", rest):
        return None, ""
    bracket = _HEADER_UNIT.search(header)
    if not unit and bracket and ("%" in bracket.group(1) or "$" in bracket.group(1)
                                 or _UNIT_AFTER.match(" " + bracket.group(1).removeprefix("in ").removesuffix("s"))):
        unit = bracket.group(1)
    return numbers(raw)[0], unit
