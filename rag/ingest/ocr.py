"""OCR (rapidocr, PP-OCRv4 ONNX models shipped in its wheel) for pages without a usable text layer
and for the text inside raster charts. Boxes come back in PDF points, in the same unrotated page
space as the text layer, so OCR text goes down the same path as extracted text."""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass

import numpy as np
import pymupdf

from rag.ingest.pdf import clean_text
from rag.records import BBox

MIN_REAL_CHARS = 20  # a page number or a running header is not a text layer
MAX_GARBAGE_SHARE = 0.3  # unmapped glyphs (U+FFFD, "(cid:N)") per readable character
MIN_IMAGE_COVER = 0.3  # share of the page under images before it is worth reading as pixels
_threads = 2  # one engine per process; a parsing worker uses 1 (see in_worker)
_MIN_SCORE = 0.5  # rapidocr's own threshold for keeping a line
_MAX_RATIO = 16  # width / height of a piece given to the recogniser
_INK = 60  # grey levels from the line's background that count as ink
_SPACE = 0.2  # a blank gap this share of the line height is a word space
_GRID = 64
_CID = re.compile(r"\(cid:\d+\)")
_LONG_RUN = 12  # shorter runs are mostly real words; wordninja would split "multimodal"
_LETTER_RUN = re.compile(rf"[^\W\d_]{{{_LONG_RUN},}}")
_NO_SPACE_AFTER = re.compile(r"(?<=[a-z][,;])(?=[A-Za-z])")

_lock = threading.Lock()
_engine = None


@dataclass
class OcrLine:
    box: BBox  # unrotated page space, as the text layer's boxes
    text: str
    score: float
    shown: BBox | None = None  # as displayed (rotation applied): where "above" and "height" make sense

    @property
    def layout(self) -> BBox:
        return self.shown or self.box

    @property
    def height(self) -> float:
        return self.layout[3] - self.layout[1]


def needs_ocr(page: pymupdf.Page) -> bool:
    """The text layer is missing or garbage, and images cover enough of the page to hold text."""
    return not text_layer_usable(page.get_text()) and image_cover(page) >= MIN_IMAGE_COVER


def text_layer_usable(text: str) -> bool:
    garbage = text.count("\ufffd") + len(_CID.findall(text))
    real = sum(ch.isalnum() for ch in _CID.sub("", text))
    return real >= MIN_REAL_CHARS and garbage <= MAX_GARBAGE_SHARE * real


def image_cover(page: pymupdf.Page) -> float:
    """Share of the page under images, overlaps counted once (on a coarse grid)."""
    rect = page.rect
    if rect.is_empty:
        return 0.0
    grid = np.zeros((_GRID, _GRID), dtype=bool)
    for info in page.get_image_info():
        box = pymupdf.Rect(info["bbox"]) * page.rotation_matrix & rect
        if box.is_empty:
            continue
        x0, x1 = (round((v - rect.x0) / rect.width * _GRID) for v in (box.x0, box.x1))
        y0, y1 = (round((v - rect.y0) / rect.height * _GRID) for v in (box.y0, box.y1))
        grid[y0:y1, x0:x1] = True
    return float(grid.mean())


def page_images(page: pymupdf.Page, min_share: float = 0.5) -> list[BBox]:
    """Images covering at least `min_share` of the page: on an OCR'd page, the scan itself, not a figure."""
    area = page.rect.get_area()
    boxes = [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()]
    return [tuple(b) for b in boxes if b.get_area() >= min_share * area]


def read_page(page: pymupdf.Page, dpi: int) -> list[OcrLine]:
    """Every text line of the rendered page."""
    return read_region(page, page.rect * page.derotation_matrix, dpi)


def read_region(page: pymupdf.Page, box: BBox | pymupdf.Rect, dpi: int) -> list[OcrLine]:
    """Text lines inside `box` (unrotated page space, as the text layer's boxes)."""
    clip = pymupdf.Rect(box) * page.rotation_matrix & page.rect
    if clip.is_empty:
        return []
    pix = page.get_pixmap(dpi=dpi, clip=clip, alpha=False, colorspace=pymupdf.csRGB)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)[:, :, ::-1]
    zoom = dpi / 72
    lines = []
    for quad, text, score in recognise(np.ascontiguousarray(image)):
        text = fix_spacing(" ".join(text.split()))
        if text:
            box = to_page_box(quad, zoom, clip.tl, page.derotation_matrix)
            lines.append(OcrLine(box, text, score, shown=to_page_box(quad, zoom, clip.tl, pymupdf.Identity)))
    return lines


