"""Pair a chart's data labels with their category and series by geometry.

A data label belongs to the bar it sits in or at the end of, or to the line or dot it sits next to;
the bar's or line's colour names its series through the legend (a swatch's fill, a label printed
in the line's colour, a label beside the line); its row label, the tick under it or its column
header names its category. A label that could belong to two marks, or whose mark has no name, is
left unpaired and the chart is marked ambiguous: nothing is guessed.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field

from rag.ingest.chart_marks import Bar, Curve, Label, Marks, Point, neutral, same_colour
from rag.records import BBox

_VALUE = re.compile(r"^[+\-–−]?[$€£]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?%?$")
_YEAR = re.compile(r"^(1[89]|20)\d\d$")
_NEAR = 2.5  # a label this many of its heights from a mark is not that mark's label
_CLEAR = 1.4  # the best mark must be this much nearer than the next one


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


def pair_chart(labels: list[Label], marks: Marks) -> Reading:
    values = [lb for lb in labels if is_value(lb.text)]
    words = [lb for lb in labels if not is_value(lb.text)]
    ticks = axis_ticks(values) | _gridline_ticks(values, marks.gridlines)
    values = [v for v in values if id(v) not in ticks]
    legend = read_legend(words, marks)
    words = [w for w in words if not any(_inside(w.box, lb.box) for lb in legend.values())]
    names = {colour: lb.text for colour, lb in legend.items()}
    if any(not c.marker for c in marks.curves):  # a line chart's shaded bands are not bars
        marks.bars = [b for b in marks.bars if _legend_key(b.colour, names) is not None]
    reading = Reading(legend=list(names.values()))
    left = _pair_bars(values, words, marks, names, reading)
    left = _pair_curves(left, words, marks, names, reading)
    pie = marks.wedges and not any(len(c.points) >= 5 for c in marks.curves)
    left = _pair_stacked_text(left, words, reading, bool(marks.bars or (marks.curves and not pie)))
    reading.unpaired += left
    return reading


# -- axes and legends -------------------------------------------------------------------------------------------


def axis_ticks(values: list[Label]) -> set[int]:
    """Numbers set out as an axis: three or more in a column or a row, evenly spaced, values in steps."""
    found: set[int] = set()
    for position, key in ((lambda lb: lb.cy, lambda lb: round(lb.box[2])), (lambda lb: lb.cy, lambda lb: round(lb.cx)),
                          (lambda lb: lb.cx, lambda lb: round(lb.cy))):
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
    level = [v for v in values if any(abs(v.cy - (g[1] + g[3]) / 2) <= 0.4 * v.height
                                      and (v.box[2] <= g[0] + 3 or v.box[0] >= g[2] - 3) for g in gridlines)]
    return {id(v) for v in level
            if any(u is not v and (abs(u.box[2] - v.box[2]) <= 3 or abs(u.cx - v.cx) <= 3) and abs(u.cy - v.cy) > 2
                   for u in level)}


def _evenly_stepped(group: list[Label], position) -> bool:
    group = sorted(group, key=position)
    nums = [number(lb.text) for lb in group]
    pos = [position(lb) for lb in group]
    steps, gaps = [b - a for a, b in zip(nums, nums[1:])], [b - a for a, b in zip(pos, pos[1:])]
    if any(math.isnan(n) for n in nums) or any(s == 0 for s in steps) or any(g < 1 for g in gaps):
        return False
    even_values = max(steps) - min(steps) <= 0.01 * abs(steps[0]) + 1e-9
    even_gaps = max(gaps) - min(gaps) <= max(2.0, 0.08 * statistics.mean(gaps))
    return even_values and even_gaps


def read_legend(words: list[Label], marks: Marks) -> dict[tuple, Label]:
    """Colour → the label printed right of a swatch of that colour (a key square, a dot, a short line)."""
    keys = list(marks.swatches) + [Bar(_box(c.points), c.colour) for c in marks.curves
                                   if not c.marker and _is_key_line(c)]
    legend: dict[tuple, Label] = {}
    for key in keys:
        kx1, kcy = key.box[2], (key.box[1] + key.box[3]) / 2
        beside = [w for w in words  # the swatch just before a label, or at its start (an OCR box may take it in)
                  if w.box[0] - max(w.size, 6) - (key.box[2] - key.box[0]) <= key.box[0]
                  <= w.box[0] + 0.3 * (w.box[2] - w.box[0]) and abs(w.cy - kcy) <= 0.6 * w.height and _name_like(w.text)
                  and not any(same_colour(key.colour, c) for c in legend)]
        if beside:
            label = min(beside, key=lambda w: abs(w.box[0] - kx1))
            legend[key.colour] = _with_continuation(label, words)
    names = [lb.text for lb in legend.values()]
    if len(set(names)) < len(names):
        legend = {colour: _with_heading(lb, words) for colour, lb in legend.items()}
    return dict(sorted(legend.items(), key=lambda item: (round(item[1].box[1] / 4), item[1].box[0])))


def _with_heading(label: Label, words: list[Label]) -> Label:
    """Legend entries repeated under two headings ("Disapprove: Strongly … Approve: Strongly") take their heading."""
    above = [w for w in words if 0 <= label.box[1] - w.box[3] <= 1.5 * label.size
             and w.box[0] <= label.box[2] and w.box[2] >= label.box[0] - 2 * label.size]
    if not above:
        return label
    heading = min(above, key=lambda w: label.box[1] - w.box[3])
    return Label(label.box, f"{heading.text} {label.text}", label.size, label.colour, label.bold)


def _is_key_line(curve: Curve) -> bool:
    box = _box(curve.points)
    return box[2] - box[0] <= 30 and box[3] - box[1] <= 1.5


def _with_continuation(label: Label, words: list[Label]) -> Label:
    """A legend entry set on two lines ("Describes / both parties") as one label."""
    below = [w for w in words if abs(w.box[0] - label.box[0]) <= 2 and 0 <= w.box[1] - label.box[3] <= 0.5 * w.size
             and abs(w.size - label.size) < 0.6]
    if not below:
        return label
    nxt = below[0]
    merged = Label(_union(label.box, nxt.box), f"{label.text} {nxt.text}", label.size, label.colour, label.bold)
    words.remove(nxt)
    return merged


# -- bars -------------------------------------------------------------------------------------------------------


@dataclass
class _Group:
    """Bars of one category: a stack, or side-by-side bars of several series."""

    bars: list[Bar]
    category: str = ""

    @property
    def box(self) -> BBox:
        box = self.bars[0].box
        for bar in self.bars[1:]:
            box = _union(box, bar.box)
        return box


def _pair_bars(values: list[Label], words: list[Label], marks: Marks, names: dict, reading: Reading) -> list[Label]:
    bars = marks.bars
    if not bars:
        return values
    horizontal = _horizontal(bars)
    reading.across = "y" if horizontal else "x"
    groups = _groups(bars, horizontal)
    _name_categories(groups, words, horizontal)
    names = _bar_names(bars, {**names, **_direct_names(groups, words, names, horizontal)},
                       _colour_order(groups, horizontal))
    scale = _scale(values, bars, horizontal)
    owner: dict[int, Label] = {}  # bar → its own label
    ends: list[tuple[Label, Bar]] = []
    spread: list[tuple[Label, list[Bar]]] = []
    left = []
    for label in values:
        bar, inside = _bar_for(label, bars, horizontal)
        if isinstance(bar, list):
            spread.append((label, bar))
        elif bar is None:
            left.append(label)
        elif inside:
            owner[id(bar)] = label
        else:
            ends.append((label, bar))
    for label, pair in spread:
        free = [b for b in pair if id(b) not in owner]
        if len(free) == 1:
            owner[id(free[0])] = label
        else:
            left.append(label)
    totals = []
    for label, bar in ends:
        if _is_total(label, bar, groups, owner, scale, horizontal, marks):
            totals.append((label, bar))
        elif id(bar) in owner:
            left.append(label)
        else:
            owner[id(bar)] = label
    group_of = {id(b): g for g in groups for b in g.bars}
    colours = {b.colour for b in bars}
    stacked = any(len({b.colour for b in g.bars}) > 1 and _stacked(g, horizontal) for g in groups)
    kind = "stacked bar" if stacked else "bar"
    for bar in bars:
        label = owner.get(id(bar))
        if label is None:
            continue
        series = _series_name(bar.colour, names, colours)
        category = group_of[id(bar)].category
        if series is None or not category:
            reading.unpaired.append(label)
        else:
            reading.pairs.append(Pair(label, category, series, kind))
    before = len(reading.pairs)
    left += _pair_totals(totals, groups, group_of, names, colours, words, marks, horizontal, kind, reading)
    headed = [p.label for p in reading.pairs[before:] if p.series not in names.values()]
    return _pair_columns(left, groups, words, horizontal, kind, reading, headed)


def _horizontal(bars: list[Bar]) -> bool:
    """Bars of one thickness whose lengths vary: thickness is the height for horizontal bars."""
    heights = [b.box[3] - b.box[1] for b in bars]
    widths = [b.box[2] - b.box[0] for b in bars]
    same_h = sum(abs(h - statistics.median(heights)) <= 0.1 * statistics.median(heights) for h in heights)
    same_w = sum(abs(w - statistics.median(widths)) <= 0.1 * statistics.median(widths) for w in widths)
    return same_h >= same_w


def _groups(bars: list[Bar], horizontal: bool) -> list[_Group]:
    """Bars sharing a band (a stack), then bands set against each other (bars of one category)."""
    lo, hi = (1, 3) if horizontal else (0, 2)
    bands: list[list[Bar]] = []
    for bar in sorted(bars, key=lambda b: b.box[lo]):
        band = next((g for g in bands if _share(g[0].box, bar.box, lo, hi) > 0.6), None)
        if band is None:
            bands.append([bar])
        else:
            band.append(bar)
    groups: list[_Group] = []
    for band in bands:
        thickness = band[0].box[hi] - band[0].box[lo]
        last = groups[-1] if groups else None
        if last and band[0].box[lo] - last.box[hi] <= 0.2 * thickness and _side_by_side(last, band, horizontal):
            last.bars += band
        else:
            groups.append(_Group(list(band)))
    return groups


def _side_by_side(group: _Group, band: list[Bar], horizontal: bool) -> bool:
    """Grouped bars: single bars of colours not yet in the group, from the group's baseline."""
    a = 0 if horizontal else 3
    start = group.bars[0].box[a]
    colours = {bar.colour for bar in group.bars}
    return (len(band) == 1 and len(colours) == len(group.bars) and band[0].colour not in colours
            and abs(band[0].box[a] - start) <= 1.5)


