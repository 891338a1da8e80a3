"""Multimodal RAG over PDF reports: ingest → store → retrieve → agent → trace."""

import os
from pathlib import Path

# tiktoken downloads its encodings unless pointed at a cache; llama-index-core ships one.
os.environ.setdefault(
    "TIKTOKEN_CACHE_DIR",
    str(Path(__import__("llama_index.core").core.__file__).parent / "_static" / "tiktoken_cache"),
)
