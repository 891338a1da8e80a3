"""Multimodal retrieval: route the query, search the collections in parallel, merge by quota.

This is the one search function that the agent, the UI and the CLI all call.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_selector import BaseSelector, SelectorResult, SingleSelection
from llama_index.core.schema import QueryBundle
from llama_index.core.tools.types import ToolMetadata
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

from rag.records import MODALITIES, Hit, Modality, SearchResult
from rag.settings import RetrievalSettings
from rag.store import Store, fragment_from_node
from rag.timing import ms_since

# Each anchor is the mean embedding of a few typical questions for that modality.
ROUTER_ANCHORS: dict[Modality, list[str]] = {
    "text": [
        "What does the report say about this topic?",
        "Explain why this happened according to the document.",
        "Who is described in the introduction and what is their role?",
        "Summarize the main argument of the section.",
    ],
    "table": [
        "What is the value in the table for this row and column?",
        "How much revenue, total and net income were reported in fiscal year 2023?",
        "Which row of the table has the highest number?",
        "List the figures reported in the financial statement table.",
    ],
    "image_caption": [
        "What does the chart show?",
        "According to the figure, what percentage of people said yes?",
        "Which line in the graph is highest in the survey chart?",
        "What is illustrated in the diagram or image?",
    ],
}
MIXED: tuple[Modality, ...] = ("text", "table")


class ModalitySelector(BaseSelector):
    """Embedding router over modality choices with a "mixed" outcome.

    LlamaIndex's EmbeddingSingleSelector always picks one choice; here a query whose best
    anchor similarity is under the threshold selects text and table together.
    """

    def __init__(self, embed_model, threshold: float, anchors: dict[str, list[str]] = ROUTER_ANCHORS):
        self._embed_model = embed_model
        self._threshold = threshold
        self._anchors = anchors
        self._vectors: dict[str, np.ndarray] = {}

    @staticmethod
    def choices() -> list[ToolMetadata]:
        return [ToolMetadata(name=m, description=" ".join(ROUTER_ANCHORS[m])) for m in MODALITIES]

    def _anchor(self, name: str) -> np.ndarray:
        if name not in self._vectors:
            vector = np.array(self._embed_model.get_agg_embedding_from_queries(self._anchors[name]))
            self._vectors[name] = vector / np.linalg.norm(vector)
        return self._vectors[name]

    def similarities(self, query: QueryBundle, choices: Sequence[ToolMetadata]) -> list[float]:
        embedding = query.embedding or self._embed_model.get_query_embedding(query.query_str)
        q = np.array(embedding) / np.linalg.norm(embedding)
        return [float(q @ self._anchor(c.name)) for c in choices]

    def _select(self, choices: Sequence[ToolMetadata], query: QueryBundle) -> SelectorResult:
        sims = self.similarities(query, choices)
        best = int(np.argmax(sims))
        if sims[best] >= self._threshold:
            picked = [best]
            why = f"closest anchor {choices[best].name} ({sims[best]:.2f})"
        else:
            picked = [i for i, c in enumerate(choices) if c.name in MIXED]
            why = f"mixed: best anchor {sims[best]:.2f} < {self._threshold}"
        return SelectorResult(selections=[SingleSelection(index=i, reason=why) for i in picked])

    async def _aselect(self, choices: Sequence[ToolMetadata], query: QueryBundle) -> SelectorResult:
        return self._select(choices, query)

    def _get_prompts(self) -> dict:
        return {}

    def _update_prompts(self, prompts) -> None:
        pass


def route_quotas(route: Sequence[Modality], ratio: dict[Modality, int]) -> dict[Modality, int]:
    """The routed modalities share the largest quotas; the others keep the smaller ones.

    With ratio 6:2:2, route [table] gives table 6, text 2, figure 2; mixed (text, table)
    gives 4 and 4, figure 2.
    """
    sizes = sorted(ratio.values(), reverse=True)
    routed = [m for m in MODALITIES if m in route]
    rest = [m for m in MODALITIES if m not in route]
    shared = sum(sizes[: len(routed)])
    quotas = {m: shared // len(routed) + (i < shared % len(routed)) for i, m in enumerate(routed)}
    quotas.update(dict(zip(rest, sizes[len(routed) :])))
    return quotas


def merge_by_quota(per_collection: dict[str, list[Hit]], quotas: dict[Modality, int], total: int) -> list[Hit]:
    """Fill each modality's quota with its best hits, then any free slots by score."""
    picked = [h for m, n in quotas.items() for h in per_collection.get(m, [])[:n]]
    taken = {h.fragment.id for h in picked}
    spare = sorted(
        (h for hits in per_collection.values() for h in hits if h.fragment.id not in taken),
        key=lambda h: h.score,
        reverse=True,
    )
    picked += spare[: max(0, total - len(picked))]
    return sorted(picked, key=lambda h: h.score, reverse=True)[:total]


