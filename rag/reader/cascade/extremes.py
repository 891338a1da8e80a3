"""Which row of a table holds the highest or the lowest value, and what a share the question gives stands
for: answered by code over the table's DataFrame.

"Which situation involves the highest percentage that …", "among operations, investing and financing
activities, which brought in the most cash in FY2022", "which subgroup gained most from 2008 to 2015":
read as text rows, a small model names a neighbouring row. Here code finds the rows (the table's labels,
or the question's own options), the column compared (the year asked, the change between two years, the
header that says what is asked) and takes the row with the extreme value. The model's only job, when
the headers cannot tell, is to choose the column. "How do 5% of Latinos see …" is the same table read the
other way: the column (or row) whose cells hold the share.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

import pandas as pd

from rag.text import STOPWORDS

Way = Literal["max", "min"]

# Not in a compound: "higher-income seniors" names a group, it asks for no extreme.
_MOST = re.compile(r"\b(most|highest|largest|greatest|biggest|maximum|greater|larger|higher|bigger)\b(?!-)", re.I)
_LEAST = re.compile(r"\b(least|lowest|smallest|fewest|minimum|less|lower|smaller|fewer)\b(?!-)", re.I)
_NOT_COMPARING = re.compile(r"\b(?:more|less|fewer) than\b|\bless[- ]well\b|\bat (?:least|most)\b", re.I)
_FALL = re.compile(r"\b(drop|dropp|declin|decreas|fall|fell|los[est]|shr[iau]nk|reduc)\w*", re.I)
_ASKS_WHICH = re.compile(r"\b(which|what|who)\b", re.I)
_AGGREGATE = re.compile(r"^(total|all\b|overall|net\b|general (?:public|population)|average)", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_NUMERIC = re.compile(r"^[+-]?\(?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?\)?%?$")
_WORD = re.compile(r"[a-z]{3,}")
_SHARE = re.compile(r"\b(\d+(?:\.\d+)?)\s?%")
_AMOUNT = re.compile(r"\band\s+(?:what|how much|by how much|how many)\b", re.I)  # "which group, and what is the drop?"
_IN_A_YEAR = re.compile(r"^((?:19|20)\d\d) · (.+)$")
_GAP = re.compile(r"\b(?:gap|difference)\s+between\s+(?:the\s+)?(?P<a>[^,?]+?)\s+and\s+(?:the\s+)?(?P<b>[^,?]+?)"
                  r"(?=\s+(?:that|who|which|in|on|for|when|among|with|of)\b|[,?]|$)", re.I)
_AGE = re.compile(r"(?<![\d$,.])(\d{2})\s*(?:[-–]\s*\d{2}|\+|(?:years )?(?:and|or) (?:older|over))(?![\d,])")
_AGE_ENDS = {"youngest": min, "oldest": max}


class Comparison(NamedTuple):
    frame: pd.DataFrame  # numbers only: index = the rows compared, columns = the table's numeric columns
    way: Way
    change: tuple[str, str] | None  # (earlier, later) columns when a change between two years is compared


def direction(question: str) -> Way | None:
    """The extreme a question asks for ("the most (or lost the least)" asks for the most), if it asks."""
    if not _ASKS_WHICH.search(question):
        return None
    q = _NOT_COMPARING.sub(" ", question)
    most, least = _MOST.search(q), _LEAST.search(q)
    if not (most or least):
        return None
    return "max" if most and (not least or most.start() < least.start()) else "min"


def comparison(frame: pd.DataFrame, question: str, years: set[str], options: list[str]) -> Comparison | None:
    """The table as rows to compare, when it has them: with the question's options, one row for each
    option (named by the option); else every row but totals."""
    way = direction(question)
    numbers = numeric_table(frame, years) if way else None
    if numbers is None:
        return None
    if options:
        rows = option_rows(list(map(str, numbers.index)), options)
        if rows is None:
            return None
        numbers = numbers.iloc[rows]
        numbers.index = options
    else:
        numbers = numbers[[not _AGGREGATE.match(str(i)) and bool(str(i).strip()) for i in numbers.index]]
    if numbers.shape[0] < 2 or numbers.shape[1] < 1:
        return None
    columns = list(map(str, numbers.columns))
    change = changed_columns(columns, years, question)
    if change is None and len(years) == 2 and all(any(y in _YEAR.findall(c) for c in columns) for y in years):
        return None  # a change is asked but which measure changed is unclear
    measure = _YEAR.sub(" ", change[0]).strip(" ·") if change else ""
    if change and _FALL.search(re.sub(re.escape(measure), " ", question, flags=re.I) if measure else question):
        way = "min" if way == "max" else "max"  # the biggest drop is the most negative change
    return Comparison(numbers, way, change)


def numeric_table(frame: pd.DataFrame, years: set[str]) -> pd.DataFrame | None:
    """A table's numbers indexed by its label column (the first column mostly not numbers), its rows the
    things compared: transposed when the years asked label its rows. None without labels and numbers."""
    if frame.shape[0] < 2 or frame.shape[1] < 2:
        return None
    frame = frame.astype(str)
    labels_at = next((c for c in range(frame.shape[1]) if _share_numeric(frame.iloc[:, c]) < 0.5), None)
    if labels_at is None:
        return None
    numbers = frame.drop(columns=frame.columns[labels_at]).apply(lambda col: col.map(as_number).astype(float))
    numbers = numbers.loc[:, numbers.notna().sum() >= 2]
    numbers.index = [" ".join(str(v).split()) for v in frame.iloc[:, labels_at]]
    numbers = by_year(numbers)
    if years and years <= set(numbers.index) and not any(years & set(_YEAR.findall(str(c))) for c in numbers.columns):
        numbers = numbers.T
    numbers = numbers.loc[~numbers.index.duplicated(), [bool(str(c).strip()) for c in numbers.columns]]
    numbers = numbers.loc[:, ~numbers.columns.duplicated()]  # a name is one row and one column
    if years and all(years & set(_YEAR.findall(str(i))) for i in numbers.index):
        return None  # rows of a group in a year ("2014 · White"): not one row per thing compared
    return numbers


def by_year(numbers: pd.DataFrame) -> pd.DataFrame:
    """Rows of a group in a year ("2014 · White", as charts read at ingestion label them) as one row per
    group and a column per measure and year ("Falling behind · 2014"); other tables as they are."""
    found = [_IN_A_YEAR.match(str(i)) for i in numbers.index]
    if not all(found) or len({m[1] for m in found}) < 2 or len({m[2] for m in found}) < 2:
        return numbers
    numbers = numbers.set_axis(pd.MultiIndex.from_tuples([(m[2], m[1]) for m in found]))
    wide = numbers[~numbers.index.duplicated()].unstack(level=1)
    wide.columns = [f"{measure} · {year}" for measure, year in wide.columns]
    return wide


def names_all(frame: pd.DataFrame, text: str, names: list[str]) -> bool:
    """Whether a table names every acronym the question names ("FEVER", "HOVER"): a table of another
    dataset or model compares other things."""
    words = " ".join([text, *map(str, frame.columns), *map(str, frame.iloc[:, 0])]).lower()
    return all(re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", words) for n in names if n.isupper() and len(n) > 1)


def option_rows(labels: list[str], options: list[str]) -> list[int] | None:
    """The row of each option, by the words that tell the options apart ("operations" ~ "Operating
    activities"); None unless each option names a row of its own."""
    words = [_stems(o) for o in options]
    shared = set.intersection(*words) if words else set()
    rows = []
    for own in (w - shared or w for w in words):
        scores = [len(own & _stems(label)) / len(own) for label in labels]
        best = max(scores, default=0)
        if best < 0.5 or scores.count(best) > 1:
            return None
        rows.append(scores.index(best))
    return rows if len(set(rows)) == len(rows) else None


def changed_columns(columns: list[str], years: set[str], question: str) -> tuple[str, str] | None:
    """(earlier, later) when the question names two years and each heads a column of the same measure
    ("Falling behind · 2014", "Falling behind · 2015"); of several measures, the one the question names."""
    if len(years) != 2:
        return None
    pairs: dict[str, dict[str, str]] = {}
    for c in columns:
        if len(asked := years & set(_YEAR.findall(c))) == 1:
            pairs.setdefault(_YEAR.sub(" ", c).strip(" ·"), {}).setdefault(asked.pop(), c)
    pairs = {m: p for m, p in pairs.items() if len(p) == 2}
    if len(pairs) > 1:
        fit = {m: len(_stems(question) & _stems(m)) for m in pairs}
        pairs = {m: p for m, p in pairs.items() if fit[m] == max(fit.values()) > 0}
    if len(pairs) != 1:
        return None
    earlier, later = sorted(years)
    found = next(iter(pairs.values()))
    return found[earlier], found[later]


def column_scores(columns: list[str], question: str, years: set[str]) -> list[int]:
    """How well each header says what is asked: the year asked counts most, then the question's words."""
    asked = _stems(question)
    return [3 * len(years & set(_YEAR.findall(c))) + len(asked & _stems(c)) for c in columns]


def clear_column(columns: list[str], question: str, years: set[str]) -> str | None:
    """The column code can name: the only one, or the one whose header fits best by itself; of headers
    that fit as well, the one that says nothing else ("Disapprove Strongly", not "Disapprove Strongly +
    Disapprove Not strongly")."""
    if len(columns) == 1:
        return columns[0]
    scores = column_scores(columns, question, years)
    best = max(scores)
    tied = [c for c, s in zip(columns, scores) if s == best]
    extra = [len(_WORD.findall(c.lower())) for c in tied]
    return tied[extra.index(min(extra))] if best > 0 and extra.count(min(extra)) == 1 else None


def named_columns(columns: list[str], question: str) -> list[str]:
    """The columns whose headers the question spells out in full ("the highest percentage that are very
    confident and not at all confident": 'Very' and 'Not at all'), for a list of extremes."""
    asked = set(_WORD.findall(question.lower()))
    return [c for c in columns if (words := set(_WORD.findall(c.lower()))) and words <= asked]


def asks_amount(question: str) -> bool:
    """Whether the question asks for the extreme's value too ("which group, and what is the drop?")."""
    return bool(_AMOUNT.search(question))


def program(comparison: Comparison, columns: list[str], amount: bool = False) -> str:
    """The comparison as a program over the table `df` (run by the whitelist evaluator, shown to users):
    the extreme row of a column, of the change between two year columns, or of each of several columns;
    with `amount`, the row and its value (a change by its size)."""
    pick = "idxmax" if comparison.way == "max" else "idxmin"
    if comparison.change:
        earlier, later = comparison.change
        series = f"(df[{later!r}] - df[{earlier!r}]).dropna()"
    elif len(columns) == 1:
        series = f"df[{columns[0]!r}].dropna()"
    else:
        return f"ans = [{', '.join(f'df[{c!r}].dropna().{pick}()' for c in columns)}]"
    if not amount:
        return f"ans = {series}.{pick}()"
    size = f"abs(s.{comparison.way}())" if comparison.change else f"s.{comparison.way}()"
    return f"s = {series}\nans = [s.{pick}(), {size}]"


class Gap(NamedTuple):
    frame: pd.DataFrame  # numbers only: index = row labels
    rows: tuple[str, str]


def gap(frame: pd.DataFrame, question: str, years: set[str]) -> Gap | None:
    """"The gap between the youngest and the oldest age group who …", "the difference between Democrats
    and Republicans in …": the two rows of the table the question names (the age rows with the lowest
    and the highest ages for the youngest and the oldest), when it names two."""
    match = _GAP.search(question)
    numbers = numeric_table(frame, years) if match else None
    if numbers is None:
        return None
    labels = list(map(str, numbers.index))
    named = [match["a"], match["b"]]
    ends = [next((end for word, end in _AGE_ENDS.items() if word in n.lower()), None) for n in named]
    if all(ends):
        ages = {label: int(m[1]) for label in labels if (m := _AGE.search(label))}
        rows = [end(ages, key=ages.get) for end in ends] if len(ages) >= 2 else None
    else:
        rows = [labels[r] for r in found] if (found := option_rows(labels, named)) else None
    return Gap(numbers, tuple(rows)) if rows and rows[0] != rows[1] else None


def gap_program(found: Gap, column: str) -> str:
    first, second = found.rows
    return f"ans = abs(df.loc[{first!r}, {column!r}] - df.loc[{second!r}, {column!r}])"


def share_given(question: str) -> float | None:
    """The one share a question gives ("how do 5% of the Latinos see …"): what holds it is asked."""
    shares = _SHARE.findall(question)
    return float(shares[0]) if len(shares) == 1 else None


def holder_program(numbers: pd.DataFrame, value: float, question: str) -> str | None:
    """A program naming what the cells holding `value` stand for: the one column they are in, unless the
    question names it (a survey chart's answer, its rows being groups); else the one row they are in,
    unless the question names it. None when neither is one and unnamed."""
    cells = [(row, column) for column in numbers.columns for row in numbers.index[numbers[column] == value]]
    asked = _stems(question)
    rows, columns = {str(r) for r, _ in cells}, {str(c) for _, c in cells}
    if len(columns) == 1 and not asked & _stems(next(iter(columns))):
        return f"ans = df.columns[(df == {value!r}).sum() > 0].tolist()"
    if len(rows) == 1 and not asked & _stems(next(iter(rows))):
        return f"ans = df.index[(df == {value!r}).sum(axis=1) > 0].tolist()"
    return None


def as_number(cell: str) -> float | None:
    text = cell.strip()
    if not _NUMERIC.match(text):
        return None
    negative = "(" in text or text.startswith("-")
    value = float(re.sub(r"[^\d.]", "", text))
    return -value if negative else value


def _share_numeric(column: pd.Series) -> float:
    cells = [c for c in column if str(c).strip() not in ("", "-", "—", "nan", "None")]
    return sum(as_number(str(c)) is not None for c in cells) / max(len(cells), 1)


def _stems(text: str) -> set[str]:
    """Content words cut to six letters, so that "operations" meets "operating"."""
    return {w[:6] for w in _WORD.findall(text.lower()) if w not in STOPWORDS}
