"""The local embedder encodes a list in runs of similar length under a token budget: the vectors are
each text's own (as if encoded alone, unpadded), in the caller's order, and no run grows with the list."""

from __future__ import annotations

import random

import numpy as np
import pymupdf
import pytest
from conftest import PDFS, PEW

PAGES = [9, 10, 11]  # prose, chart labels and a table: short and long blocks


@pytest.fixture(scope="module")
def fragments() -> list[str]:
    """Text blocks of a few pages of a dev PDF in document order, and each page's whole text, which is
    longer than the model reads (truncated)."""
    with pymupdf.open(PDFS / PEW) as doc:
        texts = []
        for page in PAGES:
            texts += [b[4].strip() for b in doc[page - 1].get_text("blocks") if b[4].strip()]
            texts.append(doc[page - 1].get_text())
    return texts


def alone(model, text: str) -> np.ndarray:
    """The exact vector of one text: a batch of one, no padding."""
    ids = np.array([model._tokenizer.encode(text).ids], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    wanted = {i.name for i in model._session.get_inputs()}
    vector = model._session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0][0].mean(axis=0)
    return vector / np.linalg.norm(vector)


@pytest.mark.parametrize("order", ["document", "shuffled"])
def test_batched_vectors_are_each_texts_own_in_the_callers_order(embed_model, fragments, order):
    texts = list(fragments)
    if order == "shuffled":
        random.Random(7).shuffle(texts)
    lengths = [len(embed_model._tokenizer.encode(t).ids) for t in texts]
    assert len(texts) >= 100 and min(lengths) < 16 and max(lengths) == embed_model.max_length
    got = np.array(embed_model.get_text_embedding_batch(texts))
    expected = np.array([alone(embed_model, t) for t in texts])
    cosines = (got * expected).sum(axis=1) / np.linalg.norm(got, axis=1)
    assert cosines.min() >= 0.9999, [texts[i][:60] for i in np.flatnonzero(cosines < 0.9999)]


class _Spy:
    """Records the shape of each run instead of running the model."""

    def __init__(self, session) -> None:
        self.shapes: list[tuple[int, int]] = []
        self.get_inputs = session.get_inputs

    def run(self, _outputs, feeds):
        self.shapes.append(feeds["input_ids"].shape)
        return [np.ones((*feeds["input_ids"].shape, 384), dtype=np.float32)]


def test_a_huge_list_is_encoded_in_runs_bounded_by_the_token_budget(embed_model, fragments, monkeypatch):
    texts = [f"line {n}" for n in range(1500)] + fragments * (500 // len(fragments) + 1)
    texts = texts[:2000]
    spy = _Spy(embed_model._session)
    monkeypatch.setattr(embed_model, "_session", spy)
    vectors = embed_model._get_text_embeddings(texts)
    assert len(vectors) == len(texts) and sum(n for n, _ in spy.shapes) == len(texts)
    assert len(spy.shapes) > 1
    for n, longest in spy.shapes:
        assert n * longest <= embed_model.batch_tokens and n <= embed_model.max_batch
        assert longest <= embed_model.max_length
