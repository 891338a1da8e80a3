"""What the model reads of a search: the fragments, and with parent pages, their pages' text.

MMRAG-DocQA's parent-page idea: a fragment is a pointer into its page, and the page around it
often holds what the fragment alone lacks (the table's other rows, the paragraph before).
Pages are excerpted around their fragments within a token budget, and shown in reading order
(document, then page, as ViDoRAG sorts merged results) so that consecutive pages read on.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from llama_index.core.utils import get_tokenizer

from rag.agent.guard import withhold_instructions
from rag.records import Hit

_PROBE = re.compile(r"[^|:]{6,}")


class Context(NamedTuple):
    text: str
    pages: list[tuple[str, int]]  # (doc, page) whose text the model reads, in reading order


def render(store, hits: list[Hit], many_files: bool, page_tokens: int = 0) -> Context:
    """Page excerpts (when page_tokens > 0) for the leading hits, then the fragments they do not hold."""
    excerpts = page_excerpts(store, hits, page_tokens) if page_tokens > 0 else {}
    # A paragraph the excerpt holds word for word is not repeated. Table rows are, though the page
    # text holds them too: a small model answers from the numbered fragments more than from pages.
    rest = [h for h in hits if h.fragment.modality != "text"
            or h.fragment.text not in excerpts.get((h.fragment.doc_id, h.fragment.page), "")]
    files = {(h.fragment.doc_id, h.fragment.page): h.fragment.file for h in hits}
    return Context(format_pages(excerpts, files, many_files) + format_fragments(rest, many_files), sorted(excerpts))


def format_fragments(hits: list[Hit], many_files: bool = False) -> str:
    """Fragments as quoted data the model can cite by page."""
    lines = []
    for n, hit in enumerate(hits, 1):
        f = hit.fragment
        text = withhold_instructions(f.text.replace("</fragments>", ""))
        lines.append(f'[{n}] {_where(f.file, f.page, many_files)}, {f.modality}, score {hit.score:.2f}: "{text}"')
    return "<fragments>\n" + "\n".join(lines or ["(nothing found)"]) + "\n</fragments>"


def format_pages(excerpts: dict[tuple[str, int], str], files: dict, many_files: bool) -> str:
    if not excerpts:
        return ""
    blocks = [
        f'[{_where(files[key], key[1], many_files)}, page text] "{withhold_instructions(text)}"'
        for key, text in sorted(excerpts.items())
    ]
    return "<fragments>\n" + "\n".join(blocks) + "\n</fragments>\n"


def page_excerpts(store, hits: list[Hit], tokens: int) -> dict[tuple[str, int], str]:
    """(doc, page) → the page's text around its fragments, best pages first until tokens run out."""
    order = list(dict.fromkeys((h.fragment.doc_id, h.fragment.page) for h in hits))
    if not order:
        return {}
    per_page = max(tokens // 2, 150)  # at least two pages share the budget
    texts: dict[tuple[str, int], str] = {}
    for doc_id in dict.fromkeys(d for d, _ in order):
        for page, text in store.page_texts(doc_id, [p for d, p in order if d == doc_id]).items():
            texts[(doc_id, page)] = text
    tokenize, out = get_tokenizer(), {}
    for key in order:
        if key not in texts or tokens < 60:
            continue
        anchors = [h.fragment.text for h in hits if (h.fragment.doc_id, h.fragment.page) == key]
        allowed = min(per_page, tokens)
        excerpt = excerpt_around(texts[key], anchors, allowed * 4)
        used = len(tokenize(excerpt))
        if used > allowed:  # dense numbers take more tokens per character than prose
            excerpt = excerpt_around(texts[key], anchors, len(excerpt) * allowed // used)
            used = len(tokenize(excerpt))
        out[key] = excerpt
        tokens -= used + 10
    return out


def excerpt_around(text: str, anchors: list[str], chars: int) -> str:
    """A window of the page text, centred on where its best fragment sits in it."""
    if len(text) <= chars:
        return text
    at = next((i for a in anchors if (i := _find(text, a)) is not None), 0)
    start = max(0, min(at - chars // 3, len(text) - chars))
    start = text.rfind("\n", 0, start) + 1 if start else 0
    window = text[start : start + chars]
    return ("… " if start else "") + window + (" …" if start + chars < len(text) else "")


def _find(text: str, fragment: str) -> int | None:
    """Where a fragment's words stand in its page: its opening, or for a table row, a cell."""
    for probe in [fragment[:60], *_PROBE.findall(fragment)]:
        probe = probe.strip()
        if len(probe) >= 6 and (i := text.find(probe)) >= 0:
            return i
    return None


def _where(file: str, page: int, many_files: bool) -> str:
    return f"{file} p.{page}" if many_files else f"p.{page}"
