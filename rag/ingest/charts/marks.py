"""What a chart is drawn with — text labels, bars, data lines and markers — read from the PDF's
vector drawings and text spans, or from the pixels of a raster chart and its OCR boxes."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import cv2
import numpy as np
import pymupdf
from scipy import ndimage

from rag.records import BBox

RGB = tuple[int, int, int]
Point = tuple[float, float]

_NUMBERS_ONLY = re.compile(r"^(\S+)(\s+\S+)+$")
_MARKER_MAX = 12.0  # points: a dot, a circle or a legend swatch
_SQUARE_MAX = 8.0  # small squares are legend swatches or square markers, not bars
_THIN_LINE = 5.0  # a filled polygon this thin (twice its area over its perimeter: the width) is a drawn line
_BOLD_FONT = re.compile(r"bold|black|heavy|demi|semibold", re.IGNORECASE)


@dataclass
class Label:
    box: BBox
    text: str
    size: float
    colour: RGB | None = None
    bold: bool = False

    @property
    def cx(self) -> float:
        return (self.box[0] + self.box[2]) / 2

    @property
    def cy(self) -> float:
        return (self.box[1] + self.box[3]) / 2

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


@dataclass
class Bar:
    box: BBox
    colour: RGB


@dataclass
class Curve:
    """A data line (its vertices, or its pixels for a raster chart) or one marker."""

    points: list[Point]
    colour: RGB
    marker: bool = False
    radius: float = 0.0


@dataclass
class Marks:
    bars: list[Bar] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)
    swatches: list[Bar] = field(default_factory=list)  # small squares and dots: legend keys or markers
    rules: list[BBox] = field(
        default_factory=list
    )  # straight vertical lines: axes, a diverging chart's centre
    wedges: int = 0  # filled shapes with curved edges: a pie's slices
    gridlines: list[BBox] = field(default_factory=list)  # long thin horizontal lines: gridlines and axes


# -- text ---------------------------------------------------------------------------------------------------


def span_labels(page: pymupdf.Page, drawings: list[dict]) -> list[Label]:
    """The page's visible text as lines, from the text trace (spans in drawing order); text painted
    over by a later white box — an old copy of a label left under the new one — is left out."""
    covers = [
        (d["seqno"], tuple(d["rect"]))
        for d in drawings
        if white_fill(d) and (d.get("fill_opacity") or 1) >= 1
    ]
    lines: list[tuple[Label, list[str]]] = []
    last_seq, last_span = -10, None
    for span in page.get_texttrace():
        if span["type"] == 3 or span.get("opacity", 1) == 0:
            continue  # invisible text (an OCR layer over a scan)
        box, seq = tuple(span["bbox"]), span["seqno"]
        if any(cover_seq > seq and _inside(box, cover) for cover_seq, cover in covers):
            continue
        bold = bool(span["flags"] & 16 or _BOLD_FONT.search(span["font"]))
        pieces = _pieces(span)
        if [(raw, b) for raw, b in pieces] == last_span:  # filled, then stroked over itself: fake bold
            lines[-1][0].bold = True
            continue
        for n, (raw, piece) in enumerate(pieces):
            label = Label(piece, raw, span["size"], _rgb(span["color"]), bold)
            if lines and n == 0 and seq - last_seq <= 2 and _same_line(lines[-1][0], label, raw):
                line, parts = lines[-1]
                line.box = _union(line.box, piece)
                parts.append(raw)
            elif raw.strip():
                lines.append((label, [raw]))
        last_seq, last_span = seq, pieces
    out = []
    for line, parts in lines:
        line.text = " ".join("".join(parts).split())
        out += split_numbers(line)
    return dedupe(out)


def _pieces(span: dict) -> list[tuple[str, BBox]]:
    """A span cut where its characters leave a wide gap: "Apr          May" set as one string."""
    pieces: list[tuple[str, BBox]] = []
    text, box, last_x1 = "", None, None
    for char in span["chars"]:
        ch, cbox = chr(char[0]), tuple(char[3])
        if not ch.isspace() and last_x1 is not None and cbox[0] - last_x1 > 0.6 * span["size"]:
            pieces.append((text, box))
            text, box = "", None
        text += ch
        if not ch.isspace():
            box = cbox if box is None else _union(box, cbox)
            last_x1 = cbox[2]
    if box is not None:
        pieces.append((text, box))
    return [(t, b) for t, b in pieces if b is not None] or [
        ("".join(chr(c[0]) for c in span["chars"]), tuple(span["bbox"]))
    ]


def _same_line(line: Label, span: Label, raw: str) -> bool:
    gap = span.box[0] - line.box[2]
    return (
        abs(span.cy - line.cy) <= 0.3 * span.size
        and -1 <= gap <= 0.6 * span.size
        and (abs(span.size - line.size) < 0.6 or not raw.strip())
    )


def split_numbers(label: Label) -> list[Label]:
    """ "57 33 24" as three labels, each with its share of the box (widths by characters)."""
    words = label.text.split()
    if len(words) < 2 or not all(_numeric(w) for w in words):
        return [label]
    x0, y0, x1, y1 = label.box
    per_char = (x1 - x0) / max(len(label.text), 1)
    out, pos = [], 0
    for word in words:
        start = label.text.index(word, pos)
        pos = start + len(word)
        out.append(
            Label(
                (x0 + start * per_char, y0, x0 + pos * per_char, y1),
                word,
                label.size,
                label.colour,
                label.bold,
            )
        )
    return out


def dedupe(labels: list[Label]) -> list[Label]:
    """Designers leave a copy of a label under the new one: keep one of two that coincide."""
    kept: dict[str, list[Label]] = {}
    out = []
    for label in labels:
        same = kept.setdefault(_squash(label.text), [])
        if not any(_overlap_share(k.box, label.box) > 0.5 for k in same):
            same.append(label)
            out.append(label)
    return out


def _numeric(text: str) -> bool:
    return any(ch.isdigit() for ch in text) and not any(ch.isalpha() for ch in text.replace("n/a", ""))


def _squash(text: str) -> str:
    return re.sub(r"\W", "", text).lower()


# -- vector drawings ----------------------------------------------------------------------------------------


def vector_marks(drawings: list[dict], area: BBox) -> Marks:
    marks = Marks()
    for drawing in drawings:
        if not _touches(tuple(drawing["rect"]), area):
            continue
        fill, stroke = _rgb(drawing.get("fill")), _rgb(drawing.get("color"))
        rect = drawing["rect"]
        if rect.height < 0.8 and rect.width > 20:  # a gridline, however many dots or dashes it is drawn as
            marks.gridlines.append(tuple(rect))
        dashed = bool(drawing.get("dashes")) and drawing["dashes"] not in ("[] 0", "[] 0.0")
        for kind, points, box in _subpaths(drawing["items"]):
            _classify(marks, kind, points, box, fill, stroke, drawing.get("width") or 0.0, dashed)
    return marks


def _classify(
    marks: Marks,
    kind: str,
    points: list[Point],
    box: BBox,
    fill: RGB | None,
    stroke: RGB | None,
    width: float,
    dashed: bool = False,
) -> None:
    w, h = box[2] - box[0], box[3] - box[1]
    colour = fill if fill is not None and not _white(fill) else stroke
    if colour is None or _white(colour):
        return
    if kind == "rect" and fill is not None and not _white(fill):
        if max(w, h) <= _SQUARE_MAX and min(w, h) >= 0.6 * max(w, h):
            marks.swatches.append(Bar(box, fill))
        elif min(w, h) >= 0.5 and max(w, h) <= 30 * min(w, h):  # not an underline or a rule
            marks.bars.append(Bar(box, fill))
        elif h > 4 * max(w, 0.1):
            marks.rules.append(box)
        return
    if 2 <= max(w, h) <= _MARKER_MAX and min(w, h) >= 0.6 * max(w, h) and kind != "rect":
        marks.swatches.append(Bar(box, colour))
        marks.curves.append(
            Curve([((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)], colour, True, max(w, h) / 2)
        )
        return
    straight = w < 0.8 or h < 0.8
    if straight:
        if w < 0.8 and h > 4:
            marks.rules.append(box)
        if _neutral(colour) or width < 0.8 or not dashed:
            return  # gridlines, axes, rules; a level series line is drawn dashed
    if fill is not None and stroke is None and _thickness(points) > _THIN_LINE:
        marks.wedges += kind == "curved" and max(w, h) >= 20
        return  # a pie wedge, an area or a diagram box: not a line
    if len(points) >= 2:
        marks.curves.append(Curve(points, colour))


def _subpaths(items: list) -> list[tuple[str, list[Point], BBox]]:
    """A drawing's items split where the pen lifts: ("rect" | "curved" | "path", points, box)."""
    out: list[tuple[str, list[Point], BBox]] = []
    current: list[Point] = []

    curved = [False]

    def close() -> None:
        if current:
            box = _points_box(current)
            kind = "rect" if _is_rectangle(current, box) else "curved" if curved[0] else "path"
            out.append((kind, list(current), box))
            current.clear()
            curved[0] = False

    for item in items:
        op = item[0]
        if op == "re":
            close()
            r = pymupdf.Rect(item[1])
            out.append(("rect", [(r.x0, r.y0), (r.x1, r.y1)], (r.x0, r.y0, r.x1, r.y1)))
        elif op == "qu":
            close()
            quad = item[1]
            pts = [(p.x, p.y) for p in (quad.ul, quad.ur, quad.lr, quad.ll)]
            box = _points_box(pts)
            out.append(("rect" if _is_rectangle(pts, box) else "path", pts, box))
        else:
            pts = [(p.x, p.y) for p in item[1:]]
            if current and math.dist(current[-1], pts[0]) > 0.01:
                close()
            if not current:
                current.append(pts[0])
            current += pts[1:] if op == "l" else [pts[-1]]
            curved[0] = curved[0] or op == "c"
    close()
    return out


