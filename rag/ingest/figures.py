"""Figures (raster images and vector charts) as caption fragments."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pymupdf

from rag.ids import fragment_id
from rag.ingest.charts.marks import white_fill
from rag.records import BBox, Fragment

_LABEL = re.compile(r"^(fig(ure)?\.?|chart|exhibit)\s*\d+", re.IGNORECASE)
_SOURCE = re.compile(r"\bsource:", re.IGNORECASE)
_BOLD_FONT = re.compile(r"bold|black|heavy|demi|semibold", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3}")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_CHART_TEXT_CHARS = 600
FIGURE_TEXT_CHARS = 400  # caption + chart text as embedded: MiniLM reads ~256 tokens, keep the caption first
_MIN_CHART_CHARS = 150  # a long caption still leaves the chart this much
CHART_MARK = "In the chart: "  # what follows is the chart's values (charts.compact) or its words
SCARCE_TEXT = 30  # a raster figure with less vector text inside than this is read with OCR
_MIN_OCR_SIZE = (120, 80)  # points: smaller images are logos and icons
_MAX_OCR_READS = 3  # raster figures read per page: bounds the cost of a page full of pictures


@dataclass
class Region:
    box: BBox
    kind: str
    members: list[BBox] = field(default_factory=list)  # vector paths only

    @property
    def rect(self) -> pymupdf.Rect:
        return pymupdf.Rect(self.box)


@dataclass
class Line:
    rect: pymupdf.Rect
    text: str
    size: float
    bold: bool


def find_page_figures(
    page: pymupdf.Page,
    blocks: list[tuple[BBox, str]],
    doc_id: str,
    file: str,
    exclude: list[BBox] | None = None,
    window: float = 120.0,
    max_chars: int = 120,
    lines: list[Line] | None = None,
    chart_text: bool = True,
    read_image: Callable[[BBox], list[Line]] | None = None,
) -> list[Fragment]:
    """One fragment per figure: the caption a reader would see next to it, then (with `chart_text`)
    the text inside the chart. `lines` replaces the text layer (OCR'd pages); `read_image` reads a
    raster figure with little vector text inside."""
    figures = detect_figures(page, exclude or [])
    if not figures:
        return []
    lines = _text_lines(page) if lines is None else lines
    page_no = page.number + 1
    out: list[Fragment] = []
    reads = 0
    for region in figures:
        parts = _caption_parts(region.rect, blocks, lines, window, max_chars)
        caption = _join(list(parts.values()))
        inside, source = _chart_text(region.rect, lines, caption), "text"
        if read_image and reads < _MAX_OCR_READS and _worth_reading(region, inside):
            reads += 1
            read = _chart_text(region.rect, read_image(region.box), caption)
            if len(read) > len(inside):
                inside, source = read, "ocr"
        if not caption and not inside:
            continue
        extra = {"kind": region.kind, "caption_source": "+".join(parts) or "chart_text",
                 "caption": caption, "chart_text": inside, "title": parts.get("title", "")}
        if inside:
            extra["chart_text_source"] = source
        out.append(
            Fragment(
                id=fragment_id(doc_id, "image_caption", page_no, len(out)),
                doc_id=doc_id,
                file=file,
                page=page_no,
                modality="image_caption",
                bbox=region.box,
                text=figure_text(caption, inside, chart_text, max_chars),
                extra=extra,
            )
        )
    return out


def figure_text(caption: str, inside: str, with_chart: bool, max_chars: int) -> str:
    """What gets embedded: the caption, then the chart's own words, bounded together; a figure
    without a caption is known by its chart text either way."""
    if not caption:
        return _truncate(inside, FIGURE_TEXT_CHARS if with_chart else max_chars)
    if not with_chart or not inside:
        return caption
    budget = max(FIGURE_TEXT_CHARS - len(caption) - len(". " + CHART_MARK), _MIN_CHART_CHARS)
    return _join([caption, CHART_MARK + _truncate(inside, budget)])


def boxed_lines(items: Iterable[tuple[BBox, str, float]]) -> list[Line]:
    """Lines known only by box, text and height (OCR): the height stands in for the font size."""
    return [Line(pymupdf.Rect(box), text, round(1.4 * height) / 2, False) for box, text, height in items]


def _worth_reading(region: Region, inside: str) -> bool:
    return (region.kind == "raster" and len(inside) < SCARCE_TEXT
            and _width(region.box) >= _MIN_OCR_SIZE[0] and _height(region.box) >= _MIN_OCR_SIZE[1])


def detect_figures(
    page: pymupdf.Page,
    exclude: list[BBox],
    min_size: float = 50,
    tolerance: float = 6,
    min_paths: int = 4,
) -> list[Region]:
    """Raster images and clusters of vector paths that look like charts, merged where they overlap."""
    # Plain tuples, not pymupdf.Rect: charts have hundreds of paths and Rect arithmetic is slow.
    page_box = tuple(page.rect)
    page_area = _area(page_box)
    images, paths = [], []
    drawings = page.get_cdrawings()  # read once: backdrops and bars drawn as one path both look at them
    backdrops = _clipped_backdrops(page, drawings)
    for kind, box in page.get_bboxlog():
        if kind == "fill-path":
            box = backdrops.get(_key(box), box)
        box = _intersection(box, page_box)
        if box is None or _area(box) >= 0.9 * page_area:
            continue  # page backgrounds and frames
        if kind == "fill-image":
            images.append(box)
        elif kind.endswith("path"):
            paths.append(box)
    regions = [Region(b, "raster") for b in images if _width(b) >= min_size and _height(b) >= min_size]
    regions += [c for c in _cluster(paths, tolerance) if _is_chart(c, min_size, min_paths, drawings)]
    kept = [r for r in _merge(regions) if not _mostly_inside(r.box, exclude)]
    return sorted(kept, key=lambda r: (r.box[1], r.box[0]))


def _clipped_backdrops(page: pymupdf.Page, drawings: list[dict]) -> dict[tuple, BBox]:
    """Backdrops by box: the part their clip shows. get_bboxlog ignores clipping, so two charts'
    backdrops would overlap and make them one figure."""
    if not any(_backdrop(d, page) for d in drawings):
        return {}
    shown, clips = {}, {}
    for d in page.get_drawings(extended=True):
        if d["type"] == "clip":
            clips[d["level"]] = pymupdf.Rect(d["scissor"])
        elif _backdrop(d, page):
            clip = next((clips[lv] for lv in sorted(clips, reverse=True) if lv < d["level"]), page.rect)
            shown[_key(tuple(d["rect"]))] = tuple(pymupdf.Rect(d["rect"]) & clip)
    return shown


def _backdrop(drawing: dict, page: pymupdf.Page) -> bool:
    """A white fill reaching past the page: a chart's backdrop, clipped to far less than its box says."""
    return drawing["type"] == "f" and white_fill(drawing) and pymupdf.Rect(drawing["rect"]) not in page.rect


def _key(box) -> tuple:
    return tuple(round(v, 1) for v in box)


def _cluster(boxes: list[BBox], tolerance: float) -> list[Region]:
    clusters: list[Region] = []
    for box in sorted(boxes, key=lambda b: (b[1], b[0])):
        merged = Region(box, "vector", [box])
        for c in [c for c in clusters if _touch(c.box, box, tolerance)]:
            clusters.remove(c)
            _absorb(merged, c)
        clusters.append(merged)
    return [_trim_clipped(c) for c in _merge(clusters, tolerance)]


def _trim_clipped(region: Region) -> Region:
    """Cut each path to the extent of all the others.

    get_bboxlog ignores clipping, so a chart's shaded band can report a box far past the plot;
    a path that sticks out alone is such a case far more often than real content.
    """
    members = region.members
    if len(members) < 3:
        return region
    lows = [sorted(m[i] for m in members)[:2] for i in (0, 1)]
    highs = [sorted((m[i] for m in members), reverse=True)[:2] for i in (2, 3)]
    box = None
    for m in members:
        others = tuple(
            lo[1] if m[i] == lo[0] else lo[0] for i, lo in enumerate(lows)
        ) + tuple(hi[1] if m[i + 2] == hi[0] else hi[0] for i, hi in enumerate(highs))
        part = _intersection(m, others) or m
        box = part if box is None else _union(box, part)
    region.box = box
    return region


def _merge(regions: list[Region], tolerance: float = 0) -> list[Region]:
    """Union regions until none touch; raster wins the kind so photos keep their label."""
    regions = list(regions)
    changed = True
    while changed:
        changed = False
        for i, a in enumerate(regions):
            other = next((b for b in regions[i + 1 :] if _touch(a.box, b.box, tolerance)), None)
            if other is not None:
                _absorb(a, other)
                regions.remove(other)
                changed = True
                break
    return regions


def _absorb(into: Region, other: Region) -> None:
    into.box = _union(into.box, other.box)
    into.members += other.members
    if other.kind == "raster":
        into.kind = "raster"


def _is_solid(box: BBox) -> bool:
    return _width(box) > 3 and _height(box) > 3


def _is_chart(region: Region, min_size: float, min_paths: int, drawings: list[dict]) -> bool:
    box = region.box
    if _width(box) < min_size or _height(box) < min_size * 0.8:
        return False
    solid = [m for m in region.members if _is_solid(m)]
    if len(region.members) < min_paths or len(solid) < 2:
        return False
    # Table shading and zebra stripes: every solid path spans the whole region width.
    return not all(_width(s) >= 0.9 * _width(box) for s in solid) or _bars_as_one_path(drawings, box)


def _bars_as_one_path(drawings: list[dict], box: BBox) -> bool:
    """A series' bars drawn as one path: the path spans the chart as a stripe would, its rectangles do not."""
    for drawing in drawings:
        rects = [item[1] for item in drawing["items"] if item[0] == "re"]
        if drawing.get("fill") and len(rects) >= 2 and _mostly_inside(tuple(drawing["rect"]), [box], 0.99) \
                and max(map(_width, rects)) < 0.5 * _width(box):
            return True
    return False


def _mostly_inside(box: BBox, areas: list[BBox], share: float = 0.5) -> bool:
    return any(
        (common := _intersection(box, a)) is not None and _area(common) >= share * _area(box) for a in areas
    )


def _touch(a: BBox, b: BBox, tolerance: float) -> bool:
    return (
        a[0] - tolerance <= b[2] and b[0] <= a[2] + tolerance
        and a[1] - tolerance <= b[3] and b[1] <= a[3] + tolerance
    )


def _intersection(a: BBox, b: BBox) -> BBox | None:
    box = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    return box if box[0] < box[2] and box[1] < box[3] else None


def _union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _width(box: BBox) -> float:
    return box[2] - box[0]


def _height(box: BBox) -> float:
    return box[3] - box[1]


def _area(box: BBox) -> float:
    return _width(box) * _height(box)


def _text_lines(page: pymupdf.Page) -> list[Line]:
    lines = []
    for block in page.get_text("dict", flags=pymupdf.TEXT_MEDIABOX_CLIP)["blocks"]:
        for line in block.get("lines", []):
            spans = [s for s in line["spans"] if s["text"].strip()]
            if not spans:
                continue
            lines.append(
                Line(
                    rect=pymupdf.Rect(line["bbox"]),
                    text=" ".join(" ".join(s["text"] for s in spans).split()),
                    size=max(s["size"] for s in spans),
                    bold=all(s["flags"] & 16 or _BOLD_FONT.search(s["font"]) for s in spans),
                )
            )
    return lines


def _chart_text(fig: pymupdf.Rect, lines: list[Line], caption: str = "") -> str:
    """Axis labels, legend and data labels: the lines inside the figure not already in its caption.
    Lines with words come first: a bounded text keeps "All Latinos" over a run of bare numbers."""
    inside = [ln.text for ln in lines if _centre(ln.rect) in fig and not _repeats(ln.text, caption)]
    inside.sort(key=lambda text: not _HAS_LETTER.search(text))
    return _truncate(" ".join(inside), _CHART_TEXT_CHARS)


def _repeats(text: str, caption: str) -> bool:
    """A title line already in the caption; short labels ("0", "2008") are kept even if they recur."""
    return len(text) > 10 and text in caption


def _caption_parts(
    fig: pymupdf.Rect,
    blocks: list[tuple[BBox, str]],
    lines: list[Line],
    window: float,
    max_chars: int,
) -> dict[str, str]:
    """Label ("Figure 3 ..."), chart title, nearest text and "Source:" line, each capped at max_chars."""
    near = sorted(
        ((d, pymupdf.Rect(b), t) for b, t in blocks if (d := _distance(fig, pymupdf.Rect(b), window)) is not None),
        key=lambda item: item[0],
    )
    title, title_rect = _title(fig, lines, window)
    label = next((t for _, _, t in near if _LABEL.match(t)), "")
    source_block = next((t for _, _, t in near if _SOURCE.search(t)), "")
    source = source_block[_SOURCE.search(source_block).start() :] if source_block else ""
    rest = [
        t
        for _, r, t in near
        if t not in (label, source_block) and not (title_rect and r.intersects(title_rect))
    ]
    parts = {
        "label": _truncate(label, max_chars),
        "title": _truncate(title, max_chars),
        "nearby": _truncate(" ".join(rest), max_chars),
        "source": _truncate(source, max_chars),
    }
    return {k: v for k, v in parts.items() if v}


def _distance(fig: pymupdf.Rect, rect: pymupdf.Rect, window: float) -> float | None:
    """Gap from a block's vertical centre to the figure's nearer edge; None if out of reach."""
    if rect.x1 <= fig.x0 or rect.x0 >= fig.x1 or _centre(rect) in fig:
        return None
    cy = (rect.y0 + rect.y1) / 2
    gap = max(fig.y0 - cy, cy - fig.y1, 0)
    return gap if gap <= window else None


def _title(fig: pymupdf.Rect, lines: list[Line], window: float) -> tuple[str, pymupdf.Rect | None]:
    """The chart's own emphasised heading: inside the figure's top band, else the nearest one above."""
    body = _body_size(lines)
    emphasised = [
        ln for ln in lines
        if (ln.bold or ln.size >= 1.15 * body) and ln.size >= body and _WORD.search(ln.text)
        and ln.rect.x1 > fig.x0 and ln.rect.x0 < fig.x1
    ]
    top_band = [ln for ln in emphasised if fig.y0 - 2 <= ln.rect.y0 <= fig.y0 + 0.2 * fig.height]
    above = [ln for ln in emphasised if ln.rect.y1 <= fig.y0 + 2 and fig.y0 - ln.rect.y1 <= window]
    if top_band:
        stack = _stack(sorted(top_band, key=lambda ln: ln.rect.y0), downward=True)
    elif above:
        stack = _stack(sorted(above, key=lambda ln: -ln.rect.y1), downward=False)
    else:
        return "", None
    rect = pymupdf.Rect(stack[0].rect)
    for ln in stack:
        rect |= ln.rect
    return " ".join(ln.text for ln in sorted(stack, key=lambda ln: ln.rect.y0)), rect


def _stack(lines: list[Line], downward: bool) -> list[Line]:
    """The first line plus those set directly against it in the same size: one multi-line title."""
    stack = [lines[0]]
    for ln in lines[1:]:
        last = stack[-1]
        gap = ln.rect.y0 - last.rect.y1 if downward else last.rect.y0 - ln.rect.y1
        if abs(ln.size - last.size) > 0.5 or gap > 0.6 * last.size:
            break
        stack.append(ln)
    return stack


def _body_size(lines: list[Line]) -> float:
    sizes = Counter()
    for ln in lines:
        sizes[round(ln.size, 1)] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _centre(rect: pymupdf.Rect) -> pymupdf.Point:
    return pymupdf.Point((rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    return text[: cut if cut > 0 else limit].rstrip(" ,;:")


def _join(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if out and out[-1] not in ".:!?":
            out += "."
        out = f"{out} {part}".strip()
    return out
