"""Code checks what the model read: an answer stands on the page it came from, or it is not an answer."""

from __future__ import annotations

import re
from collections import Counter

from rapidfuzz import fuzz

from rag.text import NUMBER, YEAR, content_words, numbers

LINE_MATCH = 80  # rapidfuzz partial ratio: the quoted line is on the page, up to OCR and spacing slips
WORDS_ON_PAGE = 0.5  # share of an answer's content words the page must hold


def on_page(line: str, page: str) -> bool:
    return bool(line.strip()) and fuzz.partial_ratio(" ".join(line.lower().split()),
                                                     " ".join(page.lower().split())) >= LINE_MATCH


def _written(n: float, held: set[float]) -> bool:
    return n in held or round(n * 100, 6) in held or round(n / 100, 6) in held


def values_on_page(answer: str, page: str) -> bool:
    """Every number of the answer is written on the page (as a value or as its percentage)."""
    held = set(numbers(page))
    return all(_written(n, held) for n in numbers(answer))


def _asked_lines(page: str, terms: list[str]) -> tuple[list[tuple[set[float], set[str]]], set[str]]:
    """The page's lines (numbers, words) and the question's words that name something on them: words on
    most of the page's lines (a table's header repeated on every row) name no line."""
    lines = [(set(numbers(line)), set(content_words(line))) for line in page.splitlines() if line.strip()]
    seen = Counter(w for _, words in lines for w in words)
    return lines, {w for w in terms if seen[w] <= len(lines) / 2 or len(lines) < 3}


def on_a_line_asked_about(answer: str, page: str, terms: list[str]) -> bool:
    """The answer's first number stands on a line that names something the question asks about: a value
    taken off another row ("Net earnings 1,419" for a revenue) is not the answer."""
    lines, asked = _asked_lines(page, terms)
    first = numbers(answer)[:1]
    return not asked or not first or any(_written(first[0], held) and asked & words for held, words in lines)


def near_a_line_asked_about(answer: str, page: str, terms: list[str]) -> bool:
    """A line holding most of the answer's words (any of those that hold as many), or a line next to it (its
    heading), names something the question asks about."""
    lines, asked = _asked_lines(page, terms)
    words = set(content_words(answer))
    if not asked or not words or not lines:
        return True
    shared = [len(held & words) for _, held in lines]
    most = max(shared)
    return not most or any(asked & near for at, n in enumerate(shared) if n == most
                           for _, near in lines[max(0, at - 1) : at + 2])


def words_on_page(answer: str, page: str) -> bool:
    words = content_words(answer)
    if not words:
        return True
    held = set(content_words(page))
    return sum(w in held for w in words) >= WORDS_ON_PAGE * len(words)


def as_printed(answer: str, page: str) -> str:
    """The answer with its number as the page prints it, when the model rewrote it in another scale ("59.268
    million" for the page's "59,268" in millions; "5.466312 million" for its "5,466,312" in thousands):
    code converts units, so the value goes back to the figure the page holds."""
    answer = re.sub(r"(?<=\d)\.0{2,}(?!\d)", "", answer)  # "10,573.0000…": zeros the page did not print
    found = NUMBER.search(answer)
    if not found:
        return answer
    value = numbers(found.group())[0]
    if values_on_page(answer, page):  # "1500" is shown as the page prints it, "1,500"
        grouped = [raw for raw in NUMBER.findall(page) if "," in raw and numbers(raw)[:1] == [value]]
        if grouped and "," not in found.group():
            return answer.replace(found.group(), grouped[0].strip().lstrip("("), 1)
        return answer
    for raw in NUMBER.findall(page):
        printed = numbers(raw)
        if printed and any(abs(printed[0] - value * factor) <= 1e-6 * abs(printed[0]) for factor in _FACTORS):
            return raw.strip().lstrip("(").strip()
    # a small model that does not stop: "8,958,861,635,674.0000" goes on past the page's "8,958"
    groups = found.group().split(",")
    for n in range(len(groups) - 1, 1, -1):
        head = ",".join(groups[:n])
        if re.search(rf"(?<![\d,.]){re.escape(head.lstrip('$('))}(?![\d,])", page):
            return head
    return answer


