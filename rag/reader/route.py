"""The route: which path answers a question, decided once from its `Question` and the skills switched on.

    path       what takes it                                              the one file to change
    printed    a phrase's times or pages, the URLs or e-mails printed     rag/reader/skills/printed.py
    outline    a count of the document's pages, figures, tables           rag/reader/skills/outline.py
    metric     a figure of the statements for a fiscal year               rag/reader/skills/metric.py
    names      a proper name no searched document may print               rag/reader/skills/names.py
    plan       two or three facts and what code makes of them             rag/reader/plan.py
    read       anything else: one fact read off the best pages            rag/reader/skills/read_free.py
                                                                          (read_page.py: typed, a server model's)

A document skill is on the route when its `applies(question)` holds; the first on it names the path. Some
decide only once they see the documents (a filing's statements, the words printed): then the next on the
route is tried, and after them the plan or the pages. A new kind of question is a skill's file and its name
in `Path` and `TAKES`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rag.reader.plan import Composition, composition
from rag.reader.question import Question
from rag.reader.skills import document_skills, page_skills

Path = Literal["printed", "outline", "metric", "names", "plan", "read"]
TAKES: dict[str, str] = {
    "printed": "what the text layer prints, counted or listed by code",
    "outline": "a count of the document itself, by code",
    "metric": "a figure of the statements for a fiscal year, computed by code",
    "names": "a proper name, refused if no document prints it",
    "plan": "two or three facts, each searched and read, composed by code",
    "read": "one fact, read off the best pages",
}


class Route(BaseModel):
    """Where a question goes: the document skills tried before any page is read, then a plan or the pages."""

    path: Path
    why: str
    skills: list[str] = Field(default_factory=list, description="the document skills on the route, in order; "
                                                                "the first with an answer or a refusal ends the run")
    plan: Composition | None = Field(None, description="the composition of a question of two or three facts")
    pages: list[str] = Field(default_factory=list, description="the page skills, the first reads; read_page last")

    @property
    def then(self) -> Literal["plan", "read"]:
        """Where the run goes when no document skill answers."""
        return "plan" if self.plan else "read"


def route(question: Question, enabled: list[str], plans: bool = True) -> Route:
    """The route of a question: the document skills that apply, in the settings' order; the plan's composition
    where the run plans (`plans`) and the wording asks for one; the page skills that read its pages."""
    skills = [s.name for s in document_skills(enabled) if s.applies(question)]
    kind = composition(question) if plans else None
    path = skills[0] if skills else "plan" if kind else "read"
    why = TAKES[path] + (f" ({kind})" if path == "plan" else "")
    return Route(path=path, why=why, skills=skills, plan=kind,
                 pages=[s.name for s in page_skills(question, enabled)])
