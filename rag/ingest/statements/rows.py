"""A statement's rows: each line of figures with its label (a wrapped label's lines joined), the headings
it sits under ("Current assets:"), and whether it is a per-share figure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.ingest.statements.lines import Column, Line, cell_value, column_of, line_text, printed_cell
from rag.records import StatementRow

_CONNECTOR = re.compile(
    r"(?:\b(?:of|and|or|for|to|in|from|on|with|the|net|less|including|excluding|by|at)|[,(–—-])$", re.I)
_PER_SHARE = re.compile(r"per (?:common |diluted |basic )?share|per unit\b", re.I)


def statement_rows(lines: list[Line], columns: list[Column]) -> list[StatementRow]:
    rows: list[StatementRow] = []
    sections: list[_Heading] = []
    wrapped: list[str] = []
    top = ""  # the last heading centred or in capitals ("ASSETS")
    left = min(line.x0 for line in lines)
    placed = [_placed(line, columns) for line in lines]
    for at, line in enumerate(lines):
        if placed[at] is None:
            text = line_text(line)
            if _wrapped(lines, placed, at):
                wrapped.append(text)
            else:
                wrapped = []
                _push(sections, _indent(line, left), text.rstrip(":").strip())
                top = text.rstrip(":").strip() if text.isupper() or line.x0 > left + 120 else top
            continue
        cells, own = placed[at]
        if not own and not wrapped and sum(bool(c) for c in cells) < min(2, len(cells)):
            continue  # a page number under a column
        # figures printed without a label total the heading above them ("Revenues", then "ASSETS")
        heading = sections[-1].name if sections else top
        label = " ".join([*wrapped, own]).strip() or (f"Total {heading.lower()}" if heading else "")
        wrapped = []
        _close(sections, line.x0, label)
        path = [s.name for s in sections]
        rows.append(StatementRow(
            label=label, section=path, values=[cell_value(c) if c else None for c in cells],
            cells=[printed_cell(c) for c in cells],
            per_share=bool(_PER_SHARE.search(label) or any(_PER_SHARE.search(s) for s in path))))
        if sections and _closes(label, sections[-1].name):
            sections.pop()
    return rows


@dataclass
class _Heading:
    x0: float
    name: str
    rows_at: float | None = None  # the indent of its first row


def _close(sections: list[_Heading], x0: float, label: str) -> None:
    """Headings a row stands left of, its own first rows once indented further, end (but a total keeps its own)."""
    while sections:
        last = sections[-1]
        if last.rows_at is None:
            last.rows_at = x0
        if x0 >= last.rows_at - 1 or _closes(label, last.name):
            return
        sections.pop()


def _placed(line: Line, columns: list[Column]) -> tuple[list[str], str] | None:
    """The line's cells by column ("" where none) and its label, or None when it has no figure in a column. A
    figure off the columns is a word of the label ("licenses (1)")."""
    cells = [""] * len(columns)
    label = list(line.label)
    for w in line.cells:
        n = column_of(w, columns)
        if n is None:
            label.append(w)
        else:
            cells[n] = w[4]
    if not any(cells):
        return None
    return cells, " ".join(w[4] for w in sorted(label, key=lambda w: w[0]))


def _wrapped(lines: list[Line], placed: list, at: int) -> bool:
    """A line without figures that begins or goes on with a label the next lines finish, by a line with figures."""
    text = line_text(lines[at])
    for j in range(at + 1, min(at + 4, len(lines))):
        label = placed[j][1] if placed[j] is not None else line_text(lines[j])
        if not _continues(text, label):
            return False
        if placed[j] is not None:
            return True
        text = label
    return False


def _continues(text: str, label: str) -> bool:
    """A label-only line whose label the next line (`label`) finishes."""
    first = label[:1]
    return bool(first) and (not first.isupper() or bool(_CONNECTOR.search(text))) and not text.endswith(":")


def _indent(line: Line, left: float) -> float:
    x0 = line.x0
    return left if x0 > left + 120 else x0  # a heading centred over the page is a top one


def _push(sections: list[_Heading], x0: float, name: str) -> None:
    if not name or len(name) > 120:
        return
    while sections and sections[-1].x0 >= x0 - 1:
        sections.pop()
    sections.append(_Heading(x0, name))


def _closes(total: str, section: str) -> bool:
    return set(_words(total)) - {"total"} == set(_words(section))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())
