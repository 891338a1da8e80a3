"""A statement's header: the line of the columns' years, the words stacked over it, and the period each
column names ("2019", "Fiscal 2019", "January 28, 2023" with the date's other words above it)."""

from __future__ import annotations

import re

from rag.ingest.statements.lines import Column, Line, Word
from rag.records import Period
from rag.text import page_scale

_YEAR = re.compile(r"^(?:FY ?)?((?:19|20)\d\d)[,.;:*]?(?:\([a-z\d]\))?$", re.I)
_SHORT_FY = re.compile(r"^FY ?'?(\d\d)$", re.I)
_PART_YEAR = re.compile(r"quarter|\bQ[1-4]\b|(three|six|nine|twelve) months|weeks? ended|\bvs\.?\b|change", re.I)
_SPANNING = re.compile(r"\byears?\b|\bended\b|\bending\b|\bfiscal\b", re.I)  # words over all of the columns
_WORD_GAP = 7.0  # points between two words of one phrase; columns stand further apart


def _is_year_cell(token: str) -> bool:
    return bool(_YEAR.match(token))


def is_header(line: Line) -> bool:
    """A line of column headers: its figures, if any, are all years, and its years stand apart in phrases of their
    own ("2019  2018", "December 31,  2018  2017", "Fiscal Years Ended  January 28, 2023  January 29, 2022"), not
    in a sentence ("… of $24 in 2020, 2019")."""
    if line.cells and not all(_is_year_cell(w[4]) for w in line.cells):
        return False
    if not any(w[4][:2] in ("19", "20", "FY", "Fy") for w in line.words):
        return False
    phrases = word_phrases(line.words)
    if all(year_of(p) is not None and len(p) <= 4 for p in phrases):
        return len(phrases) > 1 or len(phrases[0]) <= 2
    apart = [p for before, p in zip(phrases, phrases[1:]) if p[0][0] - before[-1][2] >= _WORD_GAP]
    return len(phrases[0]) <= 10 and any(year_of(p) is not None for p in apart)


def stacked_over(line: Line, header: Line) -> bool:
    """A header line's words over the columns, above the line of years ("January 28,", "Years Ended")."""
    if line.cells or not line.words:
        return False
    first_year = min((w[0] for w in header.words if _YEAR.match(w[4]) or _SHORT_FY.match(w[4])), default=0)
    return line.words[0][0] >= first_year - 80 and header.y - line.y < 40


def word_phrases(words: list[Word]) -> list[list[Word]]:
    """Words in runs a few points apart: a header cell, a title, a label."""
    phrases: list[list[Word]] = []
    for w in words:
        years = _YEAR.match(w[4]) and phrases and _YEAR.match(phrases[-1][-1][4])  # "2019 2018" set close
        if phrases and w[0] - phrases[-1][-1][2] < _WORD_GAP and not years:
            phrases[-1].append(w)
        else:
            phrases.append([w])
    return phrases


def header_periods(header: list[Line], columns: list[Column]) -> tuple[list[Period], str]:
    """Each column's header as printed and the fiscal year it names; the header text over all columns."""
    year_line = header[-1]
    left_edge = columns[0].x0 - 30
    dated = [p for p in word_phrases(year_line.words) if p[-1][2] >= left_edge and year_of(p) is not None]
    owner = _owners(dated, columns)
    spacing = min((b.middle - a.middle for a, b in zip(columns, columns[1:])), default=200.0)
    stacked: list[list[str]] = [[] for _ in columns]
    context: list[str] = []
    for line in header:
        for phrase in word_phrases(line.words):
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
        periods.append(Period(header=words, year=None if i is None or _PART_YEAR.search(words) else year_of(dated[i])))
    return periods, " ".join(context)


def year_of(phrase: list[Word]) -> int | None:
    years = [int(m.group(1)) for w in phrase if (m := _YEAR.match(w[4]))]
    years += [2000 + int(m.group(1)) for w in phrase if (m := _SHORT_FY.match(w[4]))]
    return years[0] if len(set(years)) == 1 else None


def _owners(dated: list[list[Word]], columns: list[Column]) -> list[int | None]:
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
