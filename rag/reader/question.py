"""`understand(question)`: what code can tell from a question before any model reads a page.

The one place that reads the raw question: every other module reads the `Question` record. Nothing here
looks at a document or a benchmark's answer format, and no word of one domain decides anything: the
record says what kind of answer is asked, in which unit, which pages are named, and whether it counts
the document's own pages, figures or tables.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from rag.records import LAST_PAGE
from rag.text import YEAR, content_words

Asked = Literal["number", "text", "list", "yes_no"]
Scale = Literal["thousand", "million", "billion"]
MAX_NAMED_PAGES = 12

_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
            "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
_ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
_NUM = rf"(\d{{1,5}}|{'|'.join(_NUMBERS)})"
_PAGE_REF = re.compile(rf"\b(?:pages?|p\.|pp\.|slides?)\s*{_NUM}(?:\s*(?:-|–|to|and|&)\s*{_NUM})?\b", re.I)
_ORDINAL_REF = re.compile(rf"\b({'|'.join(_ORDINALS)}|last|final)\s+(?:page|slide)\b", re.I)
_YES_NO = re.compile(r"^(is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b|\byes\b.{0,10}\bno\b", re.I)
_LIST = re.compile(r"\b(list (?:all|the)|in (?:a |the )?list|list format|format of list|respectively|what are the|"
                   r"which are the|name (?:all|the)|enumerate)\b", re.I)
_WHEN = re.compile(r"\b(?:which|what) (?:year|month|date|day)\b", re.I)
# An answer-format instruction after the question: "… in 2019? Give the figure in euro thousands.", "Round it to …"
_FORMAT = re.compile(r"(?<=[.?!])\s*(?:please\s+)?(?:answer|round|express|format)\b"
                     r"(?!\s+(?:the\s+following|this|these)\b)[^.?!]*[.?!]?", re.I)
_QUANTITY = re.compile(r"\b(how (?:many|much|long|old|far)|by what|(?:percent(?:age)?|proportion|share|number|amount|"
                       r"total|sum|average|mean|ratio|rate|value|price|cost|size|count|score|difference|gap)s?|"
                       r"decimal places?|round(?:ed)?|"
                       r"in (?:millions|billions|thousands|km|kilometers|miles|kg|pounds|hours|minutes|seconds|days|"
                       r"years|meters|usd|dollars|mw|kw|gb|mb))\b", re.I)
_NAMING = re.compile(r"(^|[,;:?]\s*)(?:(?:in|for|of|at|to|from|by) )?(which|who|whom|whose)\b", re.I)
_WHICH_LATE = re.compile(r"[,;:?.]\s*which\b", re.I)
_OPEN = re.compile(r"^(?:why|how (?!many|much|long|old|far)|describe|explain|what (?:does|do|did) .{0,60}\b(?:mean|say|suggest|show))\b", re.I)
_CHOICES = re.compile(r"\?\s*(?P<opts>[^?]+?\bor\b[^?]+)\?\s*$|\bamong (?:the [^:,?]{1,40}: )?"
                      r"(?P<among>[^:?]+?,[^:?]+?\b(?:and|or)\b[^:?,]+?),\s*(?:which|what|who)\b", re.I)
_SPLIT_CHOICES = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", re.I)
_SCALE = re.compile(r"\bin\s+(?:(?:usd|us\$|\$|dollars?|eur|euros?)\s+)?(thousands|millions|billions)\b", re.I)
# a date's form spelled out: "YYYY-MM-DD", "in DD/MM/YYYY format", "as Month DD, YYYY"
_DATE_FORM = re.compile(r"\b(?:YYYY|YY|MM|DD|Month|Day|Year)(?:[-/., ]{1,2}(?:YYYY|YY|MM|DD|Month|Day|Year)){1,2}\b")
_DATE_PARTS = {"YYYY": "%Y", "YY": "%y", "MM": "%m", "DD": "%d", "Month": "%B", "Day": "%d", "Year": "%Y"}
_DECIMALS = re.compile(r"\b(\d|one|two|three|four)\s+decimal", re.I)
# a count of things (offices, examples, people), not an amount: statements print money, shares and ratios
_COUNTS = re.compile(r"\bhow many\s+(?!(?:[\w-]+\s+){0,2}(?:shares?|times|points?|percent|percentage|dollars?|"
                     r"millions?|billions?|thousands?|days?)\b)", re.I)
_STRUCTURE = re.compile(r"\bhow many (pages?|slides?|appendi(?:x|ces)|figures?|charts?|images?|pictures?|diagrams?|"
                        r"tables?)\b", re.I)
# A capitalised word past a sentence's first, or a word with capitals inside ("LLaVa", "SoC"), names something;
# these name a part of the document, or how to answer, not what is asked about
_NAME = re.compile(r"(?<![\w'’-])[A-Za-z][\w&'’-]*")
_NOT_NAMES = set("""according answer figure fig table chart page slide section appendix chapter please round write
give list save express format note fy what which who whom whose when where why how is are was were do does did the
a an in on of for to and or i""".split())
_PICTURES = re.compile(r"\b(people|persons?|faces?|animals?|cars?|logos?|icons?)\b.{0,40}\b(pictures?|photos?|images?)\b"
                       r"|\b(pictures?|photos?|images?)\b.{0,40}\b(people|persons?|faces?|animals?)\b", re.I)
_COLOUR = r"(red|green|blue|yellow|orange|purple|pink|gr[ae]y|black|white|brown)"
# the colour a page prints words in, or the ground they stand on, is data (rag/ingest/colours.py): "the red words",
# "highlighted in yellow", "the word in the orange box"; a colour the text states, "the indicator glows blue", is
# in its words; what colour drawn shapes are is what a picture shows
_ON_GROUND = re.compile(rf"\b(?:highlighted|shaded) in {_COLOUR}\b|\b{_COLOUR} (?:background|box(?:es)?|highlight)", re.I)
_IN_INK = re.compile(rf"\b(?:colou?red|written|printed) in {_COLOUR}\b|\bwith {_COLOUR} colou?r"
                     rf"|\b{_COLOUR} (?:colou?r(?:ed)?|words?|texts?|font|letters?)\b", re.I)
_SHAPES = re.compile(rf"\b{_COLOUR} (?:bars?|rectangles?|triangles?|circles?|lines?|arrows?|shapes?|squares?|dots?)\b",
                     re.I)
# what the text layer is searched for, counted or listed by code (rag/reader/occurrences.py)
_AS_PRINTED = r"(?:the\s+(?:word|words|term|phrase|name|acronym|string)\s+)?(?P<what>.{1,60}?)"
_TIMES = re.compile(r"\bhow many times (?:does|do|did|is|are|was|were|has|have)\s+" + _AS_PRINTED +
                    r"\s+(?:been\s+|be\s+)?(?:appear|occur|mention|cite|use|print|written|referenc|repeat|show)\w*\b", re.I)
_PAGES_ON = re.compile(r"\bon (?:which|what) (?:pages?|slides?) (?:is|are|does|do|did|was|were)\s+(?:there\s+)?"
                       + _AS_PRINTED + r"\s+(?:printed|mentioned|written|shown|cited|given|listed|appear\w*)\b", re.I)
_PAGES_WITH = re.compile(r"\b(?:which|what|how many) (?:pages?|slides?)\s+(?:does \w+ |do \w+ )?(?:mention|print|"
                         r"contain|include|show|cite|refer to|have|has|use)s?\s+" + _AS_PRINTED + r"\s*[?.]?\s*$", re.I)
_KIND = re.compile(r"\b(?:(?P<url>(?:website |web )?(?:urls?|web ?sites?|web addresses|(?:hyper)?links))|"
                   r"(?P<email>e-?mails?(?: address(?:es)?| ids?)?))\b", re.I)
_KIND_ITEMS = re.compile(r"\b(?:how many|list (?:all )?(?:of )?(?:the )?|what are (?:all )?the)\s*(?:\w+\s+){0,2}?"
                         + _KIND.pattern, re.I)


class Printed(BaseModel):
    """What a question asks code to find in the text layer: a phrase's occurrences, or a kind of item."""

    what: str = Field(description="the phrase as the question writes it, or a kind: url, email")
    kind: bool = False
    per: Literal["times", "pages", "items"] = Field(description="what is counted or listed: each time it is "
                                                                "printed, the pages that print it, or the items")


