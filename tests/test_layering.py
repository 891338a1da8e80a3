"""The layers of `rag/`, read from each module's own imports, and the size of its functions and modules.

A PDF's data flows up through the layers, and an import points down (or along its own layer), never up:

- shared: what every layer uses and that uses no layer: the records, text helpers, settings, ids, timing, the
  trace writer, the injection guard, run control, prompts, the models and the embedder (`rag/__init__.py`
  too, which only sets an environment default). They import one another and nothing above.
- ingest: PDF bytes → fragments, tables, charts and statements (`rag.ingest`); it needs only the shared layer.
- store: where fragments live and the way a document takes into it: Chroma and its frames (`rag.store`),
  BM25 (`rag.sparse`), the document's outline (`rag.outline`, read from the stored PDF), and the pipeline
  (`rag.pipeline`: the stages, the worker that runs them in the background, priorities and progress bars).
  The stages call ingest and the store; the worker is handed the workspace it reads with by its host and
  imports none.
- retrieve: routed search over the store (`rag.retrieve`).
- reading: the reader and the agent (`rag.reader`, `rag.agent`), the question answered from what retrieval and
  the store give; the agent imports the reader, which tests/test_structure.py keeps one way.
- workspace: the front door tying models, store, retrieval and the agent together (`rag.workspace`).
- front: what people and scripts run: the UI's helpers (`rag.ui`, `app_pages`, `streamlit_app`), the CLI
  (`rag.cli`, `rag.__main__`), the evaluation (`rag.eval`) and the benchmarks (`rag.bench`); they open a
  workspace or call the agent's run directly.

A module belongs to the layer of the longest name in LAYERS it starts with (`rag` itself only by name).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rag"
MAX_FUNCTION_LINES = 50
MAX_MODULE_LINES = 500
LAYERS = [  # lowest first
    ("shared", ("rag", "rag.records", "rag.text", "rag.settings", "rag.ids", "rag.timing", "rag.trace",
                "rag.guard", "rag.control", "rag.prompts", "rag.models", "rag.embed")),
    ("ingest", ("rag.ingest",)),
    ("store", ("rag.store", "rag.sparse", "rag.outline", "rag.pipeline")),
    ("retrieve", ("rag.retrieve",)),
    ("reading", ("rag.reader", "rag.agent")),
    ("workspace", ("rag.workspace",)),
    ("front", ("rag.ui", "rag.cli", "rag.__main__", "rag.eval", "rag.bench", "app_pages", "streamlit_app")),
]
PROJECT = ("rag", "app_pages", "streamlit_app")


def modules() -> dict[str, Path]:
    """Every module of rag/ by its dotted name."""
    return {_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer a module (or a module it imports) stands on."""
    found = [(len(name), n) for n, (_, names) in enumerate(LAYERS) for name in names
             if module == name or (name != "rag" and module.startswith(name + "."))]
    assert found, f"{module} stands on no layer: add it to LAYERS in {Path(__file__).name}"
    return max(found)[1]


def imports(module: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) for every project module this one imports, at its top or inside a function."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, path, node)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        yield from ((node.lineno, t) for t in targets if t.split(".")[0] in PROJECT)


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a `from … import` names, a relative one resolved against the importing module's package."""
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def functions(path: Path) -> Iterator[tuple[str, int, int]]:
    """(name, first line, lines from `def` to its last line) of every function and method, nested ones too."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def test_every_module_stands_on_a_layer():
    for module in modules():
        layer_of(module)


def test_no_module_imports_one_from_a_higher_layer():
    known = modules()
    upward = [
        f"{path.relative_to(ROOT)}:{line} {module} ({LAYERS[layer_of(module)][0]}) imports "
        f"{target} ({LAYERS[layer_of(target)][0]})"
        for module, path in known.items()
        for line, target in imports(module, path, known)
        if layer_of(target) > layer_of(module)
    ]
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_no_function_is_over_50_lines():
    long = [f"{path.relative_to(ROOT)}:{line} {name}: {size} lines" for path in modules().values()
            for name, line, size in functions(path) if size > MAX_FUNCTION_LINES]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_no_module_is_over_500_lines():
    long = [f"{path.relative_to(ROOT)}: {size} lines" for path in modules().values()
            if (size := len(path.read_text().splitlines())) > MAX_MODULE_LINES]
    assert not long, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(long)
