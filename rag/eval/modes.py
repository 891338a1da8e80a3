"""The answering modes an evaluation compares, all with the same LLM and the same answer prompt.

- `agent`: the ReAct agent, the full system.
- `single-pass`: the router's top-10 at 6:2:2, one LLM call, no agent.
- `text-only`: the paper's baseline: the PDF's plain page text, split into ~160-token
  chunks in one collection, top-10, one call. No tables, no figures, no router.
- `oracle`: the gold evidence pages' text as the context: what the model itself can do
  when retrieval is perfect.

Every mode yields the same hop events as the agent, so traces, the UI and `collect` work
unchanged, and the context of every mode is bounded to the same number of tokens.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

import pymupdf
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import QueryBundle
from llama_index.core.utils import get_tokenizer

from rag.agent.events import HopEnd, HopEvent, HopStart, RunStart, Stop
from rag.agent.prompts import FINAL_ANSWER
from rag.agent.run import answer_event, error_text, failure_events, stream_answer
from rag.agent.state import RunState, failure_answer, llm_call
from rag.context import format_fragments
from rag.eval import MODES
from rag.records import Fragment, Hit
from rag.trace import TraceWriter

CONTEXT_TOKENS = 2500
PLAIN_CHUNK_TOKENS = 160  # ten chunks ≈ the token count of the system's own top-10


async def stream_mode(
    ws, llm, mode: str, question: str, doc_ids: list[str] | None = None, trace_dir: Path = Path("logs"),
    model_name: str = "", gold_pages: list[int] | None = None,
) -> AsyncIterator[HopEvent]:
    """Answer one question in the given mode, yielding hop events; the last is the AnswerEvent."""
    if mode == "agent":
        async for event in stream_answer(ws, llm, question, doc_ids=doc_ids, trace_dir=trace_dir,
                                         model_name=model_name):
            yield event
        return
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    state = RunState(question=question, settings=ws.settings.agent, doc_ids=doc_ids,
                     many_files=len(doc_ids or ws.store.documents()) > 1)
    writer = TraceWriter(trace_dir, state.run_id)

    def record(event: HopEvent) -> HopEvent:
        event.run_id = state.run_id
        writer.write(event)
        return event

    yield record(RunStart(question=question, model=model_name, settings={"mode": mode}))
    yield record(HopStart(hop=1, query=question, modality=mode, why=mode))
    start, t0 = time.time(), time.perf_counter()
    hits, route = await asyncio.to_thread(context_for, ws, mode, question, doc_ids, gold_pages)
    state.hops = 1
    new_ids = state.remember(hits)
    yield record(HopEnd(hop=1, t_start=start, t_end=time.time(), query=question, modality=mode, route=route,
                        hits=hits, new_ids=new_ids, retrieval_ms=round((time.perf_counter() - t0) * 1000, 1)))
    context = ws.context(hits, state.many_files).text if mode == "single-pass" else format_fragments(hits, state.many_files)
    prompt = FINAL_ANSWER.format(fragments=context, question=question)
    start, t0, text, error = time.time(), time.perf_counter(), "", None
    try:
        async with asyncio.timeout(state.settings.timeout_s):
            response = await llm.acomplete(prompt)
        yield record(llm_call(state, "final_answer", t0, start, response.raw, response.text))
        text = response.text.strip()
    except TimeoutError:
        error = f"no answer within {state.settings.timeout_s:.0f} s"
    except Exception as exc:  # a server error becomes the answer's explanation
        error = error_text(exc)
    if error:
        for event in failure_events(state, error, failure_answer(state, error)):
            yield record(event)
        return
    state.stop_reason = "answered"
    yield record(Stop(hop=1, reason="answered"))
    yield record(answer_event(state, text, None))


def context_for(ws, mode: str, question: str, doc_ids, gold_pages) -> tuple[list[Hit], list[str]]:
    """The fragments a one-call mode puts in the prompt, and the route it took."""
    if mode == "single-pass":
        result = ws.search(question, doc_ids=doc_ids)
        return fit(result.hits, CONTEXT_TOKENS - ws.page_tokens), list(result.route)
    if mode == "text-only":
        return fit(plain_index(ws).search(question, doc_ids, k=10)), ["plain text"]
    return fit(oracle_hits(ws, doc_ids, gold_pages or [])), ["gold pages"]


def fit(hits: list[Hit], tokens: int = CONTEXT_TOKENS) -> list[Hit]:
    """The leading hits that fit in the token bound (a long one is cut, not dropped)."""
    tokenize, kept = get_tokenizer(), []
    for hit in hits:
        n = len(tokenize(hit.fragment.text))
        if n > tokens:
            if tokens > 50:
                cut = hit.fragment.text[: tokens * 4]
                kept.append(hit.model_copy(update={"fragment": hit.fragment.model_copy(update={"text": cut})}))
            break
        kept.append(hit)
        tokens -= n + 12
    return kept


def page_fragment(doc, page_no: int, text: str, n: int = 0) -> Fragment:
    return Fragment(id=f"{doc.doc_id[:16]}:plain:{page_no}:{n}", doc_id=doc.doc_id, file=doc.file, page=page_no,
                    modality="text", bbox=(0.0, 0.0, 0.0, 0.0), text=text)


def oracle_hits(ws, doc_ids: list[str] | None, pages: list[int]) -> list[Hit]:
    if not doc_ids or not pages:
        return []
    doc = ws.store.get(doc_ids[0])
    with pymupdf.open(ws.store.pdf_path(doc.doc_id)) as pdf:
        texts = [(p, pdf[p - 1].get_text().strip()) for p in sorted(pages) if 0 < p <= pdf.page_count]
    share = CONTEXT_TOKENS // max(1, len(texts))  # every gold page gets its part of the bound
    tokenize = get_tokenizer()
    return [Hit(fragment=page_fragment(doc, p, _head(t, share, tokenize)), score=1.0, collection="text")
            for p, t in texts if t]


def _head(text: str, tokens: int, tokenize) -> str:
    while len(tokenize(text)) > tokens:
        text = text[: int(len(text) * 0.9)]
    return text


class PlainTextIndex:
    """The text-only baseline's one collection: each page's plain text in ~160-token chunks,
    embedded with the system's embedding model, built in memory on first use per document."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.indexes: dict[str, VectorStoreIndex] = {}

    def prepare(self, doc_ids: list[str]) -> None:
        for doc_id in doc_ids:
            self._index(doc_id)

    def _index(self, doc_id: str) -> VectorStoreIndex:
        if doc_id not in self.indexes:
            doc = self.ws.store.get(doc_id)
            with pymupdf.open(self.ws.store.pdf_path(doc_id)) as pdf:
                texts = [(n, page.get_text()) for n, page in enumerate(pdf, 1)]
            pages = [Document(text=text, metadata={"page": n}) for n, text in texts if text.strip()]
            nodes = SentenceSplitter(chunk_size=PLAIN_CHUNK_TOKENS, chunk_overlap=16).get_nodes_from_documents(pages)
            for n, node in enumerate(nodes):
                node.metadata.update(doc_id=doc_id, file=doc.file, n=n)
            self.indexes[doc_id] = VectorStoreIndex(nodes, embed_model=self.ws.embed_model)
        return self.indexes[doc_id]

    def search(self, query: str, doc_ids: list[str] | None, k: int = 10) -> list[Hit]:
        doc_ids = doc_ids or [d.doc_id for d in self.ws.store.documents()]
        embedding = self.ws.embed_model.get_query_embedding(query)
        hits = []
        for doc_id in doc_ids:
            nodes = self._index(doc_id).as_retriever(similarity_top_k=k).retrieve(QueryBundle(query, embedding=embedding))
            doc = self.ws.store.get(doc_id)
            hits += [Hit(fragment=page_fragment(doc, n.node.metadata["page"], n.node.get_content(), n.node.metadata["n"]),
                         score=n.score or 0.0, collection="text") for n in nodes]
        return sorted(hits, key=lambda h: h.score, reverse=True)[:k]


_PLAIN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def plain_index(ws) -> PlainTextIndex:
    if ws not in _PLAIN:
        _PLAIN[ws] = PlainTextIndex(ws)
    return _PLAIN[ws]