def _is_rectangle(points: list[Point], box: BBox) -> bool:
    corners = {(round(x, 1), round(y, 1)) for x, y in points}
    box_corners = {(round(x, 1), round(y, 1)) for x in (box[0], box[2]) for y in (box[1], box[3])}
    return 4 <= len(points) <= 6 and corners <= box_corners and len(corners) == 4


def _thickness(points: list[Point]) -> float:
    """Area over half the perimeter: about half a drawn line's width, large for a filled shape."""
    area = 0.5 * abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1])))
    perimeter = sum(math.dist(a, b) for a, b in zip(points, points[1:] + points[:1]))
    return 2 * area / perimeter if perimeter else 0.0


# -- pixels (raster charts) ---------------------------------------------------------------------------------

_BACKGROUND = 235  # lighter than this in every channel is paper
_MIN_SHARE = 0.0015  # a colour covering less of the picture than this is anti-aliasing
_MIN_GREY_SHARE = 0.01  # greys below this share are text
_COLOUR_TOLERANCE = 28
_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))  # scipy.ndimage's default structure


def pixel_marks(image: np.ndarray, origin: Point, zoom: float, text_boxes: list[BBox]) -> Marks:
    """Bars (solid rectangles of one colour), lines and dots from an RGB image of a chart.

    `origin` and `zoom` map pixels back to page points. Legend swatches are found first, on the
    picture as it is (OCR often reads a legend as one line, swatches included); then text is blanked
    out so that coloured labels do not count as marks, and a number printed in a bar leaves a hole
    that is filled back."""
    image = image.astype(np.int16)
    palette = _palette(image)
    marks = Marks()
    for colour, blob, box, _sl in _blobs(image, palette, origin, zoom):
        if _is_swatch(box) and _fill(blob) >= 0.85:
            marks.swatches.append(Bar(box, colour))
    for box in text_boxes:
        x0, y0, x1, y1 = (round((v - o) * zoom) for v, o in zip(box, origin * 2))
        image[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)] = 255
    whole = image.shape[0] * image.shape[1] / zoom**2
    for colour, blob, box, sl in _blobs(image, palette, origin, zoom):
        if not _is_swatch(box) and (box[2] - box[0]) * (box[3] - box[1]) < 0.4 * whole:  # not the backdrop
            _classify_blob(marks, box, colour, blob, sl, zoom, origin)
    return marks


