"""Bar charts: a number belongs to the bar it sits in or at whose end it sits; the bar's colour names its
series (legend swatch, a label beside the last bar), the label level with its band its category."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from rag.ingest.charts.geometry import (
    NEAR,
    Pair,
    Reading,
    area,
    colour_distance,
    contains,
    inside,
    length,
    number,
    overlap,
    share,
    text_blocks,
    union,
)
from rag.ingest.charts.marks import Bar, Label, Marks
from rag.records import BBox


@dataclass
class _Group:
    """Bars of one category: a stack, or side-by-side bars of several series."""

    bars: list[Bar]
    category: str = ""

    @property
    def box(self) -> BBox:
        box = self.bars[0].box
        for bar in self.bars[1:]:
            box = union(box, bar.box)
        return box


def pair_bars(
    values: list[Label], words: list[Label], marks: Marks, names: dict, reading: Reading
) -> list[Label]:
    bars = marks.bars
    if not bars:
        return values
    horizontal = _horizontal(bars)
    reading.across = "y" if horizontal else "x"
    groups = _groups(bars, horizontal)
    _name_categories(groups, words, horizontal)
    names = _bar_names(
        bars, {**names, **_direct_names(groups, words, names, horizontal)}, _colour_order(groups, horizontal)
    )
    reading.legend = list(dict.fromkeys([*reading.legend, *names.values()]))  # series before totals
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
        band = next((g for g in bands if share(g[0].box, bar.box, lo, hi) > 0.6), None)
        if band is None:
            bands.append([bar])
        else:
            band.append(bar)
    groups: list[_Group] = []
    for band in bands:
        thickness = band[0].box[hi] - band[0].box[lo]
        last = groups[-1] if groups else None
        if (
            last
            and band[0].box[lo] - last.box[hi] <= 0.2 * thickness
            and _side_by_side(last, band, horizontal)
        ):
            last.bars += band
        else:
            groups.append(_Group(list(band)))
    return groups


def _side_by_side(group: _Group, band: list[Bar], horizontal: bool) -> bool:
    """Grouped bars: single bars of colours not yet in the group, from the group's baseline."""
    a = 0 if horizontal else 3
    start = group.bars[0].box[a]
    colours = {bar.colour for bar in group.bars}
    return (
        len(band) == 1
        and len(colours) == len(group.bars)
        and band[0].colour not in colours
        and abs(band[0].box[a] - start) <= 1.5
    )


def _stacked(group: _Group, horizontal: bool) -> bool:
    lo, hi = (1, 3) if horizontal else (0, 2)
    return any(
        share(a.box, b.box, lo, hi) > 0.6 for i, a in enumerate(group.bars) for b in group.bars[i + 1 :]
    )


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
    groups: list[_Group],
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


def _side(label: Label, bar: Bar, groups: list[_Group], horizontal: bool, marks: Marks) -> list[Bar]:
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
            parts = [_series_name(b.colour, names, colours) for b in side]
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


def header_of(labels: list[Label], words: list[Label], horizontal: bool) -> str | None:
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
        if ok and len(hit) == 1 and all(colour_distance(hit[0].colour, k) > 4 for k in [*names, *found]):
            found[hit[0].colour] = block.text
    return found


def _header_above(labels: list[Label], words: list[Label]) -> str | None:
    top = min(labels, key=lambda lb: lb.box[1])
    x0, x1 = min(lb.box[0] for lb in labels), max(lb.box[2] for lb in labels)
    above = [
        w
        for w in words
        if w.box[3] <= top.box[1] + 1
        and top.box[1] - w.box[3] <= 3 * top.height
        and w.box[0] < x1 + 2
        and w.box[2] > x0 - 2
    ]
    if not above:
        return None
    lowest = max(above, key=lambda w: w.box[3])
    block = [
        w
        for w in above
        if abs(w.box[3] - lowest.box[3]) <= 0.6 * w.size
        or (
            w.box[3] <= lowest.box[1] + 1
            and lowest.box[1] - w.box[3] <= 0.5 * w.size
            and abs(w.cx - lowest.cx) <= 0.6 * (w.box[2] - w.box[0])
        )
    ]
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
        dists = sorted((colour_distance(colour, k), n) for n, k in enumerate(keys))
        if dists and dists[0][0] <= 45 and (len(dists) == 1 or dists[1][0] >= dists[0][0] + 15):
            nearest[colour] = dists[0][1]
    by_order = {}
    if order and len(order) == len(colours) and len(keys) >= len(order):
        by_order = {c: n for n, c in enumerate(order) if colour_distance(c, keys[n]) <= 60}
    exact = all(colour_distance(c, keys[n]) <= 4 for c, n in nearest.items())
    for chosen in (nearest, by_order):
        complete = len(chosen) == len(colours) and len(set(chosen.values())) == len(chosen)
        if complete and (
            exact
            or not order
            or len(order) != len(colours)
            or [chosen[c] for c in order] == sorted(chosen.values())
        ):
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
            best = max(blocks, key=lambda b: (overlap(band, (b.box[1], b.box[3])) > 0, b.box[2]))
        else:
            best = min(blocks, key=lambda b: (overlap(band, (b.box[0], b.box[2])) <= 0, b.box[1]))
        group.category = best.text
        used |= {id(w) for w in members if inside(w.box, best.box)}
    if horizontal:  # headings start left of the bars and may run on over them ("Among Rep/Lean Rep…")
        spare = [
            w
            for w in words
            if w.box[0] < edge - 2
            and id(w) not in used
            and not any(overlap((w.box[1], w.box[3]), (g.box[1], g.box[3])) > 0 for g in groups)
        ]
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