def _stacked(group: _Group, horizontal: bool) -> bool:
    lo, hi = (1, 3) if horizontal else (0, 2)
    return any(_share(a.box, b.box, lo, hi) > 0.6 for i, a in enumerate(group.bars) for b in group.bars[i + 1:])


def _bar_for(label: Label, bars: list[Bar], horizontal: bool) -> tuple[Bar | list[Bar] | None, bool]:
    """The bar a label sits in, else the bar whose end it sits at, in the same band, nothing between."""
    inside = [b for b in bars if _contains(b.box, (label.cx, label.cy), 0.5)]
    if inside:
        bar = min(inside, key=lambda b: _area(b.box))
        a, b = (0, 2) if horizontal else (1, 3)
        covers = sorted((_overlap((label.box[a], label.box[b]), (o.box[a], o.box[b])), id(o)) for o in bars
                        if _share(o.box, bar.box, *((1, 3) if horizontal else (0, 2))) > 0.6)
        if len(covers) > 1 and covers[-1][0] < 1.5 * covers[-2][0]:
            # a label wider than its segment, spread over two: whose is it? Told apart later, if one
            # of the two has a label of its own
            return [o for o in bars if id(o) in (covers[-1][1], covers[-2][1])], True
        return next(o for o in bars if id(o) == covers[-1][1]) if covers else bar, True
    near = []
    for bar in bars:
        gap = _end_gap(label, bar.box, horizontal)
        if gap is not None and not _blocked(label, bar, bars, horizontal):
            near.append((gap, bar))
    near.sort(key=lambda item: item[0])
    if not near or (len(near) > 1 and near[1][0] - near[0][0] < 1.0):
        return None, False
    return near[0][1], False


