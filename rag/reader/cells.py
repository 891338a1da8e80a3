"""A figure a table prints, looked up by code: the row the question names and the column it names, each
matched by all of its label's words ("What did the north depot score in May?" → row "North depot", column
"May"). The longest label the question holds wins ("North depot annex" over "North depot" only when "annex"
is asked too); two rows or columns it names equally are no answer, and the page is read as before."""

from __future__ import annotations

import re

from rag.reader.answer import Cited, Solution, valued
from rag.reader.pages import PageRef
from rag.reader.question import Question
from rag.reader.wording import RULES
from rag.records import Table
from rag.text import STOPWORDS, stem

_PLACEHOLDER = "col"
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_REMARK = re.compile(r"\s*\([^()]*\)")  # "Male (n=612)", "Model-A (ours)": a remark, not the row's name
_SPREAD = re.compile(r"\s*[(±][^()]*\d[^()]*\)?$")  # "61.2% (0.4%)", "3.1 ± 0.2": the spread after a value
MIN_HELD = 0.6  # of the question's words, those the table's title, headers and labels print
_SQUASHED_FROM = 8  # letters: a shorter label is found inside too many words


def _words(text: str) -> list[str]:
    """Content words, a capital letter alone kept: "Group B" is not "Group A"."""
    return [stem(w.lower()) for w in _TOKEN.findall(text)
            if w.lower() not in STOPWORDS or (len(w) == 1 and w.isupper())]


def _squashed(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def cell(question: Question, tables: list[Table], page: PageRef, whole: str) -> Solution | None:
    """The one cell of the page's tables at the row and the column the question names, if a number."""
    text = question.task or question.text
    if question.options or not (question.asked == "number" or RULES["what_is"].match(text)):
        return None
    asked = (set(_words(text)), _squashed(text))
    found = [hit for table in tables if not table.chart and (hit := _cell(asked, table))]
    if len(found) != 1:
        return None
    label, header, value = found[0]
    value = _SPREAD.sub("", value)
    shown, short = valued(value, whole, question)
    return Solution(skill="table", asked="number", value=shown, short_value=short, line=f"{label} · {header}: {value}",
                    program=f"value(table, row={label!r}, column={header!r})", pages=[page], by="code",
                    inputs=[Cited(row=label, period=header, printed=value, page=page.page, doc_id=page.doc_id, file=page.file)])


def _cell(asked: tuple[set[str], str], table: Table) -> tuple[str, str, str] | None:
    """The row and the column the question names, by their labels' words."""
    at = _label_column(table)
    labels = [row[at] for row in table.rows]
    columns = [j for j in range(at + 1, len(table.header)) if any(row[j] for row in table.rows)]
    named = [j for j in columns if not table.header[j].startswith(_PLACEHOLDER)]
    row = _named([label if any(r[j] for j in columns) else "" for label, r in zip(labels, table.rows)], asked)
    column = _named([table.header[j] for j in named], asked)
    if row is None or column is None or not _about(asked[0], table, labels, row, named[column]):
        return None
    value = table.rows[row][named[column]]
    return (labels[row], table.header[named[column]], value) if any(ch.isdigit() for ch in value) else None


def _about(asked: set[str], table: Table, labels: list[str], row: int, column: int) -> bool:
    """Whether the table is about what is asked, beyond the row and column named (a "Total" row and a "2020"
    column are in many tables): its title or another header holds a word of the question, or its title,
    headers and labels hold most of them."""
    matched = set(_words(labels[row])) | set(_words(table.header[column]))
    context = set(_words(" ".join([table.title, *(h for j, h in enumerate(table.header) if j != column)])))
    printed = context | matched | set(_words(" ".join(labels)))
    return bool((asked & context) - matched) or len(asked & printed) >= MIN_HELD * len(asked)


def _label_column(table: Table) -> int:
    """The rows' labels: the first column, or the second when the first holds only markers ("a", "b", "*")."""
    first = [row[0] for row in table.rows if row[0]]
    return 1 if len(table.header) > 2 and all(len(c) <= 2 for c in first) else 0


def _named(labels: list[str], asked: tuple[set[str], str]) -> int | None:
    """The label all of whose words the question holds (or, of a long one, its letters: an OCR'd "NorthDepot" is
    "North Depot"), the one of most words; None if two tie or a label not wholly held holds more of them."""
    words, squashed = asked
    held = []
    most = 0  # the most of the question's words any label holds, wholly held or not
    for i, label in enumerate(labels):
        own = set(_words(_REMARK.sub("", label)))
        letters = _squashed(_REMARK.sub("", label))
        most = max(most, len(own & words))
        if own and (own <= words or len(letters) >= _SQUASHED_FROM and letters in squashed):
            held.append((len(own), i))
    if not held or max(held)[0] < most:  # "Model-A" held, but "Model-A + cache (ours)" holds more of it
        return None
    held.sort(reverse=True)
    if len(held) > 1 and held[1][0] == held[0][0] and labels[held[1][1]] != labels[held[0][1]]:
        return None
    return held[0][1]
