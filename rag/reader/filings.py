"""The company's filing in a library of many: which searched document's statements a metric is read from.

A metric is one company's, of one fiscal year. Each filing says whose it is in what it prints: its cover page
("NIKE, Inc." over "(Exact name of registrant as specified in its charter)", "FORM 10-K", "For the fiscal year
ended …") and its statements' headers ("NIKE, INC." over "CONSOLIDATED STATEMENTS OF INCOME"); its file name
often names it too ("NIKE_2021_10K.pdf"). `filing_of` reads those into a `Filing` (the company, the wordings
that name it, the fiscal years its statements print, latest first, its form), by code, with no model call.

`choose` picks, for a question, the filing of the company it names (by the most of a name it holds: "Lockheed
Martin" over "Martin"), of the form it names ("10-K"), of the fiscal year it names (the filing whose latest year
is the year asked, else the first that prints it), before any search across the others; it says which and why.
A question that names no company is read from the one filing whose statements print its years, or, of several,
from the best search hit's, saying which ones it found.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from pydantic import BaseModel, Field

from rag.reader.lookup import normal
from rag.reader.wording import RULES
from rag.text import YEAR
from rag.records import StatementFrame

_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_FORM = re.compile(r"\bform\s*(10-?k|10-?q|20-?f|40-?f)\b", re.I)
_SMALL_CAPS = re.compile(r"\b([A-Z]) (?=[A-Z]{2,}\b)")  # "MGM R ESORTS" as small capitals print it
_GROUP = re.compile(r"\s+and\s+(?:its\s+)?(?:consolidated\s+)?subsidiar(?:y|ies)(?:\s+companies)?\s*$", re.I)
_SUFFIXES = {"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "plc", "llc", "lp",
             "sa", "nv", "ag", "se"}
# words of a company's name that say what it is or does, not who: "MGM Resorts International" is "MGM Resorts"
_DESCRIPTIVE = {"international", "group", "holdings", "holding", "systems", "wholesale", "health", "healthcare",
                "worldwide", "global", "resorts", "companies", "enterprises", "industries", "technologies",
                "technology", "brands", "foods", "communications", "entertainment", "financial", "services"}
# a word too common to name a company alone: "General" is not General Mills, "Best" not Best Buy
_COMMON = _DESCRIPTIVE | _SUFFIXES | {"the", "of", "and", "american", "general", "best", "first", "united", "national",
                                      "new", "water", "works", "mills", "power", "energy", "capital", "bank", "trust",
                                      "motors", "stores", "air", "data", "report", "annual", "form", "filing", "final"}
_ENTITY = re.compile(r"\b(?:inc|incorporated|corp|corporation|company|co|ltd|plc|llc|international|group|holdings)\b"
                     r"\.?|\band subsidiar", re.I)
_NOT_NAME = re.compile(r"^(?:table of contents|index|part [ivx]+|item \d|\d+|\(?in (?:millions|thousands)|\$)", re.I)


class Filing(BaseModel):
    """A searched document as a company's filing: whose, which years, which form."""

    doc_id: str
    file: str
    company: str = Field("", description="as it prints it: 'NIKE, Inc.'")
    source: str = Field("", description="where: 'its cover page', 'its statements' headers', 'its file name'")
    names: list[str] = Field(default_factory=list, description="wordings that name it, as `normal` writes them, "
                                                               "the fullest first")
    years: list[int] = Field(default_factory=list, description="the fiscal years its statements print, latest first")
    form: str = ""


class Chosen(list):
    """Statement frames, and why their filing was chosen (`why`), as the hop box says it."""

    def __init__(self, frames=(), why: str = "") -> None:
        super().__init__(frames)
        self.why = why


class Choice(BaseModel):
    """The filing a metric is read from (None: no filing fits), and why, as the hop box says it."""

    doc_id: str | None = None
    why: str = ""


def filing_of(doc_id: str, file: str, cover: str, frames: list[StatementFrame],
              heads: dict[int, str]) -> Filing:
    """A document as a filing: the company its cover page names (else its statements' headers, else its file
    name), the years its statements print and its form. `heads`: the statements' pages' texts, by page."""
    statements = [f for f in frames if f.kind in ("income_statement", "balance_sheet", "cash_flows")]
    years = sorted({p.year for f in statements for p in f.periods if p.year}, reverse=True)
    form = _FORM.search(cover.replace("\xa0", " "))
    company, source = _registrant(cover), "its cover page"
    if not company and (company := _header_name([heads.get(f.page, "") for f in statements])):
        source = "its statements' headers"
    names = _wordings(company) if company else []
    if stem := _file_words(file):
        names.append(stem)
    if not company and stem:
        company, source = PurePath(file).stem, "its file name"
    return Filing(doc_id=doc_id, file=file, company=company, source=source, names=list(dict.fromkeys(names)),
                  years=years, form=_form(form.group(1)) if form else "")


def _form(printed: str) -> str:
    raw = printed.upper().replace("-", "")
    return f"{raw[:2]}-{raw[2:]}"


def _registrant(cover: str) -> str:
    """The name printed over "(Exact name of registrant as specified in its charter)"."""
    if not (marker := _REGISTRANT.search(cover)):
        return ""
    lines = [line.strip(" \t\xa0_") for line in cover[:marker.start()].replace("\xa0", " ").splitlines()]
    name = next((line for line in reversed(lines) if re.search(r"[A-Za-z]", line)), "")
    return _SMALL_CAPS.sub(r"\1", name) if len(name.split()) <= 10 else ""