def _end_gap(label: Label, box: BBox, horizontal: bool) -> float | None:
    lo, hi, c = (1, 3, label.cy) if horizontal else (0, 2, label.cx)
    a, b = (0, 2) if horizontal else (1, 3)
    thickness = box[hi] - box[lo]
    if not box[lo] - 0.3 * thickness <= c <= box[hi] + 0.3 * thickness:
        return None
    centre = (label.box[a] + label.box[b]) / 2
    if centre > box[b]:
        gap = max(0.0, label.box[a] - box[b])
    elif centre < box[a]:
        gap = max(0.0, box[a] - label.box[b])
    else:
        return None
    return gap if gap <= _NEAR * label.height else None


def _blocked(label: Label, bar: Bar, bars: list[Bar], horizontal: bool) -> bool:
    a, b = (0, 2) if horizontal else (1, 3)
    lo, hi = (1, 3) if horizontal else (0, 2)
    c = label.cy if horizontal else label.cx
    start, end = sorted(((label.box[a] + label.box[b]) / 2, (bar.box[a] + bar.box[b]) / 2))
    return any(other is not bar and other.box[lo] <= c <= other.box[hi] and start < (other.box[a] + other.box[b]) / 2 < end
               for other in bars)


def _scale(values: list[Label], bars: list[Bar], horizontal: bool) -> float | None:
    """Value per point of bar length, when labels inside bars agree on one."""
    ratios = []
    for label in values:
        bar, inside = _bar_for(label, bars, horizontal)
        if isinstance(bar, Bar) and inside and number(label.text) > 0:
            ratios.append(number(label.text) / _length(bar.box, horizontal))
    if len(ratios) < 3:
        return None
    mid = statistics.median(ratios)
    agree = [r for r in ratios if abs(r - mid) <= 0.15 * mid]
    return mid if len(agree) >= 0.7 * len(ratios) else None


def _is_total(label: Label, bar: Bar, groups: list[_Group], owner: dict, scale: float | None, horizontal: bool,
              marks: Marks) -> bool:
    """A number at a stack's end is the stack's (or its side's) total, not the end bar's own label,
    when its value fits the side's length better than the bar's — or, with no scale, when the end
    bar already has a label inside."""
    side = _side(label, bar, groups, horizontal, marks)
    if len(side) < 2:
        return False
    if scale is None:
        return id(bar) in owner
    value = number(label.text)
    own = _length(bar.box, horizontal) * scale
    total = sum(_length(b.box, horizontal) for b in side) * scale
    return abs(value - total) < abs(value - own)


