"""Routing, the 6:2:2 merge and the parallel search on a real store."""

from __future__ import annotations

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import RouterRetriever
from llama_index.core.schema import QueryBundle
from llama_index.core.tools import RetrieverTool

from rag.records import MODALITIES, Fragment, Hit
from rag.retrieve import ModalitySelector, merge_by_quota, route_quotas


def _hit(modality: str, n: int, score: float) -> Hit:
    fragment = Fragment(id=f"{modality}{n}", doc_id="d", file="f.pdf", page=n + 1, modality=modality,
                        bbox=(0, 0, 1, 1), text=f"{modality} {n}")
    return Hit(fragment=fragment, score=score, collection=modality)


def _pools(sizes: dict[str, int]) -> dict[str, list[Hit]]:
    base = {"text": 0.5, "table": 0.7, "image_caption": 0.6}
    return {m: [_hit(m, i, base[m] - i * 0.01) for i in range(n)] for m, n in sizes.items()}


RATIO = {"text": 6, "table": 2, "image_caption": 2}


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        (["text"], {"text": 6, "table": 2, "image_caption": 2}),
        (["table"], {"table": 6, "text": 2, "image_caption": 2}),
        (["image_caption"], {"image_caption": 6, "text": 2, "table": 2}),
        (["text", "table"], {"text": 4, "table": 4, "image_caption": 2}),
    ],
)
def test_routed_modalities_take_the_largest_quotas(route, expected):
    assert route_quotas(route, RATIO) == expected


def test_merge_honours_6_2_2_even_when_other_scores_are_higher():
    merged = merge_by_quota(_pools({"text": 6, "table": 6, "image_caption": 6}), RATIO, 10)
    counts = {m: sum(h.collection == m for h in merged) for m in MODALITIES}
    assert counts == {"text": 6, "table": 2, "image_caption": 2}
    assert [h.score for h in merged] == sorted((h.score for h in merged), reverse=True)


def test_merge_fills_unused_slots_with_the_best_remaining_hits():
    merged = merge_by_quota(_pools({"text": 3, "table": 6, "image_caption": 0}), RATIO, 10)
    counts = {m: sum(h.collection == m for h in merged) for m in MODALITIES}
    assert counts == {"text": 3, "table": 6, "image_caption": 0}
    assert len({h.fragment.id for h in merged}) == len(merged)


@pytest.fixture(scope="module")
def selector(embed_model):
    return ModalitySelector(embed_model, threshold=0.35)


@pytest.mark.parametrize(
    ("query", "modality"),
    [
        ("What percentage of respondents said yes, according to the chart?", "image_caption"),
        ("What was the total revenue and net income in the income statement table for fiscal 2023?", "table"),
    ],
)
def test_router_picks_the_modality_of_clear_queries(selector, query, modality):
    result = selector.select(ModalitySelector.choices(), QueryBundle(query))
    assert [MODALITIES[i] for i in result.inds] == [modality]


def test_router_says_mixed_when_no_anchor_is_close(embed_model):
    strict = ModalitySelector(embed_model, threshold=0.99)
    result = strict.select(ModalitySelector.choices(), QueryBundle("What is the value in the table?"))
    assert [MODALITIES[i] for i in result.inds] == ["text", "table"]
    assert "mixed" in result.selections[0].reason


def test_selector_plugs_into_llama_index_routing(pew_workspace):
    indexes = pew_workspace.retriever.indexes
    tools = [RetrieverTool.from_defaults(indexes[m].as_retriever(similarity_top_k=3), name=c.name,
                                         description=c.description)
             for m, c in zip(MODALITIES, ModalitySelector.choices())]
    # RouterRetriever wants an LLM for its default selector; ours needs none, so a MockLLM stands in.
    router = RouterRetriever(selector=pew_workspace.retriever.selector, retriever_tools=tools, llm=MockLLM())
    nodes = router.retrieve("What share of Latinos said their finances were in excellent shape, per the chart?")
    assert nodes and {n.node.metadata["modality"] for n in nodes} <= {"image_caption", "text", "table"}


def test_auto_search_merges_three_collections_with_pages_bboxes_and_timings(pew_workspace):
    result = pew_workspace.search("How do Latinos see economic upward mobility for their children?")
    assert 0 < len(result.hits) <= 10
    assert set(result.per_collection) == set(MODALITIES)
    assert {"embed", "text", "table", "image_caption", "total"} <= set(result.timings_ms)
    assert 5 in [h.fragment.page for h in result.hits[:3]]
    top = result.hits[0]
    assert "mobility" in top.fragment.text
    assert 0.5 < top.score <= 1.0 and top.fragment.bbox[2] > top.fragment.bbox[0]
    assert [h.order for h in result.hits] == sorted((h.order for h in result.hits), reverse=True)


def test_single_collection_search_returns_k_hits_of_that_modality(pew_workspace):
    result = pew_workspace.search("economic mobility", modality="text", k=4)
    assert len(result.hits) == 4 and {h.collection for h in result.hits} == {"text"}
    assert set(result.timings_ms) >= {"text", "total"} and "table" not in result.timings_ms


def test_search_can_be_restricted_to_documents(pew_workspace):
    [doc] = pew_workspace.store.documents()
    assert pew_workspace.search("mobility", doc_ids=[doc.doc_id]).hits
    assert pew_workspace.search("mobility", doc_ids=["no-such-doc"]).hits == []


def test_a_search_with_its_own_settings_leaves_the_shared_ones_alone(pew_workspace):
    """A browser session's settings travel with its searches; the shared retriever keeps its defaults."""
    mine = pew_workspace.settings.model_copy(deep=True)
    mine.retrieval.k_per_collection, mine.retrieval.hybrid, mine.retrieval.parent_page = 2, False, False
    query = "How do Latinos see their personal finances?"
    assert len(pew_workspace.search(query, modality="text", settings=mine).hits) == 2
    assert len(pew_workspace.search(query, modality="text").hits) == 6
    view = pew_workspace.with_settings(mine)
    assert (view.store, view.retriever, view.embed_model) == (
        pew_workspace.store, pew_workspace.retriever, pew_workspace.embed_model), "one store, one index, one model"
    assert len(view.search(query, modality="text").hits) == 2
    assert pew_workspace.settings.retrieval.k_per_collection == 6 and pew_workspace.retriever.settings.hybrid


def test_the_page_read_first_is_a_page_the_question_names_else_the_best_found(pew_workspace):
    from rag.eval.retrieval import first_read

    doc = pew_workspace.store.documents()[0].doc_id
    assert first_read(pew_workspace, "What does the chart on page 5 show?", doc) == 5
    question = "How many Hispanics expect their family's finances to improve next year?"
    found = list(dict.fromkeys(h.fragment.page for h in pew_workspace.search(question, doc_ids=[doc]).hits))
    assert first_read(pew_workspace, question, doc) == found[0]
