"""Multimodal retrieval: route the query, search the collections in parallel, merge by quota.

This is the one search function that the agent, the UI and the CLI all call.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import NamedTuple

import numpy as np
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.base_selector import BaseSelector, SelectorResult, SingleSelection
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.tools.types import ToolMetadata
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

from rag.ids import page_id
from rag.records import LAST_PAGE, MODALITIES, Hit, Modality, SearchResult
from rag.settings import RetrievalSettings
from rag.sparse import SparseIndex, fingerprint
from rag.store import PAGES, Store, fragment_from_node
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
    """Fill each modality's quota with its best hits, then any free slots by rank."""
    picked = [h for m, n in quotas.items() for h in per_collection.get(m, [])[:n]]
    taken = {h.fragment.id for h in picked}
    spare = sorted(
        (h for hits in per_collection.values() for h in hits if h.fragment.id not in taken),
        key=lambda h: h.order,
        reverse=True,
    )
    picked += spare[: max(0, total - len(picked))]
    return sorted(picked, key=lambda h: h.order, reverse=True)[:total]


def adaptive_k(scores: list[float], floor: int, ceiling: int) -> int:
    """ViDoRAG's adaptive top-K: fit two Gaussians to the similarities and keep the high one."""
    from sklearn.mixture import GaussianMixture

    x = np.array(scores[:ceiling]).reshape(-1, 1)
    if len(x) <= floor or np.ptp(x) < 1e-6:  # too few, or no gap to cut at
        return len(x)
    gmm = GaussianMixture(n_components=2, random_state=0).fit(x)
    keep = int((gmm.predict(x) == int(np.argmax(gmm.means_))).sum())
    return max(floor, min(ceiling, keep))


def cosine_from_chroma(score: float) -> float:
    # LlamaIndex's Chroma store reports exp(-distance); with cosine space, distance = 1 - cos.
    return 1.0 + math.log(score) if score > 0 else -1.0


class PageList(BaseRetriever):
    """Given pages, best first, as page nodes: fragments lead to their pages, and so do page numbers."""

    def __init__(self, pages: list[tuple[str, int]], store: Store) -> None:
        super().__init__()
        self._ids, self._store = list(dict.fromkeys(page_id(doc, page) for doc, page in pages)), store

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # The same nodes as the page collection's own searches return, so fusion sees one page once.
        ids = self._ids
        if not ids:
            return []
        return [NodeWithScore(node=node, score=1.0 / (1 + n)) for n, node in enumerate(self._store.nodes(PAGES, ids))]


class Found(BaseRetriever):
    """Results already found, as a retriever for fusion: fresh copies each time, since fusion rewrites
    their scores and the three collections' threads fuse them at once."""

    def __init__(self, results: list[NodeWithScore]) -> None:
        super().__init__()
        self._results = [(r.node, r.score) for r in results]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [NodeWithScore(node=node, score=score) for node, score in self._results]


