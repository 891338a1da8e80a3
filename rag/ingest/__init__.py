"""Ingest: PDF bytes → ParsedDocument (text paragraphs, table rows, figure captions)."""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pymupdf

from rag.ingest import ocr
from rag.ingest.charts import add_page_charts, drop_charted_tables, keep_charted, scan_figures
from rag.ingest.figures import Line, boxed_lines, find_page_figures
from rag.ingest.pdf import (
    IngestError,
    Progress,
    Warn,
    doc_id_for,
    failure,
    inside,
    open_pdf,
    page_blocks,
    page_rows,
    printed_page_number,
    text_fragments,
)
from rag.ingest.statements import document_frames, page_frames
from rag.ingest.tables import find_page_tables, grid_tables, layout_model_threads, row_text
from rag.records import BBox, Fragment, ParsedDocument, StatementFrame, Table
from rag.settings import IngestSettings
from rag.timing import timed

__all__ = ["IngestError", "doc_id_for", "parse_chunks", "parse_pdf", "pdf_charts", "read_text_layer", "stop_workers"]

_CHART_DPI_SCALE = 1.5  # chart labels are small print
_CHART_MAX_PIXELS = 1600  # longest side of a chart rendered for OCR


def parse_pdf(
    data: bytes,
    file: str,
    settings: IngestSettings,
    progress: Progress | None = None,
    password: str | None = None,
    only: list[int] | None = None,
) -> ParsedDocument:
    """The whole reading of a PDF, or of some of its pages (1-based `only`, with the ids and readings the
    whole document would give them)."""
    checks: list[str] = []
    with open_pdf(data, settings.max_file_mb, password) as doc:
        pages = doc.page_count
        to_read = _pages_to_ocr(doc, checks) if settings.ocr == "auto" else []
    wanted = [p for p in only if 1 <= p <= pages] if only else list(range(1, pages + 1))
    parsed = ParsedDocument(doc_id=doc_id_for(data), file=file, pages=pages, fragments=[], warnings=checks)
    for _, part in parse_chunks(data, file, settings, wanted, to_read, password, progress):
        parsed.add(part)
    if only:
        return parsed
    return _finish(parsed, to_read, progress)


def read_text_layer(data: bytes, file: str, settings: IngestSettings, password: str | None = None) -> ParsedDocument:
    """The searchable stage: each page's text layer as paragraphs (a table's rows one by one: its table is
    not read yet), its page text and printed number, and the statements' figures (`frames`), here and now
    (about a second for a hundred pages).
    Pages without a usable layer are left for OCR (`unread_pages`); a page that fails here is read, and
    reported, by the complete parse."""
    checks: list[str] = []
    with open_pdf(data, settings.max_file_mb, password) as doc:
        to_read = _pages_to_ocr(doc, checks) if settings.ocr == "auto" else []
        parsed = ParsedDocument(doc_id=doc_id_for(data), file=file, pages=doc.page_count, fragments=[],
                                warnings=checks, unread_pages=to_read)
        frames = []
        for page in doc:
            n = page.number + 1
            try:
                blocks = [] if n in to_read else page_rows(page)
                words = page.get_text("words")
                parsed.page_labels[n] = printed_page_number(page, words=words)
            except Exception:  # noqa: BLE001 - the complete parse reads it again and reports why it fails
                continue
            parsed.search_texts[n] = "\n".join(text for _, text in blocks)
            parsed.page_texts[n] = page_text(blocks, [])
            parsed.fragments += text_fragments(blocks, n, parsed.doc_id, file, settings.min_block_chars,
                                               settings.max_block_chars, [])
            if n not in to_read:
                frames.append(_statements(words, n, parsed))
        parsed.frames = document_frames(frames, parsed.search_texts, parsed.doc_id, file)
    if not parsed.fragments and not to_read:
        raise IngestError("no extractable text: the PDF looks scanned, empty or damaged (no text layer)")
    return parsed


def _statements(words: list, page: int, parsed: ParsedDocument) -> list[StatementFrame]:
    """A page's statement frames; a page whose figures cannot be read is reported, not fatal."""
    try:
        return page_frames(words, page, parsed.doc_id, parsed.file)
    except Exception as exc:  # noqa: BLE001 - its text is searchable all the same
        parsed.warnings.append(f"page {page}: statement figures not read ({failure(exc)})")
        return []