def _side(label: Label, bar: Bar, groups: list[_Group], horizontal: bool, marks: Marks) -> list[Bar]:
    """The bars of the label's stack on the label's side of a diverging chart's centre line."""
    group = next(g for g in groups if any(b is bar for b in g.bars))
    lo, hi = (1, 3) if horizontal else (0, 2)
    stack = [b for b in group.bars if _share(b.box, bar.box, lo, hi) > 0.6]
    if not horizontal:
        return stack
    box = group.box
    centres = [r[0] for r in marks.rules if box[0] - 1 <= r[0] <= box[2] + 1 and r[1] <= box[1] + 1 and r[3] >= box[3] - 1]
    if not centres:
        return stack
    axis = centres[0]
    on_left = label.cx < axis
    return [b for b in stack if ((b.box[0] + b.box[2]) / 2 < axis) == on_left]


def _pair_totals(totals, groups, group_of, names, colours, words, marks, horizontal, kind, reading) -> list[Label]:
    if not totals:
        return []
    ends = {}
    for label, bar in totals:  # a header sits over (or beside) the first total of its side
        ends.setdefault(_end_side(label, bar, horizontal), []).append(label)
    headers = {side: _header([min(labels, key=lambda lb: lb.box[1] if horizontal else lb.box[0])], words, horizontal)
               for side, labels in ends.items()}
    left = []
    for label, bar in totals:
        category = group_of[id(bar)].category
        header = headers[_end_side(label, bar, horizontal)]
        if header:
            series = header
        else:
            side = sorted(_side(label, bar, groups, horizontal, marks), key=lambda b: _order(b, names))
            parts = [_series_name(b.colour, names, colours) for b in side]
            series = " + ".join(parts) if all(parts) else None
        if series and category:
            reading.pairs.append(Pair(label, category, series, kind))
        else:
            left.append(label)
    return left


def _end_side(label: Label, bar: Bar, horizontal: bool) -> bool:
    return label.cx > (bar.box[0] + bar.box[2]) / 2 if horizontal else label.cy > (bar.box[1] + bar.box[3]) / 2


def _order(bar: Bar, names: dict) -> int:
    keys = list(names)
    return keys.index(bar.colour) if bar.colour in names else len(keys)


def _pair_columns(values, groups, words, horizontal, kind, reading, headed: list[Label]) -> list[Label]:
    """Numbers set in a column beside horizontal bars, or in a row over vertical ones ("Change '08-'15",
    "NET"), with a header of their own; totals already paired under a header line up with them."""
    if not values:
        return values
    a, b = (0, 2) if horizontal else (1, 3)
    lines: list[list[Label]] = []
    for label in sorted(values + headed, key=lambda lb: (lb.cy, lb.cx)):
        home = next((ln for ln in lines if any(_share(m.box, label.box, a, b) >= 0.5 for m in ln)), None)
        if home is None:
            lines.append([label])
        else:
            home.append(label)
    left = []
    for line in lines:
        header = _header(line, words, horizontal) if len(line) >= 2 else None
        for label in [lb for lb in line if not any(lb is h for h in headed)]:
            group = next((g for g in groups if (g.box[1] - 2 <= label.cy <= g.box[3] + 2 if horizontal
                                                 else g.box[0] - 2 <= label.cx <= g.box[2] + 2)), None)
            if header and group and group.category:
                reading.pairs.append(Pair(label, group.category, header, kind))
            else:
                left.append(label)
    return left


def _header(labels: list[Label], words: list[Label], horizontal: bool) -> str | None:
    return _header_above(labels, words) if horizontal else _header_beside(labels, words)


def _header_beside(labels: list[Label], words: list[Label]) -> str | None:
    """The word at the end of a row of numbers ("Net" right of the totals over a column chart)."""
    cy = statistics.mean(lb.cy for lb in labels)
    x0, x1 = min(lb.box[0] for lb in labels), max(lb.box[2] for lb in labels)
    level = [w for w in words if abs(w.cy - cy) <= 0.6 * w.height and (w.box[0] >= x1 or w.box[2] <= x0)]
    near = min(level, key=lambda w: min(abs(w.box[0] - x1), abs(x0 - w.box[2])), default=None)
    return near.text if near is not None else None