class Retriever:
    """Shared by every session: `settings` are the defaults; a search may bring its own."""

    def __init__(self, store: Store, settings: RetrievalSettings) -> None:
        self.store = store
        self.settings = settings
        self.indexes = {
            name: VectorStoreIndex.from_vector_store(vs, embed_model=store.embed_model)
            for name, vs in store.vector_stores.items()
        }
        self.sparse = {
            name: SparseIndex(partial(store.nodes, name), store.settings.data_dir / "bm25" / name)
            for name in store.vector_stores
        }
        self.selector = ModalitySelector(store.embed_model, settings.router_threshold)
        self._pool = ThreadPoolExecutor(max_workers=len(MODALITIES), thread_name_prefix="retrieve")

    def warm(self) -> None:
        """Build the BM25 indexes the settings use now, so the next question does not wait for them."""
        names = [*MODALITIES] * self.settings.hybrid + [PAGES] * self.settings.parent_page
        scope = self._scope(None)
        for name in names:
            self._sparse(name, scope, 1)

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
        settings: RetrievalSettings | None = None,
        pages: list[int] | None = None,
    ) -> SearchResult:
        """Search one collection, or (auto) all three, merged into the 6:2:2 context; `pages` are the page
        numbers the question names (LAST_PAGE for the last), which rank first."""
        cfg = settings or self.settings
        t0 = time.perf_counter()
        embedding = embedding or self.store.embed_model.get_query_embedding(query)
        bundle = QueryBundle(query, embedding=embedding)
        timings = {"embed": ms_since(t0)}
        k = k or cfg.k_per_collection
        t_route = time.perf_counter()
        route = self.route(bundle) if modality == "auto" else [modality]
        timings["route"] = ms_since(t_route)
        searched = MODALITIES if modality == "auto" else (modality,)
        scope = self._scope(doc_ids)
        t_pages = time.perf_counter()
        page_searches = self._page_searches(bundle, _wide(k, cfg), scope, pages or []) if cfg.parent_page else []
        timings["pages"] = ms_since(t_pages)
        futures = {m: self._pool.submit(self._search_one, m, bundle, k, scope, cfg, page_searches) for m in searched}
        per_collection = {}
        for m, future in futures.items():
            per_collection[m], timings[m] = future.result()
        if modality == "auto":
            quotas = route_quotas(route, cfg.ratio)
            hits = merge_by_quota(per_collection, quotas, cfg.context_k)
        else:
            hits = per_collection[modality]
        timings["total"] = ms_since(t0)
        return SearchResult(query=query, route=route, hits=hits, per_collection=per_collection, timings_ms=timings)

    def _search_one(self, modality: Modality, bundle: QueryBundle, k: int, scope: Scope,
                    cfg: RetrievalSettings, pages: list[BaseRetriever]) -> tuple[list[Hit], float]:
        t0 = time.perf_counter()
        wide = _wide(k, cfg)
        hits = self._fragments(modality, bundle, wide, scope, cfg.hybrid)
        if cfg.parent_page:  # adaptive k reads the scores of every page; else the first k are all used
            hits = self._by_page(modality, hits, bundle, wide, pages, wide if cfg.adaptive_k else k)
        if cfg.adaptive_k:
            k = adaptive_k([h.score for h in hits], cfg.adaptive_k_min, cfg.adaptive_k_max)
        return hits[:k], ms_since(t0)

    def _fragments(self, name: str, bundle: QueryBundle, n: int, scope: Scope, hybrid: bool) -> list[Hit]:
        """Dense search of one collection, fused with BM25 by reciprocal rank when hybrid."""
        dense = self.indexes[name].as_retriever(similarity_top_k=n, filters=scope.filters)
        sparse = self._sparse(name, scope, n) if hybrid else None
        if sparse is None:
            return [self._hit(name, r.node, cosine_from_chroma(r.score or 0.0)) for r in dense.retrieve(bundle)]
        fused = _fuse([dense, sparse], n).retrieve(bundle)
        cosines = self._cosines(name, [r.node for r in fused], bundle.embedding)
        return [self._hit(name, r.node, cosines[r.node.node_id], r.score) for r in fused]

    def _sparse(self, name: str, scope: Scope, n: int) -> BaseRetriever | None:
        covered, key = scope.keyed[name]
        allowed = scope.allowed if scope.allowed is None else [d for d in scope.allowed if d in covered]
        return self.sparse[name].retriever(covered, allowed, n, key) if covered and allowed != [] else None

    def _page_searches(self, bundle: QueryBundle, n: int, scope: Scope, named: list[int]) -> list[BaseRetriever]:
        """The page collection's own searches (dense, the pages the question names, BM25): run once, the
        same for the three collections."""
        searches = [self.indexes[PAGES].as_retriever(similarity_top_k=n, filters=scope.filters)]
        if named:
            searches.append(PageList(self._named_pages(named, scope), self.store))
        if sparse := self._sparse(PAGES, scope, n):
            searches.append(sparse)
        return [Found(search.retrieve(bundle)) for search in searches]

    def _by_page(self, modality: Modality, hits: list[Hit], bundle: QueryBundle, n: int,
                 page_searches: list[BaseRetriever], keep: int) -> list[Hit]:
        """Rank pages by their fragments and their whole text; each of the `keep` best pages gives its
        best fragment (a page no fragment search reached costs a read of the store)."""
        own = PageList([(h.fragment.doc_id, h.fragment.page) for h in hits], self.store)
        pages = _fuse([own, *page_searches], n).retrieve(bundle)
        best = {}
        for h in hits:
            best.setdefault((h.fragment.doc_id, h.fragment.page), h)
        out = []
        for r in pages:
            key = (r.node.ref_doc_id, int(r.node.metadata["page"]))
            hit = best.get(key) or self._best_on_page(modality, key, bundle.embedding)
            if hit is not None:
                out.append(hit.model_copy(update={"rank": r.score}))
            if len(out) == keep:
                break
        return out

    def _named_pages(self, refs: list[int], scope: Scope) -> list[tuple[str, int]]:
        """(doc id, page) for page numbers: the printed number first, then the position in the file."""
        visible = set(scope.ready if scope.allowed is None else scope.allowed)
        docs = [d for d in self.store.documents() if d.doc_id in visible]
        printed = self.store.labelled_pages([str(r) for r in refs if r > 0], [d.doc_id for d in docs])
        return list(dict.fromkeys(printed + [(d.doc_id, d.pages if r == LAST_PAGE else r) for r in refs for d in docs]))

    def _best_on_page(self, modality: Modality, key: tuple[str, int], query: list[float]) -> Hit | None:
        """A page found by its text that no fragment search reached: its closest fragment."""
        nodes = self.store.nodes(modality, doc_ids=[key[0]], page=key[1])
        if not nodes:
            return None
        cosines = self._cosines(modality, nodes, query)
        best = max(nodes, key=lambda n: cosines[n.node_id])
        return self._hit(modality, best, cosines[best.node_id])

    def _cosines(self, name: str, nodes: list, query: list[float]) -> dict[str, float]:
        """Each node's cosine with the query: from its stored vector, or, for one only keyword search knows
        yet (a document still being embedded), from its text embedded now."""
        if not nodes:
            return {}
        vectors = {n.node_id: n.embedding for n in self.store.nodes(name, [n.node_id for n in nodes], embeddings=True)}
        if unknown := [n for n in nodes if n.node_id not in vectors]:
            embedded = self.store.embed_model.get_text_embedding_batch([n.get_content() for n in unknown])
            vectors.update(zip((n.node_id for n in unknown), embedded))
        ids = list(vectors)
        return dict(zip(ids, map(float, np.array([_unit(vectors[i]) for i in ids]) @ _unit(query))))

    @staticmethod
    def _hit(modality: Modality, node, score: float, rank: float | None = None) -> Hit:
        return Hit(fragment=fragment_from_node(node), score=score, collection=modality, rank=rank)

    def _scope(self, doc_ids: list[str] | None) -> Scope:
        """Restrict to the requested documents, and always to searchable ones."""
        docs = self.store.documents(include_indexing=True)  # one registry read per search
        ready = [d.doc_id for d in docs if d.visible]
        keyed = {name: _keyed([d for d in docs if d.stage == "complete" or (d.visible and name in _EARLY)])
                 for name in self.sparse}
        allowed = None if doc_ids is None else [d for d in doc_ids if d in ready]
        if doc_ids is None and len(ready) == len(docs):
            return Scope(ready, None, None, keyed)
        only = MetadataFilter(key="doc_id", value=allowed or ["-"], operator=FilterOperator.IN)
        return Scope(ready, allowed, MetadataFilters(filters=[only]), keyed)


