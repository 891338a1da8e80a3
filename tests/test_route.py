"""The route: each kind of question gets its path once, from its record and the skills switched on; the run
shows it (`Routed`) and asks each document skill on it once (scripted LLM, control flow only)."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from scripted_llm import ScriptedLLM, found_on_page

from rag.agent.events import LLMCall, Planned, Routed
from rag.agent.run import run_question
from rag.reader import route, understand
from rag.reader.route import TAKES, Path
from rag.reader.skills import SKILLS
from rag.settings import ReaderSettings

ON = ReaderSettings().skills


@pytest.mark.parametrize("question, path", [
    ('How many times does "uptime credit" appear in the contract?', "printed"),
    ("How many appendices does the handbook have?", "outline"),
    ("What was the quick ratio for FY2022?", "metric"),
    ("Who chairs the board of Fernhill Glass Works?", "names"),
    ("How many more ferries did the east pier dock than the west pier?", "plan"),
    ("Why did the council close the harbour bridge?", "read"),
])
def test_each_kind_of_question_gets_its_path(question, path):
    got = route(understand(question), ON)
    assert got.path == path and got.why == TAKES[path] + (f" ({got.plan})" if path == "plan" else "")
    assert got.pages[-1] == "read_page" and (got.skills[:1] == [path] or not got.skills)


def test_the_route_keeps_the_settings_order_and_what_is_switched_on():
    question = understand("What was the quick ratio for FY2022 at Fernhill Glass Works?")
    assert route(question, ON).skills == ["metric", "names"]
    assert route(question, ["names", "metric"]).skills == ["names", "metric"]
    assert route(question, ["names"]).path == "names" and route(question, []).path == "read"
    plan = understand("How many more ferries did the east pier dock than the west pier?")
    assert route(plan, ON, plans=False).path == "read", "a strategy without plans reads the pages"


def test_every_document_skill_is_a_path_with_its_words():
    documents = {name for name, skill in SKILLS.items() if skill.reads == "documents"}
    assert documents <= set(get_args(Path)) and set(get_args(Path)) == set(TAKES)
    assert all(callable(getattr(SKILLS[name], "applies", None)) for name in documents)


@pytest.fixture
def asked(monkeypatch):
    """How often each document skill's `answer` is called."""
    calls: dict[str, int] = {}
    for name, skill in SKILLS.items():
        if skill.reads == "documents":
            def counted(*args, _name=name, _answer=skill.answer):
                calls[_name] = calls.get(_name, 0) + 1
                return _answer(*args)
            monkeypatch.setattr(skill, "answer", counted)
    return calls


def run(workspace, tmp_path, question, replies):
    events = []
    result = run_question(workspace, ScriptedLLM(replies=replies), question, trace_dir=tmp_path,
                          on_event=events.append)
    return result, events


def test_a_candidate_skill_is_asked_once_and_the_pages_are_read(pew_workspace, tmp_path, asked):
    question = "How did Latinos describe their children's prospects in 2021?"
    result, events = run(pew_workspace, tmp_path, question, [found_on_page()])
    [routed] = [e for e in events if isinstance(e, Routed)]
    assert (routed.path, routed.skills, routed.then) == ("metric", ["metric"], "read")
    assert asked == {"metric": 1}, "only the skills on the route, each once"
    assert [c.purpose for c in events if isinstance(c, LLMCall)] == ["read page"] and "p. " in result.answer
    assert [type(e).__name__ for e in events].index("Routed") < [type(e).__name__ for e in events].index("HopStart")


def test_a_plan_that_does_not_come_reads_the_pages_without_asking_the_skills_again(pew_workspace, tmp_path, asked):
    question = "How many more percentage points of Hispanic adults than of all U.S. adults rate their finances as good?"
    bad_plan = json.dumps({"parts": [question, question]})
    result, events = run(pew_workspace, tmp_path, question, [bad_plan, json.dumps({"found": False, "answer": ""})])
    [routed] = [e for e in events if isinstance(e, Routed)]
    assert (routed.path, routed.then) == ("metric", "plan") and not [e for e in events if isinstance(e, Planned)]
    assert asked == {"metric": 1}, "tried before the plan, not again before the pages of the one document"
    assert [c.purpose for c in events if isinstance(c, LLMCall)] == ["write plan", "read page"]
