"""Skills: one general mechanism each, chosen by what the question asks, not by the order of an if chain.

A skill is one file in this package whose class registers itself (`@register`, skills/base.py). A document
skill answers from the searched documents before any page is read (`printed`: what the text layer prints,
counted by code; `outline`: the document's own counts; `metric`: a figure of the statements computed by code;
`names`: a proper name no searched document prints); a page
skill reads one page (`read_page`, which applies to every question and comes last).
`ReaderSettings.skills` names those switched on, in the order they are tried; each skill's `applies(question)`
puts it on a question's route (rag/reader/route.py).
"""

from __future__ import annotations

import importlib
import pkgutil

from rag.reader.question import Question
from rag.reader.skills.base import (SKILLS, DocumentSkill, Documents, JsonModel, PageSkill, PageView, Read,
                                    register)

__all__ = ["SKILLS", "DocumentSkill", "Documents", "JsonModel", "PageSkill", "PageView", "Read", "document_skills",
           "page_skills", "register"]

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")


def document_skills(enabled: list[str]) -> list[DocumentSkill]:
    """The document skills switched on, in the settings' order."""
    if unknown := [n for n in enabled if n not in SKILLS]:
        raise ValueError(f"unknown skill {', '.join(unknown)} in the settings (known: {', '.join(SKILLS)})")
    return [SKILLS[name] for name in enabled if SKILLS[name].reads == "documents"]


def page_skills(question: Question, enabled: list[str]) -> list[PageSkill]:
    """The skills that may read pages for this question, the first of them reads: those switched on that
    apply, in the settings' order, then reading."""
    on = [SKILLS[n] for n in enabled if n in SKILLS and SKILLS[n].reads == "page" and n != "read_page"]
    return [s for s in on if s.applies(question)] + [SKILLS["read_page"]]
