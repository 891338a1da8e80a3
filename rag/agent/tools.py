"""The agent's search tools. Each tool's docstring is its contract with the language model.

A tool returns the fragments themselves as its observation: no second LLM call condenses
them, because on a CPU that call would cost more seconds than the tokens it saves.
"""

# No `from __future__ import annotations` here: FunctionTool finds the Context parameter
# by its annotation object, which a string annotation would hide.
import asyncio
import inspect
import time

from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context

from rag.agent.events import HopEnd, HopStart, Paraphrase
from rag.agent.prompts import PARAPHRASE
from rag.agent.state import RunState, complete
from rag.records import Hit, Modality

TOOL_MODALITY: dict[str, Modality] = {
    "TextSearch": "text",
    "TableSearch": "table",
    "ImageCaptionSearch": "image_caption",
}


class SearchTools:
    """TextSearch, TableSearch and ImageCaptionSearch over one run's state."""

    def __init__(self, workspace, state: RunState, llm) -> None:
        self.workspace = workspace
        self.state = state
        self.llm = llm

    async def text_search(self, ctx: Context, query: str) -> str:
        """Search the paragraphs of the documents: facts, explanations, names, dates and
        numbers written in sentences."""
        return await self.hop(ctx, query, "text", "TextSearch")

    async def table_search(self, ctx: Context, query: str) -> str:
        """Search the rows of the documents' tables, each row with its column headers:
        financial figures, statistics, values per year or per group."""
        return await self.hop(ctx, query, "table", "TableSearch")

    async def image_caption_search(self, ctx: Context, query: str) -> str:
        """Search the captions, titles and sources of the documents' charts and figures:
        survey results, trends and shares shown in graphs."""
        return await self.hop(ctx, query, "image_caption", "ImageCaptionSearch")

    def tools(self) -> list[FunctionTool]:
        methods = {
            "TextSearch": self.text_search,
            "TableSearch": self.table_search,
            "ImageCaptionSearch": self.image_caption_search,
        }
        return [
            FunctionTool.from_defaults(async_fn=fn, name=name, description=inspect.getdoc(fn).replace("\n", " "))
            for name, fn in methods.items()
        ]

    async def hop(self, ctx: Context | None, query: str, modality: Modality | str, why: str) -> str:
        """One search hop: announce it, search off the event loop, retry low scores once."""
        state = self.state
        state.hops += 1
        hop = state.hops
        _emit(ctx, HopStart(run_id=state.run_id, hop=hop, query=query, modality=modality, why=why))
        t0 = time.perf_counter()
        result = await asyncio.to_thread(self._search, query, modality)
        hits = result.hits
        state.last_route = list(result.route)
        if _best(hits) < state.settings.low_score:
            hits = await self._paraphrase_retry(ctx, query, modality, hits)
        new_ids = state.remember(hits)
        context = await asyncio.to_thread(self.workspace.context, hits, state.many_files)
        _emit(ctx, HopEnd(
            run_id=state.run_id, hop=hop, query=query, modality=modality, route=list(result.route),
            hits=hits, new_ids=new_ids, retrieval_ms=round((time.perf_counter() - t0) * 1000, 1),
            timings_ms=result.timings_ms, t_start=time.time() - (time.perf_counter() - t0), t_end=time.time(),
            pages_read=[page for _, page in context.pages],
        ))
        return context.text

    def _search(self, query: str, modality: str):
        return self.workspace.search(query, modality=modality, doc_ids=self.state.doc_ids)

    async def _paraphrase_retry(self, ctx, query: str, modality: str, hits: list[Hit]) -> list[Hit]:
        text = (await complete(self.llm, ctx, self.state, PARAPHRASE.format(query=query), "paraphrase")).strip()
        paraphrased = text.splitlines()[0].strip(' "') if text else ""
        if not paraphrased or paraphrased.lower() == query.lower():
            return hits
        _emit(ctx, Paraphrase(run_id=self.state.run_id, hop=self.state.hops, original=query,
                              paraphrased=paraphrased, best_score=_best(hits)))
        retry = await asyncio.to_thread(self._search, paraphrased, modality)
        merged = {h.fragment.id: h for h in hits + retry.hits}
        limit = max(len(hits), len(retry.hits))
        return sorted(merged.values(), key=lambda h: h.score, reverse=True)[:limit]


def _best(hits: list[Hit]) -> float:
    return max((h.score for h in hits), default=0.0)


def _emit(ctx: Context | None, event) -> None:
    if ctx is not None:
        ctx.write_event_to_stream(event)
