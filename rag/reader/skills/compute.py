"""Arithmetic, where the question asks for it: the model copies the page's numbers and writes an expression
over them; code checks each number stands on the page, computes, and shows the program."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rag import prompts
from rag.reader.answer import Solution
from rag.reader.program import ComputeError, run_program
from rag.reader.question import Question
from rag.reader.skills.base import Call, PageView, Read, page_messages
from rag.reader.verify import values_on_page
from rag.text import numbers, plain_number


class Value(BaseModel):
    name: str = Field(json_schema_extra={"maxLength": 20})
    number: str = Field(json_schema_extra={"maxLength": 30})


class Computed(BaseModel):
    found: bool
    values: list[Value] = Field(json_schema_extra={"maxItems": 6})
    expression: str = Field(json_schema_extra={"maxLength": 120})


class Compute:
    name = "compute"

    def applies(self, question: Question) -> bool:
        return question.arithmetic

    async def solve(self, question: Question, view: PageView, call: Call) -> Read:
        reply = await call("compute on page", page_messages(prompts.COMPUTE_SYSTEM, question, view), Computed, 200)
        if reply.value is None:
            return Read(said=reply.text[:300], reason=f"the reply did not parse ({reply.error})")
        got: Computed = reply.value
        if not got.found or not got.values:
            return Read(said=reply.text, reason="the page does not hold the numbers")
        names = {}
        for v in got.values:
            if not (found := numbers(v.number)) or not values_on_page(v.number, view.text):
                return Read(said=reply.text, reason=f"{v.number!r} is not on the page")
            names[v.name.strip()] = found[0]
        program = "\n".join(f"{k} = {plain_number(v)}" for k, v in names.items()) + f"\nans = {got.expression}"
        try:
            result = run_program(program)
        except (ComputeError, ArithmeticError, SyntaxError, TypeError, ValueError) as exc:
            return Read(said=reply.text, reason=f"the expression failed: {exc}")
        if not isinstance(result, (int, float)):
            return Read(said=reply.text, reason="the expression gave no number")
        value = rounded(float(result), question.decimals)
        return Read(said=reply.text, solution=Solution(skill=self.name, asked="number", value=value, program=program,
                                                       pages=[view.ref], by="code"))


def rounded(value: float, decimals: int | None) -> str:
    if decimals is not None:
        return f"{value:.{decimals}f}"
    return plain_number(round(value, 2)) if abs(value - round(value)) > 1e-9 else str(round(value))