def _direct_names(groups: list[_Group], words: list[Label], names: dict, horizontal: bool) -> dict:
    """Series named on the chart itself: a label level with a segment, right of the last column
    chart's bar, or over a segment of the first bar of a horizontal chart."""
    found: dict = {}
    if not groups:
        return found
    edge = max(groups, key=lambda g: g.box[2]) if not horizontal else min(groups, key=lambda g: g.box[1])
    for block in text_blocks(words):
        if horizontal:
            ok = 0 <= edge.box[1] - block.box[3] <= 2.5 * block.size
            hit = [b for b in edge.bars if b.box[0] <= block.cx <= b.box[2]]
        else:
            ok = 0 <= block.box[0] - edge.box[2] <= 3 * block.size
            hit = [b for b in edge.bars if b.box[1] <= block.cy <= b.box[3]]
        if ok and len(hit) == 1 and all(_colour_distance(hit[0].colour, k) > 4 for k in [*names, *found]):
            found[hit[0].colour] = block.text
    return found


def _header_above(labels: list[Label], words: list[Label]) -> str | None:
    top = min(labels, key=lambda lb: lb.box[1])
    x0, x1 = min(lb.box[0] for lb in labels), max(lb.box[2] for lb in labels)
    above = [w for w in words if w.box[3] <= top.box[1] + 1 and top.box[1] - w.box[3] <= 3 * top.height
             and w.box[0] < x1 + 2 and w.box[2] > x0 - 2]
    if not above:
        return None
    lowest = max(above, key=lambda w: w.box[3])
    block = [w for w in above if abs(w.box[3] - lowest.box[3]) <= 0.6 * w.size
             or (w.box[3] <= lowest.box[1] + 1 and lowest.box[1] - w.box[3] <= 0.5 * w.size
                 and abs(w.cx - lowest.cx) <= 0.6 * (w.box[2] - w.box[0]))]
    return " ".join(w.text for w in sorted(block, key=lambda w: (w.box[1], w.box[0])))


def _series_name(colour, names: dict, colours: set) -> str | None:
    if colour in names:
        return names[colour]
    return "" if len(colours) == 1 else None


def _bar_names(bars: list[Bar], names: dict, order: list | None) -> dict:
    """Bar colour → series name, in legend order. A swatch may be a shade off its bars, so a bar
    colour takes the clearly nearest legend colour; when that fails, the legend's order is matched
    to the order the colours take in the bars, if their colours are close. Otherwise no bar is named
    by the legend."""
    colours = list(dict.fromkeys(b.colour for b in bars))
    keys = list(names)
    nearest = {}
    for colour in colours:
        dists = sorted((_colour_distance(colour, k), n) for n, k in enumerate(keys))
        if dists and dists[0][0] <= 45 and (len(dists) == 1 or dists[1][0] >= dists[0][0] + 15):
            nearest[colour] = dists[0][1]
    by_order = {}
    if order and len(order) == len(colours) and len(keys) >= len(order):
        by_order = {c: n for n, c in enumerate(order) if _colour_distance(c, keys[n]) <= 60}
    exact = all(_colour_distance(c, keys[n]) <= 4 for c, n in nearest.items())
    for chosen in (nearest, by_order):
        complete = len(chosen) == len(colours) and len(set(chosen.values())) == len(chosen)
        if complete and (exact or not order or len(order) != len(colours)
                         or [chosen[c] for c in order] == sorted(chosen.values())):
            return {c: names[keys[n]] for c, n in sorted(chosen.items(), key=lambda item: item[1])}
    return {}


def _colour_order(groups: list[_Group], horizontal: bool) -> list | None:
    """The order colours take along the bars (left to right; top to bottom for grouped horizontal
    bars), if every group agrees with the group that has them all."""
    def sequence(group: _Group) -> list:
        stacked = _stacked(group, horizontal)
        key = (lambda b: b.box[0]) if (horizontal and stacked) or not horizontal else (lambda b: b.box[1])
        return list(dict.fromkeys(b.colour for b in sorted(group.bars, key=key)))

    sequences = [sequence(g) for g in groups]
    full = max(sequences, key=len, default=[])
    for seq in sequences:
        if [c for c in full if c in seq] != seq:
            return None
    return full


def _legend_key(colour, names: dict, tolerance: int = 30):
    """The legend colour a line's colour is: the one within tolerance, if only one is."""
    near = [k for k in names if same_colour(k, colour, tolerance)]
    if len(near) == 1:
        return near[0]
    exact = [k for k in near if same_colour(k, colour, 4)]
    return exact[0] if len(exact) == 1 else None


def _colour_distance(a, b) -> int:
    return max(abs(x - y) for x, y in zip(a, b))


