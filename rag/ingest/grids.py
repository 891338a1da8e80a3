"""Tables without rules, read from where their words sit: a results table of a paper, a brochure's price
list, a slide's table read by OCR. PyMuPDF's find_tables needs rules or bands between rows; here columns are
the x-ranges that the text of aligned lines keeps apart, rows are baselines, as rag/ingest/statements/ reads
statements.

The input is a page's pieces of text with their boxes: the text layer's words, or the OCR's lines (each a run
of words the recogniser read apart from its neighbours). A run of lines that split into the same columns is a
table when its cells are short: prose in two columns splits too, into cells of a line's length."""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median

from rag.records import BBox

Piece = tuple[float, float, float, float, str]  # x0, y0, x1, y1, text

GAP = 0.9  # a blank this share of the line height apart is a new cell (a word space is ~0.3)
MIN_GAP = 6.0  # points
ROW_GAP = 1.6  # line heights between two rows of one table
MIN_ROWS = 3  # lines with two or more cells
MAX_CELL_CHARS = 32  # a table's cells are short: the median of its body cells
MAX_LOOSE = 2  # lines of one cell inside a table (a wrapped label, a section's name)
MIN_FILLED = 0.4  # share of a table's cells that hold something
_CAPTION = re.compile(r"^(table|tab\.|exhibit|schedule)\s*[\dIVXA-Z][\w.\-]*\s*[:.\-–—]?", re.I)
_NUMBER = re.compile(r"[-–+(]?[$€£]?\d[\d.,]*%?\)?")


@dataclass
class Line:
    pieces: list[Piece]

    @property
    def y0(self) -> float:
        return min(p[1] for p in self.pieces)

    @property
    def y1(self) -> float:
        return max(p[3] for p in self.pieces)

    @property
    def height(self) -> float:
        return median(p[3] - p[1] for p in self.pieces)

    @property
    def text(self) -> str:
        return " ".join(p[4] for p in self.pieces)


@dataclass
class WordTable:
    """One table found: its cells line by line (None under a cell spanning columns), each line's box, where
    each line's first word starts, the table's box and its title."""

    cells: list[list[str | None]]
    boxes: list[BBox]
    indents: list[float]
    bbox: BBox
    title: str = ""


def lines_of(pieces: list[Piece]) -> list[Line]:
    """Pieces on one baseline, left to right; lines top to bottom."""
    lines: list[list[Piece]] = []
    for piece in sorted(pieces, key=lambda p: ((p[1] + p[3]) / 2, p[0])):
        middle, height = (piece[1] + piece[3]) / 2, piece[3] - piece[1]
        for line in reversed(lines[-3:]):
            top, bottom = min(p[1] for p in line), max(p[3] for p in line)
            if abs(middle - (top + bottom) / 2) <= 0.4 * min(height, bottom - top):
                line.append(piece)
                break
        else:
            lines.append([piece])
    return [Line(sorted(line, key=lambda p: p[0])) for line in lines]


def cells_of(line: Line) -> Line:
    """The line's words joined into cells where no wide blank parts them."""
    out: list[Piece] = []
    for piece in line.pieces:
        if out and piece[0] - out[-1][2] <= max(MIN_GAP, GAP * line.height):
            last = out[-1]
            out[-1] = (last[0], min(last[1], piece[1]), piece[2], max(last[3], piece[3]), f"{last[4]} {piece[4]}")
        else:
            out.append(piece)
    return Line(out)


def find_grids(pieces: list[Piece], exclude: list[BBox] = ()) -> list[WordTable]:
    """The tables the pieces print, outside `exclude` (tables already read, a statement's frame)."""
    kept = [p for p in pieces if not _inside(p, exclude)]
    page_lines = lines_of(kept)
    lines = [cells_of(line) for line in page_lines]
    grids = []
    for run in _runs(lines):
        grid = _grid(run)
        if grid is not None:
            grid.title = title_of(grid.bbox, page_lines)
            grids.append(grid)
    return grids


def _runs(lines: list[Line]) -> list[list[Line]]:
    """Runs of lines close together, each with two or more cells but for a few lines of one cell between."""
    runs, run, loose = [], [], []
    for line in lines:
        near = run and line.y0 - run[-1].y1 <= ROW_GAP * max(line.height, run[-1].height)
        if not near:
            runs.append(run)
            run, loose = [], []
        if len(line.pieces) >= 2:
            run += loose + [line]
            loose = []
        elif run and len(loose) < MAX_LOOSE:
            loose.append(line)
        else:
            runs.append(run)
            run, loose = [], []
    runs.append(run)
    return [r for r in runs if sum(len(line.pieces) >= 2 for line in r) >= MIN_ROWS]