class Question(BaseModel):
    """A question as code understands it."""

    text: str
    task: str = Field("", description="what the model is asked: the question without its answer-format "
                                      "instructions, which code carries out (scale, rounding)")
    asked: Asked = "text"
    options: list[str] = Field(default_factory=list, description="the choices it offers, when it offers some")
    open: bool = Field(False, description="why / how / describe: answered by one sentence")
    scale: Scale | None = Field(None, description="the scale it asks a value in: 'in USD millions' → million")
    pages: list[int] = Field(default_factory=list, description="pages it names, 1-based; -1 for the last")
    years: list[str] = Field(default_factory=list)
    structural: str | None = Field(None, description="what of the document itself it counts: page, figure, table, …")
    counts: bool = Field(False, description="it counts things (offices, examples, people), not an amount")
    pictures: bool = Field(False, description="the answer needs what a picture shows, not its words")
    colour: str | None = Field(None, description="the colour it asks about the words a page prints in")
    on_ground: bool = Field(False, description="that colour is the words' background (a box, a highlight)")
    printed: Printed | None = Field(None, description="what it counts or lists in the text layer by code")
    decimals: int | None = Field(None, description="decimal places the answer is asked to")
    date_form: str | None = Field(None, description="the form a date is asked in, for strftime: '%Y-%m-%d'")
    terms: list[str] = Field(default_factory=list, description="its content words, stemmed")
    names: list[str] = Field(default_factory=list, description="the names it asks about, as written: capitalised "
                                                                "words past a sentence's first, acronyms")
    proper_names: list[str] = Field(default_factory=list, description="names of two words or more, each capitalised "
                                                                      "and none an acronym: a proper name, no common noun")