def _name_categories(groups: list[_Group], words: list[Label], horizontal: bool) -> None:
    """Each group's category: the label beside a horizontal bar's band, under a vertical bar.

    Lines go to the nearest group; of the blocks they form there, the one most level with the
    bars (nearest them on a tie) is the category; lines left over are headings."""
    lo, hi, across = (1, 3, "cy") if horizontal else (0, 2, "cx")
    if horizontal:
        edge = min(g.box[0] for g in groups)
        lines = [w for w in words if w.box[2] <= edge + 3]
    else:
        base = max(g.box[3] for g in groups)
        lines = [w for w in words if w.box[1] >= base - 2 and w.box[1] - base <= 3 * w.size]
    home: dict[int, list[Label]] = {}
    for w in lines:
        c = getattr(w, across)
        dist, n = min((max(g.box[lo] - c, c - g.box[hi], 0.0), n) for n, g in enumerate(groups))
        if dist <= w.height:
            home.setdefault(n, []).append(w)
    used: set[int] = set()
    for n, members in home.items():
        group = groups[n]
        band = (group.box[lo], group.box[hi])
        blocks = text_blocks(members)
        if horizontal:
            best = max(blocks, key=lambda b: (_overlap(band, (b.box[1], b.box[3])) > 0, b.box[2]))
        else:
            best = min(blocks, key=lambda b: (_overlap(band, (b.box[0], b.box[2])) <= 0, b.box[1]))
        group.category = best.text
        used |= {id(w) for w in members if _inside(w.box, best.box)}
    if horizontal:  # headings start left of the bars and may run on over them ("Among Rep/Lean Rep…")
        spare = [w for w in words if w.box[0] < edge - 2 and id(w) not in used
                 and not any(_overlap((w.box[1], w.box[3]), (g.box[1], g.box[3])) > 0 for g in groups)]
    else:
        spare = [w for w in lines if id(w) not in used]
    _disambiguate(groups, text_blocks(spare), horizontal)


def _disambiguate(groups: list[_Group], headings: list[Label], horizontal: bool) -> None:
    """Categories that repeat ("Hispanic" under 2015 and under 2014) take the heading above them."""
    counts: dict[str, int] = {}
    for g in groups:
        counts[g.category] = counts.get(g.category, 0) + 1
    for g in groups:
        if not g.category or counts[g.category] < 2:
            continue
        box = g.box
        above = [h for h in headings if h.box[3] <= box[1] + 1 and (not horizontal or h.box[0] < box[0])]
        heading = max(above, key=lambda h: h.box[3], default=None)
        g.category = f"{heading.text} · {g.category}" if heading else ""
    seen: dict[str, int] = {}
    for g in groups:
        seen[g.category] = seen.get(g.category, 0) + 1
    for g in groups:
        if seen[g.category] > 1:
            g.category = ""  # still repeated: rows that would be told apart by position alone


def text_blocks(words: list[Label]) -> list[Label]:
    """Lines set directly under one another in one size, aligned on an edge or the centre: one label."""
    blocks: list[Label] = []
    for w in sorted(words, key=lambda lb: (lb.box[1], lb.box[0])):
        home = next((b for b in reversed(blocks) if _continues(b, w)), None)
        if home is None:
            blocks.append(Label(w.box, w.text, w.size, w.colour, w.bold))
        else:
            home.box = _union(home.box, w.box)
            home.text = f"{home.text} {w.text}"
    return blocks


def _continues(block: Label, line: Label) -> bool:
    gap = line.box[1] - block.box[3]
    aligned = (abs(line.box[0] - block.box[0]) <= 3 or abs(line.box[2] - block.box[2]) <= 3
               or abs(line.cx - block.cx) <= 3)
    return -1 <= gap <= 0.45 * line.size and aligned and abs(line.size - block.size) < 0.6 and line.bold == block.bold


# -- lines and dots ---------------------------------------------------------------------------------------------


def _pair_curves(values: list[Label], words: list[Label], marks: Marks, names: dict, reading: Reading) -> list[Label]:
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
    scored = sorted(((_distance(label, [c]), i) for i, c in enumerate(curves)), key=lambda s: s[0])
    if not scored or scored[0][0] > _NEAR * label.height:
        return []
    best = curves[scored[0][1]]
    if not neutral(label.colour):
        tinted = [curves[i] for d, i in scored
                  if same_colour(curves[i].colour, label.colour, 40) and d <= 2 * _NEAR * label.height]
        return [(tinted[0], _point_for(label, tinted[0], curves))] if tinted else []
    options = [(best, _point_for(label, best, curves))]
    rival = next(((d, i) for d, i in scored[1:] if not same_colour(curves[i].colour, best.colour)), None)
    if rival is not None and rival[0] < _CLEAR * scored[0][0] + 1:
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
        tinted = [w for w in text_blocks(words)
                  if not neutral(w.colour) and same_colour(w.colour, colour, 40) and _name_like(w.text)]
        if legend is not None:
            named[colour] = legend
        elif tinted:
            named[colour] = tinted[0].text
    unnamed = [c for c in colours if c not in named]
    if len(unnamed) == 1 and len(colours) == 1:
        named[unnamed[0]] = ""
    elif unnamed:
        ticks = [w.box for row in _tick_rows(words) for w in row]
        claims = []
        for word in text_blocks(words):
            if not neutral(word.colour) or not _name_like(word.text) or any(_inside(word.box, t) for t in ticks):
                continue
            dists = sorted((_vertical_distance(word, [c for c in curves if same_colour(c.colour, k)]), k)
                           for k in colours)
            if len(dists) > 1 and dists[0][0] <= 6 * word.size and dists[1][0] >= _CLEAR * dists[0][0] + 2:
                claims.append((dists[0][0], dists[0][1], word.text))
        for _, colour, text in sorted(claims, key=lambda c: c[0]):
            if colour in unnamed and colour not in named:
                named[colour] = text
    return named