_FACTORS = (1e3, 1e6, 1e9, 1e-3, 1e-6)


def in_asked_column(answer: str, page: str, years: list[str]) -> str:
    """The figure of the asked year's column when the model copied another column of the same row."""
    found = NUMBER.search(answer)
    if len(years) != 1 or not found:
        return answer
    value, header, named = numbers(found.group())[0], [], []
    for line in page.splitlines():
        if " | " not in line and YEAR.search(line) and all(n <= 31 or f"{n:.0f}" in line for n in numbers(line)):
            named = list(dict.fromkeys(named + YEAR.findall(line)))  # a header of dates, over one line or more
            header = named if len(named) >= 2 else header
            continue
        if any(n > 31 for n in numbers(line)):
            named = []
        columns = _columns(line, header)
        if (printed := columns.get(years[0])) and value in numbers(" ".join(columns.values())):
            rest = answer[found.end():].removeprefix(")") if found.group().startswith("(") else answer[found.end():]
            money = "$" * ("$" in found.group() and "$" not in printed)
            return answer[:found.start()] + money + printed + ")" * printed.startswith("(") + rest
    return answer


def _columns(line: str, header: list[str]) -> dict[str, str]:
    """A row's figures by the year of their column: its cells' headers ("January 28, 2023: 9,912 | …"), or
    under a header line of one year per column, the row's last figures."""
    cells = [cell.rsplit(": ", 1) for cell in line.split(" | ") if ": " in cell]
    if len(cells) >= 2:
        return {named[0]: v.strip() for h, v in cells if (named := YEAR.findall(h)) and numbers(v)}
    row = NUMBER.findall(line)[-len(header):] if header else []
    return {year: raw.strip() for year, raw in zip(header, row)} if len(row) == len(header) else {}


# Every check that can reject an answer, by name: `ReaderSettings.checks` names those enforced, and each
# page read records the verdict of all of them, so their cost in right answers is measured
# (docs/results.md, "Checks that earn their place").
CHECKS = ("year_on_page", "decisive_line", "values_on_page", "words_on_page", "has_number", "number_line",
          "words_line", "in_lines_read")


def items_on_page(items: list[str], page: str) -> tuple[list[str], dict[str, str]]:
    """A list's items that stand on the page, and the check's verdict when none does."""
    kept = [i for i in items if not verdicts(i, "", page, "text", [])]
    return kept, {} if kept else {"words_on_page": "none of its items is on the page"}


def verdicts(answer: str, line: str, page: str, asked: str, terms: list[str], years: list[str] = (),
             lines_read: str | None = None, counts: bool = False) -> dict[str, str]:
    """Each check the answer fails, by name, with why it does not stand on its page; a count (`counts`) is the
    reader's tally of things, so no line need print it."""
    if not answer.strip():
        return {"empty": "the answer is empty"}
    failed: dict[str, str] = {}
    if missing := [y for y in years if y not in page]:  # a page of another year does not answer for this one
        failed["year_on_page"] = f"the page does not mention {', '.join(missing)}"
    if asked == "yes_no":
        if not on_page(line, page):
            failed["decisive_line"] = "the line that decides it is not on the page"
        return failed
    if not values_on_page(answer, page):
        failed["values_on_page"] = "its numbers are not on the page"
    elif lines_read is not None and not values_on_page(answer, lines_read):
        failed["in_lines_read"] = "its numbers are not in the lines read"
    if asked != "number" and not numbers(answer) and not words_on_page(answer, page) and not on_page(answer, page):
        failed["words_on_page"] = "its words are not on the page"  # an answer with numbers is checked by its numbers
    if asked == "number" and not numbers(answer):
        failed["has_number"] = "it holds no number"
    elif asked == "number" and not counts and not on_a_line_asked_about(answer, page, terms):
        failed["number_line"] = "its number stands on no line about what is asked"
    if asked == "text" and not near_a_line_asked_about(answer, page, terms):
        failed["words_line"] = "its words stand on no line about what is asked"
    return failed

