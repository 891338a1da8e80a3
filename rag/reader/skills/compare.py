"""The extreme of a comparison ("which group is highest", "the lowest share"), taken by code over the typed
cells of a table or a chart on the page: the column the question names, the row whose value is largest or
smallest. No model call; the program run is the one shown. A page without a table the question fits is
left to the next skill."""

from __future__ import annotations

from rag.reader.answer import Solution
from rag.reader.program import run_program
from rag.reader.question import Question
from rag.reader.skills.base import Call, PageView, Read
from rag.records import Table
from rag.text import cell_number, content_words, plain_number


class Compare:
    name = "compare"

    def applies(self, question: Question) -> bool:
        return question.direction is not None and question.asked in ("text", "number") and not question.counted

    async def solve(self, question: Question, view: PageView, call: Call) -> Read:
        fits = sorted(((fit, table) for table in view.tables if (fit := _fit(table, question)) > 0),
                      key=lambda pair: -pair[0])
        if not fits or (len(fits) > 1 and fits[0][0] == fits[1][0]):
            return Read(defer=True, reason="no table or chart on the page fits the comparison alone")
        table = fits[0][1]
        column = _column(table, question)
        if column is None:
            return Read(defer=True, reason="no column of numbers the question names")
        rows = [(value, row[0]) for row in table.rows
                if column < len(row) and (value := _number(row[column])) is not None and row[0].strip()]
        extreme = (max if question.direction == "most" else min)(rows, default=(None, ""))
        if len(rows) < 2 or sum(v == extreme[0] for v, _ in rows) > 1:
            return Read(defer=True, reason="fewer than two rows to compare, or two that tie")
        pick, part = ("max" if question.direction == "most" else "min"), 0 if question.asked == "number" else 1
        program = f"# {table.header[column]}\nrows = {rows!r}\nans = {pick}(rows)[{part}]"
        answer = run_program(program)
        return Read(solution=Solution(skill=self.name, asked=question.asked, program=program, pages=[view.ref],
                                      value=plain_number(answer) if part == 0 else answer, by="code",
                                      line=f"{extreme[1]}: {plain_number(extreme[0])}"))


def _words(text: str) -> set[str]:
    return set(content_words(text))


def _fit(table: Table, question: Question) -> int:
    """How many of the question's words the table's title, headers and row labels hold."""
    title = table.chart.title if table.chart else ""
    held = _words(" ".join([title, *table.header, *(row[0] for row in table.rows)]))
    return len(held & set(question.terms)) + sum(y in " ".join(table.header) for y in question.years)


def _column(table: Table, question: Question) -> int | None:
    """The numeric column the question names (its words, its year), or the only one."""
    numeric = [c for c in range(1, len(table.header))
               if sum(c < len(row) and _number(row[c]) is not None for row in table.rows) >= 2]
    if len(numeric) == 1:
        return numeric[0]
    scored = sorted(((len(_words(table.header[c]) & set(question.terms)) + 2 * sum(y in table.header[c] for y in question.years), c)
                     for c in numeric), reverse=True)
    return scored[0][1] if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[0][0] > scored[1][0]) else None


def _number(cell: str) -> float | None:
    return cell_number("", cell)[0]