def pdf_charts(data: bytes, file: str, settings: IngestSettings, pages: list[int] | None = None,
               password: str | None = None) -> list[Table]:
    """The chart tables ingestion makes of a PDF, or of some of its pages (same ids, same reading)."""
    parsed = parse_pdf(data, file, settings, password=password, only=pages)
    return [t for t in parsed.tables if t.chart is not None]


def _finish(parsed: ParsedDocument, to_read: list[int], progress: Progress | None) -> ParsedDocument:
    if progress and to_read:
        progress("ocr", len(to_read), len(to_read))
    if not parsed.fragments:
        if parsed.ocr_pages:
            raise IngestError("no extractable text: the PDF has no text layer and OCR found no text either")
        raise IngestError("no extractable text: the PDF looks scanned, empty or damaged (no text layer)")
    return parsed


def parse_chunks(data: bytes, file: str, settings: IngestSettings, pages: list[int], to_read: list[int],
                 password: str | None = None, progress: Progress | None = None,
                 give_way: Callable[[], None] | None = None,
                 doc_id: str | None = None) -> Iterator[tuple[list[int], ParsedDocument]]:
    """Everything on some pages (tables, charts, figures, OCR of `to_read`), a few pages at a time, each part
    with its pages, in page order. Parsing is single-threaded and there are two cores: a document of 8
    pages or more is parsed in worker processes, which start at once; one chunk per worker goes out at a
    time, and `give_way()`, called before each, can hold the next one back while a question runs. Ids are
    made of `doc_id` (by default the hash of `data`; an unlocked copy keeps its encrypted file's)."""
    job = _Job(data, password, file, settings, to_read, doc_id or doc_id_for(data))
    if settings.workers > 1 and len(pages) >= 2 * _CHUNK_PAGES:
        return _in_order(_in_workers(job, pages, settings.workers, progress, give_way), job, pages, progress)
    return ((pages, _parse_pages(job, pages, progress)) for _ in range(1))


def _in_order(parts: Iterator, job: _Job, pages: list[int], progress: Progress | None) -> Iterator:
    try:
        first = next(parts)
    except BrokenProcessPool:  # e.g. a script without a __main__ guard cannot spawn workers: parse here
        _POOLS.clear()
        yield pages, _parse_pages(job, pages, progress)
        return
    yield first
    yield from parts


def _in_workers(job: _Job, pages: list[int], workers: int, progress: Progress | None,
                give_way: Callable[[], None] | None) -> Iterator[tuple[list[int], ParsedDocument]]:
    chunks = [pages[i:i + _CHUNK_PAGES] for i in range(0, len(pages), _CHUNK_PAGES)]
    if workers not in _POOLS:
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_in_worker)
    pool, slots, finished = _POOLS[workers], threading.Semaphore(workers), queue.Queue()

    def feed() -> None:  # a thread: the caller may be embedding meanwhile, and the workers must not wait for it
        try:
            for n, chunk in enumerate(chunks):
                slots.acquire()
                if give_way:
                    give_way()
                future = pool.submit(_parse_pages, job, chunk)
                future.add_done_callback(lambda f, n=n: (slots.release(), finished.put((n, f))))
        except BaseException as exc:  # a broken pool: the caller hears it
            finished.put((-1, exc))

    threading.Thread(target=feed, name="parse-feed", daemon=True).start()
    return _collect(chunks, finished, job.to_read, progress)


def _collect(chunks: list[list[int]], finished: queue.Queue, to_read: list[int],
             progress: Progress | None) -> Iterator[tuple[list[int], ParsedDocument]]:
    ready, done, read = {}, 0, 0
    for n, chunk in enumerate(chunks):
        while n not in ready:
            got, future = finished.get()
            if got < 0:
                raise future
            ready[got] = future
        part = ready.pop(n).result()
        done, read = done + len(chunk), read + len(part.ocr_pages)
        if progress:
            progress("parse", done, sum(map(len, chunks)))
            if part.ocr_pages:
                progress("ocr", read, len(to_read))
        yield chunk, part