class Scope(NamedTuple):
    """The documents a search may see: all searchable ones, the requested subset, as a Chroma filter; and
    per collection, the documents its keyword index covers and the key of what they hold."""

    ready: list[str]
    allowed: list[str] | None
    filters: MetadataFilters | None
    keyed: dict[str, tuple[list[str], str]]


# Collections a searchable document has words in; table rows and figures come with its complete stage, so
# the keyword indexes of those wait for it (a new upload does not rebuild them).
_EARLY = ("text", PAGES)


def _keyed(docs: list) -> tuple[list[str], str]:
    return [d.doc_id for d in docs], fingerprint([f"{d.doc_id}:{d.version}" for d in docs])


def _wide(k: int, cfg: RetrievalSettings) -> int:
    """Candidates per search: more than k when fusion, pages or adaptive k rank them again."""
    return max(k, cfg.candidates) if (cfg.hybrid or cfg.parent_page or cfg.adaptive_k) else k


def _fuse(retrievers: list[BaseRetriever], n: int) -> QueryFusionRetriever:
    # One query, no generated variants: the LLM is never called, MockLLM keeps Settings.llm unresolved.
    return QueryFusionRetriever(retrievers, llm=MockLLM(), mode=FUSION_MODES.RECIPROCAL_RANK, num_queries=1,
                                similarity_top_k=n, use_async=False)


def _unit(vector: list[float]) -> np.ndarray:
    v = np.array(vector)
    return v / np.linalg.norm(v)
