"""A question of two facts on a real store, driven by a scripted LLM (control flow only, see scripted_llm.py):
the plan, one hop and one page read per part, the composition by code, the partial answer, the trace."""

from __future__ import annotations

import json
import re

import pytest
from scripted_llm import ScriptedLLM

from rag.agent.events import Computation, HopStart, LLMCall, PageRead, Planned
from rag.agent.run import run_question
from rag.trace import load_trace

# The two parts name no thing "than" the other in plain words ("than of the U.S. public"): the model writes them.
QUESTION = "How many more percentage points of Hispanic adults than of the U.S. public expect their family's " \
           "financial situation to improve?"
PARTS = ["What share of Hispanic adults expect their family's financial situation to improve?",
         "What share of the U.S. public expect their family's financial situation to improve?"]


def figure(*parts: str):
    """The page reader's reply for the parts that name one of `parts`: the first percentage the page prints on a
    line about finances; for any other part, not found."""
    def reply(prompt: str) -> str:
        page = prompt.split("<page>")[1].split("</page>")[0]
        asked = prompt.rsplit("Question:", 1)[1]
        lines = [ln for ln in page.splitlines() if "financ" in ln.lower()]
        value = next((m.group() for ln in lines if (m := re.search(r"\b\d{1,2}%", ln))), "")
        found = bool(value) and any(p in asked for p in parts)
        return json.dumps({"found": found, "answer": value if found else ""})
    return reply


@pytest.fixture
def ask(pew_workspace, tmp_path):
    def go(replies):
        events = []
        llm = ScriptedLLM(replies=replies)
        result = run_question(pew_workspace, llm, QUESTION, trace_dir=tmp_path, on_event=events.append)
        return result, events, llm
    return go


def test_each_part_is_its_own_hop_and_read_and_code_composes_the_answer(ask):
    read = figure("Hispanic adults", "U.S. public")
    result, events, llm = ask([json.dumps({"parts": PARTS}), read, read])
    [plan] = [e for e in events if isinstance(e, Planned)]
    assert plan.composition == "difference" and plan.parts == PARTS and plan.by == "model"
    assert [e.query for e in events if isinstance(e, HopStart)] == PARTS, "one hop a part, searched for the part"
    reads = [e for e in events if isinstance(e, PageRead)]
    assert len(reads) == 2 and all(r.found for r in reads), [(r.page, r.reason, r.said, r.checks) for r in reads]
    assert [c.purpose for c in events if isinstance(c, LLMCall)] == ["write plan", "read page", "read page"]
    a, b = (int(r.short) for r in reads)
    [computed] = [e for e in events if isinstance(e, Computation)]
    assert computed.program == f"part_1 = {a}\npart_2 = {b}\nans = abs(part_1 - part_2)"
    assert result.short_answer == str(abs(a - b)) and result.answer.startswith(f"{abs(a - b)}% = ")
    assert all(f"{r.short}% [p. {r.page}]" in result.answer for r in reads)
    assert len(result.hops) == 2 and result.plan == ["difference", *PARTS]
    assert {c.page for c in result.citations} == {r.page for r in reads}


def test_a_part_not_found_gives_a_partial_answer_and_the_trace_holds_the_plan(ask):
    read = figure("Hispanic adults")
    result, events, _ = ask([json.dumps({"parts": PARTS}), *[read] * 4])  # the second part: three pages, none has it
    first = next(e for e in events if isinstance(e, PageRead))
    assert "<missing>" in result.answer and f"{first.short}% [p. {first.page}]" in result.answer and result.missing
    assert result.short_answer == "Not answerable"
    trace = load_trace(result.trace)
    assert [r["kind"] for r in trace].index("plan") < [r["kind"] for r in trace].index("hop_start")
    assert next(r for r in trace if r["kind"] == "plan")["event"]["parts"] == PARTS


def test_a_plan_the_model_cannot_write_leaves_the_one_fact_read(ask):
    result, events, _ = ask([json.dumps({"parts": [QUESTION, QUESTION]}), figure("Hispanic")])
    assert not [e for e in events if isinstance(e, Planned)] and len(result.hops) == 1


def test_plans_switched_off_read_the_question_as_one_fact(pew_workspace, tmp_path):
    """`reader.plans` off (the setting the blind set measured the plan's reach with): no plan is asked for."""
    reader = pew_workspace.settings.reader
    pew_workspace.settings.reader = reader.model_copy(update={"plans": False})
    try:
        events = []
        llm = ScriptedLLM(replies=[figure("Hispanic")])
        result = run_question(pew_workspace, llm, QUESTION, trace_dir=tmp_path, on_event=events.append)
    finally:
        pew_workspace.settings.reader = reader
    assert not [e for e in events if isinstance(e, Planned)] and len(result.hops) == 1
    assert [c.purpose for c in events if isinstance(c, LLMCall)][:1] == ["read page"]