class _Job(NamedTuple):
    """What every chunk of one document's parse shares (sent to the worker processes)."""

    data: bytes
    password: str | None
    file: str
    settings: IngestSettings
    to_read: list[int]
    doc_id: str


def _parse_pages(job: _Job, pages: list[int], progress: Progress | None = None) -> ParsedDocument:
    """Some pages of a PDF; runs in a worker process as well as in this one."""
    data, password, file, settings, to_read, doc_id = job
    part = ParsedDocument(doc_id=doc_id, file=file, pages=len(pages), fragments=[])
    with open_pdf(data, settings.max_file_mb, password) as doc:
        for page_no in pages:
            if progress and page_no in to_read:
                progress("ocr", to_read.index(page_no), len(to_read))
            try:
                fragments, tables = _parse_page(doc[page_no - 1], page_no, part, settings, page_no in to_read)
            except Exception as exc:  # one damaged page, or an OCR failure, should not cost the document
                part.bad_pages.append(page_no)
                part.warnings.append(f"page {page_no}: {_page_failure(exc)}")
                continue
            part.fragments += fragments
            part.tables += tables
            if progress:
                progress("parse", page_no, doc.page_count)
    return part


_CHUNK_PAGES = 4  # small enough for a progress bar that moves, large enough to keep workers busy
# spawn, not fork: the parent runs threads (onnxruntime, llama.cpp, Streamlit) that fork would copy mid-state
_POOLS: dict[int, ProcessPoolExecutor] = {}


def _in_worker() -> None:
    """Each worker's models get one core's share: two workers and the embedder share two cores. Questions
    come first: the language model decodes at nice 5. A worker whose parent dies (a killed server) ends:
    it would otherwise wait for work forever, holding its memory."""
    os.nice(10)
    ocr.in_worker()
    layout_model_threads(1)
    threading.Thread(target=_end_with, args=(os.getppid(),), name="parent-watch", daemon=True).start()


def _end_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def stop_workers() -> None:
    """End the parsing processes (the next document starts them again): only ended children count
    in getrusage(RUSAGE_CHILDREN)."""
    while _POOLS:
        _POOLS.popitem()[1].shutdown()


def page_text(blocks: list[tuple[BBox, str]], tables: list[Table], overlays: Sequence[Table] = ()) -> str:
    """The page in reading order, its tables as rows of "Header: value" pairs: the text layer
    flattens a table into runs of numbers, and a small model misreads columns it must align.
    `overlays` add their rows without hiding the text under them: a chart read off a scanned page's
    picture covers the whole page, words and all."""
    areas = [t.bbox for t in tables]
    parts = [(box, text) for box, text in blocks if not inside(box, areas)]
    parts += [(t.bbox, "\n".join(row_text(t.header, row) for row in t.rows)) for t in [*tables, *overlays]]
    return "\n".join(text for _, text in sorted(parts, key=lambda part: (round(part[0][1]), part[0][0])))


def _pages_to_ocr(doc: pymupdf.Document, warnings: list[str] | None = None) -> list[int]:
    warnings = [] if warnings is None else warnings
    return [page.number + 1 for page in doc if _needs_ocr(page, warnings)]


def _needs_ocr(page: pymupdf.Page, warnings: list[str]) -> bool:
    try:
        return ocr.needs_ocr(page)
    except Exception as exc:  # the page is still read from its text layer
        warnings.append(f"page {page.number + 1}: the check for OCR failed, read without OCR "
                        f"({failure(exc)})")
        return False


class _OcrFailed(Exception):
    """OCR of a page without a usable text layer failed: there is nothing else to read on it."""


def _page_failure(exc: Exception) -> str:
    if isinstance(exc, _OcrFailed) and exc.__cause__ is not None:
        return f"OCR failed, page skipped ({failure(exc.__cause__)})"
    return f"unreadable, page skipped ({failure(exc)})"


def _warner(part: ParsedDocument, page_no: int) -> Warn:
    def warn(what: str, exc: BaseException) -> None:
        part.warnings.append(f"page {page_no}: {what} failed ({failure(exc)})")

    return warn


