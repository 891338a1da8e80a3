"""Pages of figures cut into statements at their headers and read into `StatementFrame`s (title, kind, scale,
periods, rows); a document's frames joined across pages, its fiscal years set."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from rag.ingest.sentences import sentence_frames
from rag.ingest.statements.headers import header_periods, is_header, stacked_over, word_phrases
from rag.ingest.statements.lines import Line, Word, figure_columns, line_text, page_lines
from rag.ingest.statements.rows import statement_rows
from rag.records import StatementFrame, StatementKind
from rag.text import page_scale

_STATEMENT = (r"(?:balance sheets?|income statements?|statements? of [\w ,’'()/&-]*?(?:position|condition|operations|"
              r"income|earnings|loss|cash flows?|equity|deficit|investment)\b)")
# A title is the statement's name, with a few words before it ("Consolidated", a company's) and nothing after
# it but "(continued)" or another statement's name: "the Consolidated Balance Sheets." is a note's sentence.
_TITLE = re.compile(rf"^(?:[\w.,&'’-]+\s+){{0,5}}?{_STATEMENT}(?:\s*\((?:loss|income|deficit)\))?"
                    rf"(?:\s+and\s+[\w'’ ]+?(?:\s*\((?:loss|income)\))?)?(?:\s*\((?:continued|unaudited)\))?\s*:?$", re.I)
_RUNNING_HEAD = re.compile(r"(table of )?contents|index$", re.I)
_FISCAL_SHIFT = re.compile(
    r"fiscal (?:year )?((?:19|20)\d\d)\W{0,3}(?:\w+\W+){0,6}?end(?:ed|ing|s)? (?:on )?"
    r"(?:January|February|March|Jan\.|Feb\.|Mar\.) \d{1,2},? ((?:19|20)\d\d)", re.I)
_MIN_ROWS = 2
_FIGURE_START = set("0123456789($—–-")


@dataclass
class _Block:
    """A header and the lines under it, until the next header: one frame to be."""

    header: list[Line]
    body: list[Line]
    above: list[Line]


def pdf_frames(pdf: pymupdf.Document | Path, doc_id: str, file: str,
               pages: list[int] | None = None) -> list[StatementFrame]:
    """Every frame of a document (or of some 1-based pages), as ingestion reads them."""
    if isinstance(pdf, Path):
        with pymupdf.open(pdf) as doc:
            return pdf_frames(doc, doc_id, file, pages)
    found, texts = [], {}
    for n in pages or range(1, pdf.page_count + 1):
        words = pdf[n - 1].get_text("words")
        found.append(page_frames(words, n, doc_id, file))
        texts[n] = " ".join(w[4] for w in words)
    return document_frames(found, texts, doc_id, file)


def document_frames(per_page: list[list[StatementFrame]], texts: dict[int, str], doc_id: str,
                    file: str) -> list[StatementFrame]:
    """Pages' frames, in page order, joined into the document's: a frame without a header takes the periods,
    title and scale of the frame it continues, or goes; years move back one where the text says so. Then the
    pages' sentences that print a figure per year, in the statements' scale where they print none."""
    frames: list[StatementFrame] = []
    for page in per_page:
        for frame in page:
            last = frames[-1] if frames else None
            if frame.periods and _continues(frame, last):
                frames.append(_carried(frame, last))
            elif frame.periods:
                frames.append(frame)
            elif last and last.page >= frame.page - 1 and len(last.periods) == len(frame.rows[0].values):
                frames.append(_carried(frame, last, periods=last.periods, scale=frame.scale or last.scale,
                                       currency=frame.currency or last.currency))
    shift = fiscal_year_shift(" ".join(texts.values()))
    if shift:
        for frame in frames:
            frame.periods = [p.model_copy(update={"year": p.year + shift}) if p.year and _is_early_date(p.header) else p
                             for p in frame.periods]
    scales = Counter(f.scale for f in frames if f.kind != "other" and f.scale)
    scale = scales.most_common(1)[0][0] if scales else None
    return frames + [f for n, text in texts.items() for f in sentence_frames(text, n, doc_id, file, scale)]


def _carried(frame: StatementFrame, last: StatementFrame, **more) -> StatementFrame:
    """`frame` as a part of the statement `last` began: its title, kind and context (and `more`)."""
    return frame.model_copy(update={"title": last.title, "kind": last.kind, "context": last.context, **more})


def _continues(frame: StatementFrame, last: StatementFrame | None) -> bool:
    """Whether a frame with its own header but no title goes on with the statement of the page before, whose
    years it repeats (a cash flow statement's second page, headed by its years alone)."""
    return bool(last and not frame.title and last.kind != "other" and last.page == frame.page - 1 and
                [p.year for p in last.periods] == [p.year for p in frame.periods])


def fiscal_year_shift(text: str) -> int:
    """-1 when the document names a fiscal year by the year it began ("fiscal 2022 ended January 28, 2023")."""
    said = [int(ended) - int(named) for named, ended in _FISCAL_SHIFT.findall(" ".join(text.split()))]
    return -1 if said and sum(d == 1 for d in said) > len(said) / 2 else 0


def _is_early_date(header: str) -> bool:
    return bool(re.search(r"\b(?:January|February|March|Jan\.?|Feb\.?|Mar\.?)\s", header, re.I))


def page_frames(words: list[Word], page: int, doc_id: str, file: str) -> list[StatementFrame]:
    """The frames of one page (`page.get_text("words")`); a frame of figures without a header has no periods."""
    if sum(w[4][:1] in _FIGURE_START for w in words) < 2 * _MIN_ROWS:  # a page of prose: no need to read it
        return []
    lines = page_lines(words)
    if sum(bool(line.cells) for line in lines) < _MIN_ROWS:
        return []
    page_text = " ".join(w[4] for w in words)
    frames = []
    for block in _blocks(lines):
        frame = _frame(block, page, doc_id, file, page_text)
        if frame is not None:
            frames.append(frame)
    return frames


def _blocks(lines: list[Line]) -> list[_Block]:
    """The page cut at its headers; figures above the first header are a block of their own (a statement
    continued from the page before)."""
    heads = [at for at, line in enumerate(lines) if is_header(line) and _has_rows_below(lines, at)]
    tops = []
    for k, at in enumerate(heads):
        top, floor = at, max(heads[k - 1] + 1 if k else 0, at - 3)
        while top > floor and stacked_over(lines[top - 1], lines[at]):
            top -= 1
        tops.append(top)
    first = tops[0] if tops else len(lines)
    continued = sum(bool(x.cells) for x in lines[:first]) >= _MIN_ROWS
    blocks = [_Block(header=[], body=lines[:first], above=[])] if continued else []
    for k, (top, at) in enumerate(zip(tops, heads)):
        end = tops[k + 1] if k + 1 < len(heads) else len(lines)
        above = lines[heads[k - 1] + 1 if k else 0:top]
        last = max((i for i, line in enumerate(above) if line.cells), default=-1)
        blocks.append(_Block(header=lines[top:at + 1], body=lines[at + 1:end], above=above[last + 1:]))
    return blocks


def _has_rows_below(lines: list[Line], at: int) -> bool:
    below = lines[at + 1:at + 6]
    return sum(bool(line.cells) and not is_header(line) for line in below) >= 2


def _frame(block: _Block, page: int, doc_id: str, file: str, page_text: str) -> StatementFrame | None:
    body = [line for line in block.body if not is_header(line)]
    columns = figure_columns([line for line in body if line.cells])
    if not columns:
        return None
    rows = statement_rows(body, columns)
    if len(rows) < _MIN_ROWS:
        return None
    periods, context = header_periods(block.header, columns) if block.header else ([], "")
    if block.header and not any(p.year for p in periods):
        return None
    title = _title(block.above)
    currency, scale = page_scale(" ".join(line_text(line) for line in block.above + block.header))
    if not scale:
        currency, scale = page_scale(page_text)
    dollar = currency or ("$" if any(line.dollar for line in body) else "")
    return StatementFrame(doc_id=doc_id, file=file, page=page, title=title, kind=statement_kind(title),
                          periods=periods, rows=rows, scale=scale or None, currency=dollar or None, context=context)


def _title(above: list[Line]) -> str:
    """The statement's title among the lines above its header, or the nearest heading there."""
    for line in above:
        for phrase in word_phrases(line.words):
            text = " ".join(w[4] for w in phrase)
            if text[:1].isupper() and _TITLE.match(text) and len(text) <= 120:
                return text
    for line in reversed(above):
        text = line_text(line)
        if not line.cells and 3 <= len(text) <= 100 and not page_scale(text)[1] and not _RUNNING_HEAD.match(text):
            return text
    return ""


def statement_kind(title: str) -> StatementKind:
    """The kind of statement a title names."""
    t = title.lower()
    if not _TITLE.search(t):
        return "other"
    if "cash flow" in t:
        return "cash_flows"
    if re.search(r"balance sheet|financial (position|condition)", t):
        return "balance_sheet"
    if re.search(r"equity|deficit", t) and not re.search(r"operations|earnings", t):
        return "equity"
    if "comprehensive" in t and not re.search(r"operations|earnings|income (?:\(loss\) )?and comprehensive", t):
        return "other"
    return "income_statement"
