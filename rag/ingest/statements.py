"""Financial statements as data: the tables of figures by fiscal year on a page's text layer, read into
`StatementFrame`s (rows, periods, scale), fast enough for the searchable stage (no `find_tables`).

A page's words are grouped into lines; a line's trailing numbers are its cells ("(1,234)" → -1234, "—" → None,
"$" and footnote marks dropped), the words before them its label. Cells line up in columns by their right edge
(figures are right-aligned); a header line holds the columns' years ("2019", "Fiscal 2019", "January 28, 2023",
the date's other words stacked above it). Lines without figures are headings ("Current assets:") or the first
line of a wrapped label (the next line goes on in lower case, or this one ends on "of", "and", …). The title
above the header names the statement's kind. A page of figures without a header continues the statement of
the page before it.

A fiscal year is the year its column prints, also when the column is the date the year ended (Best Buy's
"January 28, 2023" is fiscal 2023), unless the document says otherwise ("fiscal 2022 ended January 28, 2023").
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

import pymupdf

from rag.ingest.sentences import sentence_frames
from rag.records import Period, StatementFrame, StatementKind, StatementRow
from rag.text import page_scale

Word = tuple  # pymupdf's (x0, y0, x1, y1, text, block, line, word)

_CELL = re.compile(r"^\$?\(?\$?-?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?%?$|^\$?\(?\$?-?\d+(?:\.\d+)?\)?%?$")
_DASH = re.compile(r"^[—–-]{1,3}$")
_FOOTNOTE = re.compile(r"(?<=[\d)])(?:\([a-z\d]\)|\*+|[a-z])$")
_YEAR = re.compile(r"^(?:FY ?)?((?:19|20)\d\d)[,.;:*]?(?:\([a-z\d]\))?$", re.I)
_SHORT_FY = re.compile(r"^FY ?'?(\d\d)$", re.I)
_PART_YEAR = re.compile(r"quarter|\bQ[1-4]\b|(three|six|nine|twelve) months|weeks? ended|\bvs\.?\b|change", re.I)
_STATEMENT = (r"(?:balance sheets?|income statements?|statements? of [\w ,’'()/&-]*?(?:position|condition|operations|"
              r"income|earnings|loss|cash flows?|equity|deficit|investment)\b)")
# A title is the statement's name, with a few words before it ("Consolidated", a company's) and nothing after
# it but "(continued)" or another statement's name: "the Consolidated Balance Sheets." is a note's sentence.
_TITLE = re.compile(rf"^(?:[\w.,&'’-]+\s+){{0,5}}?{_STATEMENT}(?:\s*\((?:loss|income|deficit)\))?"
                    rf"(?:\s+and\s+[\w'’ ]+?(?:\s*\((?:loss|income)\))?)?(?:\s*\((?:continued|unaudited)\))?\s*:?$", re.I)
_CONNECTOR = re.compile(
    r"(?:\b(?:of|and|or|for|to|in|from|on|with|the|net|less|including|excluding|by|at)|[,(–—-])$", re.I)
_RUNNING_HEAD = re.compile(r"(table of )?contents|index$", re.I)
_PER_SHARE = re.compile(r"per (?:common |diluted |basic )?share|per unit\b", re.I)
_FISCAL_SHIFT = re.compile(
    r"fiscal (?:year )?((?:19|20)\d\d)\W{0,3}(?:\w+\W+){0,6}?end(?:ed|ing|s)? (?:on )?"
    r"(?:January|February|March|Jan\.|Feb\.|Mar\.) \d{1,2},? ((?:19|20)\d\d)", re.I)
_SPANNING = re.compile(r"\byears?\b|\bended\b|\bending\b|\bfiscal\b", re.I)  # words over all of the columns
_WORD_GAP = 7.0  # points between two words of one phrase; columns stand further apart
_CELL_GAP = 6.0  # a figure closer than this to the word before it belongs to the label ("and 227.4 million")
_MIN_ROWS = 2
_FIGURE_START = set("0123456789($—–-")


@dataclass
class _Line:
    y: float
    words: list[Word]
    label: list[Word] = field(default_factory=list)
    cells: list[Word] = field(default_factory=list)
    dollar: bool = False

    @property
    def x0(self) -> float:
        return self.words[0][0]


@dataclass
class _Column:
    x0: float
    x1: float

    @property
    def middle(self) -> float:
        return (self.x0 + self.x1) / 2


@dataclass
class _Block:
    """A header and the lines under it, until the next header: one frame to be."""

    header: list[_Line]
    body: list[_Line]
    above: list[_Line]


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
            if frame.periods:
                frames.append(frame)
            elif frames and frames[-1].page >= frame.page - 1 and len(frames[-1].periods) == len(frame.rows[0].values):
                last = frames[-1]
                frames.append(frame.model_copy(update={
                    "title": last.title, "kind": last.kind, "periods": last.periods, "context": last.context,
                    "scale": frame.scale or last.scale, "currency": frame.currency or last.currency}))
    shift = fiscal_year_shift(" ".join(texts.values()))
    if shift:
        for frame in frames:
            frame.periods = [p.model_copy(update={"year": p.year + shift}) if p.year and _is_early_date(p.header) else p
                             for p in frame.periods]
    scales = Counter(f.scale for f in frames if f.kind != "other" and f.scale)
    scale = scales.most_common(1)[0][0] if scales else None
    return frames + [f for n, text in texts.items() for f in sentence_frames(text, n, doc_id, file, scale)]


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
    lines = _lines(words)
    if sum(bool(line.cells) for line in lines) < _MIN_ROWS:
        return []
    page_text = " ".join(w[4] for w in words)
    frames = []
    for block in _blocks(lines):
        frame = _frame(block, page, doc_id, file, page_text)
        if frame is not None:
            frames.append(frame)
    return frames


# lines and cells


def _lines(words: list[Word]) -> list[_Line]:
    """Words side by side (their middles within 40% of a word's height) as one line, top to bottom."""
    lines: list[_Line] = []
    for w in sorted(words, key=lambda w: (w[1] + w[3]) / 2):
        middle, height = (w[1] + w[3]) / 2, w[3] - w[1]
        if lines and abs(lines[-1].y - middle) <= 0.4 * max(height, 1.0):
            lines[-1].words.append(w)
        else:
            lines.append(_Line(y=middle, words=[w]))
    for line in lines:
        line.words.sort(key=lambda w: w[0])
        _split(line)
    return lines


def _split(line: _Line) -> None:
    """A line's label words and its trailing figures, "$" signs dropped."""
    words, cells = line.words, []
    at = len(words)
    while at > 0 and (_is_cell(words[at - 1][4]) or words[at - 1][4] == "$"):
        at -= 1
    tail = words[at:]
    label = list(words[:at])
    while tail and label and (tail[0][0] - label[-1][2] < _CELL_GAP or tail[0][4] == "$" and len(tail) == 1):
        label.append(tail.pop(0))
    for w in tail:
        if w[4] == "$":
            line.dollar = True
        else:
            cells.append(w)
    line.label, line.cells = label, cells
    line.dollar = line.dollar or any(w[4].startswith(("$", "($")) for w in cells)


def _is_cell(token: str) -> bool:
    return bool(_CELL.match(_FOOTNOTE.sub("", token)) or _DASH.match(token))


def cell_value(token: str) -> float | None:
    """A printed figure as a number: "(1,234)" → -1234, "$7,637" → 7637, "—" → None."""
    token = _FOOTNOTE.sub("", token.strip())
    if _DASH.match(token):
        return None
    negative = token.startswith(("(", "$(", "-")) or token.endswith(")")
    digits = re.sub(r"[^\d.]", "", token)
    try:
        number = float(digits)
    except ValueError:
        return None
    return -number if negative else number


def _printed(token: str) -> str:
    token = _FOOTNOTE.sub("", token.replace("$", ""))
    return "—" if _DASH.match(token) else token


def _is_year_cell(token: str) -> bool:
    return bool(_YEAR.match(token))


def _is_header(line: _Line) -> bool:
    """A line of column headers: its figures, if any, are all years, and its years stand apart in phrases of their
    own ("2019  2018", "December 31,  2018  2017", "Fiscal Years Ended  January 28, 2023  January 29, 2022"), not
    in a sentence ("… of $24 in 2020, 2019")."""
    if line.cells and not all(_is_year_cell(w[4]) for w in line.cells):
        return False
    if not any(w[4][:2] in ("19", "20", "FY", "Fy") for w in line.words):
        return False
    phrases = _phrases(line.words)
    if all(_year_of(p) is not None and len(p) <= 4 for p in phrases):
        return len(phrases) > 1 or len(phrases[0]) <= 2
    apart = [p for before, p in zip(phrases, phrases[1:]) if p[0][0] - before[-1][2] >= _WORD_GAP]
    return len(phrases[0]) <= 10 and any(_year_of(p) is not None for p in apart)


# blocks: a header and its lines


def _blocks(lines: list[_Line]) -> list[_Block]:
    """The page cut at its headers; figures above the first header are a block of their own (a statement
    continued from the page before)."""
    heads = [at for at, line in enumerate(lines) if _is_header(line) and _has_rows_below(lines, at)]
    tops = []
    for k, at in enumerate(heads):
        top, floor = at, max(heads[k - 1] + 1 if k else 0, at - 3)
        while top > floor and _stacked(lines[top - 1], lines[at]):
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


def _has_rows_below(lines: list[_Line], at: int) -> bool:
    below = lines[at + 1:at + 6]
    return sum(bool(line.cells) and not _is_header(line) for line in below) >= 2


def _stacked(line: _Line, header: _Line) -> bool:
    """A header line's words over the columns, above the line of years ("January 28,", "Years Ended")."""
    if line.cells or not line.words:
        return False
    first_year = min((w[0] for w in header.words if _YEAR.match(w[4]) or _SHORT_FY.match(w[4])), default=0)
    return line.words[0][0] >= first_year - 80 and header.y - line.y < 40


# a block as a frame


def _frame(block: _Block, page: int, doc_id: str, file: str, page_text: str) -> StatementFrame | None:
    body = [line for line in block.body if not _is_header(line)]
    columns = _columns([line for line in body if line.cells])
    if not columns:
        return None
    rows = _rows(body, columns)
    if len(rows) < _MIN_ROWS:
        return None
    periods, context = _periods(block.header, columns) if block.header else ([], "")
    if block.header and not any(p.year for p in periods):
        return None
    title = _title(block.above)
    currency, scale = page_scale(" ".join(_text(line) for line in block.above + block.header))
    if not scale:
        currency, scale = page_scale(page_text)
    dollar = currency or ("$" if any(line.dollar for line in body) else "")
    return StatementFrame(doc_id=doc_id, file=file, page=page, title=title, kind=statement_kind(title),
                          periods=periods, rows=rows, scale=scale or None, currency=dollar or None, context=context)


def _text(line: _Line) -> str:
    return " ".join(w[4] for w in line.words)


def _columns(lines: list[_Line]) -> list[_Column]:
    """Columns of figures: right edges within a few points of one another, in enough lines."""
    edges = sorted((w[2], w[0]) for line in lines for w in line.cells)
    groups: list[list[tuple[float, float]]] = []
    for edge in edges:
        if groups and edge[0] - groups[-1][-1][0] <= 8:
            groups[-1].append(edge)
        else:
            groups.append([edge])
    need = max(2, len(lines) // 5)
    return [_Column(x0=min(e[1] for e in g), x1=statistics.median_high([e[0] for e in g]))
            for g in groups if len(g) >= need]


def _column_of(word: Word, columns: list[_Column]) -> int | None:
    for n, column in enumerate(columns):
        if abs(word[2] - column.x1) <= 8:
            return n
    return None


def _rows(lines: list[_Line], columns: list[_Column]) -> list[StatementRow]:
    rows: list[StatementRow] = []
    sections: list[_Heading] = []
    wrapped: list[str] = []
    top = ""  # the last heading centred or in capitals ("ASSETS")
    left = min(line.x0 for line in lines)
    placed = [_placed(line, columns) for line in lines]
    for at, line in enumerate(lines):
        if placed[at] is None:
            text = _text(line)
            if _wrapped(lines, placed, at):
                wrapped.append(text)
            else:
                wrapped = []
                _push(sections, _indent(line, left), text.rstrip(":").strip())
                top = text.rstrip(":").strip() if text.isupper() or line.x0 > left + 120 else top
            continue
        cells, own = placed[at]
        if not own and not wrapped and sum(bool(c) for c in cells) < min(2, len(cells)):
            continue  # a page number under a column
        # figures printed without a label total the heading above them ("Revenues", then "ASSETS")
        heading = sections[-1].name if sections else top
        label = " ".join([*wrapped, own]).strip() or (f"Total {heading.lower()}" if heading else "")
        wrapped = []
        _close(sections, line.x0, label)
        path = [s.name for s in sections]
        rows.append(StatementRow(
            label=label, section=path, values=[cell_value(c) if c else None for c in cells],
            cells=[_printed(c) for c in cells],
            per_share=bool(_PER_SHARE.search(label) or any(_PER_SHARE.search(s) for s in path))))
        if sections and _closes(label, sections[-1].name):
            sections.pop()
    return rows


@dataclass
class _Heading:
    x0: float
    name: str
    rows_at: float | None = None  # the indent of its first row


def _close(sections: list[_Heading], x0: float, label: str) -> None:
    """Headings a row stands left of, its own first rows once indented further, end (but a total keeps its own)."""
    while sections:
        last = sections[-1]
        if last.rows_at is None:
            last.rows_at = x0
        if x0 >= last.rows_at - 1 or _closes(label, last.name):
            return
        sections.pop()


def _placed(line: _Line, columns: list[_Column]) -> tuple[list[str], str] | None:
    """The line's cells by column ("" where none) and its label, or None when it has no figure in a column. A
    figure off the columns is a word of the label ("licenses (1)")."""
    cells = [""] * len(columns)
    label = list(line.label)
    for w in line.cells:
        n = _column_of(w, columns)
        if n is None:
            label.append(w)
        else:
            cells[n] = w[4]
    if not any(cells):
        return None
    return cells, " ".join(w[4] for w in sorted(label, key=lambda w: w[0]))


def _wrapped(lines: list[_Line], placed: list, at: int) -> bool:
    """A line without figures that begins or goes on with a label the next lines finish, by a line with figures."""
    text = _text(lines[at])
    for j in range(at + 1, min(at + 4, len(lines))):
        label = placed[j][1] if placed[j] is not None else _text(lines[j])
        if not _continues(text, label):
            return False
        if placed[j] is not None:
            return True
        text = label
    return False


def _continues(text: str, label: str) -> bool:
    """A label-only line whose label the next line (`label`) finishes."""
    first = label[:1]
    return bool(first) and (not first.isupper() or bool(_CONNECTOR.search(text))) and not text.endswith(":")


def _indent(line: _Line, left: float) -> float:
    x0 = line.x0
    return left if x0 > left + 120 else x0  # a heading centred over the page is a top one


def _push(sections: list[_Heading], x0: float, name: str) -> None:
    if not name or len(name) > 120:
        return
    while sections and sections[-1].x0 >= x0 - 1:
        sections.pop()
    sections.append(_Heading(x0, name))


def _closes(total: str, section: str) -> bool:
    return set(_words(total)) - {"total"} == set(_words(section))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _title(above: list[_Line]) -> str:
    """The statement's title among the lines above its header, or the nearest heading there."""
    for line in above:
        for phrase in _phrases(line.words):
            text = " ".join(w[4] for w in phrase)
            if text[:1].isupper() and _TITLE.match(text) and len(text) <= 120:
                return text
    for line in reversed(above):
        text = _text(line)
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


# periods


def _phrases(words: list[Word]) -> list[list[Word]]:
    """Words in runs a few points apart: a header cell, a title, a label."""
    phrases: list[list[Word]] = []
    for w in words:
        years = _YEAR.match(w[4]) and phrases and _YEAR.match(phrases[-1][-1][4])  # "2019 2018" set close
        if phrases and w[0] - phrases[-1][-1][2] < _WORD_GAP and not years:
            phrases[-1].append(w)
        else:
            phrases.append([w])
    return phrases


def _periods(header: list[_Line], columns: list[_Column]) -> tuple[list[Period], str]:
    """Each column's header as printed and the fiscal year it names; the header text over all columns."""
    year_line = header[-1]
    left_edge = columns[0].x0 - 30
    dated = [p for p in _phrases(year_line.words) if p[-1][2] >= left_edge and _year_of(p) is not None]
    owner = _owners(dated, columns)
    spacing = min((b.middle - a.middle for a, b in zip(columns, columns[1:])), default=200.0)
    stacked: list[list[str]] = [[] for _ in columns]
    context: list[str] = []
    for line in header:
        for phrase in _phrases(line.words):
            text = " ".join(w[4] for w in phrase)
            if any(phrase[0] is p[0] for p in dated) or page_scale(text)[1]:
                continue
            n = _nearest(phrase, [dated[i] if i is not None else None for i in owner], spacing * 0.35)
            over_one = phrase[-1][2] - phrase[0][0] <= 0.8 * spacing and not _SPANNING.search(text)
            (stacked[n] if n is not None and over_one and phrase[-1][2] >= left_edge else context).append(text)
    periods = []
    for n, i in enumerate(owner):
        printed = " ".join(w[4] for w in dated[i]) if i is not None else ""
        words = " ".join([*stacked[n], printed]).strip()
        periods.append(Period(header=words, year=None if i is None or _PART_YEAR.search(words) else _year_of(dated[i])))
    return periods, " ".join(context)


def _year_of(phrase: list[Word]) -> int | None:
    years = [int(m.group(1)) for w in phrase if (m := _YEAR.match(w[4]))]
    years += [2000 + int(m.group(1)) for w in phrase if (m := _SHORT_FY.match(w[4]))]
    return years[0] if len(set(years)) == 1 else None


def _owners(dated: list[list[Word]], columns: list[_Column]) -> list[int | None]:
    """Which header phrase heads each column: in order when they are as many, else the nearest one."""
    if len(dated) == len(columns):
        return list(range(len(columns)))
    if dated and len(columns) % len(dated) == 0:  # a year over a group of columns (segments, shares and amounts)
        return [None] * len(columns)
    spacing = min((b.middle - a.middle for a, b in zip(columns, columns[1:])), default=200.0)
    owner: list[int | None] = []
    for column in columns:
        near = [(abs((p[0][0] + p[-1][2]) / 2 - column.middle), i) for i, p in enumerate(dated)]
        best = min(near, default=(spacing, None))
        owner.append(best[1] if best[0] < spacing * 0.5 else None)
    return owner


def _nearest(phrase: list[Word], heads: list[list[Word] | None], within: float) -> int | None:
    middle = (phrase[0][0] + phrase[-1][2]) / 2
    near = [(abs(middle - (h[0][0] + h[-1][2]) / 2), n) for n, h in enumerate(heads) if h is not None]
    best = min(near, default=(within, None))
    return best[1] if best[0] < within else None


# storage: one SQLite file per document


_TABLES = {
    "frames": ("frame", "page", "title", "kind", "scale", "currency", "context", "doc_id", "file"),
    "periods": ("frame", "col", "header", "year"),
    "cells": ("frame", "row", "label", "section", "per_share", "col", "value", "printed"),
}


def save_frames(frames: list[StatementFrame], path: Path) -> None:
    """Frames as three tables (frames; periods; cells, one row per figure), for `load_frames` or
    `pandas.read_sql`. Written with sqlite3 itself: importing pandas would cost the searchable stage 0.4 s."""
    rows = {
        "frames": [(n, f.page, f.title, f.kind, f.scale, f.currency, f.context, f.doc_id, f.file)
                   for n, f in enumerate(frames)],
        "periods": [(n, c, p.header, p.year) for n, f in enumerate(frames) for c, p in enumerate(f.periods)],
        "cells": [(n, r, row.label, json.dumps(row.section), int(row.per_share), c, row.values[c], row.cells[c])
                  for n, f in enumerate(frames) for r, row in enumerate(f.rows) for c in range(len(row.values))],
    }
    with closing(sqlite3.connect(path)) as db:
        for name, columns in _TABLES.items():
            db.execute(f"DROP TABLE IF EXISTS {name}")
            db.execute(f"CREATE TABLE {name} ({', '.join(columns)})")
            db.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(columns))})", rows[name])
        db.commit()


