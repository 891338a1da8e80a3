"""A bar chart's bars in groups: which way the bars run, and the bars of one category (a stack, or
side-by-side bars of several series)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from rag.ingest.charts.geometry import share, union
from rag.ingest.charts.marks import Bar
from rag.records import BBox


@dataclass
class Group:
    """Bars of one category: a stack, or side-by-side bars of several series."""

    bars: list[Bar]
    category: str = ""

    @property
    def box(self) -> BBox:
        box = self.bars[0].box
        for bar in self.bars[1:]:
            box = union(box, bar.box)
        return box


def bars_horizontal(bars: list[Bar]) -> bool:
    """Bars of one thickness whose lengths vary: thickness is the height for horizontal bars."""
    heights = [b.box[3] - b.box[1] for b in bars]
    widths = [b.box[2] - b.box[0] for b in bars]
    same_h = sum(abs(h - statistics.median(heights)) <= 0.1 * statistics.median(heights) for h in heights)
    same_w = sum(abs(w - statistics.median(widths)) <= 0.1 * statistics.median(widths) for w in widths)
    return same_h >= same_w


def group_bars(bars: list[Bar], horizontal: bool) -> list[Group]:
    """Bars sharing a band (a stack), then bands set against each other (bars of one category)."""
    lo, hi = (1, 3) if horizontal else (0, 2)
    bands: list[list[Bar]] = []
    for bar in sorted(bars, key=lambda b: b.box[lo]):
        band = next((g for g in bands if share(g[0].box, bar.box, lo, hi) > 0.6), None)
        if band is None:
            bands.append([bar])
        else:
            band.append(bar)
    groups: list[Group] = []
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
            groups.append(Group(list(band)))
    return groups


def _side_by_side(group: Group, band: list[Bar], horizontal: bool) -> bool:
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


def is_stacked(group: Group, horizontal: bool) -> bool:
    lo, hi = (1, 3) if horizontal else (0, 2)
    return any(
        share(a.box, b.box, lo, hi) > 0.6 for i, a in enumerate(group.bars) for b in group.bars[i + 1 :]
    )

