"""The item a page's table or chart ranks at the extreme of what the question names, found by code.

"Which depot repaired the most vans?" → the row whose "Vans" cell is the largest; "… the second lowest …" → the
second from the bottom; "… gained most from 2019 to 2021?" → the largest change between those two columns;
"Among A, B and C, which …" → those rows only. The column is the one the question names by all its header's
words, else by the one year it names, and the table's title, items or other headers must hold a word of the
question. Summary rows ("Total", "All adults") are no item. A tie at the rank asked, or two tables of
the page that rank differently, is no answer: the page is read as before.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from rag.reader.answer import Cited, Solution
from rag.reader.cells import _PLACEHOLDER, _label_column, _named, _squashed, _words
from rag.reader.pages import PageRef
from rag.reader.question import Question
from rag.reader.wording import RULES
from rag.records import Table
from rag.text import YEAR

_SMALLEST = {"lowest", "smallest", "least", "fewest", "minimum"}
_RANKS = {"second": 2, "2nd": 2, "third": 3, "3rd": 3}
_SUMMARY = re.compile(r"^\W*(?:total|overall|all|average|mean|sum|general population)\b", re.I)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_MIN_PREFIX = 5  # letters two stems share for an option to name a row ("operations" · "operating")


class Ranked(BaseModel):
    label: str
    value: float
    printed: str
    option: str = ""  # the question's choice this row stands for


class Measure(BaseModel):
    """What the items are ranked by: one column, or the change from one column to another."""

    header: str
    columns: list[int]
    sign: int = 1  # a fall is ranked as the change's opposite


def extreme(question: Question) -> tuple[bool, int] | None:
    """(largest?, rank) when the question asks which item ranks at an extreme; None otherwise."""
    text = question.task or question.text
    found = RULES["extreme"].search(text)
    if not found or question.asked != "text" or not RULES["which_who"].search(text):
        return None
    return found.group(2).lower() not in _SMALLEST, _RANKS.get((found.group(1) or "").lower(), 1)


def ranked_item(question: Question, tables: list[Table], page: PageRef) -> Solution | None:
    """The item at the rank asked, the same in every table of the page that answers."""
    if (asked := extreme(question)) is None:
        return None
    found = {}
    for table in tables:
        if (got := _rank(question, table, *asked)) is not None:
            found.setdefault(got[0].label, got)
    if len(found) != 1:
        return None
    item, measure, n = next(iter(found.values()))
    largest, rank = asked
    top = ("largest fall" if largest else "smallest fall") if measure.sign < 0 else "highest" if largest else "lowest"
    how = top if rank == 1 else f"number {rank} from the {'top' if largest else 'bottom'}"
    line = f"{item.label}: {item.printed} ({measure.header}; the {how} of {n})"
    return Solution(skill="table", asked="text", value=line, short_value=item.option or item.label, line=line,
                    program=f"rank(table, by={measure.header!r}, {'largest' if largest else 'smallest'}, {rank})",
                    pages=[page], by="code",
                    inputs=[Cited(row=item.label, period=measure.header, printed=item.printed, page=page.page,
                                  doc_id=page.doc_id, file=page.file)])


def _rank(question: Question, table: Table, largest: bool, rank: int) -> tuple[Ranked, Measure, int] | None:
    text = question.task or question.text
    asked = (set(_words(text)), _squashed(text))
    at = _label_column(table)
    labels = [row[at] for row in table.rows]
    if (measure := _measure(question, table, at, asked)) is None or not _about(asked[0], table, labels, measure):
        return None
    items = [Ranked(label=label, value=value, printed=printed) for label, row in zip(labels, table.rows)
             if label and (got := _valued(row, measure)) is not None for value, printed in [got]]
    items = _chosen(items, question.options) if question.options else [i for i in items if not _SUMMARY.match(i.label)]
    if len(items) < 2 or rank > len(items):
        return None
    items.sort(key=lambda i: i.value, reverse=largest)
    at_rank = items[rank - 1].value
    if sum(i.value == at_rank for i in items) > 1:
        return None
    return items[rank - 1], measure, len(items)


def _measure(question: Question, table: Table, at: int, asked: tuple[set[str], str]) -> Measure | None:
    """The column the question ranks by, or the change between the two columns of the years it names."""
    numeric = [j for j in range(len(table.header)) if j != at and _numeric(table, j)]
    headers = {j: table.header[j] for j in numeric if not table.header[j].startswith(_PLACEHOLDER)}
    by_year = {y: [j for j, h in headers.items() if y in YEAR.findall(h)] for y in question.years}
    text = question.task or question.text
    if len(question.years) == 2 and (RULES["rise"].search(text) or RULES["fall"].search(text)):  # a change, or nothing
        if not all(len(js) == 1 for js in by_year.values()):
            return None
        first, last = (by_year[y][0] for y in sorted(question.years))
        sign = -1 if RULES["fall"].search(text) else 1
        return Measure(header=f"{headers[last]} − {headers[first]}", columns=[first, last], sign=sign)
    named = _named(list(headers.values()), asked)
    if named is not None:
        j = list(headers)[named]
        return Measure(header=headers[j], columns=[j])
    if len(question.years) == 1 and len(found := by_year[question.years[0]]) == 1:
        return Measure(header=headers[found[0]], columns=found)
    return None


def _about(asked: set[str], table: Table, labels: list[str], measure: Measure) -> bool:
    """Whether the table's title, items or other headers hold a word of the question beyond the measure's."""
    named = set().union(*(_words(table.header[j]) for j in measure.columns))
    others = [h for j, h in enumerate(table.header) if j not in measure.columns]
    return bool(asked & set(_words(" ".join([table.title, *labels, *others]))) - named)


def _numeric(table: Table, j: int) -> bool:
    values = [row[j] for row in table.rows if row[j].strip()]
    return len(values) >= 2 and sum(_number(v) is not None for v in values) >= 0.8 * len(values)


def _number(cell: str) -> float | None:
    """A cell's one number: "41%", "1,824", "+6", "(930)" (negative, as a statement prints it)."""
    text = cell.strip().replace("−", "-")
    bare = re.sub(r"[\s$€£%()+,]", "", text)
    if not _NUMBER.fullmatch(bare):
        return None
    value = float(bare)
    return -value if text.startswith("(") and text.endswith(")") and "%" not in text else value


def _valued(row: list[str], measure: Measure) -> tuple[float, str] | None:
    values = [_number(row[j]) for j in measure.columns]
    if any(v is None for v in values):
        return None
    if len(values) == 1:
        return values[0], row[measure.columns[0]]
    change = values[1] - values[0]
    return measure.sign * change, f"{row[measure.columns[1]]} − {row[measure.columns[0]]} = {change:+g}"


def _chosen(items: list[Ranked], options: list[str]) -> list[Ranked]:
    """For each option, the row that holds all of the option's words (its total first, then the one of fewest
    words): every option's, or none."""
    chosen = []
    for option in options:
        own = set(_words(option))
        held = [i for i in items if own and all(any(_alike(w, x) for x in _words(i.label)) for w in own)]
        if not held:
            return []
        best = min(held, key=lambda i: (not _SUMMARY.match(i.label), len(i.label.split())))
        chosen.append(best.model_copy(update={"option": option}))
    return list({i.label: i for i in chosen}.values()) if len({i.label for i in chosen}) == len(options) else []


def _alike(a: str, b: str) -> bool:
    return a == b or min(len(a), len(b)) >= _MIN_PREFIX and a[:_MIN_PREFIX] == b[:_MIN_PREFIX]