def _repeated_axes(words: list[Label]) -> bool:
    """Panels side by side: one row of ticks that says the same thing twice."""
    return any(2 <= len({w.text for w in row}) < len(row) for row in _tick_rows(words))  # not "RECESSION" twice


def _name_like(text: str) -> bool:
    """A series name: words ("Hispanic") or a range ("18-29", "65+"); not OCR debris ("67.....O")."""
    return bool(re.search(r"[^\W\d_]{2}", text) or re.fullmatch(r"[<>]?\d+(\s?[-–+]\s?\d*)?\+?", text))


def _panel_names(curves: list[Curve], words: list[Label]) -> dict[int, str]:
    """Small multiples — one line per panel, side by side or stacked, all one colour — are named by
    each panel's heading: the text nearest above its line."""
    lines = [c for c in curves if not c.marker]
    boxes = [_box(c.points) for c in lines]
    apart = len(lines) > 1 and all(
        _overlap((a[0], a[2]), (b[0], b[2])) <= 0 or _overlap((a[1], a[3]), (b[1], b[3])) <= 0
        for i, a in enumerate(boxes) for b in boxes[i + 1:])
    if not apart:
        return {}
    ticks = [w.box for row in _tick_rows(words) for w in row]
    blocks = [b for b in text_blocks(words) if not any(_inside(b.box, t) for t in ticks)]
    names = {}
    for line, box in zip(lines, boxes):
        above = [b for b in blocks if b.box[3] <= box[1] + 2 and box[1] - b.box[3] <= 6 * b.size
                 and _overlap((b.box[0], b.box[2]), (box[0], box[2])) > 0]
        if above:
            names[id(line)] = max(above, key=lambda b: b.box[3]).text
    return names if len(set(names.values())) == len(lines) else {}


def _polyline_of(curve: Curve, curves: list[Curve]) -> Curve | None:
    if not curve.marker:
        return curve
    lines = [c for c in curves if not c.marker and same_colour(c.colour, curve.colour)]
    return min(lines, key=lambda c: _distance(Label((*curve.points[0], *curve.points[0]), "", 0), [c]), default=None)


def _point_for(label: Label, curve: Curve, curves: list[Curve]) -> Point:
    """Where the labelled value is: the nearest marker of the line's colour, else the line's nearest point."""
    centre = (label.cx, label.cy)
    dots = [c for c in curves if c.marker and same_colour(c.colour, curve.colour)]
    near = [c.points[0] for c in dots if _box_distance(label.box, c.points[0]) <= _NEAR * label.height]
    if near:  # a label is centred over or under its point: sideways counts double
        return min(near, key=lambda p: 2 * abs(p[0] - label.cx) + max(label.box[1] - p[1], p[1] - label.box[3], 0))
    return min(_dense(curve.points), key=lambda p: math.dist(centre, p))


def category_at(point: Point, words: list[Label]) -> str | None:
    """The tick label under a point: aligned with it, or read off an evenly spaced numeric axis."""
    for row in _tick_rows([w for w in words if w.box[1] >= point[1] - 1]):
        xs = [w.cx for w in row]
        spacing = statistics.median([b - a for a, b in zip(xs, xs[1:])])
        if not xs[0] - spacing <= point[0] <= xs[-1] + spacing:
            continue
        nearest = min(row, key=lambda w: abs(w.cx - point[0]))
        if abs(nearest.cx - point[0]) <= max(2.5, 0.12 * spacing):
            return nearest.text
        return _interpolate(row, point[0])
    return None


def _tick_rows(words: list[Label]) -> list[list[Label]]:
    """Rows of two or more short labels side by side (a label may take two lines: "Apr / 2017"), nearest first."""
    rows: list[list[Label]] = []
    for w in sorted(text_blocks(words), key=lambda lb: lb.box[1]):
        if len(w.text) > 16:
            continue
        home = next((r for r in rows if abs(r[0].box[1] - w.box[1]) <= 2 and abs(r[0].size - w.size) < 0.6), None)
        if home is None:
            rows.append([w])
        else:
            home.append(w)
    return [sorted(r, key=lambda w: w.cx) for r in rows if len(r) >= 2]


def _interpolate(row: list[Label], x: float) -> str | None:
    """A whole number read off the run of ticks around x that is evenly spaced in value and position."""
    nums = [number(w.text) for w in row]
    if any(math.isnan(n) for n in nums):
        return None
    xs = [w.cx for w in row]
    for i in range(len(row) - 2):
        j = i + 1
        while j + 1 < len(row) and _even(nums[i:j + 2], xs[i:j + 2]):
            j += 1
        if j - i < 2:
            continue
        step, gap = nums[i + 1] - nums[i], xs[i + 1] - xs[i]
        value = nums[i] + (x - xs[i]) / gap * step
        whole = abs(value - round(value)) <= 0.15
        within = xs[i] - gap <= x <= xs[j] + gap
        ticked = xs[i] - 2 * gap <= x <= xs[j] + 2 * gap and round(value) in nums  # an uneven last tick
        if whole and (within or ticked):
            return str(int(round(value)))
    return None


