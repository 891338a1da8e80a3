"""How a run answers, as one typed record the workflow reads: the agent's way by default, or an evaluation's
baseline (rag/eval/modes.py), which changes what the first hop searches and whether the ReAct step follows."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from rag.records import SearchResult


class Search(Protocol):
    """One hop's search: a query and a collection ("auto": the router chooses) → fragments, best first."""

    def search(self, query: str, modality: str) -> SearchResult: ...


class DocumentSearch:
    """The workspace's search over the run's documents; the pages the question names rank first."""

    def __init__(self, workspace, doc_ids: list[str] | None, pages: list[int]) -> None:
        self.workspace, self.doc_ids, self.pages = workspace, doc_ids, pages

    def search(self, query: str, modality: str) -> SearchResult:
        return self.workspace.search(query, modality=modality, doc_ids=self.doc_ids, pages=self.pages)


class Strategy(BaseModel):
    """The agent: the router's first hop, then plans of parts, the ReAct step and further hops."""

    name: str = "agent"
    react: bool = Field(True, description="plans and ReAct steps after the first hop; else the first hop's pages "
                                          "are read and the run stops")
    first_hop: str = Field("auto", description="the first hop's collection; 'auto' routes")

    def searcher(self, workspace, doc_ids: list[str] | None, pages: list[int]) -> Search:
        return DocumentSearch(workspace, doc_ids, pages)


AGENT = Strategy()
