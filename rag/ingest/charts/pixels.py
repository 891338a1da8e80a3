"""A chart read from pixels: labels from OCR boxes (their colour from the pixels under them), marks
from the pixels of a raster chart or from the drawings of a vector chart whose text is outlines."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pymupdf

from rag.ingest.charts.geometry import is_value
from rag.ingest.charts.marks import (
    Label,
    Marks,
    colour_codes,
    dedupe,
    pixel_marks,
    split_numbers,
    vector_marks,
)
from rag.ingest.figures import Line
from rag.records import BBox

_ZOOM = 3.0  # pixels per point when a chart is read from its pixels
_MAX_PIXELS = 1800

ReadImage = Callable[[BBox], list[Line]]


def read_pixels(
    page: pymupdf.Page, box: BBox, panel: BBox, drawings: list[dict], read_image: ReadImage, raster: bool
) -> tuple[list[Label], Marks]:
    """Labels from OCR (their colour from the pixels under them); marks from the pixels of a raster
    chart, or from the drawings of a vector chart whose text is drawn as outlines."""
    area = box  # outlined text is part of the drawing, so the figure's box holds it
    found = read_image(area)
    if not any(is_value(word) or is_value(word[1:]) for line in found for word in line.text.split()):
        return [], Marks()  # no number a chart could hold (a marker may precede it): its pixels are not read
    zoom = min(_ZOOM, _MAX_PIXELS / max(area[2] - area[0], area[3] - area[1]))
    pix = page.get_pixmap(
        matrix=pymupdf.Matrix(zoom, zoom), clip=pymupdf.Rect(area), alpha=False, colorspace=pymupdf.csRGB
    )
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    origin = (area[0], area[1])
    lines = [Label(tuple(ln.rect), ln.text, ln.size, _ink(image, tuple(ln.rect), origin, zoom)) for ln in found]
    boxes = [lb.box for lb in lines]
    if raster:
        marks = pixel_marks(image, origin, zoom, boxes)
        lines = [part for lb in lines for part in _split_at_swatches(lb, marks.swatches)]
    else:
        marks = inside_figure(vector_marks(drawings, panel), box)
        marks.bars = [b for b in marks.bars if not _in_any(b.box, boxes)]
        marks.swatches = [s for s in marks.swatches if not _in_any(s.box, boxes)]
        marks.curves = [c for c in marks.curves if not _in_any(_points_box(c.points), boxes)]
    labels = dedupe([part for lb in lines for part in split_numbers(lb)])
    return [_without_marker(lb, marks) for lb in labels], marks


def _split_at_swatches(label: Label, swatches: list) -> list[Label]:
    """A legend read as one line ("■ Falling behind ■ Staying about even with"): cut at the space
    nearest each swatch inside it (a swatch at the line's start is the first entry's own)."""
    x0, y0, x1, y1 = label.box
    text = label.text
    per_char = (x1 - x0) / max(len(text), 1)
    cuts = sorted(
        (s.box[0] + s.box[2]) / 2
        for s in swatches
        if x0 + 3 * per_char < (s.box[0] + s.box[2]) / 2 < x1 - 3 * per_char
        and s.box[1] < y1
        and s.box[3] > y0
    )
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    ends = sorted({min(spaces, key=lambda i: abs(i - (cut - x0) / per_char)) for cut in cuts if spaces})
    if not ends:
        return [label]
    out, start = [], 0
    for end in ends + [len(text)]:
        piece = text[start:end].strip()
        if piece:
            out.append(
                Label((x0 + start * per_char, y0, x0 + end * per_char, y1), piece, label.size, label.colour)
            )
        start = end
    return out


def _without_marker(label: Label, marks: Marks) -> Label:
    """OCR reads the dot that ends a line as a letter: "O Hispanic" beside a marker is "Hispanic"."""
    text = label.text.lstrip("■□▪▫●◆◇•")
    if text != label.text:
        label = Label(label.box, text.strip(), label.size, label.colour, label.bold)
        text = label.text
    if len(text) < 3 or text[0] not in "Oo0○●◯" or not (text[1] == " " or text[1].isupper()):
        return label
    head = (
        label.box[0],
        label.box[1],
        label.box[0] + (label.box[2] - label.box[0]) / len(text) * 1.5,
        label.box[3],
    )
    dots = [s.box for s in marks.swatches] + [
        _points_box(c.points) for c in marks.curves if len(c.points) < 40
    ]
    if not any(_overlaps(head, d) for d in dots):
        return label
    return Label(label.box, text[1:].strip(), label.size, label.colour, label.bold)


def inside_figure(marks: Marks, box: BBox) -> Marks:
    """Bars and lines are the figure's own drawings; legend keys may sit just outside it."""
    marks.bars = [b for b in marks.bars if _centre_in_box(b.box, box)]
    marks.curves = [c for c in marks.curves if _centre_in_box(_points_box(c.points), box)]
    return marks


def _ink(image: np.ndarray, box: BBox, origin: tuple[float, float], zoom: float):
    """The colour a label is printed in: its strongest-contrast pixels against the paper (or bar) under it."""
    x0, y0, x1, y1 = (round((v - o) * zoom) for v, o in zip(box, origin * 2))
    patch = image[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)].reshape(-1, 3).astype(int)
    if not len(patch):
        return None
    codes = colour_codes(patch)
    keys, counts = np.unique(codes, return_counts=True)
    paper = patch[codes == keys[np.argmax(counts)]].mean(axis=0)
    contrast = np.abs(patch - paper).max(axis=1)  # white print on a bar counts as ink too
    ink = patch[contrast > 60]
    if not len(ink):
        return None
    strong = contrast[contrast > 60]
    core = ink[strong >= np.percentile(strong, 70)]  # the glyphs' cores, not their soft edges
    return tuple(int(v) for v in np.median(core, axis=0))


def _overlaps(a: BBox, b: BBox) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _in_any(box: BBox, areas: list[BBox], pad: float = 1.0) -> bool:
    return any(
        a[0] - pad <= box[0] and a[1] - pad <= box[1] and box[2] <= a[2] + pad and box[3] <= a[3] + pad
        for a in areas
    )


def _points_box(points) -> BBox:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def _centre_in_box(inner: BBox, box: BBox) -> bool:
    x, y = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return box[0] - 1 <= x <= box[2] + 1 and box[1] - 1 <= y <= box[3] + 1
