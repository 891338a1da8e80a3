"""Skills: one general mechanism each, chosen by what the question asks, not by the order of an if chain.

A page skill reads one page (`solve(question, view, call)` → Solution, or why not); reading it
(`read_page`) applies to every question and comes last. The registry below is
where the reader finds them; `ReaderSettings.skills` names those switched on.
"""

from __future__ import annotations

from rag.reader.question import Question
from rag.reader.skills.base import Call, PageSkill, PageView, Read
from rag.reader.skills.read_page import ReadPage

__all__ = ["Call", "PageSkill", "PageView", "Read", "page_skills"]

SKILLS: list[PageSkill] = [ReadPage()]


def page_skills(question: Question, enabled: set[str]) -> list[PageSkill]:
    """The skills that may read pages for this question, the first of them reads: those switched on, then
    reading."""
    return [s for s in SKILLS if (s.name in enabled or s.name == "read_page") and s.applies(question)]
