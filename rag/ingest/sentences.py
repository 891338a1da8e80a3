"""Figures a sentence prints for each of several years, as data: "Research costs were $88.2 million, $71.9
million and $65.0 million for the years ended June 30, 2022, 2021 and 2020" is a row, "Research costs", of three
fiscal years, as a statement's would be. A filing's notes state many figures no statement
prints (advertising, rent, stock-based compensation, an effective tax rate) this way.

A sentence is read only when it names as many figures as years, all in one unit (money in a scale, or
percentages); its subject is the words before the verb, back to the clause that starts it, without an aside
(", which …,", "(…)") or a leading "We recognized".
"""

from __future__ import annotations

import re

from rag.records import SCALES, Period, StatementFrame, StatementRow
from rag.text import page_scale

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_AMOUNT = rf"\$?\s?(?:{_NUMBER})(?:\s?%|\s(?:thousand|million|billion)\b)?"
_FY = r"(?:fiscal\s)?(?:19|20)\d\d"
_YEARS = rf"{_FY}(?:\s?,\s?{_FY})*\s?,?\s(?:and\s){_FY}"
_CLAUSE = re.compile(r"(?P<subject>[A-Z][^.;:$]{2,200}?)\s(?:was|were|totaled|totalled|amounted to|of|approximated)\s"
                     r"(?:approximately\s)?(?P<rest>\$?\s?\d.*?)(?:\.\s|;|$)")
# "$88.2 million, $71.9 million and $65.0 million for the years ended June 30, 2022, 2021 and 2020"
_LISTS = re.compile(rf"(?P<amounts>{_AMOUNT}(?:\s?,\s?{_AMOUNT})*\s?,?\sand\s{_AMOUNT})"
                    rf"\s(?:for|in|during|at|as of)\b[^.;$%]{{0,50}}?(?P<years>{_YEARS})\b")
# "$708 million in 2019, $693 million in 2018, and $753 million in 2017", "$8,958 in 2021, compared to $8,861 in 2020"
_PAIR = rf"({_AMOUNT})\s(?:in|for|during)\s({_FY})"
_PAIRS = re.compile(rf"(?P<pairs>{_PAIR}(?:\s?,?\s(?:and|compared (?:to|with)|versus)?\s?{_PAIR})+)\b")
_FIGURE = re.compile(rf"({_NUMBER})\s?(%|thousand|million|billion)?")
_YEAR = re.compile(r"(?:19|20)\d\d")
_ASIDE = re.compile(r",\s(?:which|that|including|excluding|net of)\b[^,]*,|\s?\([^()]*\)")
# what opens a subject and is not its name: a heading in capitals, a running head, "In 2019,", "We recognized"
_OPENING = re.compile(r"^(?:[A-Z0-9—–-]+\s)+(?=[A-Z][a-z])|"
                      r"^(?:.*\b(?:In|During|For)\s(?:fiscal\s)?(?:19|20)\d\d,\s|.*\b(?:Table of Contents|Index)\s)|"
                      r"^(?:We|The Company|The company)\s(?:\w+\s)?(?:recognized|recorded|incurred|had|paid)\s", re.S)
MAX_SUBJECT_WORDS = 10


def sentence_frames(text: str, page: int, doc_id: str, file: str, scale: str | None = None) -> list[StatementFrame]:
    """The frames of one page's sentences that print a figure per year. Dollars printed without a scale are
    in the one the page states, else in `scale` (the document's statements')."""
    text = " ".join(text.split())
    scale = page_scale(text)[1] or scale
    frames, start = [], 0
    while m := _CLAUSE.search(text, start):
        start = m.start("rest")  # a clause that is no series may hold one ("… at the end of 2021 … was $369.15")
        if not (series := _series(m["rest"])) or not (subject := _subject(m["subject"])):
            continue
        start = m.end()
        amounts, years = series
        figures = _FIGURE.findall(" ".join(amounts).replace("$", ""))
        units = {unit for _, unit in figures if unit} or {""}
        if len(figures) != len(years) or len(set(years)) != len(years) or len(units) > 1:
            continue
        unit, cells = units.pop(), [number for number, _ in figures]
        priced = not unit and any(re.search(r"\.\d\d$", c) for c in cells)  # "$369.15": a price, not a scaled sum
        dollars = "$" in "".join(amounts)
        frames.append(StatementFrame(
            doc_id=doc_id, file=file, page=page, title=m[0].strip(" ;"), kind="sentence",
            periods=[Period(header=str(y), year=y) for y in years],
            rows=[StatementRow(label=subject, values=[float(c.replace(",", "")) for c in cells], cells=cells,
                               per_share=unit == "%" or priced)],
            scale=unit if unit in SCALES else scale if dollars and not (unit or priced) else None,
            currency="$" if dollars else None))
    return frames


def _series(rest: str) -> tuple[list[str], list[int]] | None:
    """The amounts and the years a clause pairs them with: in two lists, or each amount with its year."""
    if m := _LISTS.match(rest):
        return [m["amounts"]], [int(y) for y in _YEAR.findall(m["years"])]
    if m := _PAIRS.match(rest):
        pairs = re.findall(_PAIR, m["pairs"])
        return [a for a, _ in pairs], [int(_YEAR.search(y)[0]) for _, y in pairs]
    return None


def _subject(words: str) -> str:
    """The row's name: the subject's last clause, without asides, at most a few words."""
    subject = _OPENING.sub("", _ASIDE.sub("", words)).strip(" ,")
    kept = subject.split()
    return " ".join(kept) if 0 < len(kept) <= MAX_SUBJECT_WORDS else ""
