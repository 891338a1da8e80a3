"""What a bar chart's bars are called: each group's category (the label beside or under its band) and
each bar colour's series (a legend swatch, a label beside the last bar), and the header over a line of
numbers."""

from __future__ import annotations

import statistics

from rag.ingest.charts.bar_groups import Group, is_stacked
from rag.ingest.charts.geometry import colour_distance, inside, overlap, text_blocks
from rag.ingest.charts.marks import Bar, Label


def name_groups(groups: list[Group], bars: list[Bar], words: list[Label], legend: dict,
                horizontal: bool) -> dict:
    """Names each group's category; gives bar colour → series name, from the legend and the chart's labels."""
    _name_categories(groups, words, horizontal)
    named = {**legend, **_direct_names(groups, words, legend, horizontal)}
    return _bar_names(bars, named, _colour_order(groups, horizontal))


def header_of(labels: list[Label], words: list[Label], horizontal: bool) -> str | None:
    return _header_above(labels, words) if horizontal else _header_beside(labels, words)


def _header_beside(labels: list[Label], words: list[Label]) -> str | None:
    """The word at the end of a row of numbers ("Net" right of the totals over a column chart)."""
    cy = statistics.mean(lb.cy for lb in labels)
    x0, x1 = min(lb.box[0] for lb in labels), max(lb.box[2] for lb in labels)
    level = [w for w in words if abs(w.cy - cy) <= 0.6 * w.height and (w.box[0] >= x1 or w.box[2] <= x0)]
    near = min(level, key=lambda w: min(abs(w.box[0] - x1), abs(x0 - w.box[2])), default=None)
    return near.text if near is not None else None


def _direct_names(groups: list[Group], words: list[Label], names: dict, horizontal: bool) -> dict:
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


def series_name(colour, names: dict, colours: set) -> str | None:
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


def _colour_order(groups: list[Group], horizontal: bool) -> list | None:
    """The order colours take along the bars (left to right; top to bottom for grouped horizontal
    bars), if every group agrees with the group that has them all."""

    def sequence(group: Group) -> list:
        stacked = is_stacked(group, horizontal)
        key = (lambda b: b.box[0]) if (horizontal and stacked) or not horizontal else (lambda b: b.box[1])
        return list(dict.fromkeys(b.colour for b in sorted(group.bars, key=key)))

    sequences = [sequence(g) for g in groups]
    full = max(sequences, key=len, default=[])
    for seq in sequences:
        if [c for c in full if c in seq] != seq:
            return None
    return full


def _name_categories(groups: list[Group], words: list[Label], horizontal: bool) -> None:
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


def _disambiguate(groups: list[Group], headings: list[Label], horizontal: bool) -> None:
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

