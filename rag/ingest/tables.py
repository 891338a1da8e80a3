"""Table extraction: one searchable fragment per data row, one Table record per table."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import pymupdf

from rag.ids import fragment_id, table_id
from rag.ingest.grids import WordTable, find_grids, lines_of, title_of
from rag.records import BBox, Cell, Fragment, Table, cells_text

Grid = list[list[str | None]]
Word = tuple[float, float, float, float, str]

_NUMERIC = re.compile(r"[$€£(]*[-–—+]?[\d.,]+%?\)?")
_YEAR = re.compile(r"(19|20)\d\d")
_SYMBOL_ONLY = {"$", "€", "£", "%"}
_MAX_HEADER_ROWS = 3


def layout_model_threads(threads: int) -> None:
    """Rebuild PyMuPDF's layout model (find_tables' gate) with ONNX sessions of `threads` threads that
    sleep when idle. Its default, one spinning thread per core in each parsing worker, made two workers
    and the embedder fight over two cores."""
    import sys

    import onnxruntime as ort

    def make_session(model_path, providers=None):
        options = ort.SessionOptions()
        options.enable_cpu_mem_arena = False  # as PyMuPDF's own: memory goes back between pages
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(model_path, sess_options=options, providers=providers)

    layout = sys.modules.get("pymupdf.layout")
    if layout is None:  # pymupdf_layout not installed: find_tables runs without it
        return
    for name, module in list(sys.modules.items()):
        if name.startswith("pymupdf.layout") and hasattr(module, "make_session"):
            module.make_session = make_session
    pymupdf._get_layout = None
    layout.activate()


def page_may_have_tables(page: pymupdf.Page, min_rules: int = 4, min_numeric_rows: int = 3) -> bool:
    """Cheap (~10 ms) guard in front of find_tables, whose layout model costs ~0.8 s a page.

    True when the page has ruled or banded rows, vertical rules, or several text
    lines that split into >= 3 gapped segments with numbers in at least two.
    """
    rule_rows: set[int] = set()
    vertical_rules: set[int] = set()
    for kind, (x0, y0, x1, y1) in page.get_bboxlog():
        if not kind.endswith("path"):
            continue
        width, height = x1 - x0, y1 - y0
        if (height <= 2.5 and width >= 40) or (height <= 20 and width >= 150):
            rule_rows.add(round(y0 / 2))
        elif width <= 2.5 and height >= 15:
            vertical_rules.add(round(x0 / 2))
    if len(rule_rows) >= min_rules or len(vertical_rules) >= 3:
        return True
    return _numeric_column_lines(page) >= min_numeric_rows


def _numeric_column_lines(page: pymupdf.Page, gap: float = 10) -> int:
    lines: dict[int, list[tuple]] = defaultdict(list)
    for word in page.get_text("words"):
        lines[round(word[3] / 3)].append(word)
    count = 0
    for words in lines.values():
        words.sort(key=lambda w: w[0])
        segments = [[words[0][4]]]
        for left, right in zip(words, words[1:]):
            if right[0] - left[2] > gap:
                segments.append([])
            segments[-1].append(right[4])
        numeric = sum(any(ch.isdigit() for ch in "".join(s)) for s in segments)
        count += len(segments) >= 3 and numeric >= 2
    return count


def find_page_tables(
    page: pymupdf.Page, doc_id: str, file: str, prefilter: bool = True
) -> tuple[list[Fragment], list[Table]]:
    """Rows of the tables PyMuPDF finds on the page, each readable alone, plus the whole tables.

    Cell text comes from the page's words, not tab.extract(): on the 10-K, extract() drops
    spaces and moves thousands separators ("FiscalYearsEnded", "46298\\n,").
    """
    if prefilter and not page_may_have_tables(page):
        return [], []
    finder = page.find_tables()
    if finder is None:  # PyMuPDF catches its own exception, prints it and returns None
        raise RuntimeError("PyMuPDF's find_tables failed on this page")
    found = finder.tables
    if not found:
        return [], []
    words = [w[:5] for w in page.get_text("words")]
    lines = lines_of(words)
    parsed = []
    for tab in found:
        if (table := _parse_table(tab, words)) is not None:
            header, rows, boxes = table
            parsed.append(Parsed(header, rows, boxes, tuple(tab.bbox), title_of(tuple(tab.bbox), lines)))
    return table_records(parsed, page.number + 1, doc_id, file)


class Parsed(NamedTuple):
    header: list[str]
    rows: list[list[str]]
    boxes: list[BBox]
    bbox: BBox
    title: str


def table_records(parsed: list[Parsed], page_no: int, doc_id: str, file: str, first_table: int = 0,
                  first_row: int = 0) -> tuple[list[Fragment], list[Table]]:
    """A Table for each table read, and a fragment for each of its rows: the title, then "Header: value"."""
    fragments: list[Fragment] = []
    tables: list[Table] = []
    for found in parsed:
        table = Table(table_id=table_id(doc_id, page_no, first_table + len(tables)), page=page_no,
                      bbox=found.bbox, header=found.header, rows=found.rows, title=found.title)
        tables.append(table)
        titled = f"{_short(found.title)} — " if found.title else ""
        for i, (row, bbox) in enumerate(zip(found.rows, found.boxes)):
            cells = row_cells(found.header, row)
            fragments.append(
                Fragment(
                    id=fragment_id(doc_id, "table", page_no, first_row + len(fragments)),
                    doc_id=doc_id,
                    file=file,
                    page=page_no,
                    modality="table",
                    bbox=bbox,
                    text=titled + cells_text(cells),
                    extra={"table_id": table.table_id, "row": i, "ncols": len(found.header), "title": found.title},
                    cells=cells,
                )
            )
    return fragments, tables


def grid_tables(pieces: list, exclude: list[BBox], page_no: int, doc_id: str, file: str, first_table: int,
                first_row: int) -> tuple[list[Fragment], list[Table]]:
    """The tables without rules the page's words (or OCR lines) print outside `exclude`, as records."""
    parsed = []
    for grid in find_grids(pieces, exclude):
        if (table := _parse_grid(grid)) is not None:
            parsed.append(table)
    return table_records(parsed, page_no, doc_id, file, first_table, first_row)


