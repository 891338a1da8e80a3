"""Bar charts: a number belongs to the bar it sits in or at whose end it sits; the bar's colour names its
series (legend swatch, a label beside the last bar), the label level with its band its category."""

from __future__ import annotations

import statistics

from rag.ingest.charts.bar_groups import Group, bars_horizontal, group_bars, is_stacked
from rag.ingest.charts.bar_names import header_of, name_groups, series_name
from rag.ingest.charts.geometry import (
    NEAR,
    Pair,
    Reading,
    area,
    contains,
    length,
    number,
    overlap,
    share,
)
from rag.ingest.charts.marks import Bar, Label, Marks
from rag.records import BBox


def pair_bars(
    values: list[Label], words: list[Label], marks: Marks, names: dict, reading: Reading
) -> list[Label]:
    """Pairs the numbers that belong to a bar, a stack's total or a column under a header with their category
    and series, into `reading`; returns the numbers left."""
    bars = marks.bars
    if not bars:
        return values
    horizontal = bars_horizontal(bars)
    reading.across = "y" if horizontal else "x"
    groups = group_bars(bars, horizontal)
    names = name_groups(groups, bars, words, names, horizontal)
    reading.legend = list(dict.fromkeys([*reading.legend, *names.values()]))  # series before totals
    owner, totals, left = _owners(values, bars, groups, marks, horizontal)
    group_of = {id(b): g for g in groups for b in g.bars}
    colours = {b.colour for b in bars}
    stacked = any(len({b.colour for b in g.bars}) > 1 and is_stacked(g, horizontal) for g in groups)
    kind = "stacked bar" if stacked else "bar"
    _pair_owned(bars, owner, group_of, names, colours, kind, reading)
    before = len(reading.pairs)
    left += _pair_totals(totals, groups, group_of, names, colours, words, marks, horizontal, kind, reading)
    headed = [p.label for p in reading.pairs[before:] if p.series not in names.values()]
    return _pair_columns(left, groups, words, horizontal, kind, reading, headed)


def _owners(values: list[Label], bars: list[Bar], groups: list[Group], marks: Marks,
            horizontal: bool) -> tuple[dict[int, Label], list[tuple[Label, Bar]], list[Label]]:
    """Each bar's own number (by the bar's id), the numbers that total a stack at its end, and those left."""
    owner, ends, left = _placed(values, bars, horizontal)
    scale = _scale(values, bars, horizontal)
    totals = []
    for label, bar in ends:
        if _is_total(label, bar, groups, owner, scale, horizontal, marks):
            totals.append((label, bar))
        elif id(bar) in owner:
            left.append(label)
        else:
            owner[id(bar)] = label
    return owner, totals, left


def _placed(values: list[Label], bars: list[Bar],
            horizontal: bool) -> tuple[dict[int, Label], list[tuple[Label, Bar]], list[Label]]:
    """The numbers inside a bar, as the bar's own (one spread over two bars goes to the one without a number
    of its own); those at a bar's end, with the bar; and those by no bar."""
    owner: dict[int, Label] = {}
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
    return owner, ends, left


def _pair_owned(bars: list[Bar], owner: dict[int, Label], group_of: dict[int, Group], names: dict,
                colours: set, kind: str, reading: Reading) -> None:
    """Each bar's own number with the bar's category and series, or unpaired when one of them is unknown."""
    for bar in bars:
        label = owner.get(id(bar))
        if label is None:
            continue
        series = series_name(bar.colour, names, colours)
        category = group_of[id(bar)].category
        if series is None or not category:
            reading.unpaired.append(label)
        else:
            reading.pairs.append(Pair(label, category, series, kind))


def _bar_for(label: Label, bars: list[Bar], horizontal: bool) -> tuple[Bar | list[Bar] | None, bool]:
    """The bar a label sits in, else the bar whose end it sits at, in the same band, nothing between."""
    inside = [b for b in bars if contains(b.box, (label.cx, label.cy), 0.5)]
    if inside:
        bar = min(inside, key=lambda b: area(b.box))
        a, b = (0, 2) if horizontal else (1, 3)
        covers = sorted(
            (overlap((label.box[a], label.box[b]), (o.box[a], o.box[b])), id(o))
            for o in bars
            if share(o.box, bar.box, *((1, 3) if horizontal else (0, 2))) > 0.6
        )
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
    return gap if gap <= NEAR * label.height else None