def _blobs(image: np.ndarray, palette: list[RGB], origin: Point, zoom: float):
    """(colour, mask, box in points, slice) for each connected area of each palette colour."""
    planes = [np.ascontiguousarray(image[:, :, c]) for c in range(3)]
    for colour in palette:
        mask = np.ones(image.shape[:2], dtype=bool)
        for plane, value in zip(planes, colour):
            mask &= (plane >= value - _COLOUR_TOLERANCE) & (plane <= value + _COLOUR_TOLERANCE)
        labelled, _count = ndimage.label(_open_close(mask))
        for n, sl in enumerate(ndimage.find_objects(labelled), start=1):
            if sl is None:
                continue
            ys, xs = sl
            box = (
                origin[0] + xs.start / zoom,
                origin[1] + ys.start / zoom,
                origin[0] + xs.stop / zoom,
                origin[1] + ys.stop / zoom,
            )
            yield colour, labelled[sl] == n, box, sl


def _open_close(mask: np.ndarray) -> np.ndarray:
    """Opening drops the fringe where a darker area fades into the paper, closing (two passes) mends
    text holes. OpenCV's morphology, the outside as empty: scipy.ndimage's binary_opening and
    binary_closing, pixel for pixel, 15x faster."""
    m, edge = mask.view(np.uint8), {"borderType": cv2.BORDER_CONSTANT, "borderValue": 0}
    m = cv2.dilate(cv2.erode(m, _CROSS, **edge), _CROSS, **edge)
    return cv2.erode(cv2.dilate(m, _CROSS, iterations=2, **edge), _CROSS, iterations=2, **edge).view(bool)