def _parse_grid(grid: WordTable) -> Parsed | None:
    cells, boxes, indents = grid.cells, grid.boxes, grid.indents
    n_header = _grid_header_rows(cells)
    header = _merge_header_rows(cells[:n_header], len(cells[0]))
    rows = _fold_symbol_columns([[c or "" for c in row] for row in cells[n_header:]])
    rows, boxes = fold_label_rows(rows, boxes[n_header:], indents[n_header:])
    if len(rows) < 2:
        return None
    header = [name or f"col{k + 1}" for k, name in enumerate(header)]
    return Parsed(header, rows, boxes, grid.bbox, grid.title)


def _grid_header_rows(cells: Grid) -> int:
    """A table without rules has no rule under its header: the rows above its first number are the header
    (a header in two or three lines), else its first row if that looks like one."""
    first_number = next((i for i, row in enumerate(cells) if not _looks_like_header(row)), None)
    if first_number is not None and 0 < first_number <= _MAX_HEADER_ROWS:
        return first_number
    return _header_row_count(cells)


def _short(title: str, most: int = 100) -> str:
    return title if len(title) <= most else title[:most].rsplit(" ", 1)[0] + " …"


def row_cells(header: list[str], row: list[str]) -> list[Cell]:
    """A row's filled cells, each with its column's header unless the header is a placeholder or repeats
    the cell before it (a header spanning columns)."""
    cells, last_name = [], None
    for name, value in zip(header, row):
        if not value:
            continue
        labelled = not _is_placeholder(name) and name != last_name
        cells.append(Cell.read(name if labelled else "", value))
        last_name = name
    return cells


def row_text(header: list[str], row: list[str]) -> str:
    # "Header: value" pairs rather than a header line over a value line: each number
    # keeps its column label next to it, so a lone row embeds and cites unambiguously
    # even for wide tables, and nothing relies on positional alignment.
    return cells_text(row_cells(header, row))