def cosine_from_chroma(score: float) -> float:
    # LlamaIndex's Chroma store reports exp(-distance); with cosine space, distance = 1 - cos.
    return 1.0 + math.log(score) if score > 0 else -1.0


class Retriever:
    def __init__(self, store: Store, settings: RetrievalSettings) -> None:
        self.store = store
        self.settings = settings
        self.indexes = {
            m: VectorStoreIndex.from_vector_store(store.vector_stores[m], embed_model=store.embed_model)
            for m in MODALITIES
        }
        self.selector = ModalitySelector(store.embed_model, settings.router_threshold)
        self._pool = ThreadPoolExecutor(max_workers=len(MODALITIES), thread_name_prefix="retrieve")

    def route(self, query: QueryBundle) -> list[Modality]:
        result = self.selector.select(ModalitySelector.choices(), query)
        return [MODALITIES[i] for i in result.inds]

    def search(
        self,
        query: str,
        modality: Modality | str = "auto",
        k: int | None = None,
        doc_ids: list[str] | None = None,
        embedding: list[float] | None = None,
    ) -> SearchResult:
        """Search one collection, or (auto) all three, merged into the 6:2:2 context."""
        t0 = time.perf_counter()
        embedding = embedding or self.store.embed_model.get_query_embedding(query)
        bundle = QueryBundle(query, embedding=embedding)
        timings = {"embed": ms_since(t0)}
        k = k or self.settings.k_per_collection
        t_route = time.perf_counter()
        route = self.route(bundle) if modality == "auto" else [modality]
        timings["route"] = ms_since(t_route)
        searched = MODALITIES if modality == "auto" else (modality,)
        filters = self._filters(doc_ids)
        futures = {m: self._pool.submit(self._search_one, m, bundle, k, filters) for m in searched}
        per_collection = {}
        for m, future in futures.items():
            per_collection[m], timings[m] = future.result()
        if modality == "auto":
            quotas = route_quotas(route, self.settings.ratio)
            hits = merge_by_quota(per_collection, quotas, self.settings.context_k)
        else:
            hits = per_collection[modality]
        timings["total"] = ms_since(t0)
        return SearchResult(query=query, route=route, hits=hits, per_collection=per_collection, timings_ms=timings)

    def _search_one(self, modality: Modality, bundle: QueryBundle, k: int, filters) -> tuple[list[Hit], float]:
        t0 = time.perf_counter()
        retriever = self.indexes[modality].as_retriever(similarity_top_k=k, filters=filters)
        nodes = retriever.retrieve(bundle)
        hits = [
            Hit(fragment=fragment_from_node(n.node), score=cosine_from_chroma(n.score or 0.0), collection=modality)
            for n in nodes
        ]
        return hits, ms_since(t0)

    def _filters(self, doc_ids: list[str] | None) -> MetadataFilters | None:
        """Restrict to the requested documents, and always to fully indexed ones."""
        docs = self.store.documents(include_indexing=True)  # one registry read per search
        indexing = {d.doc_id for d in docs if d.status != "ready"}
        if doc_ids is None and not indexing:
            return None
        allowed = doc_ids if doc_ids is not None else [d.doc_id for d in docs]
        allowed = [d for d in allowed if d not in indexing] or ["-"]
        return MetadataFilters(filters=[MetadataFilter(key="doc_id", value=allowed, operator=FilterOperator.IN)])