def _grid(run: list[Line]) -> WordTable | None:
    columns = _columns(run)
    if len(columns) < 2:
        return None
    cells = [_place(line, columns) for line in run]
    prose = [j for j in (0, len(columns) - 1) if _prose([row[j] for row in cells])]
    if prose:  # a column of the page's text beside a table or a chart's labels
        cells = [[c for j, c in enumerate(row) if j not in prose] for row in cells]
        kept = [i for i, row in enumerate(cells) if any(row)]
        run, cells = [run[i] for i in kept], [cells[i] for i in kept]
    if not cells or len(cells[0]) < 2 or not _table_like(cells):
        return None
    boxes = [(min(p[0] for p in line.pieces), line.y0, max(p[2] for p in line.pieces), line.y1) for line in run]
    bbox = (min(b[0] for b in boxes), boxes[0][1], max(b[2] for b in boxes), boxes[-1][3])
    return WordTable(cells, boxes, [line.pieces[0][0] for line in run], bbox)


def _columns(run: list[Line]) -> list[tuple[float, float]]:
    """The x-ranges no blank parts, over the lines with the most cells (a header cell spanning columns and a
    label on a line of its own would join them)."""
    most = max(len(line.pieces) for line in run)
    spans = sorted((p[0], p[2]) for line in run if len(line.pieces) >= max(2, 0.75 * most) for p in line.pieces)
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    return [(a, b) for a, b in columns]


def _place(line: Line, columns: list[tuple[float, float]]) -> list[str | None]:
    """A line's cells by column; a cell across several columns is in the first, None in the others."""
    row: list[str | None] = [""] * len(columns)
    for x0, _y0, x1, _y1, text in line.pieces:
        over = [j for j, (a, b) in enumerate(columns) if x0 < b and x1 > a] or [_nearest(columns, x0, x1)]
        row[over[0]] = f"{row[over[0]] or ''} {text}".strip()
        for j in over[1:]:
            row[j] = None
    return row


def _nearest(columns: list[tuple[float, float]], x0: float, x1: float) -> int:
    middle = (x0 + x1) / 2
    return min(range(len(columns)), key=lambda j: abs((columns[j][0] + columns[j][1]) / 2 - middle))


def _prose(column: list[str | None]) -> bool:
    """Lines of running text: cells of several words, many going on in lower case from the line before."""
    filled = [c for c in column if c]
    if len(filled) < MIN_ROWS:
        return False
    lower = sum(c[0].islower() for c in filled) / len(filled)
    words = median(len(c.split()) for c in filled)
    return words >= 5 or (words >= 4 and lower >= 0.3)


def _table_like(cells: list[list[str | None]]) -> bool:
    """Short cells, and numbers beside the labels or three columns and more: two columns of prose are not a
    table, nor is a list of terms each with its sentence."""
    body = [c for row in cells for c in row[1:] if c]
    if len(body) + sum(bool(row[0]) for row in cells) < MIN_FILLED * len(cells) * len(cells[0]):
        return False  # the numbers of a chart's axes, scattered
    spanning = sum(None in row for row in cells[1:])  # a header's cell spans columns, a body's seldom does
    if spanning > max(MAX_LOOSE, len(cells) / 4):
        return False
    if sum(sum(bool(c) for c in row) >= 2 for row in cells) < MIN_ROWS or median(len(c) for c in body) > MAX_CELL_CHARS:
        return False
    labels = [row[0] for row in cells if row[0]]
    if labels and median(len(c) for c in labels) > 2 * MAX_CELL_CHARS:
        return False
    numeric = sum(bool(_NUMBER.fullmatch(c.replace(" ", ""))) for c in body) / len(body)
    return numeric >= 0.3 or len(cells[0]) >= 3


def title_of(bbox: BBox, lines: list[Line], within: float = 60.0) -> str:
    """The table's caption ("Table 3: …") nearest above or below it, else the line just above it when it
    stands alone and short (a slide's or a section's title)."""
    x0, y0, x1, y1 = bbox
    beside = [ln for ln in lines if min(p[2] for p in ln.pieces) > x0 - 20 and max(p[0] for p in ln.pieces) < x1 + 20]
    captions = [ln for ln in beside if _CAPTION.match(ln.text) and (y0 - within <= ln.y1 <= y0 + 2 or
                                                                    y1 - 2 <= ln.y0 <= y1 + within)]
    if captions:
        best = min(captions, key=lambda ln: min(abs(ln.y1 - y0), abs(ln.y0 - y1)))
        return _caption_text(best, lines)
    above = [ln for ln in beside if ln.y1 <= y0 + 1 and y0 - ln.y1 <= 2.5 * ln.height]
    if above:
        line = max(above, key=lambda ln: ln.y1)
        if len(line.text.split()) <= 12:
            return line.text
    return ""


def _caption_text(first: Line, lines: list[Line], most: int = 3) -> str:
    """A caption and the lines that go on from it (up to `most`), one sentence's worth."""
    at = lines.index(first)
    text = first.text
    for above, line in zip(lines[at: at + most - 1], lines[at + 1: at + most]):
        if line.y0 - above.y1 > 0.6 * line.height or text.endswith("."):
            break
        text += " " + line.text
    return text[:200]


def _inside(piece: Piece, areas) -> bool:
    x, y = (piece[0] + piece[2]) / 2, (piece[1] + piece[3]) / 2
    return any(a[0] <= x <= a[2] and a[1] <= y <= a[3] for a in areas)
