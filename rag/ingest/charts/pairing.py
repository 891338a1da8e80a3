"""Pair a chart's data labels with their category and series by geometry.

A data label belongs to the bar it sits in or at the end of, or to the line or dot it sits next to;
the bar's or line's colour names its series through the legend (a swatch's fill, a label printed
in the line's colour, a label beside the line); its row label, the tick under it or its column
header names its category. A label that could belong to two marks, or whose mark has no name, is
left unpaired and the chart is marked ambiguous: nothing is guessed.
"""

from __future__ import annotations

import itertools
import math
import statistics

from rag.ingest.charts.bars import pair_bars
from rag.ingest.charts.geometry import (
    CLEAR,
    Pair,
    Reading,
    box_of,
    inside,
    is_value,
    legend_key,
    name_like,
    number,
    text_blocks,
    tick_rows,
    union,
)
from rag.ingest.charts.lines import pair_curves
from rag.ingest.charts.marks import Bar, Curve, Label, Marks, same_colour


def pair_chart(labels: list[Label], marks: Marks) -> Reading:
    values = [lb for lb in labels if is_value(lb.text)]
    words = [lb for lb in labels if not is_value(lb.text)]
    ticks = axis_ticks(values) | _gridline_ticks(values, marks.gridlines)
    values = [v for v in values if id(v) not in ticks]
    legend = read_legend(words, marks)
    words = [w for w in words if not any(inside(w.box, lb.box) for lb in legend.values())]
    names = {colour: lb.text for colour, lb in legend.items()}
    if any(not c.marker for c in marks.curves):  # a line chart's shaded bands are not bars
        marks.bars = [b for b in marks.bars if legend_key(b.colour, names) is not None]
    reading = Reading(legend=list(names.values()))
    left = pair_bars(values, words, marks, names, reading)
    left = pair_curves(left, words, marks, names, reading)
    pie = marks.wedges and not any(len(c.points) >= 5 for c in marks.curves)
    left = _pair_stacked_text(left, words, reading, bool(marks.bars or (marks.curves and not pie)))
    reading.unpaired += left
    return reading


def axis_ticks(values: list[Label]) -> set[int]:
    """Numbers set out as an axis: three or more in a column or a row, evenly spaced, values in steps."""
    found: set[int] = set()
    for position, key in (
        (lambda lb: lb.cy, lambda lb: round(lb.box[2])),
        (lambda lb: lb.cy, lambda lb: round(lb.cx)),
        (lambda lb: lb.cx, lambda lb: round(lb.cy)),
    ):
        groups: dict[int, list[Label]] = {}
        for lb in values:
            k = key(lb)
            home = next((g for g in groups if abs(g - k) <= 3), k)
            groups.setdefault(home, []).append(lb)
        for group in groups.values():
            if len(group) >= 3 and _evenly_stepped(group, position):
                found |= {id(lb) for lb in group}
    return found


def _gridline_ticks(values: list[Label], gridlines: list) -> set[int]:
    """Numbers level with gridlines, at their ends, set in one column (two or more): the gridlines' values."""
    level = [
        v
        for v in values
        if any(
            abs(v.cy - (g[1] + g[3]) / 2) <= 0.4 * v.height and (v.box[2] <= g[0] + 3 or v.box[0] >= g[2] - 3)
            for g in gridlines
        )
    ]
    return {
        id(v)
        for v in level
        if any(
            u is not v and (abs(u.box[2] - v.box[2]) <= 3 or abs(u.cx - v.cx) <= 3) and abs(u.cy - v.cy) > 2
            for u in level
        )
    }


def _evenly_stepped(group: list[Label], position) -> bool:
    group = sorted(group, key=position)
    nums = [number(lb.text) for lb in group]
    pos = [position(lb) for lb in group]
    steps, gaps = [b - a for a, b in itertools.pairwise(nums)], [b - a for a, b in itertools.pairwise(pos)]
    if any(math.isnan(n) for n in nums) or any(s == 0 for s in steps) or any(g < 1 for g in gaps):
        return False
    even_values = max(steps) - min(steps) <= 0.01 * abs(steps[0]) + 1e-9
    even_gaps = max(gaps) - min(gaps) <= max(2.0, 0.08 * statistics.mean(gaps))
    return even_values and even_gaps