@contextmanager
def _unnamed_header_cells(page: pymupdf.Page) -> Iterator[None]:
    """PyMuPDF names an external header's cells with page.get_textbox, which reads the whole page for
    each cell (~0.07 s a cell, a third of a table page's time); the cells are named from the words here."""
    page.get_textbox = lambda *args, **kwargs: ""
    try:
        yield
    finally:
        del page.get_textbox


def _parse_table(tab, words: list[Word]) -> tuple[list[str], Grid, list[BBox]] | None:
    with _unnamed_header_cells(tab.page):
        area = pymupdf.Rect(tab.bbox) | tab.header.bbox
    words = [w for w in words if area.contains(pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2))]
    cell_rows = [list(r.cells) for r in tab.rows]
    row_boxes = [tuple(r.bbox) for r in tab.rows]
    external = _external_header(tab, words)
    if external is not None:
        cell_rows.insert(0, external)
        row_boxes.insert(0, tuple(tab.header.bbox))
    grid = [[_cell_text(cell, words) for cell in cells] for cells in cell_rows]
    grid, row_boxes = _drop_empty_rows(grid, row_boxes)
    grid, row_boxes = _drop_title_rows(grid, row_boxes)
    if len(grid) < 2 or len(grid[0]) < 2:
        return None
    n_header = 1 if external is not None else _header_row_count(grid)
    header = _merge_header_rows(grid[:n_header], len(grid[0]))
    rows = _fold_symbol_columns([[cell or "" for cell in row] for row in grid[n_header:]])
    keep = [j for j in range(len(header)) if any(row[j] for row in rows)]
    if not rows or len(keep) < 2:
        return None
    header = [name or f"col{k + 1}" for k, name in enumerate(header[j] for j in keep)]
    boxes = row_boxes[n_header:]
    rows = [[row[j] for j in keep] for row in rows]
    rows, boxes = fold_label_rows(rows, boxes, _indents(tab, boxes, words))
    return (header, rows, boxes) if rows else None


def _indents(tab, boxes: list[BBox], words: list[Word]) -> list[float]:
    """Where each row's label starts: the leftmost word of the row inside the first column."""
    firsts = [r.cells[0] for r in tab.rows if r.cells and r.cells[0] is not None]
    right = firsts[0][2] if firsts else tab.bbox[2]
    out = []
    for _x0, y0, _x1, y1 in boxes:
        xs = [w[0] for w in words if y0 <= (w[1] + w[3]) / 2 <= y1 and (w[0] + w[2]) / 2 <= right]
        out.append(min(xs, default=tab.bbox[0]))
    return out


def has_value_cell(row: list[str]) -> bool:
    """A cell beside the row label that holds something: a row without one is a label, not data."""
    return any(row[1:])


def fold_label_rows(
    rows: list[list[str]], boxes: list[BBox], indents: list[float]
) -> tuple[list[list[str]], list[BBox]]:
    """A row with no value cell heads the rows under it ("Household Income — <$30,000"); one that heads
    nothing is dropped. A heading covers the rows indented under it or, in a table without indents, the
    rows down to the next heading or total. A label cut in two (the next one goes on in lower case) is
    joined; one that repeats the row above (a typed name under a signature) is dropped."""
    out_rows: list[list[str]] = []
    out_boxes: list[BBox] = []
    groups: list[_Group] = []
    pending = above = ""
    for i, (row, box, indent) in enumerate(zip(rows, boxes, indents)):
        groups = _open_groups(groups, indent, heading=not has_value_cell(row))
        label = " ".join(filter(None, [pending, row[0]]))
        pending, previous, above = "", above, ""
        if has_value_cell(row):
            out_rows.append([" — ".join([*(g.label for g in groups), label]), *row[1:]])
            out_boxes.append(box)
            if label.lower().startswith("total"):  # the rows after a total are not under its heading
                groups = [g for g in groups if not g.flat]
            above = label
        elif i + 1 < len(rows) and rows[i + 1][0][:1].islower():
            pending = label
        elif not (previous and label in previous):
            groups.append(_Group(indent, label.rstrip(": ")))
    return out_rows, out_boxes