def _step(warn: Warn, what: str, default, fn, *args, **kwargs):
    """One step of a page: when it fails the page loses only that step, and the report says why."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        warn(what, exc)
        return default


class _PageWords(NamedTuple):
    """A page's words: its blocks and, when OCR read it, the lines OCR found (also as boxes) and its scans."""

    blocks: list[tuple[BBox, str]]
    found: list | None
    lines: list[Line] | None
    scans: list[BBox]


def _parse_page(
    page: pymupdf.Page, page_no: int, parsed: ParsedDocument, settings: IngestSettings, read_with_ocr: bool
) -> tuple[list[Fragment], list[Table]]:
    """One page read step by step: its fragments (text, table rows, chart values, figures) and its tables."""
    doc_id, file, seconds = parsed.doc_id, parsed.file, parsed.timings
    warn = _warner(parsed, page_no)
    words = _page_words(page, page_no, parsed, settings, read_with_ocr)
    table_frags, tables, rows_numbered = _ruled_tables(page, parsed, settings, warn)
    areas = [t.bbox for t in tables]
    # Searched as the text layer has it: header words repeated on every row would skew BM25.
    parsed.search_texts[page_no] = "\n".join(text for _, text in words.blocks)
    figure_frags, figure_areas, chart_frags, charts = _figures_and_charts(
        page, words, parsed, settings, areas, rows_numbered, warn)
    with timed(seconds, "tables"):
        grid_frags, grids = _step(warn, "tables without rules", ([], []), grid_tables,
                                  _pieces(page, words.found), areas + figure_areas,
                                  page_no, doc_id, file, len(tables), rows_numbered + len(chart_frags))
    table_frags, tables = table_frags + grid_frags, tables + grids
    shown = [c for c in charts if not c.chart.ambiguous]
    parsed.page_texts[page_no] = (page_text(words.blocks, tables, shown) if read_with_ocr
                                  else page_text(words.blocks, tables + shown))
    with timed(seconds, "parse"):
        text_frags = text_fragments(
            words.blocks, page_no, doc_id, file, settings.min_block_chars, settings.max_block_chars, areas,
            source="ocr" if read_with_ocr else None,
        )
    return text_frags + table_frags + chart_frags + figure_frags, tables + charts


def _page_words(page: pymupdf.Page, page_no: int, parsed: ParsedDocument, settings: IngestSettings,
                read_with_ocr: bool) -> _PageWords:
    """The page's words, from OCR or its text layer; an empty page and the page's printed number noted."""
    if read_with_ocr:
        with timed(parsed.timings, "ocr"):
            found = _read_with_ocr(page, settings.ocr_dpi)
        parsed.ocr_pages.append(page_no)
        words = _PageWords(ocr.group_blocks(found), found,
                           boxed_lines((line.box, line.text, line.height) for line in found), ocr.page_images(page))
    else:
        with timed(parsed.timings, "parse"):
            words = _PageWords(page_blocks(page), None, None, [])
    if not words.blocks:
        parsed.empty_pages.append(page_no)
    parsed.page_labels[page_no] = printed_page_number(page)
    return words


def _ruled_tables(page: pymupdf.Page, parsed: ParsedDocument, settings: IngestSettings,
                  warn: Warn) -> tuple[list[Fragment], list[Table], int]:
    """The page's ruled tables, less those that are bar charts, and how many rows they numbered."""
    with timed(parsed.timings, "tables"):
        frags, tables = _step(warn, "table extraction", ([], []), find_page_tables, page, parsed.doc_id, parsed.file)
    rows_numbered = len(frags)
    if settings.charts:  # a bar chart PyMuPDF also took for a table is read as a chart
        with timed(parsed.timings, "charts"):
            frags, tables = _step(warn, "chart detection in tables", (frags, tables),
                                  drop_charted_tables, page, frags, tables, warn)
    return frags, tables, rows_numbered


