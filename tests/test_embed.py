"""The local embedding model runs on onnxruntime and tokenizers alone: no torch, no transformers."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from conftest import ROOT

from rag.embed import MINILM_TOKENIZER

HEAVY = ("torch", "transformers", "sentence_transformers")


def test_the_tokenizer_in_the_repository_is_minilms_own():
    digest = hashlib.sha256(MINILM_TOKENIZER.read_bytes()).hexdigest()
    assert digest == "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
    assert "Apache License" in (MINILM_TOKENIZER.parent / "LICENSE").read_text()


def test_embedding_uses_the_uncased_bert_vocabulary_and_unit_vectors(embed_model):
    [ids] = [e.ids for e in embed_model._tokenizer.encode_batch(["Hello World"])]
    assert ids == [101, 7592, 2088, 102]  # [CLS] hello world [SEP]
    vector = embed_model.get_text_embedding("Revenue grew 5% in fiscal 2023.")
    assert len(vector) == 384 and abs(sum(v * v for v in vector) - 1) < 1e-4
    near = embed_model.get_text_embedding("Sales rose five percent in the 2023 fiscal year.")
    far = embed_model.get_text_embedding("The cat sat on the mat.")
    dot = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731
    assert dot(vector, near) > dot(vector, far) + 0.2


def test_the_app_never_imports_torch_or_transformers():
    """The app's modules, an embedding and the agent's imports, in a fresh interpreter."""
    code = (
        "import sys, streamlit, rag.workspace, rag.agent.run, rag.retrieve, rag.eval.answers\n"
        "from rag.embed import local_minilm\n"
        "local_minilm().get_text_embedding('hello')\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