def read_legend(words: list[Label], marks: Marks) -> dict[tuple, Label]:
    """Colour → the label printed right of a swatch of that colour (a key square, a dot, a short line)."""
    keys = list(marks.swatches) + [
        Bar(box_of(c.points), c.colour) for c in marks.curves if not c.marker and _is_key_line(c)
    ]
    legend: dict[tuple, Label] = {}
    for key in keys:
        kx1, kcy = key.box[2], (key.box[1] + key.box[3]) / 2
        beside = [
            w
            for w in words  # the swatch just before a label, or at its start (an OCR box may take it in)
            if w.box[0] - max(w.size, 6) - (key.box[2] - key.box[0])
            <= key.box[0]
            <= w.box[0] + 0.3 * (w.box[2] - w.box[0])
            and abs(w.cy - kcy) <= 0.6 * w.height
            and name_like(w.text)
            and not any(same_colour(key.colour, c) for c in legend)
        ]
        if beside:
            label = min(beside, key=lambda w: abs(w.box[0] - kx1))
            legend[key.colour] = _with_continuation(label, words)
    names = [lb.text for lb in legend.values()]
    if len(set(names)) < len(names):
        legend = {colour: _with_heading(lb, words) for colour, lb in legend.items()}
    return dict(sorted(legend.items(), key=lambda item: (round(item[1].box[1] / 4), item[1].box[0])))


def _with_heading(label: Label, words: list[Label]) -> Label:
    """Legend entries repeated under two headings (Disapprove: Strongly … Approve: Strongly) take it."""
    above = [
        w
        for w in words
        if 0 <= label.box[1] - w.box[3] <= 1.5 * label.size
        and w.box[0] <= label.box[2]
        and w.box[2] >= label.box[0] - 2 * label.size
    ]
    if not above:
        return label
    heading = min(above, key=lambda w: label.box[1] - w.box[3])
    return Label(label.box, f"{heading.text} {label.text}", label.size, label.colour, label.bold)


def _is_key_line(curve: Curve) -> bool:
    box = box_of(curve.points)
    return box[2] - box[0] <= 30 and box[3] - box[1] <= 1.5


def _with_continuation(label: Label, words: list[Label]) -> Label:
    """A legend entry set on two lines ("Describes / both parties") as one label."""
    below = [
        w
        for w in words
        if abs(w.box[0] - label.box[0]) <= 2
        and 0 <= w.box[1] - label.box[3] <= 0.5 * w.size
        and abs(w.size - label.size) < 0.6
    ]
    if not below:
        return label
    nxt = below[0]
    merged = Label(
        union(label.box, nxt.box), f"{label.text} {nxt.text}", label.size, label.colour, label.bold
    )
    words.remove(nxt)
    return merged


def _pair_stacked_text(
    values: list[Label], words: list[Label], reading: Reading, has_marks: bool
) -> list[Label]:
    """A number set over or under a word label ("Better off / 72%"), each the other's nearest, is that
    label's value: how pies and annotated pictures are labelled."""
    if not values or has_marks:
        return values
    ticks = [w.box for row in tick_rows(words) for w in row]
    blocks = [
        b
        for b in text_blocks(words)
        if any(ch.isalpha() for ch in b.text) and not any(inside(t, b.box) or inside(b.box, t) for t in ticks)
    ]
    gaps = {
        (i, j): g
        for i, v in enumerate(values)
        for j, b in enumerate(blocks)
        if (g := _stack_gap(v, b)) is not None
    }
    left = []
    for i, label in enumerate(values):
        mine = sorted((g, j) for (a, j), g in gaps.items() if a == i)
        if not mine:
            left.append(label)
            continue
        gap, j = mine[0]
        theirs = min(g for (a, b), g in gaps.items() if b == j)
        clear = len(mine) == 1 or mine[1][0] > CLEAR * max(gap, 1) + 1
        if clear and theirs == gap:
            reading.pairs.append(Pair(label, blocks[j].text, "", "pie"))
        else:
            left.append(label)
    return left


def _stack_gap(value: Label, block: Label) -> float | None:
    overlap = min(block.box[2], value.box[2]) - max(block.box[0], value.box[0])
    gap = max(value.box[1] - block.box[3], block.box[1] - value.box[3])
    centred = abs(block.cx - value.cx) <= 0.6 * (block.box[2] - block.box[0])
    return gap if overlap > 0 and centred and -1 <= gap <= 2.2 * value.height else None
