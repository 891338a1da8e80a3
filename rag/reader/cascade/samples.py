"""How many people a survey's share stands for: "how many adults rated … as poor" is 36% of the 1,503
adults the survey asked. Survey reports give their charts in percentages and their sample sizes in the
methodology ("a national sample of 1,503 adults", "Male (n=612)", a table of groups with their sample
size and margin of error); code finds them, and the share is chosen like any operand.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rag.context import EvidenceItem
from rag.ingest.tables import row_cells
from rag.text import STOPWORDS
from rag.records import Table, cells_text

_PEOPLE = (r"people|adults|persons|respondents|voters|americans|users|seniors|latinos|hispanics|democrats|"
           r"republicans|men|women|students|employees|workers|participants|customers|children|residents|"
           r"citizens|individuals|parents|teens|households|families")
_COUNTED = re.compile(rf"\bhow many\b(?P<group>(?:\s+[\w+'’-]+){{0,3}}?)\s+(?P<noun>{_PEOPLE})\b"
                      r"(?:\s+(?:who|that|which))?(?P<clause>[^?,;]*)", re.I)
_CLAUSE_END = re.compile(r"\s+(?:in|from|among|according|during|of|at)\s+(?:the\s+)?[A-Z\d]|\s+in\s+the\b")
_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d{2,})"
_TOTAL = re.compile(rf"\bsample of (?:about |approximately |nearly |more than )?{_NUMBER}\b", re.I)
_NAMED = re.compile(rf"([^()]{{0,60}}?)\(\s*n\s*=\s*{_NUMBER}\s*\)", re.I)
_VALUE = re.compile(r"\d+(?:\.\d+)?%?[a-z]*|[a-z]", re.I)
_TOKEN = re.compile(r"[a-z][a-z'’]*|\d[\d,.+–-]*\+?", re.I)
# Words every group label may hold: they name no group of their own.
_GENERIC = set("""total sample samples all adults adult people respondents ages age aged older and or the for those
who based on among margin error confidence level size sizes plus minus unweighted weighted group groups national
nationally representative u.s us full overall interviews interviewed survey n""".split())


class Sample(NamedTuple):
    n: int
    label: str  # the group it is the size of ("" for the whole survey)
    item: EvidenceItem  # the words that state it, to cite


class Counted(NamedTuple):
    group: str  # "Democratic" of "how many Democratic people …" ("" for everyone asked)
    parts: list[str]  # what they did, each alternative of an "or" apart
    shares: list[str]  # what to choose a percentage for: one question, or one label per part


def counted_people(question: str) -> Counted | None:
    """What a "how many <people> …" question counts; None when it counts no people."""
    match = _COUNTED.search(question)
    if not match:
        return None
    clause = _CLAUSE_END.split(match.group("clause"))[0].strip()
    parts = [p.strip() for p in re.split(r"\s+or\s+", clause) if p.strip()] if clause else []
    group, noun = match.group("group").strip(), match.group("noun")
    whom = f"{group} {noun}".strip()
    if len(parts) > 1:
        return Counted(group, parts, [f"the percentage of {whom} who {p}" for p in parts])
    return Counted(group, parts, [question[:match.start()] + f"what percentage of {whom}" + question[match.end("noun"):]])


def sample_sizes(doc_id: str, file: str, pages: dict[int, str], tables: list[Table]) -> list[Sample]:
    """Every sample size a document states, in page order: a sample's total and a group's (n=…) in its
    text, and the rows of its tables of groups by sample size."""
    found: list[Sample] = []
    for page, text in sorted(pages.items()):
        text = " ".join(text.split())
        found += [Sample(_int(m.group(1)), "", _cited(doc_id, file, page, text, m)) for m in _TOTAL.finditer(text)]
        found += [Sample(_int(m.group(2)), _last_words(m.group(1)), _cited(doc_id, file, page, text, m))
                  for m in _NAMED.finditer(text)]
    for table in tables:
        found += _table_samples(doc_id, file, table)
    return sorted((s for s in found if s.n >= 10), key=lambda s: s.item.page)


def _table_samples(doc_id: str, file: str, table: Table) -> list[Sample]:
    """The rows of a table with a sample size column; a row the table merged ("Women 65-69 | 914 531")
    is split when its labels and sizes are as many."""
    column = next((n for n, h in enumerate(table.header) if "sample" in h.lower()), None)
    if column is None or column == 0:
        return []
    found = []
    for row in table.rows:
        labels, sizes = [row[0]], row[column].split()
        if len(sizes) > 1:
            labels = row[0].split() if len(row[0].split()) == len(sizes) else []
        for label, size in zip(labels, sizes):
            if re.fullmatch(_NUMBER, size):
                cells = row_cells(table.header, row)
                item = EvidenceItem(text=cells_text(cells), kind="table", doc_id=doc_id, file=file,
                                    page=table.page, score=1.0, cells=cells)
                found.append(Sample(_int(size), label, item))
    return found


def sample_for(group: str, samples: list[Sample]) -> Sample | None:
    """The size of the group a question counts ("Democratic" of "how many Democratic people"): the sample
    whose label names it most (a "Dem/Lean Dem" row); the survey's total when it names no group; None
    when the survey does not say how many of that group it asked."""
    if not _tokens(group) - STOPWORDS:
        return next((s for s in samples if not (_tokens(s.label) - _GENERIC)), None)
    best, score = None, 0
    for sample in samples:
        if (hits := names_group(sample.label, group)) > score:
            best, score = sample, hits
    return best


def names_group(label: str, group: str) -> int:
    """How many words of a label name the group ("Dem/Lean Dem" names "Democratic" twice)."""
    asked = _tokens(group) - STOPWORDS
    return sum(any(_names(word, a) for a in asked) for word in _tokens(label) - _GENERIC)


def _names(label_word: str, asked: str) -> bool:
    """A label's word names the asked word: the same, or its abbreviation ("Dem" for "Democratic")."""
    if label_word == asked:
        return True
    return len(label_word) >= 3 and label_word.isalpha() and asked.startswith(label_word)


def _tokens(text: str) -> set[str]:
    return {t.lower().rstrip(".,") for t in _TOKEN.findall(text.replace("/", " "))}


def _last_words(text: str, most: int = 4) -> str:
    """A group's label: the words before its size, not a previous row's value ("65b") or marker ("a")."""
    words = [w for w in text.split()[-most:] if not _VALUE.fullmatch(w)]
    return " ".join(words)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _cited(doc_id: str, file: str, page: int, text: str, match: re.Match, width: int = 60) -> EvidenceItem:
    """The words around a sample size, as evidence to cite."""
    words = text[max(0, match.start() - width): match.end() + width].strip()
    return EvidenceItem(text=words, kind="text", doc_id=doc_id, file=file, page=page, score=1.0)
