"""What a page prints in colour: runs of words whose ink is a colour other than the body's, and the words on a
coloured ground (a filled box, a highlight). Read from the text layer and the page's drawings, so "the words in
red" or "the lines highlighted in yellow" are looked up, not guessed; links (blue by habit) are left out."""

from __future__ import annotations

import colorsys
from collections import Counter

import pymupdf

from rag.ingest.charts.geometry import union
from rag.records import Inked, PageColours

# hue (degrees) → name, for colours with some chroma; the first bound above the hue names it
_HUES = ((15, "red"), (45, "orange"), (70, "yellow"), (165, "green"), (255, "blue"), (290, "purple"),
         (340, "pink"), (361, "red"))
_MAX_GROUND = 0.5  # a filled area larger than this share of the page is the page's background


def colour_name(rgb: tuple[float, float, float]) -> str:
    """The name a reader gives a colour (channels 0–1): neutral ones by lightness, others by hue."""
    h, lightness, _ = colorsys.rgb_to_hls(*rgb)
    if max(rgb) - min(rgb) < 0.08:
        return "black" if lightness < 0.3 else "white" if lightness > 0.93 else "grey"
    hue = h * 360
    name = next(n for bound, n in _HUES if hue < bound)
    return "brown" if name == "orange" and max(rgb) < 0.65 else name


def page_colours(page: pymupdf.Page, number: int) -> PageColours:
    """The page's coloured words and words on coloured grounds, top to bottom."""
    words = page.get_text("words")
    found = _inks(page, number) + _grounds(page, number, words)
    return PageColours(page=number, runs=sorted(found, key=lambda r: (round(r.bbox[1]), r.bbox[0])))


def _inks(page: pymupdf.Page, number: int) -> list[Inked]:
    links = [pymupdf.Rect(link["from"]) for link in page.get_links()]
    runs: list[tuple[str, str, tuple]] = []  # (colour, text, bbox): a run of one colour, lines joined
    for block in page.get_text("dict")["blocks"]:
        first = True
        for line in block.get("lines", []):
            for span in line["spans"]:
                text = span["text"].strip()
                if not text or any(r.contains(pymupdf.Rect(span["bbox"]).tl + (1, 1)) for r in links):
                    continue
                colour = colour_name(pymupdf.sRGB_to_pdf(span["color"]))
                if runs and runs[-1][0] == colour and (not first or _below(runs[-1][2], span["bbox"])):
                    runs[-1] = (colour, f"{runs[-1][1]} {text}", union(runs[-1][2], span["bbox"]))
                else:
                    runs.append((colour, text, tuple(span["bbox"])))
                first = False
    body = Counter()
    for colour, text, _ in runs:
        body[colour] += len(text)
    main, chars = body.most_common(1)[0] if body else ("black", 0)
    main = main if chars > 0.6 * sum(body.values()) else "black"  # the body's ink, where one ink prints most
    return [Inked(page=number, colour=c, text=" ".join(t.split()), bbox=b) for c, t, b in runs
            if c not in ("black", main)]


def _grounds(page: pymupdf.Page, number: int, words: list) -> list[Inked]:
    area = abs(page.rect)
    filled = [(pymupdf.Rect(d["rect"]), d["fill"]) for d in page.get_drawings() if d.get("fill")]
    filled += [(a.rect, a.colors.get("stroke") or a.colors.get("fill")) for a in page.annots() or []
               if a.type[1] == "Highlight"]
    out = []
    for rect, fill in filled:
        if not fill or abs(rect) > _MAX_GROUND * area or (colour := colour_name(tuple(fill))) == "white":
            continue
        inside = [w[4] for w in words if rect.x0 - 1 <= (w[0] + w[2]) / 2 <= rect.x1 + 1
                  and rect.y0 - 1 <= (w[1] + w[3]) / 2 <= rect.y1 + 1]
        run = Inked(page=number, colour=colour, ground=True, text=" ".join(inside), bbox=tuple(rect))
        if inside and not any(r.text == run.text and r.colour == colour for r in out):  # an annotation is drawn too
            out.append(run)
    return out


def _below(run: tuple, box) -> bool:
    """A block's first span goes on the run above it: the next line, under it (a title set as one line a block)."""
    height = box[3] - box[1]
    return -0.5 * height <= box[1] - run[3] < 0.8 * height and box[0] < run[2] and box[2] > run[0]

