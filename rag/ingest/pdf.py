"""PDF bytes → validated document → text fragments, page by page."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import pymupdf

from rag.ids import fragment_id
from rag.records import BBox, Fragment

PDF_MAGIC = b"%PDF-"
pymupdf.TOOLS.mupdf_display_errors(False)  # broken files are reported by us, once, not on stderr
_FLAGS = pymupdf.TEXT_DEHYPHENATE | pymupdf.TEXT_MEDIABOX_CLIP
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")

# (stage, done, total): "parse" counts pages, "ocr" the pages that need OCR (called before each one).
Progress = Callable[[str, int, int], None]
# (what failed, the exception): a step of a page that failed, for the ingest report.
Warn = Callable[[str, BaseException], None]
_PAGE_NUMBER = re.compile(r"\d{1,5}")


class IngestError(Exception):
    """A file we refuse, with a message meant for the person who uploaded it."""


def failure(exc: BaseException, limit: int = 160) -> str:
    """An exception as one short line: its type and message."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message[:limit]}" if message else type(exc).__name__


def doc_id_for(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def open_pdf(data: bytes, max_mb: float, password: str | None = None) -> pymupdf.Document:
    """Open and validate; every refusal is an IngestError with a one-line reason."""
    if not data:
        raise IngestError("the file is empty")
    if len(data) > max_mb * 1024 * 1024:
        raise IngestError(f"the file is {len(data) / 2**20:.0f} MB, over the {max_mb:.0f} MB limit")
    if PDF_MAGIC not in data[:1024]:
        raise IngestError("not a PDF (no %PDF header)")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
        if doc.needs_pass and not (password and doc.authenticate(password)):
            raise IngestError("the password is wrong" if password else "the PDF is encrypted and needs a password")
        pages = doc.page_count
    except IngestError:
        raise
    except Exception as exc:  # MuPDF raises several types for broken files
        raise IngestError(f"corrupt or unreadable PDF ({exc})") from None
    if pages == 0:
        raise IngestError("the PDF has no pages")
    return doc


def unlocked_copy(data: bytes, password: str) -> bytes:
    """The PDF without its encryption, so pages can be shown later without asking again."""
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        doc.authenticate(password)
        return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_NONE)


def clean_text(text: str) -> str:
    text = _CONTROL.sub("", text.replace("\u00ad", ""))
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)
    return re.sub(r"\s+", " ", text).strip()


def split_long(text: str, limit: int) -> list[str]:
    """Split on sentence ends so each piece embeds well; a sentence over the limit is cut."""
    if len(text) <= limit:
        return [text]
    pieces, current = [], ""
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if current and len(current) + 1 + len(sentence) > limit:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return pieces


def page_blocks(page: pymupdf.Page) -> list[tuple[BBox, str]]:
    """All text blocks of a page, cleaned, in reading order; short ones too (captions use them)."""
    blocks = []
    for x0, y0, x1, y1, text, _no, kind in page.get_text("blocks", flags=_FLAGS, sort=True):
        text = clean_text(text)
        if kind == 0 and text:
            blocks.append(((x0, y0, x1, y1), text))
    return blocks


def printed_page_number(page: pymupdf.Page, band: float = 0.08, words: list | None = None) -> str:
    """The page number printed in the top or bottom margin ("" if none): users cite pages by it. `words`: the
    page's `get_text("words")` when the caller has them already."""
    height = page.rect.height
    found = [
        (min(y0, height - y1), text)
        for _x0, y0, _x1, y1, text, *_ in (page.get_text("words") if words is None else words)
        if _PAGE_NUMBER.fullmatch(text) and not 1900 <= int(text) <= 2100  # years in footers
        and (y1 < band * height or y0 > (1 - band) * height)
    ]
    return min(found)[1] if found else ""


def inside(box: BBox, areas: list[BBox], share: float = 0.6) -> bool:
    rect = pymupdf.Rect(box)
    if rect.is_empty:
        return False
    return any((rect & pymupdf.Rect(a)).get_area() >= share * rect.get_area() for a in areas)


def text_fragments(
    blocks: list[tuple[BBox, str]],
    page_no: int,
    doc_id: str,
    file: str,
    min_chars: int,
    max_chars: int,
    skip_areas: list[BBox],
    source: str | None = None,
) -> list[Fragment]:
    """Paragraph fragments, leaving out blocks that a table already covers; `source` marks OCR text."""
    out: list[Fragment] = []
    for bbox, text in blocks:
        if len(text) <= min_chars or inside(bbox, skip_areas):
            continue
        for piece in split_long(text, max_chars):
            out.append(
                Fragment(
                    id=fragment_id(doc_id, "text", page_no, len(out)),
                    doc_id=doc_id,
                    file=file,
                    page=page_no,
                    modality="text",
                    bbox=bbox,
                    text=piece,
                    extra={"source": source} if source else {},
                )
            )
    return out


_NUMBER = re.compile(r"\d")
_WORDLIKE = re.compile(r"[A-Za-z]{3,}")


def page_rows(page: pymupdf.Page) -> list[tuple[BBox, str]]:
    """The text layer as `page_blocks` reads it, but a block of table rows (most of its rows hold words and
    a number) comes as one text per row, "Total assets $ 15,803 $ 17,504": before the page's tables are
    read, a row is found by its own words and read on its own line."""
    out = []
    for block in page.get_text("dict", flags=_FLAGS, sort=True)["blocks"]:
        if block["type"] != 0:
            continue
        lines = [(line["bbox"], clean_text("".join(s["text"] for s in line["spans"]))) for line in block["lines"]]
        rows = _rows([(box, text) for box, text in lines if text])
        if len(rows) >= 3 and 2 * sum(bool(_NUMBER.search(t) and _WORDLIKE.search(t)) for _, t in rows) >= len(rows):
            out += rows
        elif text := clean_text("\n".join(text for _, text in lines)):
            out.append((tuple(block["bbox"]), text))
    return out


def _rows(lines: list[tuple[BBox, str]]) -> list[tuple[BBox, str]]:
    """Lines side by side (their middles within half a line's height) as one row, left to right."""
    rows: list[list[tuple[BBox, str]]] = []
    for box, text in sorted(lines, key=lambda line: (line[0][1] + line[0][3]) / 2):
        middle, height = (box[1] + box[3]) / 2, box[3] - box[1]
        last = rows[-1][-1][0] if rows else None
        if last and abs((last[1] + last[3]) / 2 - middle) <= max(height, last[3] - last[1]) / 2:
            rows[-1].append((box, text))
        else:
            rows.append([(box, text)])
    return [((min(b[0] for b, _ in row), min(b[1] for b, _ in row), max(b[2] for b, _ in row), max(b[3] for b, _ in row)),
             " ".join(t for _, t in sorted(row, key=lambda line: line[0][0]))) for row in rows]
