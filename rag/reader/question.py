"""`understand(question)`: what code can tell from a question before any model reads a page.

The one place that reads the raw question (its wording rules: rag/reader/wording.py): every other module
reads the `Question` record. Nothing here
looks at a document or a benchmark's answer format, and no word of one domain decides anything: the
record says what kind of answer is asked, in which unit, which pages are named, and whether it counts
the document's own pages, figures or tables.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rag.records import LAST_PAGE
from rag.reader.wording import NUMBERS, ORDINALS, RULES
from rag.text import YEAR, content_words

Asked = Literal["number", "text", "list", "yes_no"]
Scale = Literal["thousand", "million", "billion"]
MAX_NAMED_PAGES = 12
_DATE_PARTS = {"YYYY": "%Y", "YY": "%y", "MM": "%m", "DD": "%d", "Month": "%B", "Day": "%d", "Year": "%Y"}
# these name a part of the document, or how to answer, not what is asked about
_NOT_NAMES = set("""according answer figure fig table chart page slide section appendix chapter please round write
give list save express format note fy what which who whom whose when where why how is are was were do does did the
a an in on of for to and or i""".split())


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
    structural = RULES["structure"].search(q)
    scale, decimals, task = RULES["scale"].search(q), RULES["decimals"].search(q), _task(q)
    return Question(
        text=question, task=task, asked=asked, options=choices(q), open=bool(RULES["open"].search(q)) and asked == "text",
        scale=scale.group(1).lower().removesuffix("s") if scale else None,
        pages=named_pages(q), years=list(dict.fromkeys(YEAR.findall(q))),
        structural=_singular(structural.group(1).lower()) if structural else None,
        counts=bool(RULES["counts"].search(q)),
        printed=printed_asked(q), decimals=spelled_number(decimals.group(1)) if decimals else None,
        date_form=date_form(q),
        terms=list(dict.fromkeys(content_words(q))), names=names(task), proper_names=proper_names(task),
    )


def printed_asked(question: str) -> Printed | None:
    """A phrase's times or pages ("how many times does "SLA" appear", "on which pages is Clause 9 cited"), or a
    kind of item counted, listed or paged ("how many URLs …", "which pages print an e-mail address")."""
    for pattern, per in ((RULES["times"], "times"), (RULES["pages_on"], "pages"), (RULES["pages_with"], "pages")):
        if match := pattern.search(question):
            what = match.group("what").strip()
            if kind := RULES["kind"].search(what):
                return Printed(what=kind.lastgroup, kind=True, per=per)
            if phrase := _phrase(what):
                return Printed(what=phrase, per=per)
            return None
    if kind := RULES["kind_items"].search(question):
        return Printed(what=kind.lastgroup, kind=True, per="items")
    return None


def _phrase(what: str) -> str | None:
    """The words to look for: quoted, or a name (a capital or a digit past its first letter); not a thing
    described in common words ("the logo"), which a page may show rather than print."""
    if quoted := RULES["quoted_phrase"].fullmatch(what):
        return quoted.group(1).strip()
    what = RULES["article"].sub("", what)
    named = any(c.isupper() or c.isdigit() for c in what[1:]) or (what[:1].isupper() and len(what.split()) == 1)
    return what if named and len(what.split()) <= 6 else None


def _task(question: str) -> str:
    """The question as the model reads it: no answer-format instruction, no scale to convert to."""
    task = RULES["scale_said"].sub("", RULES["format"].sub("", question))
    return RULES["empty_brackets"].sub("", task).strip() or question


def names(text: str) -> list[str]:
    """The words that name what is asked about: capitalised past a sentence's first word, or with capitals
    inside (acronyms: short); none in a question written in capitals, where case tells nothing."""
    words = [m for m in RULES["name_word"].finditer(text) if not any(c.isdigit() for c in m.group())]
    if sum(w.group().isupper() and len(w.group()) > 1 for w in words) >= len(words) / 2:
        return []
    found = [_bare(w.group()) for w in words
             if not RULES["sentence_start"].search(text[:w.start()]) and not (w.group().isupper() and len(w.group()) > 5)
             and (w.group()[0].isupper() or any(c.isupper() for c in w.group()[1:]))]
    return list(dict.fromkeys(w for w in found if w.lower() not in _NOT_NAMES and len(w) > 1))


def date_form(question: str) -> str | None:
    """The strftime form of a date the question spells out ("YYYY-MM-DD" → "%Y-%m-%d")."""
    found = RULES["date_form"].search(question)
    return RULES["date_part"].sub(lambda m: _DATE_PARTS[m.group()], found.group()) if found else None


def proper_names(text: str) -> list[str]:
    """Two or more capitalised words in a row past a sentence's first, none an acronym ("Lake Placid Rowing
    Club"): one capitalised word may be a common noun set in capitals ("the Email field"), an acronym a term
    the documents spell out."""
    found = names(text)
    if RULES["title_case"].search(text):  # title case: case tells nothing
        return []
    runs = RULES["name_run"].findall(text)
    runs = [_bare(run) for run in runs]
    return [run for run in runs if all(_bare(w) in found for w in run.split())]


def _bare(word: str) -> str:
    """A word or name without its quotes, hyphens at its ends, or possessive ("Hawkesbury's" → "Hawkesbury")."""
    return word.strip("'’-").removesuffix("'s").removesuffix("’s")


def asked_type(question: str) -> Asked:
    """The kind of answer asked, by the question's form: yes/no, a list, a quantity, else words."""
    if RULES["yes_no"].search(question) and not RULES["choices"].search(question):
        return "yes_no"
    if RULES["list"].search(question):
        return "list"
    if when := RULES["when"].search(question):
        return "number" if "year" in when.group().lower() else "text"  # a date is written as printed
    if RULES["naming"].search(question[:60]) or RULES["which_late"].search(question):  # a name, even of a share's group
        return "text"
    return "number" if RULES["quantity"].search(question) else "text"


def choices(question: str) -> list[str]:
    """The choices a question offers ("…? X, or Y?", "Among X, Y and Z, which …")."""
    match = RULES["choices"].search(question)
    if not match:
        return []
    said = match.group("opts") or match.group("among")
    found = [o.strip(" .'\"") for o in RULES["split_choices"].split(said) if o.strip(" .'\"")]
    if len(found) < 2 or any(len(o.split()) > 8 for o in found):
        return []
    last = found[-1].split()
    if len(last) > 1 and all(len(o.split()) == 1 for o in found[:-1]):  # "rail, road and sea freight"
        found = [f"{o} {last[-1]}" for o in found[:-1]] + [found[-1]]
    return found


def named_pages(text: str) -> list[int]:
    """The one page-reference parser: "page 5", "page two", "pages 30-35", "the last page" (-1)."""
    pages: list[int] = []
    for first, last in RULES["page_ref"].findall(text):
        a = spelled_number(first)
        b = spelled_number(last) if last else a
        pages += list(range(a, min(b, a + MAX_NAMED_PAGES - 1) + 1)) if b >= a else [a, b]
    for word in RULES["ordinal_page"].findall(text):
        pages.append(LAST_PAGE if word.lower() in ("last", "final") else ORDINALS.index(word.lower()))
    return list(dict.fromkeys(pages))


def spelled_number(text: str) -> int:
    """A count written in digits or as a word up to twenty ("12", "two")."""
    return int(text) if text.isdigit() else NUMBERS.index(text.lower())


def _singular(word: str) -> str:
    return "appendix" if word.startswith("appendi") else word.removesuffix("s")
