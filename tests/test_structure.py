"""The house's rules, read from the code's own imports: modules import along the data's path
(ingest → store → retrieve → reader → agent → workspace → CLI and UI), never back up it and never
in a circle; only the store speaks to Chroma, and only rag/ids.py makes or reads an id."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FLOORS = [  # lowest first; a module may import its own floor or any below
    ("rag.records", "rag.ids", "rag.settings", "rag.timing", "rag.control", "rag.pipeline.progress",
     "rag.trace", "rag.prompts", "rag.guard", "rag.models", "rag.embed", "rag.text", "rag.pipeline.priority"),
    ("rag.ingest",),
    ("rag.store", "rag.sparse", "rag.pipeline"),
    ("rag.retrieve", "rag.outline"),
    ("rag.reader",),
    ("rag.agent",),
    ("rag.workspace",),
    ("rag.ui", "rag.cli", "rag.bench", "rag.eval", "rag.__main__", "app_pages", "streamlit_app"),
]


def modules() -> dict[str, Path]:
    files = [*ROOT.glob("rag/**/*.py"), *ROOT.glob("app_pages/*.py"), ROOT / "streamlit_app.py"]
    return {".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): f for f in files}


def imports(path: Path) -> set[str]:
    """Every module this file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


def floor(module: str) -> int:
    for n, names in enumerate(FLOORS):
        if any(module == name or module.startswith(name + ".") for name in names):
            return n
    raise AssertionError(f"{module} stands on no floor: add it to FLOORS")


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: {i for i in imports(f) if i in known and i not in (m, "rag")} for m, f in known.items()}


def test_no_module_imports_one_above_it_on_the_data_path():
    upward = [f"{m} → {i}" for m, targets in graph().items() for i in targets if floor(i) > floor(m)]
    assert not upward, upward


def test_no_import_cycles():
    edges, cycles = graph(), []

    def visit(node: str, path: list[str]) -> None:
        for nxt in edges[node]:
            if nxt in path:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(node)

    done: set[str] = set()
    for start in edges:
        if start not in done:
            visit(start, [start])
    assert not cycles, cycles


@pytest.mark.parametrize("pattern, home", [
    (r"\bimport chromadb\b|\bchromadb\.", "rag/store.py"),
    (r"\.collections\[|\bstore\.pages\.|\.registry\.", "rag/store.py"),
    (r"doc_id\[:\d+\]\}?:|\w*id\.split\(", "rag/ids.py"),
    # a document's stage is written in one module
    (r"stage=\"(indexing|searchable|vectors|complete)\"(?! if)|\bupdate\([^)]*\b(stage|stage_seconds)=", "rag/pipeline/stages.py"),
])
def test_details_stay_in_their_module(pattern, home):
    outside = [str(f.relative_to(ROOT)) for f in modules().values()
               if re.search(pattern, f.read_text()) and f.relative_to(ROOT).as_posix() != home]
    assert not outside, outside