def load_frames(path: Path) -> list[StatementFrame]:
    with closing(sqlite3.connect(path)) as db:
        heads = db.execute("SELECT * FROM frames ORDER BY frame").fetchall()
        periods = db.execute("SELECT frame, header, year FROM periods ORDER BY frame, col").fetchall()
        cells = db.execute("SELECT frame, row, label, section, per_share, value, printed FROM cells "
                           "ORDER BY frame, row, col").fetchall()
    by_frame: dict[int, list[Period]] = {}
    for frame, header, year in periods:
        by_frame.setdefault(frame, []).append(Period(header=header, year=year))
    rows: dict[int, list[StatementRow]] = {}
    for (frame, row), group in groupby(cells, key=lambda c: (c[0], c[1])):
        group = list(group)
        _, _, label, section, per_share, _, _ = group[0]
        rows.setdefault(frame, []).append(StatementRow(
            label=label, section=json.loads(section), per_share=bool(per_share),
            values=[c[5] for c in group], cells=[c[6] for c in group]))
    return [StatementFrame(page=page, title=title, kind=kind, scale=scale, currency=currency,
                           context=context, doc_id=doc_id, file=file, periods=by_frame.get(n, []), rows=rows.get(n, []))
            for n, page, title, kind, scale, currency, context, doc_id, file in heads]