def _even(nums: list[float], xs: list[float]) -> bool:
    steps, gaps = [b - a for a, b in zip(nums, nums[1:])], [b - a for a, b in zip(xs, xs[1:])]
    return (min(steps) > 0 and max(steps) - min(steps) <= 1e-9
            and max(gaps) - min(gaps) <= max(1.5, 0.05 * statistics.mean(gaps)))


# -- labels beside their numbers (pies, annotated values) -------------------------------------------------------


def _pair_stacked_text(values: list[Label], words: list[Label], reading: Reading, has_marks: bool) -> list[Label]:
    """A number set over or under a word label ("Better off / 72%"), each the other's nearest, is that
    label's value: how pies and annotated pictures are labelled."""
    if not values or has_marks:
        return values
    ticks = [w.box for row in _tick_rows(words) for w in row]
    blocks = [b for b in text_blocks(words) if any(ch.isalpha() for ch in b.text)
              and not any(_inside(t, b.box) or _inside(b.box, t) for t in ticks)]
    gaps = {(i, j): g for i, v in enumerate(values) for j, b in enumerate(blocks)
            if (g := _stack_gap(v, b)) is not None}
    left = []
    for i, label in enumerate(values):
        mine = sorted((g, j) for (a, j), g in gaps.items() if a == i)
        if not mine:
            left.append(label)
            continue
        gap, j = mine[0]
        theirs = min(g for (a, b), g in gaps.items() if b == j)
        clear = len(mine) == 1 or mine[1][0] > _CLEAR * max(gap, 1) + 1
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


# -- geometry ---------------------------------------------------------------------------------------------------


def _distance(label: Label, curves: list[Curve]) -> float:
    best = math.inf
    for curve in curves:
        if curve.marker:
            best = min(best, max(_box_distance(label.box, curve.points[0]) - curve.radius, 0))
            continue
        pts = curve.points
        if len(pts) > 60:  # pixels of a raster line
            best = min(best, min(_box_distance(label.box, p) for p in pts))
            continue
        for a, b in zip(pts, pts[1:]):
            best = min(best, _box_segment_distance(label.box, a, b))
    return best


def _vertical_distance(label: Label, curves: list[Curve]) -> float:
    """How far a line passes above or below a label, where it runs under the label; else plain distance."""
    under = [p for c in curves if not c.marker for p in _dense(c.points) if label.box[0] <= p[0] <= label.box[2]]
    if not under:
        return _distance(label, curves)
    return min(max(label.box[1] - y, y - label.box[3], 0.0) for _, y in under)


def _dense(points: list[Point]) -> list[Point]:
    if len(points) > 60:
        return points
    out = []
    for a, b in zip(points, points[1:]):
        n = max(1, int(math.dist(a, b) / 2))
        out += [(a[0] + (b[0] - a[0]) * t / n, a[1] + (b[1] - a[1]) * t / n) for t in range(n)]
    return out + points[-1:]


def _box_distance(box: BBox, p: Point) -> float:
    dx = max(box[0] - p[0], 0, p[0] - box[2])
    dy = max(box[1] - p[1], 0, p[1] - box[3])
    return math.hypot(dx, dy)


def _box_segment_distance(box: BBox, a: Point, b: Point) -> float:
    n = max(1, int(math.dist(a, b) / 1.5))
    return min(_box_distance(box, (a[0] + (b[0] - a[0]) * t / n, a[1] + (b[1] - a[1]) * t / n)) for t in range(n + 1))


def _box(points: list[Point]) -> BBox:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def _inside(box: BBox, area: BBox, pad: float = 0.5) -> bool:
    return area[0] - pad <= box[0] and area[1] - pad <= box[1] and box[2] <= area[2] + pad and box[3] <= area[3] + pad


def _contains(box: BBox, p: Point, tolerance: float = 0.0) -> bool:
    return box[0] - tolerance <= p[0] <= box[2] + tolerance and box[1] - tolerance <= p[1] <= box[3] + tolerance


def _share(a: BBox, b: BBox, lo: int, hi: int) -> float:
    """How much two boxes overlap across (lo, hi), as a share of the thinner one."""
    overlap = min(a[hi], b[hi]) - max(a[lo], b[lo])
    thinner = min(a[hi] - a[lo], b[hi] - b[lo])
    return overlap / thinner if thinner > 0 else 0.0


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def _length(box: BBox, horizontal: bool) -> float:
    return (box[2] - box[0]) if horizontal else (box[3] - box[1])


def _area(box: BBox) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def _union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
