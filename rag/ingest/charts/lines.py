"""Line and dot charts: a number belongs to the line or dot it sits next to; the line's colour names its
series (legend, a label in that colour, the label beside it), the tick under its point its category."""

from __future__ import annotations

import itertools
import math
import statistics

from rag.ingest.charts.geometry import (
    CLEAR,
    NEAR,
    Pair,
    Reading,
    box_distance,
    box_of,
    dense,
    distance,
    inside,
    name_like,
    number,
    overlap,
    text_blocks,
    tick_rows,
    vertical_distance,
)
from rag.ingest.charts.marks import Curve, Label, Marks, Point, neutral, same_colour


def pair_curves(
    values: list[Label], words: list[Label], marks: Marks, names: dict, reading: Reading
) -> list[Label]:
    curves = marks.curves
    if not curves or not values:
        return values
    series = _curve_names(curves, words, names)
    panels = _panel_names(curves, words) if any(n == "" for n in series.values()) else {}
    if not panels and _repeated_axes(words):  # small multiples without their panels' names: whose 2014?
        reading.unpaired += values
        return []
    lines = any(not c.marker for c in curves)
    if not marks.bars:
        reading.across = "x"
    chosen: dict[int, tuple[Curve, Point]] = {}
    doubtful: dict[int, list[tuple[Curve, Point]]] = {}
    for n, label in enumerate(values):
        options = _curve_options(label, curves)
        if len(options) == 1:
            chosen[n] = options[0]
        elif options:
            doubtful[n] = options
    _settle(values, chosen, doubtful)
    left = []
    for n, label in enumerate(values):
        if n not in chosen:
            (reading.unpaired if n in doubtful else left).append(label)
            continue
        curve, point = chosen[n]
        name = next((nm for colour, nm in series.items() if same_colour(colour, curve.colour)), None)
        if name == "" and panels:
            name = panels.get(id(_polyline_of(curve, curves)))
        category = category_at(point, words)
        if name is None or category is None:
            reading.unpaired.append(label)
        else:
            reading.pairs.append(Pair(label, category, name, "line" if lines else "dot"))
    return left


def _curve_options(label: Label, curves: list[Curve]) -> list[tuple[Curve, Point]]:
    """The line (and point on it) a label belongs to: the nearest, if clearly nearer than any line of
    another colour, else the two in doubt; a label printed in a line's colour belongs to that line."""
    scored = sorted(((distance(label, [c]), i) for i, c in enumerate(curves)), key=lambda s: s[0])
    if not scored or scored[0][0] > NEAR * label.height:
        return []
    best = curves[scored[0][1]]
    if not neutral(label.colour):
        tinted = [
            curves[i]
            for d, i in scored
            if same_colour(curves[i].colour, label.colour, 40) and d <= 2 * NEAR * label.height
        ]
        return [(tinted[0], _point_for(label, tinted[0], curves))] if tinted else []
    options = [(best, _point_for(label, best, curves))]
    rival = next(((d, i) for d, i in scored[1:] if not same_colour(curves[i].colour, best.colour)), None)
    if rival is not None and rival[0] < CLEAR * scored[0][0] + 1:
        other = curves[rival[1]]
        options.append((other, _point_for(label, other, curves)))
    return options


def _settle(values: list[Label], chosen: dict, doubtful: dict) -> None:
    """Labels in doubt between two lines: a point another label clearly took is not theirs; two labels
    in doubt between the same two points go upper to upper (labels are stacked as their points are)."""
    taken = {point for _, point in chosen.values()}
    for n, options in list(doubtful.items()):
        free = [o for o in options if o[1] not in taken]
        if len(free) == 1:
            chosen[n] = free[0]
            taken.add(free[0][1])
            del doubtful[n]
    for n, options in list(doubtful.items()):
        points = {o[1] for o in options}
        twin = next((m for m, other in doubtful.items() if m != n and {o[1] for o in other} == points), None)
        if twin is None or len(points) != 2 or abs(values[n].cy - values[twin].cy) < 0.5 * values[n].height:
            continue
        upper_point = min(options, key=lambda o: o[1][1])
        lower_point = max(options, key=lambda o: o[1][1])
        if upper_point[1][1] == lower_point[1][1]:
            continue
        upper, lower = sorted((n, twin), key=lambda m: values[m].cy)
        chosen[upper] = next(o for o in doubtful[upper] if o[1] == upper_point[1])
        chosen[lower] = next(o for o in doubtful[lower] if o[1] == lower_point[1])
        del doubtful[upper], doubtful[lower]