def understand(question: str) -> Question:
    q = question.strip()
    asked = asked_type(q)
    structural = _STRUCTURE.search(q)
    scale, decimals, task = _SCALE.search(q), _DECIMALS.search(q), _task(q)
    colour, on_ground = _colour(q)
    black_ink = colour == "black" and not on_ground  # every page's body: what is black in a figure is drawn
    return Question(
        text=question, task=task, asked=asked, options=choices(q), open=bool(_OPEN.search(q)) and asked == "text",
        scale=scale.group(1).lower().removesuffix("s") if scale else None,
        pages=named_pages(q), years=list(dict.fromkeys(YEAR.findall(q))),
        structural=_singular(structural.group(1).lower()) if structural else None, counts=bool(_COUNTS.search(q)),
        pictures=bool(_PICTURES.search(q) or _SHAPES.search(q) or black_ink), colour=None if black_ink else colour,
        on_ground=on_ground, printed=printed_asked(q), decimals=spelled_number(decimals.group(1)) if decimals else None,
        date_form=date_form(q),
        terms=list(dict.fromkeys(content_words(q))), names=names(task), proper_names=proper_names(task),
    )


def printed_asked(question: str) -> Printed | None:
    """A phrase's times or pages ("how many times does "SLA" appear", "on which pages is Clause 9 cited"), or a
    kind of item counted, listed or paged ("how many URLs …", "which pages print an e-mail address")."""
    for pattern, per in ((_TIMES, "times"), (_PAGES_ON, "pages"), (_PAGES_WITH, "pages")):
        if match := pattern.search(question):
            what = match.group("what").strip()
            if kind := _KIND.search(what):
                return Printed(what=kind.lastgroup, kind=True, per=per)
            if phrase := _phrase(what):
                return Printed(what=phrase, per=per)
            return None
    if kind := _KIND_ITEMS.search(question):
        return Printed(what=kind.lastgroup, kind=True, per="items")
    return None


def _phrase(what: str) -> str | None:
    """The words to look for: quoted, or a name (a capital or a digit past its first letter); not a thing
    described in common words ("the logo"), which a page may show rather than print."""
    if quoted := re.fullmatch(r"[\"“'‘](.+?)[\"”'’]", what):
        return quoted.group(1).strip()
    what = re.sub(r"^(?:the|a|an)\s+", "", what, flags=re.I)
    named = any(c.isupper() or c.isdigit() for c in what[1:]) or (what[:1].isupper() and len(what.split()) == 1)
    return what if named and len(what.split()) <= 6 else None


def _colour(question: str) -> tuple[str | None, bool]:
    """The colour asked about, and whether it is the words' ground or their ink."""
    for pattern, ground in ((_ON_GROUND, True), (_IN_INK, False)):
        if match := pattern.search(question):
            return match.group(match.lastindex).lower().replace("gray", "grey"), ground
    return None, False


def _task(question: str) -> str:
    """The question as the model reads it: no answer-format instruction, no scale to convert to."""
    task = re.sub(r",?\s*" + _SCALE.pattern + r"(?:\s+of\s+(?:us\s+)?dollars)?", "", _FORMAT.sub("", question), flags=re.I)
    return re.sub(r"\s*\(\s*\)", "", task).strip() or question