def _figures_and_charts(page: pymupdf.Page, words: _PageWords, parsed: ParsedDocument, settings: IngestSettings,
                        areas: list[BBox], rows_numbered: int, warn: Warn):
    """The page's figures, the areas of those its layout holds (a scan's charts join them after), and the
    charts read off the figures: their fragments and tables."""
    seconds, chart_seconds = parsed.timings, {}
    read_image = _chart_reader(page, settings, chart_seconds, warn) if settings.ocr == "auto" else None
    with timed(seconds, "figures"):
        figure_frags = _step(
            warn, "figure detection", [], find_page_figures, page, words.blocks, parsed.doc_id, parsed.file,
            exclude=areas + words.scans, window=settings.caption_window, max_chars=settings.caption_max_chars,
            lines=words.lines, chart_text=settings.chart_text, read_image=read_image,
        )
    _count_ocr_apart(seconds, "figures", chart_seconds)
    figure_areas = [f.bbox for f in figure_frags]
    if words.scans and settings.charts:  # the page's picture may be a chart: a slide, a scanned chart
        figure_frags += _step(warn, "chart detection in the page's picture", [], scan_figures, page, words.scans,
                              words.blocks, words.lines, len(figure_frags), parsed.doc_id, parsed.file)
        read_image = _lines_in(words.lines)
    chart_frags, charts = _page_charts(page, figure_frags, rows_numbered, settings, read_image, seconds, warn)
    figure_frags = keep_charted(figure_frags)
    _count_ocr_apart(seconds, "charts", chart_seconds)
    return figure_frags, figure_areas, chart_frags, charts


def _pieces(page: pymupdf.Page, ocr_lines: list | None) -> list:
    """What a table is read from: the OCR's lines as displayed, or the text layer's words set upright (a
    margin's vertical line is no column)."""
    if ocr_lines is not None:
        return [(*line.layout, line.text) for line in ocr_lines]
    return [w[:5] for w in page.get_text("words") if len(w[4]) < 2 or w[3] - w[1] <= 1.5 * (w[2] - w[0])]


def _read_with_ocr(page: pymupdf.Page, dpi: int) -> list:
    try:
        return ocr.read_page(page, dpi)
    except Exception as exc:
        raise _OcrFailed from exc


def _page_charts(page: pymupdf.Page, figures: list[Fragment], start: int, settings: IngestSettings,
                 read_image, seconds: dict[str, float], warn: Warn) -> tuple[list[Fragment], list[Table]]:
    """Charts as data (rag/ingest/charts/): each figure's values paired by geometry, kept as a Table."""
    if not settings.charts:
        return [], []
    with timed(seconds, "charts"):
        return _step(warn, "chart reading", ([], []), add_page_charts, page, figures, start, read_image,
                     settings.chart_text, settings.caption_max_chars, warn)


def _lines_in(lines: list[Line]):
    """The page's OCR lines inside a box: a page read with OCR is not read again."""

    def read(box: BBox) -> list[Line]:
        return [ln for ln in lines if box[0] <= (ln.rect.x0 + ln.rect.x1) / 2 <= box[2]
                and box[1] <= (ln.rect.y0 + ln.rect.y1) / 2 <= box[3]]

    return read


def _count_ocr_apart(seconds: dict[str, float], step: str, chart_seconds: dict[str, float]) -> None:
    """OCR that ran inside a step is counted once, under its own name."""
    ocr_s = chart_seconds.pop("chart_ocr", 0.0)
    if ocr_s:
        seconds[step] -= ocr_s
        seconds["chart_ocr"] = seconds.get("chart_ocr", 0.0) + ocr_s


def _chart_reader(page: pymupdf.Page, settings: IngestSettings, seconds: dict[str, float], warn: Warn):
    """Reads the text inside a chart's pixels, once per box; a failure leaves the figure with its caption only."""
    read_before: dict[BBox, list[Line]] = {}

    def read(box: BBox) -> list[Line]:
        if box in read_before:
            return read_before[box]
        longest = max(box[2] - box[0], box[3] - box[1])
        dpi = min(settings.ocr_dpi * _CHART_DPI_SCALE, _CHART_MAX_PIXELS / longest * 72)
        with timed(seconds, "chart_ocr"):
            try:
                found = ocr.read_region(page, box, int(dpi))
            except Exception as exc:
                warn("chart OCR", exc)
                found = []
        read_before[box] = boxed_lines((line.box, line.text, line.height) for line in found)
        return read_before[box]

    return read