def _curve_names(curves: list[Curve], words: list[Label], names: dict) -> dict:
    """Colour → series name: the legend, a label printed in the line's colour, or a label beside one line."""
    colours: list = []
    for c in curves:
        if not any(same_colour(c.colour, k) for k in colours):
            colours.append(c.colour)
    named = {}
    for colour in colours:
        legend = next((n for k, n in names.items() if same_colour(k, colour)), None)
        tinted = [
            w
            for w in text_blocks(words)
            if not neutral(w.colour) and same_colour(w.colour, colour, 40) and name_like(w.text)
        ]
        if legend is not None:
            named[colour] = legend
        elif tinted:  # the one nearest its line, if the colour also prints a title or a note
            own = [c for c in curves if same_colour(c.colour, colour)]
            named[colour] = min(tinted, key=lambda w: vertical_distance(w, own)).text
    unnamed = [c for c in colours if c not in named]
    if len(unnamed) == 1 and len(colours) == 1:
        named[unnamed[0]] = ""
    elif unnamed:
        ticks = [w.box for row in tick_rows(words) for w in row]
        claims = []
        for word in text_blocks(words):
            if (
                not neutral(word.colour)
                or not name_like(word.text)
                or any(inside(word.box, t) for t in ticks)
            ):
                continue
            dists = sorted(
                (vertical_distance(word, [c for c in curves if same_colour(c.colour, k)]), k) for k in colours
            )
            if len(dists) > 1 and dists[0][0] <= 6 * word.size and dists[1][0] >= CLEAR * dists[0][0] + 2:
                claims.append((dists[0][0], dists[0][1], word.text))
        for _, colour, text in sorted(claims, key=lambda c: c[0]):
            if colour in unnamed and colour not in named:
                named[colour] = text
    return named


def _repeated_axes(words: list[Label]) -> bool:
    """Panels side by side: one row of ticks that says the same thing twice."""
    return any(
        2 <= len({w.text for w in row}) < len(row) for row in tick_rows(words)
    )  # not "RECESSION" twice


def _panel_names(curves: list[Curve], words: list[Label]) -> dict[int, str]:
    """Small multiples — one line per panel, side by side or stacked, all one colour — are named by
    each panel's heading: the text nearest above its line."""
    lines = [c for c in curves if not c.marker]
    boxes = [box_of(c.points) for c in lines]
    apart = len(lines) > 1 and all(
        overlap((a[0], a[2]), (b[0], b[2])) <= 0 or overlap((a[1], a[3]), (b[1], b[3])) <= 0
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
    )
    if not apart:
        return {}
    ticks = [w.box for row in tick_rows(words) for w in row]
    blocks = [b for b in text_blocks(words) if not any(inside(b.box, t) for t in ticks)]
    names = {}
    for line, box in zip(lines, boxes):
        above = [
            b
            for b in blocks
            if b.box[3] <= box[1] + 2
            and box[1] - b.box[3] <= 6 * b.size
            and overlap((b.box[0], b.box[2]), (box[0], box[2])) > 0
        ]
        if above:
            names[id(line)] = max(above, key=lambda b: b.box[3]).text
    return names if len(set(names.values())) == len(lines) else {}


def _polyline_of(curve: Curve, curves: list[Curve]) -> Curve | None:
    if not curve.marker:
        return curve
    lines = [c for c in curves if not c.marker and same_colour(c.colour, curve.colour)]
    return min(
        lines, key=lambda c: distance(Label((*curve.points[0], *curve.points[0]), "", 0), [c]), default=None
    )


def _point_for(label: Label, curve: Curve, curves: list[Curve]) -> Point:
    """Where the labelled value is: the nearest marker of the line's colour, else the line's nearest point."""
    centre = (label.cx, label.cy)
    dots = [c for c in curves if c.marker and same_colour(c.colour, curve.colour)]
    near = [c.points[0] for c in dots if box_distance(label.box, c.points[0]) <= NEAR * label.height]
    if near:  # a label is centred over or under its point: sideways counts double
        return min(
            near, key=lambda p: 2 * abs(p[0] - label.cx) + max(label.box[1] - p[1], p[1] - label.box[3], 0)
        )
    return min(dense(curve.points), key=lambda p: math.dist(centre, p))


def category_at(point: Point, words: list[Label]) -> str | None:
    """The tick label under a point: aligned with it, or read off an evenly spaced numeric axis."""
    for row in tick_rows([w for w in words if w.box[1] >= point[1] - 1]):
        xs = [w.cx for w in row]
        spacing = statistics.median([b - a for a, b in itertools.pairwise(xs)])
        if not xs[0] - spacing <= point[0] <= xs[-1] + spacing:
            continue
        nearest = min(row, key=lambda w: abs(w.cx - point[0]))
        if abs(nearest.cx - point[0]) <= max(2.5, 0.12 * spacing):
            return nearest.text
        return _interpolate(row, point[0])
    return None


def _interpolate(row: list[Label], x: float) -> str | None:
    """A whole number read off the run of ticks around x that is evenly spaced in value and position."""
    nums = [number(w.text) for w in row]
    if any(math.isnan(n) for n in nums):
        return None
    xs = [w.cx for w in row]
    for i in range(len(row) - 2):
        j = i + 1
        while j + 1 < len(row) and _even(nums[i : j + 2], xs[i : j + 2]):
            j += 1
        if j - i < 2:
            continue
        step, gap = nums[i + 1] - nums[i], xs[i + 1] - xs[i]
        value = nums[i] + (x - xs[i]) / gap * step
        whole = abs(value - round(value)) <= 0.15
        within = xs[i] - gap <= x <= xs[j] + gap
        ticked = xs[i] - 2 * gap <= x <= xs[j] + 2 * gap and round(value) in nums  # an uneven last tick
        if whole and (within or ticked):
            return str(round(value))
    return None


def _even(nums: list[float], xs: list[float]) -> bool:
    steps, gaps = [b - a for a, b in itertools.pairwise(nums)], [b - a for a, b in itertools.pairwise(xs)]
    return (
        min(steps) > 0
        and max(steps) - min(steps) <= 1e-9
        and max(gaps) - min(gaps) <= max(1.5, 0.05 * statistics.mean(gaps))
    )