def _blocked(label: Label, bar: Bar, bars: list[Bar], horizontal: bool) -> bool:
    a, b = (0, 2) if horizontal else (1, 3)
    lo, hi = (1, 3) if horizontal else (0, 2)
    c = label.cy if horizontal else label.cx
    start, end = sorted(((label.box[a] + label.box[b]) / 2, (bar.box[a] + bar.box[b]) / 2))
    return any(
        other is not bar
        and other.box[lo] <= c <= other.box[hi]
        and start < (other.box[a] + other.box[b]) / 2 < end
        for other in bars
    )


def _scale(values: list[Label], bars: list[Bar], horizontal: bool) -> float | None:
    """Value per point of bar length, when labels inside bars agree on one."""
    ratios = []
    for label in values:
        bar, inside = _bar_for(label, bars, horizontal)
        if isinstance(bar, Bar) and inside and number(label.text) > 0:
            ratios.append(number(label.text) / length(bar.box, horizontal))
    if len(ratios) < 3:
        return None
    mid = statistics.median(ratios)
    agree = [r for r in ratios if abs(r - mid) <= 0.15 * mid]
    return mid if len(agree) >= 0.7 * len(ratios) else None


def _is_total(
    label: Label,
    bar: Bar,
    groups: list[Group],
    owner: dict,
    scale: float | None,
    horizontal: bool,
    marks: Marks,
) -> bool:
    """A number at a stack's end is the stack's (or its side's) total, not the end bar's own label,
    when its value fits the side's length better than the bar's — or, with no scale, when the end
    bar already has a label inside."""
    side = _side(label, bar, groups, horizontal, marks)
    if len(side) < 2:
        return False
    if scale is None:
        return id(bar) in owner
    value = number(label.text)
    own = length(bar.box, horizontal) * scale
    total = sum(length(b.box, horizontal) for b in side) * scale
    return abs(value - total) < abs(value - own)


def _side(label: Label, bar: Bar, groups: list[Group], horizontal: bool, marks: Marks) -> list[Bar]:
    """The bars of the label's stack on the label's side of a diverging chart's centre line."""
    group = next(g for g in groups if any(b is bar for b in g.bars))
    lo, hi = (1, 3) if horizontal else (0, 2)
    stack = [b for b in group.bars if share(b.box, bar.box, lo, hi) > 0.6]
    if not horizontal:
        return stack
    box = group.box
    centres = [
        r[0]
        for r in marks.rules
        if box[0] - 1 <= r[0] <= box[2] + 1 and r[1] <= box[1] + 1 and r[3] >= box[3] - 1
    ]
    if not centres:
        return stack
    axis = centres[0]
    on_left = label.cx < axis
    return [b for b in stack if ((b.box[0] + b.box[2]) / 2 < axis) == on_left]


def _pair_totals(
    totals, groups, group_of, names, colours, words, marks, horizontal, kind, reading
) -> list[Label]:
    if not totals:
        return []
    ends = {}
    for label, bar in totals:  # a header sits over (or beside) the first total of its side
        ends.setdefault(_end_side(label, bar, horizontal), []).append(label)
    headers = {
        side: header_of(
            [min(labels, key=lambda lb: lb.box[1] if horizontal else lb.box[0])], words, horizontal
        )
        for side, labels in ends.items()
    }
    left = []
    for label, bar in totals:
        category = group_of[id(bar)].category
        header = headers[_end_side(label, bar, horizontal)]
        if header:
            series = header
        else:
            side = sorted(_side(label, bar, groups, horizontal, marks), key=lambda b: _order(b, names))
            parts = [series_name(b.colour, names, colours) for b in side]
            series = " + ".join(parts) if all(parts) else None
        if series and category:
            reading.pairs.append(Pair(label, category, series, kind))
        else:
            left.append(label)
    return left


def _end_side(label: Label, bar: Bar, horizontal: bool) -> bool:
    return (
        label.cx > (bar.box[0] + bar.box[2]) / 2 if horizontal else label.cy > (bar.box[1] + bar.box[3]) / 2
    )


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
        home = next((ln for ln in lines if any(share(m.box, label.box, a, b) >= 0.5 for m in ln)), None)
        if home is None:
            lines.append([label])
        else:
            home.append(label)
    left = []
    for line in lines:
        header = header_of(line, words, horizontal) if len(line) >= 2 else None
        for label in [lb for lb in line if not any(lb is h for h in headed)]:
            group = next(
                (
                    g
                    for g in groups
                    if (
                        g.box[1] - 2 <= label.cy <= g.box[3] + 2
                        if horizontal
                        else g.box[0] - 2 <= label.cx <= g.box[2] + 2
                    )
                ),
                None,
            )
            if header and group and group.category:
                reading.pairs.append(Pair(label, group.category, header, kind))
            else:
                left.append(label)
    return left

