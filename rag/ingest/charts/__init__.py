"""Charts as data: each figure's data labels paired with their category and series at ingestion.

A chart read this way becomes a Table (one row per category, one column per series, `chart` set),
one table fragment per category (`Chart: <title> | <category> | <series>: <value> | …`), and in its
figure fragment a compact `In the chart: <category> — <series>: <value>, …` instead of the bag of
labels. A chart whose labels cannot all be paired keeps its label text and is marked ambiguous;
the pairs that were certain are still kept.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise

import pymupdf

from rag.ids import fragment_id, table_id
from rag.ingest.charts.marks import Label, Marks, span_labels, vector_marks
from rag.ingest.charts.pairing import pair_chart
from rag.ingest.charts.pixels import ReadImage, inside_figure, read_pixels
from rag.ingest.figures import FIGURE_TEXT_CHARS, SCARCE_TEXT, Line, detect_figures, figure_text
from rag.ingest.pdf import Warn
from rag.records import BBox, Cell, ChartInfo, Fragment, Table, cells_text

# How far around the drawing (left, top, right, bottom) its row labels, legend and ticks may be.
_MARGIN = (200.0, 40.0, 60.0, 30.0)
_AXIS_REACH = 80.0  # an axis line this far under the drawing's box still belongs to it
_ROW_CHARS = 80  # a chart row's fragment names its chart by this much of the title
_LABEL_CHARS = 80  # a text block longer than this beside a chart is a paragraph, not a label


@dataclass
class PageInk:
    """What every chart on a page is read from: its drawings and its visible text lines, and where its
    paragraphs are (text beside a chart that is body text, not a label)."""

    drawings: list[dict]
    labels: list[Label]
    body_size: float
    paragraphs: list[BBox]

    @classmethod
    def of(cls, page: pymupdf.Page) -> PageInk:
        drawings = page.get_drawings()
        labels = span_labels(page, drawings)
        paragraphs = [
            tuple(b[:4]) for b in page.get_text("blocks") if len(" ".join(b[4].split())) > _LABEL_CHARS
        ]
        return cls(drawings, labels, _body_size(labels), paragraphs)

    def labels_near(self, box: BBox, panel: BBox) -> list[Label]:
        """Text inside the drawing, and labels around it: smaller than body text, or not in a paragraph."""
        return [
            lb
            for lb in self.labels
            if _within(lb, panel)
            and (
                _centre_in(lb, box)
                or lb.size < self.body_size - 0.5
                or not any(_within(lb, p) for p in self.paragraphs)
            )
        ]


@dataclass
class ChartReading:
    kind: str
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (category, series, value)
    unpaired: list[str] = field(default_factory=list)
    source: str = "vector"
    legend: list[str] = field(default_factory=list)

    @property
    def ambiguous(self) -> bool:
        return bool(self.unpaired)


def add_page_charts(
    page: pymupdf.Page,
    figures: list[Fragment],
    start: int,
    read_image: ReadImage | None = None,
    with_chart_text: bool = True,
    max_chars: int = 120,
    warn: Warn | None = None,
) -> tuple[list[Fragment], list[Table]]:
    """Read the page's figures as charts: table-row fragments (numbered from `start`) and Tables;
    each figure fragment read as a chart gets the compact values as its chart text."""
    if not figures:
        return [], []
    ink = PageInk.of(page)
    boxes = [f.bbox for f in figures]
    rows: list[Fragment] = []
    tables: list[Table] = []
    for figure in figures:
        others = [b for b in boxes if b is not figure.bbox]
        try:
            reading = read_chart(page, figure.bbox, str(figure.extra.get("kind")), ink, others, read_image)
        except Exception as exc:  # noqa: BLE001 - an unreadable chart keeps its caption and label text
            if warn:
                warn("chart reading", exc)
            reading = None
        if reading is None or not reading.rows:
            continue
        table = _table(figure, reading, len(tables))
        tables.append(table)
        rows += _row_fragments(figure, table, start + len(rows))
        _describe(figure, table, reading, with_chart_text, max_chars)
    return rows, tables


def scan_figures(
    page: pymupdf.Page,
    scans: list[BBox],
    blocks: list[tuple[BBox, str]],
    lines: list[Line],
    first: int,
    doc_id: str,
    file: str,
) -> list[Fragment]:
    """A page read with OCR is a picture (a slide exported as an image, a scanned chart): each picture is
    offered to the chart reader as a figure, titled by its first paragraph; `keep_charted` drops the
    ones that are not charts."""
    out = []
    for box in scans:
        box = tuple(pymupdf.Rect(box) & page.rect)
        inside = [text for b, text in blocks if _centre_of(b, box)]
        title = inside[0][:120] if inside else ""
        words = " ".join(ln.text for ln in lines if _centre_of(tuple(ln.rect), box))[:600]
        out.append(
            Fragment(
                id=fragment_id(doc_id, "image_caption", page.number + 1, first + len(out)),
                doc_id=doc_id,
                file=file,
                page=page.number + 1,
                modality="image_caption",
                bbox=box,
                text=figure_text(title, words, True, 120),
                extra={
                    "kind": "raster",
                    "scan": 1,
                    "caption_source": "ocr",
                    "caption": title,
                    "chart_text": words,
                    "title": title,
                    "chart_text_source": "ocr",
                },
            )
        )
    return out


def keep_charted(figures: list[Fragment]) -> list[Fragment]:
    """A page picture stays a figure only if it was read as a chart: a scanned page of text is not a figure."""
    return [f for f in figures if not f.extra.get("scan") or "chart_table_id" in f.extra]


def long_rows(table: Table) -> list[tuple[str, str, str]]:
    """A chart table back as (category, series, value) triples; one unnamed series is series ""."""
    single = table.header[1:] == ["value"]
    return [
        (row[0], "" if single else name, value)
        for row in table.rows
        for name, value in zip(table.header[1:], row[1:])
        if value
    ]


def chart_json(table: Table) -> dict:
    chart = table.chart
    return {
        "page": table.page,
        "figure_id": chart.figure_id,
        "title": chart.title,
        "kind": chart.kind,
        "ambiguous": chart.ambiguous,
        "rows": [{"category": c, "series": s, "value": v} for c, s, v in long_rows(table)],
    }


def drop_charted_tables(
    page: pymupdf.Page, fragments: list[Fragment], tables: list[Table], warn: Warn | None = None
) -> tuple[list[Fragment], list[Table]]:
    """Tables that are really vector charts — coloured bars or lines whose labels pair without doubt —
    are dropped with their rows: the chart reader gives them back as charts."""
    if not tables:
        return fragments, tables
    regions = [r for r in detect_figures(page, []) if r.kind == "vector"]
    candidates = [(t, [r for r in regions if _mostly_in(r.box, t.bbox)]) for t in tables]
    candidates = [(t, rs) for t, rs in candidates if rs]
    if not candidates:
        return fragments, tables
    ink = PageInk.of(page)
    charted = set()
    for table, found in candidates:
        for region in found:
            try:
                reading = read_chart(page, region.box, "vector", ink, [], None)
            except Exception as exc:  # noqa: BLE001 - kept as the table PyMuPDF found
                if warn:
                    warn("reading a table as a chart", exc)
                reading = None
            if reading is not None and not reading.ambiguous and len(reading.rows) >= 3:
                charted.add(table.table_id)
    return (
        [f for f in fragments if f.extra.get("table_id") not in charted],
        [t for t in tables if t.table_id not in charted],
    )


def read_chart(
    page: pymupdf.Page, box: BBox, kind: str, ink: PageInk, others: list[BBox], read_image: ReadImage | None
) -> ChartReading | None:
    """The (category, series, value) triples of the chart drawn in `box`, or None if it holds no numbers."""
    panel = _panel(page, box, others, ink.drawings)
    labels = ink.labels_near(box, panel)
    drawings = ink.drawings
    source = "vector"
    if kind == "raster" or not any(_centre_in(lb, box) for lb in labels):
        outlined = kind != "raster"  # text drawn as outlines: worth OCR only over a chart's marks
        reader = _printed(box, labels) or read_image
        if reader is None or (
            outlined and not _chart_like(inside_figure(vector_marks(drawings, box), box))
        ):
            return None
        labels, marks = read_pixels(page, box, panel, drawings, reader, kind == "raster")
        source = "ocr"
    else:
        marks = inside_figure(vector_marks(drawings, panel), box)
    if not any(any(ch.isdigit() for ch in lb.text) for lb in labels):
        return None
    reading = pair_chart(labels, marks)
    kinds = Counter(p.kind for p in reading.pairs)
    kind = kinds.most_common(1)[0][0] if kinds else "unknown"
    return ChartReading(
        kind=kind,
        rows=_unique_rows(
            [(p.category, p.series, p.label.text) for p in _reading_order(reading.pairs, reading.across)],
            reading.unpaired,
        ),
        unpaired=[lb.text for lb in reading.unpaired],
        source=source,
        legend=reading.legend,
    )


def _printed(box: BBox, labels: list[Label]) -> ReadImage | None:
    """A picture whose words the text layer already holds (a cover under its title) is not read with OCR."""
    inside = [lb for lb in labels if _centre_in(lb, box)]
    if sum(len(lb.text) for lb in inside) < SCARCE_TEXT:
        return None
    return lambda _area: [Line(pymupdf.Rect(lb.box), lb.text, lb.size, lb.bold) for lb in inside]


def _chart_like(marks: Marks) -> bool:
    """Dots of one colour, bars from one baseline, or a line running left to right: not a diagram."""
    dots = Counter(c.colour for c in marks.curves if c.marker)
    baselines = Counter(round(b.box[0]) for b in marks.bars) + Counter(round(b.box[3]) for b in marks.bars)
    lines = [c.points for c in marks.curves if not c.marker and len(c.points) >= 3]
    return (
        any(n >= 3 for n in dots.values())
        or any(n >= 3 for n in baselines.values())
        or any(all(b[0] >= a[0] for a, b in pairwise(pts)) and pts[-1][0] - pts[0][0] >= 30 for pts in lines)
    )


def _reading_order(pairs: list, across: str) -> list:
    """Categories in the order their bars, columns or points come; series as the eye meets them."""
    if across == "x":
        first = {p.category: p.label.cx for p in sorted(pairs, key=lambda p: -p.label.cx)}
        return sorted(pairs, key=lambda p: (first[p.category], p.label.cy))
    first = {p.category: p.label.cy for p in sorted(pairs, key=lambda p: -p.label.cy)}
    return sorted(pairs, key=lambda p: (first[p.category], p.label.cx))


def _unique_rows(rows: list[tuple[str, str, str]], unpaired: list[Label]) -> list[tuple[str, str, str]]:
    """A (category, series) read twice with different values is not known: both go to the unpaired."""
    values: dict[tuple[str, str], set[str]] = {}
    for category, series, value in rows:
        values.setdefault((category, series), set()).add(value)
    kept = []
    for category, series, value in rows:
        if len(values[(category, series)]) == 1:
            if (category, series, value) not in kept:
                kept.append((category, series, value))
        else:
            unpaired.append(Label((0, 0, 0, 0), value, 0))
    return kept


def _panel(page: pymupdf.Page, box: BBox, others: list[BBox], drawings: list[dict]) -> BBox:
    """The drawing's box widened to where its row labels, legend and ticks are, not into another figure.
    The box may stop short of the x-axis (figure detection trims a line that sticks out alone): the
    ticks are under the axis."""
    left, top, right, bottom = _MARGIN
    axis = max(
        (
            r.y1
            for d in drawings
            if (r := d["rect"]).height < 0.8
            and r.width >= 0.5 * (box[2] - box[0])
            and r.x0 < box[2]
            and r.x1 > box[0]
            and box[3] < r.y1 <= box[3] + _AXIS_REACH
        ),
        default=box[3],
    )
    page_box = page.rect
    x0, y0 = max(page_box.x0, box[0] - left), max(page_box.y0, box[1] - top)
    x1, y1 = min(page_box.x1, box[2] + right), min(page_box.y1, axis + bottom)
    for o in others:
        beside = o[1] < box[3] and o[3] > box[1]
        over = o[0] < box[2] and o[2] > box[0]
        if beside and o[2] <= box[0]:
            x0 = max(x0, o[2])
        if beside and o[0] >= box[2]:
            x1 = min(x1, o[0])
        if over and o[3] <= box[1]:
            y0 = max(y0, o[3])
        if over and o[1] >= box[3]:
            y1 = min(y1, o[1])
    return (x0, y0, x1, y1)


def _table(figure: Fragment, reading: ChartReading, n: int) -> Table:
    seen = list(dict.fromkeys(s for _, s, _ in reading.rows))
    series = [s for s in reading.legend if s in seen] + [s for s in seen if s not in reading.legend]
    categories = list(dict.fromkeys(c for c, _, _ in reading.rows))
    cells = {(c, s): v for c, s, v in reading.rows}
    title = str(figure.extra.get("title") or figure.extra.get("caption") or "")[:120]
    return Table(
        table_id=table_id(figure.doc_id, figure.page, n, chart=True),
        page=figure.page,
        bbox=figure.bbox,
        header=["category", *[s or "value" for s in series]],
        rows=[[c, *[cells.get((c, s), "") for s in series]] for c in categories],
        chart=ChartInfo(
            figure_id=figure.id,
            title=title,
            kind=reading.kind,
            ambiguous=reading.ambiguous,
            source=reading.source,
        ),
    )


def _row_fragments(figure: Fragment, table: Table, start: int) -> list[Fragment]:
    title = _short(table.chart.title, _ROW_CHARS) or f"figure on p. {figure.page}"
    out = []
    for i, row in enumerate(table.rows):
        cells = [Cell.read("Chart", title), Cell.read("", row[0])]
        cells += [Cell.read(name if name != "value" else "", value) for name, value in zip(table.header[1:], row[1:])
                  if value]
        out.append(
            Fragment(
                id=fragment_id(figure.doc_id, "table", figure.page, start + i),
                doc_id=figure.doc_id,
                file=figure.file,
                page=figure.page,
                modality="table",
                bbox=figure.bbox,
                text=cells_text(cells),
                extra={
                    "table_id": table.table_id,
                    "row": i,
                    "ncols": len(table.header),
                    "figure_id": figure.id,
                },
                cells=cells,
            )
        )
    return out


def _describe(
    figure: Fragment, table: Table, reading: ChartReading, with_chart_text: bool, max_chars: int
) -> None:
    """The figure fragment names its chart table; a chart read without doubt is embedded with its values
    instead of its label text (`chart_text` keeps the labels)."""
    values = compact(table)
    figure.extra.update(
        {
            "chart_table_id": table.table_id,
            "chart_kind": reading.kind,
            "chart_ambiguous": int(reading.ambiguous),
            "chart_values": values,
        }
    )
    if not reading.ambiguous:  # else the label text stays: a pairing in doubt is not shown as one
        figure.text = figure_text(str(figure.extra.get("caption", "")), values, with_chart_text, max_chars)


def compact(table: Table, limit: int = FIGURE_TEXT_CHARS) -> str:
    """ "Eating out — 2005: 14%, 2010: 21%; Groceries — …": each category with its series' values."""
    parts = []
    for row in table.rows:
        cells = [(name, value) for name, value in zip(table.header[1:], row[1:]) if value]
        if len(cells) == 1 and cells[0][0] == "value":
            parts.append(f"{row[0]}: {cells[0][1]}")
        else:
            parts.append(f"{row[0]} — " + ", ".join(f"{n}: {v}" if n != "value" else v for n, v in cells))
    return _short("; ".join(parts), limit * 4)


def _body_size(labels: list[Label]) -> float:
    sizes = Counter()
    for lb in labels:
        sizes[round(lb.size, 1)] += len(lb.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _centre_of(inner: BBox, box: BBox) -> bool:
    x, y = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _mostly_in(box: BBox, area: BBox) -> bool:
    w = min(box[2], area[2]) - max(box[0], area[0])
    h = min(box[3], area[3]) - max(box[1], area[1])
    return w > 0 and h > 0 and w * h >= 0.5 * (box[2] - box[0]) * (box[3] - box[1])


def _within(label: Label, area: BBox) -> bool:
    return area[0] <= label.cx <= area[2] and area[1] <= label.cy <= area[3]


def _centre_in(label: Label, box: BBox) -> bool:
    return box[0] <= label.cx <= box[2] and box[1] <= label.cy <= box[3]


def _short(text: str, limit: int) -> str:
    return (
        text
        if len(text) <= limit
        else text[: text.rfind(" ", 0, limit) if " " in text[:limit] else limit].rstrip(" ,;:") + " …"
    )