def to_page_box(quad, zoom: float, origin: pymupdf.Point, derotation: pymupdf.Matrix) -> BBox:
    """Pixel corners of a rendered clip → a box in unrotated PDF points."""
    points = [pymupdf.Point(x / zoom + origin.x, y / zoom + origin.y) * derotation for x, y in quad]
    xs, ys = [p.x for p in points], [p.y for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def recognise(image: np.ndarray) -> list[tuple[list, str, float]]:
    """(corner points in pixels, text, confidence) per detected line; one call at a time.

    Long lines are recognised in word-aligned pieces: the recogniser's cost grows faster than a
    line's width, and it drops more spaces on long lines."""
    with _lock:
        engine = _get_engine()
        quads, _ = engine(image, use_cls=False, use_rec=False)
        if not quads:
            return []
        crops, _, _ = engine.text_cls(engine.get_crop_img_list(image, np.array(quads, dtype=np.float32)))
        pieces, owners, glue = [], [], []
        for n, crop in enumerate(crops):
            for piece, sep in _pieces(crop):
                pieces.append(piece)
                owners.append(n)
                glue.append(sep)
        read, _ = engine.text_rec(pieces)
    texts, scores = [""] * len(crops), [[] for _ in crops]
    for n, sep, (text, score) in zip(owners, glue, read):
        texts[n] += sep + text
        scores[n].append(float(score))
    out = []
    for quad, text, line_scores in zip(quads, texts, scores):
        score = float(np.mean(line_scores))
        if text.strip() and score >= _MIN_SCORE:
            out.append((quad, text, score))
    return out


def _pieces(crop: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """A line image cut at word gaps into pieces at most _MAX_RATIO times as wide as high, each with
    the separator that joins it to the previous one ("" where no gap was wide enough for a space)."""
    height, width = crop.shape[:2]
    limit = int(_MAX_RATIO * height)
    if width <= limit:
        return [(crop, "")]
    gray = crop.mean(axis=2)
    blank = np.abs(gray - np.median(gray)).max(axis=0) < _INK
    out, start, sep = [], 0, ""
    while width - start > limit:
        cut, spaced = _cut(blank, start + limit // 2, start + limit, height)
        out.append((crop[:, start:cut], sep))
        start, sep = cut, " " if spaced else ""
    out.append((crop[:, start:], sep))
    return out


def _cut(blank: np.ndarray, lo: int, hi: int, height: int) -> tuple[int, bool]:
    """The middle of the last gap wide enough for a space in [lo, hi), else of the widest gap, else hi."""
    runs, run_start = [], None
    for x in range(lo, hi + 1):
        if x < hi and blank[x]:
            run_start = x if run_start is None else run_start
        elif run_start is not None:
            runs.append((run_start, x))
            run_start = None
    spaces = [r for r in runs if r[1] - r[0] >= _SPACE * height]
    if spaces:
        return (spaces[-1][0] + spaces[-1][1]) // 2, True
    if runs:
        widest = max(runs, key=lambda r: r[1] - r[0])
        return (widest[0] + widest[1]) // 2, False
    return hi, False


def in_worker() -> None:
    """Parsing workers share the cores with each other and the embedder: more OCR threads only wait."""
    global _threads
    _threads = 1


def _get_engine():
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR

        _engine = RapidOCR(intra_op_num_threads=_threads, inter_op_num_threads=1)
        for name in ("RapidOCR", "OrtInferSession"):
            logging.getLogger(name).setLevel(logging.WARNING)
    return _engine


def fix_spacing(text: str) -> str:
    """The recogniser often drops spaces ("theirpersonalfinances,butnot"): put them back."""
    return _LETTER_RUN.sub(_split_run, _NO_SPACE_AFTER.sub(" ", text))


def _split_run(match: re.Match) -> str:
    import wordninja

    run = match.group(0)
    words = wordninja.split(run)
    if len(words) < 2 or "".join(words) != run or any(len(w) < 2 and w not in "aAI" for w in words):
        return run
    return " ".join(words)


def group_blocks(lines: list[OcrLine]) -> list[tuple[BBox, str]]:
    """Lines stacked closely and overlapping horizontally become one paragraph-like block."""
    blocks: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.layout[1], ln.layout[0])):
        home = next((b for b in reversed(blocks) if _continues(b[-1], line)), None)
        if home is None:
            blocks.append([line])
        else:
            home.append(line)
    out = []
    for block in sorted(blocks, key=lambda b: (b[0].layout[1], b[0].layout[0])):
        box = (min(ln.box[0] for ln in block), min(ln.box[1] for ln in block),
               max(ln.box[2] for ln in block), max(ln.box[3] for ln in block))
        out.append((box, clean_text("\n".join(ln.text for ln in block))))
    return out


def _continues(above: OcrLine, line: OcrLine) -> bool:
    upper, lower = above.layout, line.layout
    gap = lower[1] - upper[3]
    overlap = min(upper[2], lower[2]) - max(upper[0], lower[0])
    similar = 0.67 <= line.height / max(above.height, 1e-6) <= 1.5
    return -0.5 * above.height <= gap <= 0.8 * above.height and overlap > 0 and similar
