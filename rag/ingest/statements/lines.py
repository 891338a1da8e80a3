"""A page's words as lines of a statement: each line's label words and its trailing figures, the figures
as numbers, and the columns they stand in (right-aligned: right edges within a few points)."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

Word = tuple  # pymupdf's (x0, y0, x1, y1, text, block, line, word)
_CELL = re.compile(r"^\$?\(?\$?-?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?%?$|^\$?\(?\$?-?\d+(?:\.\d+)?\)?%?$")
_DASH = re.compile(r"^[—–-]{1,3}$")
_FOOTNOTE = re.compile(r"(?<=[\d)])(?:\([a-z\d]\)|\*+|[a-z])$")
_CELL_GAP = 6.0  # a figure closer than this to the word before it belongs to the label ("and 227.4 million")


@dataclass
class Line:
    y: float
    words: list[Word]
    label: list[Word] = field(default_factory=list)
    cells: list[Word] = field(default_factory=list)
    dollar: bool = False

    @property
    def x0(self) -> float:
        return self.words[0][0]


@dataclass
class Column:
    x0: float
    x1: float

    @property
    def middle(self) -> float:
        return (self.x0 + self.x1) / 2


def page_lines(words: list[Word]) -> list[Line]:
    """Words side by side (their middles within 40% of a word's height) as one line, top to bottom."""
    lines: list[Line] = []
    for w in sorted(words, key=lambda w: (w[1] + w[3]) / 2):
        middle, height = (w[1] + w[3]) / 2, w[3] - w[1]
        if lines and abs(lines[-1].y - middle) <= 0.4 * max(height, 1.0):
            lines[-1].words.append(w)
        else:
            lines.append(Line(y=middle, words=[w]))
    for line in lines:
        line.words.sort(key=lambda w: w[0])
        _split(line)
    return lines


def _split(line: Line) -> None:
    """A line's label words and its trailing figures, "$" signs dropped."""
    words, cells = line.words, []
    at = len(words)
    while at > 0 and (_is_cell(words[at - 1][4]) or words[at - 1][4] == "$"):
        at -= 1
    tail = words[at:]
    label = list(words[:at])
    while tail and label and (tail[0][0] - label[-1][2] < _CELL_GAP or tail[0][4] == "$" and len(tail) == 1):
        label.append(tail.pop(0))
    for w in tail:
        if w[4] == "$":
            line.dollar = True
        else:
            cells.append(w)
    line.label, line.cells = label, cells
    line.dollar = line.dollar or any(w[4].startswith(("$", "($")) for w in cells)


def _is_cell(token: str) -> bool:
    return bool(_CELL.match(_FOOTNOTE.sub("", token)) or _DASH.match(token))


def cell_value(token: str) -> float | None:
    """A printed figure as a number: "(1,234)" → -1234, "$7,637" → 7637, "—" → None."""
    token = _FOOTNOTE.sub("", token.strip())
    if _DASH.match(token):
        return None
    negative = token.startswith(("(", "$(", "-")) or token.endswith(")")
    digits = re.sub(r"[^\d.]", "", token)
    try:
        number = float(digits)
    except ValueError:
        return None
    return -number if negative else number


def printed_cell(token: str) -> str:
    token = _FOOTNOTE.sub("", token.replace("$", ""))
    return "—" if _DASH.match(token) else token


def line_text(line: Line) -> str:
    return " ".join(w[4] for w in line.words)


def figure_columns(lines: list[Line]) -> list[Column]:
    """Columns of figures: right edges within a few points of one another, in enough lines."""
    edges = sorted((w[2], w[0]) for line in lines for w in line.cells)
    groups: list[list[tuple[float, float]]] = []
    for edge in edges:
        if groups and edge[0] - groups[-1][-1][0] <= 8:
            groups[-1].append(edge)
        else:
            groups.append([edge])
    need = max(2, len(lines) // 5)
    return [Column(x0=min(e[1] for e in g), x1=statistics.median_high([e[0] for e in g]))
            for g in groups if len(g) >= need]


def column_of(word: Word, columns: list[Column]) -> int | None:
    for n, column in enumerate(columns):
        if abs(word[2] - column.x1) <= 8:
            return n
    return None