def _is_swatch(box: BBox) -> bool:
    w, h = box[2] - box[0], box[3] - box[1]
    return 2 <= max(w, h) <= _SQUARE_MAX and min(w, h) >= 0.6 * max(w, h)


def _classify_blob(
    marks: Marks, box: BBox, colour: RGB, blob: np.ndarray, sl, zoom: float, origin: Point
) -> None:
    w, h = box[2] - box[0], box[3] - box[1]
    if _neutral(colour) and h < 1.5 and w > 20:
        marks.gridlines.append(box)
    if max(w, h) < 2 or (_neutral(colour) and min(w, h) < 1.5):
        return  # specks, gridlines and axes
    if min(w, h) >= 1.2 and _fill(blob) >= 0.8:
        if max(w, h) >= 3:  # smaller solid bits are glyph fragments
            marks.bars.append(Bar(box, colour))
        return
    if _neutral(colour):
        return
    ys, xs = np.nonzero(blob)
    step = max(1, len(xs) // 400)
    points = [
        (origin[0] + (sl[1].start + x + 0.5) / zoom, origin[1] + (sl[0].start + y + 0.5) / zoom)
        for x, y in zip(xs[::step], ys[::step])
    ]
    marks.curves.append(Curve(points, colour))


def _fill(blob: np.ndarray) -> float:
    """The share of the blob's box it covers with its holes filled (a bar with a number printed in it
    is solid); most blobs are solid, and filling costs a morphology pass."""
    return 1.0 if blob.all() else float(ndimage.binary_fill_holes(blob).mean())


def colour_codes(pixels: np.ndarray) -> np.ndarray:
    """One integer per pixel row for its colour quantised to 16 levels a channel, ordered as the
    (r, g, b) rows are: np.unique over the codes is np.unique over the rows, without its slow sort.
    Widened first: on 8-bit pixels the shifts would overflow."""
    quantised = pixels.astype(np.int32, copy=False) // 16
    return (quantised[:, 0] << 8) | (quantised[:, 1] << 4) | quantised[:, 2]


def _palette(image: np.ndarray) -> list[RGB]:
    """The chart's ink colours: frequent quantised colours, merged when close, paper left out."""
    pixels = image.reshape(-1, 3)
    ink = pixels[(pixels < _BACKGROUND).any(axis=1)]
    if not len(ink):
        return []
    codes = colour_codes(ink)
    keys, counts = np.unique(codes, return_counts=True)
    order = np.argsort(-counts)
    colours: list[RGB] = []
    for i in order:
        if counts[i] < _MIN_SHARE * len(pixels):
            break
        members = ink[codes == keys[i]]
        colour = tuple(int(v) for v in np.median(members, axis=0))
        if _neutral(colour) and counts[i] < _MIN_GREY_SHARE * len(pixels):
            continue  # the soft edges of black text
        if all(max(abs(a - b) for a, b in zip(colour, c)) > _COLOUR_TOLERANCE for c in colours):
            colours.append(colour)
    return colours


# -- colours and boxes --------------------------------------------------------------------------------------


def _rgb(colour) -> RGB | None:
    if not colour:
        return None
    if len(colour) == 1:
        colour = colour * 3
    if len(colour) == 4:  # CMYK
        c, m, y, k = colour
        colour = ((1 - c) * (1 - k), (1 - m) * (1 - k), (1 - y) * (1 - k))
    return tuple(round(v * 255) for v in colour[:3])


def _white(colour: RGB) -> bool:
    return min(colour) >= 245


def white_fill(drawing: dict) -> bool:
    """A drawing filled white (in any colour space): paper, not ink."""
    return bool(drawing.get("fill")) and _white(_rgb(drawing["fill"]))


def _neutral(colour: RGB) -> bool:
    return max(colour) - min(colour) < 30


def neutral(colour: RGB | None) -> bool:
    return colour is None or _neutral(colour)


def same_colour(a: RGB | None, b: RGB | None, tolerance: int = 24) -> bool:
    return a is not None and b is not None and max(abs(x - y) for x, y in zip(a, b)) <= tolerance


def _points_box(points: list[Point]) -> BBox:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def _touches(a: BBox, b: BBox) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _inside(box: BBox, area: BBox, pad: float = 0.5) -> bool:
    return (
        area[0] - pad <= box[0]
        and area[1] - pad <= box[1]
        and box[2] <= area[2] + pad
        and box[3] <= area[3] + pad
    )


def _in_any(box: BBox, areas: list[BBox]) -> bool:
    return any(_overlap_share(box, a) > 0.8 for a in areas)


def _overlap_share(a: BBox, b: BBox) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / smaller if smaller > 0 else 0.0
