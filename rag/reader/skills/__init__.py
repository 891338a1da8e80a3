"""Skills: one general mechanism each, chosen by what the question asks, not by the order of an if chain.

A page skill reads one page (`solve(question, page, text, call)` → Solution or a reason it is not
there); a document skill answers from the document's structure before any page is read.
"""

from __future__ import annotations

from rag.reader.question import Question
from rag.reader.skills.base import Call, PageSkill, Read
from rag.reader.skills.compute import Compute
from rag.reader.skills.read_page import ReadPage

__all__ = ["Call", "PageSkill", "Read", "page_skill"]


def page_skill(question: Question, enabled: set[str]) -> PageSkill:
    """The skill that reads pages for this question: arithmetic when it asks for it, else reading."""
    for skill in (Compute(), ReadPage()):
        if skill.name in enabled | {"read_page"} and skill.applies(question):
            return skill
    return ReadPage()