class _Group:
    def __init__(self, indent: float, label: str) -> None:
        self.indent, self.label, self.flat = indent, label, None


_INDENT = 2.0  # points: a label this much right of a heading's is indented under it


def _open_groups(groups: list[_Group], indent: float, heading: bool) -> list[_Group]:
    """The headings a row at this indent is under: an indented heading ends where a row comes back to
    its level; a flat one (its first row not indented) where the next heading at its level starts."""
    if groups and groups[-1].flat is None:
        groups[-1].flat = indent <= groups[-1].indent + _INDENT
    return [g for g in groups if indent > g.indent + _INDENT or (g.flat and not heading)]


def _external_header(tab, words: list[Word]) -> list | None:
    """PyMuPDF's header above the grid, kept only if it labels >= 2 columns (else it is a title)."""
    if not tab.header.external:
        return None
    cells = list(tab.header.cells)
    labelled = sum(1 for c in cells if c is not None and _cell_text(c, words))
    return cells if labelled >= 2 else None


def _cell_text(cell, words: list[Word]) -> str | None:
    """None marks a slot covered by a spanning neighbour, "" an empty cell."""
    if cell is None:
        return None
    x0, y0, x1, y1 = cell
    inside = [
        w[4] for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1
    ]
    return " ".join(" ".join(inside).split())


def _drop_empty_rows(grid: Grid, boxes: list[BBox]) -> tuple[Grid, list[BBox]]:
    kept = [(row, box) for row, box in zip(grid, boxes) if any(row)]
    return [r for r, _ in kept], [b for _, b in kept]


def _drop_title_rows(grid: Grid, boxes: list[BBox]) -> tuple[Grid, list[BBox]]:
    """A leading row with text only in the first column is the table's title, not its header."""
    start = 0
    while start < len(grid) - 2 and grid[start][0] and not any(grid[start][1:]):
        start += 1
    return grid[start:], boxes[start:]


def _fold_symbol_columns(grid: list[list[str]]) -> list[list[str]]:
    """Financial statements put '$' in its own column: glue it onto the value to its right."""
    ncols = len(grid[0])
    symbol_cols = [
        j
        for j in range(ncols)
        if any(row[j] for row in grid) and all(row[j] in _SYMBOL_ONLY or not row[j] for row in grid)
    ]
    out = [list(row) for row in grid]
    for row in out:
        for j in symbol_cols:
            symbol, row[j] = row[j], ""
            if not symbol:
                continue
            # "%" trails its number ("21.4 %"); currency signs lead it ("$ 46,298").
            side = range(j - 1, -1, -1) if symbol == "%" else range(j + 1, ncols)
            target = next((k for k in side if row[k]), None)
            if target is not None:
                row[target] = row[target] + symbol if symbol == "%" else symbol + row[target]
    return out


def _header_row_count(grid: Grid) -> int:
    """Leading label-like rows (0 = no header); several only while the label column stays blank."""
    count = 0
    for i, row in enumerate(grid[: min(_MAX_HEADER_ROWS, len(grid) - 1)]):
        if not _looks_like_header(row) or (i > 0 and row[0]):
            break
        count += 1
    return count


def _looks_like_header(row: list[str | None]) -> bool:
    values = [c for c in row[1:] if c]
    return bool(values) and not any(
        _NUMERIC.fullmatch(c) and not _YEAR.fullmatch(c) for c in values
    )


def _merge_header_rows(rows: Grid, ncols: int) -> list[str]:
    """Column names; a slot under a spanning header cell takes that cell's name."""
    if not rows:
        return [""] * ncols
    filled = []
    for row in rows:
        names, last = [], ""
        for cell in row:
            last = last if cell is None else cell
            names.append(last)
        filled.append(names)
    return [" ".join(dict.fromkeys(filter(None, column))) for column in zip(*filled)]


def _is_placeholder(name: str) -> bool:
    return re.fullmatch(r"col\d+", name) is not None
