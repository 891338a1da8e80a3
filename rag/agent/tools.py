"""The agent's tools. Each tool's docstring is its contract with the language model.

A search tool runs one hop: it announces it, searches off the event loop, retries a low-scoring
search once with a paraphrase, records the fragments in the run state and reports them as events.
What it returns is the ReAct observation: a short account of what was found and which words of the
question no evidence holds yet — the reader, not the search step, reads the fragments themselves.
"""

from __future__ import annotations

import asyncio
import inspect
import time

from llama_index.core.tools import FunctionTool

from rag import prompts
from rag.agent.calls import EventStream, ModelCalls
from rag.agent.documents import SearchedDocuments
from rag.agent.events import HopEnd, HopStart, Paraphrase
from rag.agent.state import RunState
from rag.agent.strategy import Search
from rag.guard import withhold_instructions
from rag.records import Hit, SearchResult
from rag.text import content_words

TOOL_MODALITY: dict[str, str] = {
    "TextSearch": "text",
    "TableSearch": "table",
    "ImageCaptionSearch": "image_caption",
    "DocumentOutline": "outline",
}

READ_PAGE = "ReadPage"


class SearchTools:
    """TextSearch, TableSearch, ImageCaptionSearch and DocumentOutline over one run's state."""

    def __init__(self, state: RunState, search: Search, model: ModelCalls, stream: EventStream,
                 documents: SearchedDocuments) -> None:
        self.state, self.search, self.model, self.stream, self.documents = state, search, model, stream, documents

    async def text_search(self, query: str) -> str:
        """Search the paragraphs of the documents: facts, explanations, names, dates and
        numbers written in sentences."""
        return await self.hop(query, "text", "TextSearch")

    async def table_search(self, query: str) -> str:
        """Search the rows of the documents' tables, each row with its column headers:
        financial figures, statistics, values per year or per group."""
        return await self.hop(query, "table", "TableSearch")

    async def image_caption_search(self, query: str) -> str:
        """Search the captions, titles and values of the documents' charts and figures:
        survey results, trends and shares shown in graphs."""
        return await self.hop(query, "image_caption", "ImageCaptionSearch")

    async def document_outline(self, query: str) -> str:
        """The structure of the documents: page count, headings with their pages, and each page's
        tables and figures with their captions. For questions about the document itself, or to find
        the page of a part by its heading and then ReadPage it."""
        return await self.hop(query, "outline", "DocumentOutline")

    async def read_page(self, page: int) -> str:
        """Read one whole page by its number (its text, table rows and chart values): for a page the
        question names or a search found, when the fragments alone do not answer."""
        return f"page {page}"  # the workflow's read step does the reading (rag/agent/react.py)

    def tools(self) -> list[FunctionTool]:
        methods = {"TextSearch": self.text_search, "TableSearch": self.table_search,
                   "ImageCaptionSearch": self.image_caption_search, "DocumentOutline": self.document_outline,
                   READ_PAGE: self.read_page}
        return [FunctionTool.from_defaults(async_fn=fn, name=name, description=" ".join(inspect.getdoc(fn).split()))
                for name, fn in methods.items()]

    async def hop(self, query: str, modality: str, why: str) -> str:
        """One search hop: announce it, search off the event loop and show what it found; then, when the
        scores are low, retry once with a paraphrase. That is a model call, which may wait in the model's
        queue, so the first results are on screen before it."""
        state = self.state
        state.hops += 1
        self.stream.emit(HopStart(run_id=state.run_id, hop=state.hops, query=query, modality=modality, why=why))
        if modality == "outline":
            state.last_new_ids = ["outline"]
            found = SearchResult(query=query, route=["outline"], hits=[])
            self.stream.emit(self.hop_end(found, modality, ["outline"], time.time()))
            return self.documents.outline_text()
        start = time.time()
        result = await asyncio.to_thread(self.search.search, query, modality)
        state.last_route = list(result.route)
        hits, new_ids = result.hits, state.remember(result.hits)
        self.stream.emit(self.hop_end(result, modality, new_ids, start))
        if _best(hits) <= state.settings.low_score:  # nothing found (or, in the paper's design, too little)
            start = time.time()
            if retried := await self._paraphrase_retry(query, modality, hits):
                more = state.remember(retried.hits)
                state.last_new_ids = new_ids = new_ids + more
                hits = retried.hits
                self.stream.emit(self.hop_end(retried, modality, more, start))
        return observation(state, hits, new_ids)

    def hop_end(self, result: SearchResult, modality: str, new_ids: list[str], start: float) -> HopEnd:
        return HopEnd(run_id=self.state.run_id, hop=self.state.hops, query=result.query, modality=modality,
                      route=list(result.route), hits=result.hits, new_ids=new_ids,
                      retrieval_ms=round((time.time() - start) * 1000, 1), timings_ms=result.timings_ms,
                      t_start=start, t_end=time.time())

    async def _paraphrase_retry(self, query: str, modality: str, hits: list[Hit]) -> SearchResult | None:
        """The hop searched again in other words; the result holds both searches' hits, best first."""
        text = (await self.model.complete(prompts.PARAPHRASE.format(query=query), "paraphrase")).strip()
        paraphrased = text.splitlines()[0].strip(' "') if text else ""
        if not paraphrased or paraphrased.lower() == query.lower():
            return None
        self.stream.emit(Paraphrase(run_id=self.state.run_id, hop=self.state.hops, original=query,
                                    paraphrased=paraphrased, best_score=_best(hits)))
        retry = await asyncio.to_thread(self.search.search, paraphrased, modality)
        merged = {h.fragment.id: h for h in hits + retry.hits}
        limit = max(len(hits), len(retry.hits))
        return retry.model_copy(update={"query": query,
                                        "hits": sorted(merged.values(), key=lambda h: h.order, reverse=True)[:limit]})


def observation(state: RunState, hits: list[Hit], new_ids: list[str]) -> str:
    """What the search step learns from a hop: counts, pages, the best fragment, what is still missing."""
    missing = missing_words(state)
    best = f'"{withhold_instructions(hits[0].fragment.text)[:160]}" (p. {hits[0].fragment.page})' if hits else "nothing"
    pages = ", ".join(str(p) for p in dict.fromkeys(h.fragment.page for h in hits)) or "none"
    return prompts.OBSERVATION.format(count=len(hits), new=len(new_ids), pages=pages, best=best,
                                      missing=", ".join(missing) or "none")


def missing_words(state: RunState) -> list[str]:
    """The question's words (stemmed) that no fragment found so far holds."""
    held = set(content_words(" ".join(h.fragment.text for h in state.seen.values())))
    return [t for t in state.question.terms if t not in held]


def _best(hits: list[Hit]) -> float:
    return max((h.score for h in hits), default=0.0)