def names(text: str) -> list[str]:
    """The words that name what is asked about: capitalised past a sentence's first word, or with capitals
    inside (acronyms: short); none in a question written in capitals, where case tells nothing."""
    words = [m for m in _NAME.finditer(text) if not any(c.isdigit() for c in m.group())]
    if sum(w.group().isupper() and len(w.group()) > 1 for w in words) >= len(words) / 2:
        return []
    found = [_bare(w.group()) for w in words
             if not re.search(r"(^|[.?!:;\"“(]\s*)$", text[:w.start()]) and not (w.group().isupper() and len(w.group()) > 5)
             and (w.group()[0].isupper() or any(c.isupper() for c in w.group()[1:]))]
    return list(dict.fromkeys(w for w in found if w.lower() not in _NOT_NAMES and len(w) > 1))


def date_form(question: str) -> str | None:
    """The strftime form of a date the question spells out ("YYYY-MM-DD" → "%Y-%m-%d")."""
    found = _DATE_FORM.search(question)
    return re.sub(r"YYYY|YY|MM|DD|Month|Day|Year", lambda m: _DATE_PARTS[m.group()], found.group()) if found else None


def proper_names(text: str) -> list[str]:
    """Two or more capitalised words in a row past a sentence's first, none an acronym ("Lake Placid Rowing
    Club"): one capitalised word may be a common noun set in capitals ("the Email field"), an acronym a term
    the documents spell out."""
    found = names(text)
    if re.search(r"\S\s+(?:The|Of|In|On|And|Is|Are|For|To|A|An)\s", text):  # title case: case tells nothing
        return []
    runs = re.findall(r"(?<![.?!:;\"“(]\s)(?<!^)\b((?:[A-Z][a-z][\w'’-]*\s+){1,4}[A-Z][a-z][\w'’-]*)", text)
    runs = [_bare(run) for run in runs]
    return [run for run in runs if all(_bare(w) in found for w in run.split())]


def _bare(word: str) -> str:
    """A word or name without its quotes, hyphens at its ends, or possessive ("Hawkesbury's" → "Hawkesbury")."""
    return word.strip("'’-").removesuffix("'s").removesuffix("’s")


def asked_type(question: str) -> Asked:
    """The kind of answer asked, by the question's form: yes/no, a list, a quantity, else words."""
    if _YES_NO.search(question) and not _CHOICES.search(question):
        return "yes_no"
    if _LIST.search(question):
        return "list"
    if when := _WHEN.search(question):
        return "number" if "year" in when.group().lower() else "text"  # a date is written as printed
    if _NAMING.search(question[:60]) or _WHICH_LATE.search(question):  # a name, even of a percentage's group
        return "text"
    return "number" if _QUANTITY.search(question) else "text"


def choices(question: str) -> list[str]:
    """The choices a question offers ("…? X, or Y?", "Among X, Y and Z, which …")."""
    match = _CHOICES.search(question)
    if not match:
        return []
    found = [o.strip(" .'\"") for o in _SPLIT_CHOICES.split(match.group("opts") or match.group("among")) if o.strip(" .'\"")]
    if len(found) < 2 or any(len(o.split()) > 8 for o in found):
        return []
    last = found[-1].split()
    if len(last) > 1 and all(len(o.split()) == 1 for o in found[:-1]):  # "rail, road and sea freight"
        found = [f"{o} {last[-1]}" for o in found[:-1]] + [found[-1]]
    return found


def named_pages(text: str) -> list[int]:
    """The one page-reference parser: "page 5", "page two", "pages 30-35", "the last page" (-1)."""
    pages: list[int] = []
    for first, last in _PAGE_REF.findall(text):
        a = spelled_number(first)
        b = spelled_number(last) if last else a
        pages += list(range(a, min(b, a + MAX_NAMED_PAGES - 1) + 1)) if b >= a else [a, b]
    for word in _ORDINAL_REF.findall(text):
        pages.append(LAST_PAGE if word.lower() in ("last", "final") else _ORDINALS.index(word.lower()))
    return list(dict.fromkeys(pages))


def spelled_number(text: str) -> int:
    """A count written in digits or as a word up to twenty ("12", "two")."""
    return int(text) if text.isdigit() else _NUMBERS.index(text.lower())


def _singular(word: str) -> str:
    return "appendix" if word.startswith("appendi") else word.removesuffix("s")
