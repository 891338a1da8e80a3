"""What the chart readers share: the pairs they make, numbers and labels, and plane geometry on boxes."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field

from rag.ingest.charts.marks import Curve, Label, Point, same_colour
from rag.records import BBox

_VALUE = re.compile(r"^[+\-–−]?[$€£]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?%?$")
_YEAR = re.compile(r"^(1[89]|20)\d\d$")
NEAR = 2.5  # a label this many of its heights from a mark is not that mark's label
CLEAR = 1.4  # the best mark must be this much nearer than the next one


@dataclass
class Pair:
    label: Label
    category: str
    series: str
    kind: str  # bar | stacked bar | line | dot | pie


@dataclass
class Reading:
    pairs: list[Pair] = field(default_factory=list)
    unpaired: list[Label] = field(default_factory=list)
    legend: list[str] = field(default_factory=list)  # series names in the legend's order
    across: str = "y"  # the axis categories follow: "y" rows of horizontal bars, "x" columns and lines


def is_value(text: str) -> bool:
    return bool(_VALUE.match(text)) and not _YEAR.match(text)


def number(text: str) -> float:
    cleaned = re.sub(r"[^\d.\-]", "", text.replace("–", "-").replace("−", "-"))
    try:
        return float(cleaned)
    except ValueError:
        return math.nan


def text_blocks(words: list[Label]) -> list[Label]:
    """Lines set directly under one another in one size, aligned on an edge or the centre: one label."""
    blocks: list[Label] = []
    for w in sorted(words, key=lambda lb: (lb.box[1], lb.box[0])):
        home = next((b for b in reversed(blocks) if _continues(b, w)), None)
        if home is None:
            blocks.append(Label(w.box, w.text, w.size, w.colour, w.bold))
        else:
            home.box = union(home.box, w.box)
            home.text = f"{home.text} {w.text}"
    return blocks


def _continues(block: Label, line: Label) -> bool:
    gap = line.box[1] - block.box[3]
    aligned = (
        abs(line.box[0] - block.box[0]) <= 3
        or abs(line.box[2] - block.box[2]) <= 3
        or abs(line.cx - block.cx) <= 3
    )
    return (
        -1 <= gap <= 0.45 * line.size
        and aligned
        and abs(line.size - block.size) < 0.6
        and line.bold == block.bold
    )


def tick_rows(words: list[Label]) -> list[list[Label]]:
    """Rows of two or more short labels side by side, nearest first (a label may take two lines)."""
    rows: list[list[Label]] = []
    for w in sorted(text_blocks(words), key=lambda lb: lb.box[1]):
        if len(w.text) > 16:
            continue
        home = next(
            (r for r in rows if abs(r[0].box[1] - w.box[1]) <= 2 and abs(r[0].size - w.size) < 0.6), None
        )
        if home is None:
            rows.append([w])
        else:
            home.append(w)
    return [sorted(r, key=lambda w: w.cx) for r in rows if len(r) >= 2]


def name_like(text: str) -> bool:
    """A series name: words ("Hispanic") or a range ("18-29", "65+"); not OCR debris ("67.....O")."""
    return bool(re.search(r"[^\W\d_]{2}", text) or re.fullmatch(r"[<>]?\d+(\s?[-–+]\s?\d*)?\+?", text))


def colour_distance(a, b) -> int:
    return max(abs(x - y) for x, y in zip(a, b))


def legend_key(colour, names: dict, tolerance: int = 30):
    """The legend colour a line's colour is: the one within tolerance, if only one is."""
    near = [k for k in names if same_colour(k, colour, tolerance)]
    if len(near) == 1:
        return near[0]
    exact = [k for k in near if same_colour(k, colour, 4)]
    return exact[0] if len(exact) == 1 else None


def distance(label: Label, curves: list[Curve]) -> float:
    best = math.inf
    for curve in curves:
        if curve.marker:
            best = min(best, max(box_distance(label.box, curve.points[0]) - curve.radius, 0))
            continue
        pts = curve.points
        if len(pts) > 60:  # pixels of a raster line
            best = min(best, min(box_distance(label.box, p) for p in pts))
            continue
        for a, b in itertools.pairwise(pts):
            best = min(best, _box_segment_distance(label.box, a, b))
    return best


def vertical_distance(label: Label, curves: list[Curve]) -> float:
    """How far a line passes above or below a label, where it runs under the label; else plain distance."""
    under = [
        p for c in curves if not c.marker for p in dense(c.points) if label.box[0] <= p[0] <= label.box[2]
    ]
    if not under:
        return distance(label, curves)
    return min(max(label.box[1] - y, y - label.box[3], 0.0) for _, y in under)


def dense(points: list[Point]) -> list[Point]:
    if len(points) > 60:
        return points
    out = []
    for a, b in itertools.pairwise(points):
        n = max(1, int(math.dist(a, b) / 2))
        out += [(a[0] + (b[0] - a[0]) * t / n, a[1] + (b[1] - a[1]) * t / n) for t in range(n)]
    return out + points[-1:]


def box_distance(box: BBox, p: Point) -> float:
    dx = max(box[0] - p[0], 0, p[0] - box[2])
    dy = max(box[1] - p[1], 0, p[1] - box[3])
    return math.hypot(dx, dy)


def _box_segment_distance(box: BBox, a: Point, b: Point) -> float:
    n = max(1, int(math.dist(a, b) / 1.5))
    return min(
        box_distance(box, (a[0] + (b[0] - a[0]) * t / n, a[1] + (b[1] - a[1]) * t / n)) for t in range(n + 1)
    )


def box_of(points: list[Point]) -> BBox:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def inside(box: BBox, area: BBox, pad: float = 0.5) -> bool:
    return (
        area[0] - pad <= box[0]
        and area[1] - pad <= box[1]
        and box[2] <= area[2] + pad
        and box[3] <= area[3] + pad
    )


def contains(box: BBox, p: Point, tolerance: float = 0.0) -> bool:
    return (
        box[0] - tolerance <= p[0] <= box[2] + tolerance and box[1] - tolerance <= p[1] <= box[3] + tolerance
    )


def share(a: BBox, b: BBox, lo: int, hi: int) -> float:
    """How much two boxes overlap across (lo, hi), as a share of the thinner one."""
    overlap = min(a[hi], b[hi]) - max(a[lo], b[lo])
    thinner = min(a[hi] - a[lo], b[hi] - b[lo])
    return overlap / thinner if thinner > 0 else 0.0


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def length(box: BBox, horizontal: bool) -> float:
    return (box[2] - box[0]) if horizontal else (box[3] - box[1])


def area(box: BBox) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