def _header_name(pages: list[str]) -> str:
    """A company's name over its statements: among the first lines of a statement's page, one that names an
    entity ("NETFLIX, INC.", "The Boeing Company and Subsidiaries")."""
    for text in pages:
        for line in [line.strip() for line in text.replace("\xa0", " ").splitlines() if line.strip()][:4]:
            if not _NOT_NAME.match(line) and len(line.split()) <= 10 and _ENTITY.search(line):
                return _SMALL_CAPS.sub(r"\1", line)
    return ""


def _wordings(company: str) -> list[str]:
    """The wordings that name a company, the fullest first: its name without "Inc." or "and Subsidiaries",
    then without the words that say what it does ("MGM Resorts International": "mgm resorts", "mgm")."""
    words = normal(_GROUP.sub("", company)).split()
    while words and words[-1] in _SUFFIXES:
        words.pop()
    if words[:1] == ["the"]:
        words = words[1:]
    found = [" ".join(words)] if words else []
    while len(words) > 1 and words[-1] in _DESCRIPTIVE:
        words.pop()
        if len(words) > 1 or words[0] not in _COMMON:
            found.append(" ".join(words))
    return found


def _file_words(file: str) -> str:
    """What a file's name says of whose it is: "NIKE_2021_10K.pdf" → "nike"; "" for none."""
    words = [w for w in normal(re.sub(r"10[-_ ]?[kq]\b", " ", PurePath(file).stem.replace("_", " "), flags=re.I))
             .split() if not w.isdigit() and w not in _COMMON and not re.fullmatch(r"(?:fy|q)\d*", w)]
    return " ".join(words) if words and len("".join(words)) >= 3 else ""


def named_by(filing: Filing, text: str) -> int:
    """How much of a filing's name a question holds: a wording of k words 10 + k ("MGM Resorts" over "MGM"),
    one word of it that names nothing else 1, none 0. A name of one word counts as a name written as one
    (a capital: "Square", not "square feet"), or in a question written in lower case."""
    words = normal(text).split()
    held, runs = f" {' '.join(words)} ", {"".join(words[i:j]) for i in range(len(words))
                                          for j in range(i + 1, min(i + 4, len(words)) + 1)}
    score = 0
    for wording in filing.names:
        parts = wording.split()
        if (f" {wording} " in held or wording.replace(" ", "") in runs) and (len(parts) > 1 or _as_name(wording, text)):
            score = max(score, 10 + len(parts))
    distinct = {w for wording in filing.names for w in wording.split() if w not in _COMMON and len(w) >= 3}
    if not score and any(f" {w} " in held and _as_name(w, text) for w in distinct):
        score = 1
    return score


def _as_name(word: str, text: str) -> bool:
    if text == text.lower():
        return True
    return any(m.group()[0].isupper() for m in re.finditer(rf"(?<![A-Za-z]){re.escape(word)}", text, re.I))


def choose(filings: list[Filing], text: str, ranked: list[str]) -> tuple[Choice, bool]:
    """The filing a question's metric is read from, and whether the question named its company: of the
    company it names (the most of a name), the form it names and the fiscal years it names (the filing whose
    latest year is the last asked, else the earliest that prints them all); of a question that names no
    company, the filings whose statements print its years, the first of them in the search's `ranked`
    documents. No choice where no filing has statements, or none names no company and prints the years."""
    kept = [f for f in filings if f.years]
    scores = {f.doc_id: named_by(f, text) for f in kept}
    top = max(scores.values(), default=0)
    named = [f for f in kept if top and scores[f.doc_id] == top]
    pool = named or kept
    if (form := RULES["form_asked"].search(text)) and (of_form := [f for f in pool if f.form == _form(form.group(1))]):
        pool = of_form
    years = sorted({int(y) for y in YEAR.findall(text)})
    fits = _of_years(pool, years)
    if not fits and not named:
        return Choice(), False
    fits = fits or sorted(pool, key=lambda f: -f.years[0])
    order = {doc_id: n for n, doc_id in enumerate(dict.fromkeys(ranked))}
    chosen = min(fits, key=lambda f: order.get(f.doc_id, len(order)))
    return Choice(doc_id=chosen.doc_id, why=_why(chosen, fits, bool(named), years)), bool(named)


def _of_years(pool: list[Filing], years: list[int]) -> list[Filing]:
    """The filings of the years asked: whose latest year is the last asked, else the earliest that prints
    them all (a later filing prints a year as its comparative)."""
    if not years:
        return sorted(pool, key=lambda f: -f.years[0])
    latest = [f for f in pool if f.years[0] == years[-1]]
    printing = sorted((f for f in pool if set(years) <= set(f.years)), key=lambda f: f.years[0])
    return latest or printing[:1]


def _why(chosen: Filing, fits: list[Filing], named: bool, years: list[int]) -> str:
    """Which filing was chosen and why, as the hop box says it."""
    whose = f"{chosen.company}'s filing" if chosen.company else "the filing"
    year = f" of FY{chosen.years[0]}" if chosen.years else ""
    asked = f"FY{years[-1]}" if years else "its years"
    if named:
        fit = "" if not years or years[-1] in chosen.years else f"; it prints no {asked} statements"
        companies = list(dict.fromkeys(f.company for f in fits))
        which = "the company the question names" if len(companies) == 1 else \
            f"the first the search ranked of the {len(companies)} companies the question names ({', '.join(companies)})"
        return f"from {chosen.file}: {whose}{year}, {which} (by {chosen.source}){fit}"
    if len(fits) == 1:
        return f"from {chosen.file}: {whose}{year}, the only searched filing with statements of {asked}"
    found = ", ".join(f"{f.company} ({f.file})" if f.company else f.file for f in fits[:6]) + \
        (", …" if len(fits) > 6 else "")
    return f"from {chosen.file}: {whose}{year}; the question names no company, and {len(fits)} filings print " \
           f"{asked}: {found}; this one the search ranked first"
