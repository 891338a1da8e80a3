"""Ingest: PDF bytes → ParsedDocument (text paragraphs, table rows, figure captions)."""

from __future__ import annotations

import pymupdf

from rag.ingest.figures import find_page_figures
from rag.ingest.pdf import (
    IngestError,
    Progress,
    doc_id_for,
    open_pdf,
    inside,
    page_blocks,
    printed_page_number,
    text_fragments,
)
from rag.ingest.tables import find_page_tables, row_text
from rag.records import BBox, Fragment, ParsedDocument, Table
from rag.settings import IngestSettings
from rag.timing import timed

__all__ = ["IngestError", "parse_pdf", "doc_id_for"]


def parse_pdf(
    data: bytes,
    file: str,
    settings: IngestSettings,
    progress: Progress | None = None,
    password: str | None = None,
) -> ParsedDocument:
    doc = open_pdf(data, settings.max_file_mb, password)
    parsed = ParsedDocument(doc_id=doc_id_for(data), file=file, pages=doc.page_count, fragments=[])
    with doc:
        for index, page in enumerate(doc):
            try:
                fragments, tables = _parse_page(page, index + 1, parsed, settings)
            except Exception:  # one damaged page should not cost the whole document
                parsed.bad_pages.append(index + 1)
                continue
            parsed.fragments += fragments
            parsed.tables += tables
            if progress:
                progress(index + 1, parsed.pages)
    if not parsed.fragments:
        raise IngestError("no extractable text: the PDF looks scanned, empty or damaged (no text layer)")
    return parsed


def page_text(blocks: list[tuple[BBox, str]], tables: list[Table]) -> str:
    """The page in reading order, its tables as rows of "Header: value" pairs: the text layer
    flattens a table into runs of numbers, and a small model misreads columns it must align."""
    areas = [t.bbox for t in tables]
    parts = [(box, text) for box, text in blocks if not inside(box, areas)]
    parts += [(t.bbox, "\n".join(row_text(t.header, row) for row in t.rows)) for t in tables]
    return "\n".join(text for _, text in sorted(parts, key=lambda part: (round(part[0][1]), part[0][0])))


def _parse_page(
    page: pymupdf.Page, page_no: int, parsed: ParsedDocument, settings: IngestSettings
) -> tuple[list[Fragment], list[Table]]:
    doc_id, file, seconds = parsed.doc_id, parsed.file, parsed.timings
    with timed(seconds, "parse"):
        blocks = page_blocks(page)
    if not blocks:
        parsed.empty_pages.append(page_no)
    parsed.page_labels[page_no] = printed_page_number(page)
    with timed(seconds, "tables"):
        table_frags, tables = find_page_tables(page, doc_id, file)
    areas = [t.bbox for t in tables]
    parsed.page_texts[page_no] = page_text(blocks, tables)
    with timed(seconds, "figures"):
        figure_frags = find_page_figures(
            page, blocks, doc_id, file,
            exclude=areas, window=settings.caption_window, max_chars=settings.caption_max_chars,
        )
    with timed(seconds, "parse"):
        text_frags = text_fragments(
            blocks, page_no, doc_id, file, settings.min_block_chars, settings.max_block_chars, areas
        )
    return text_frags + table_frags + figure_frags, tables
