"""Benchmarks that print their figures: ingestion throughput, search latency, HNSW recall."""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from rag.ingest import stop_workers
from rag.records import MODALITIES
from rag.retrieve import Retriever
from rag.settings import Settings
from rag.store import Store
from rag.workspace import Workspace

# How synthetic fragments split over the collections, roughly as in real reports.
_SHARE = {"text": 0.6, "table": 0.2, "image_caption": 0.2}


def bench_ingest(settings: Settings, pdf_dir: Path) -> dict:
    """Ingest every PDF of a folder into a fresh store; report pages/s and where time goes."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(settings.model_copy(update={"data_dir": Path(tmp)}))
        _ = ws.store  # model load and store creation are start-up, not ingestion
        steps: dict[str, float] = {}
        by_document: dict[str, dict] = {}
        pages = fragments = 0
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        for path in sorted(Path(pdf_dir).glob("*.pdf")):
            t_doc = time.perf_counter()
            report = ws.ingest(path.read_bytes(), path.name)
            pages += report.pages
            fragments += sum(report.fragments.values())
            for step, s in report.timings.items():
                steps[step] = steps.get(step, 0.0) + s
            # Each stage's seconds from the start of the document's ingest (a stage it skipped, as a
            # document without a text layer skips "vectors", takes the next one's).
            stages = {f"{s}_s": report.stage_seconds.get(s) for s in ("searchable", "vectors", "complete")}
            stages["vectors_s"] = stages["vectors_s"] or stages["complete_s"]
            by_document[path.name] = {"pages": report.pages, "seconds": round(time.perf_counter() - t_doc, 2),
                                      **stages, "seconds_by_step": _by_size(report.timings)}
        seconds = time.perf_counter() - t0
    stop_workers()
    return {
        "pages": pages,
        "fragments": fragments,
        "seconds": round(seconds, 2),
        "pages_per_second": round(pages / seconds, 2),
        "fragments_per_second": round(fragments / seconds, 1),
        "seconds_by_step": _by_size(steps),
        # Steps in worker processes add up over both cores; a load over ~2 means other jobs shared them.
        "load_average_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "peak_rss_mb": peak_rss_mb(),
        "by_document": by_document,
    }


def _by_size(seconds: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 2) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])}


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory so far of this process (models, store, embedding) and of the largest of its
    ended children (a parsing worker: the kernel keeps the largest, not a sum)."""
    unit = 1 / 2**20 if sys.platform == "darwin" else 1 / 2**10  # ru_maxrss: bytes on macOS, KiB on Linux
    return {who: round(resource.getrusage(which).ru_maxrss * unit, 1)
            for who, which in (("process", resource.RUSAGE_SELF), ("largest_worker", resource.RUSAGE_CHILDREN))}


def bench_retrieve(settings: Settings, sizes: list[int], n_queries: int = 200, seed: int = 0) -> dict:
    """Search latency and HNSW recall@k on clustered synthetic vectors of the model's dimension."""
    ws = Workspace(settings)
    dim = len(ws.embed_model.get_query_embedding("dimension probe"))
    results = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            local = settings.model_copy(update={"data_dir": Path(tmp), "chroma_host": None})
            store = Store(local, ws.embed_model)
            corpus = _fill(store, size, dim, np.random.default_rng(seed))
            results.append(_measure(store, local, corpus, n_queries, np.random.default_rng(seed + 1)))
            results[-1]["fragments"] = size
    return {"dim": dim, "k": settings.retrieval.k_per_collection, "ef_search": settings.store.hnsw_ef_search,
            "results": results}


def _clustered(n: int, dim: int, rng: np.random.Generator, centers: np.ndarray) -> np.ndarray:
    # Real sentence embeddings cluster by topic; uniform random vectors would be an unfair worst case.
    picks = centers[rng.integers(0, len(centers), n)]
    vectors = picks + rng.normal(0, 0.6 / np.sqrt(dim), (n, dim))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _fill(store: Store, size: int, dim: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    centers = rng.normal(0, 1, (max(50, size // 200), dim))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    corpus = {}
    for modality in MODALITIES:
        vectors = _clustered(int(size * _SHARE[modality]), dim, rng, centers)
        for start in range(0, len(vectors), 5000):
            nodes = [
                TextNode(id_=f"{modality}-{i}", text=f"synthetic {i}", embedding=v.tolist(),
                         metadata={"file": "synthetic.pdf", "page": 1, "modality": modality,
                                   "bbox": "[0, 0, 1, 1]", "extra": "{}"},
                         relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="synthetic")})
                for i, v in enumerate(vectors[start : start + 5000], start)
            ]
            store.vector_stores[modality].add(nodes)
        corpus[modality] = vectors
    corpus["_centers"] = centers
    return corpus


def _measure(store: Store, settings: Settings, corpus: dict, n_queries: int, rng) -> dict:
    # The HNSW index alone: synthetic fragments have no words for BM25 and no pages.
    dense = settings.retrieval.model_copy(update={"hybrid": False, "parent_page": False, "adaptive_k": False})
    retriever = Retriever(store, dense)
    k = settings.retrieval.k_per_collection
    queries = _clustered(n_queries, corpus["_centers"].shape[1], rng, corpus["_centers"])
    latencies, recalls = [], []
    for q in queries:
        result = retriever.search("synthetic query", embedding=q.tolist(), modality="auto")
        latencies.append(result.timings_ms["total"])
        for modality in MODALITIES:
            exact = np.argsort(-(corpus[modality] @ q))[:k]
            found = {h.fragment.id for h in result.per_collection[modality]}
            recalls.append(len(found & {f"{modality}-{i}" for i in exact}) / k)
    return {
        "p50_ms": round(float(np.percentile(latencies, 50)), 2),
        "p95_ms": round(float(np.percentile(latencies, 95)), 2),
        "hnsw_recall_at_k": round(float(np.mean(recalls)), 4),
    }


def bench_real_recall(settings: Settings, questions: list[str]) -> dict:
    """HNSW recall@k against exact search on the store's own embeddings, real questions as queries."""
    ws = Workspace(settings)
    k = settings.retrieval.k_per_collection
    queries = np.array(ws.embed_model.get_text_embedding_batch(questions))
    recall = {}
    for modality in MODALITIES:
        nodes = ws.store.nodes(modality, embeddings=True)
        if len(nodes) <= k:
            continue
        vectors = np.array([n.embedding for n in nodes])
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        hnsw = ws.store.nearest(modality, queries.tolist(), k)
        position = {n.node_id: i for i, n in enumerate(nodes)}
        hits = []
        for found, q in zip(hnsw, queries):
            sims = vectors @ q
            kth = np.sort(sims)[-k]
            # Reports repeat lines (running headers): equal vectors tie, so count by similarity, not id.
            hits.append(np.mean([sims[position[f]] >= kth - 1e-6 for f in found]))
        recall[modality] = round(float(np.mean(hits)), 4)
    return {"queries": len(questions), "k": k, "ef_search": settings.store.hnsw_ef_search,
            "fragments": {m: ws.store.count(m) for m in MODALITIES}, "hnsw_recall_at_k": recall}


def bench_load(ws: Workspace, questions: list[str], pdf: Path, users: int = 8) -> dict:
    """`users` questions at once from threads (as Streamlit sessions ask them) while one PDF is
    ingested into the same store. Checks what concurrency can break, and times it."""
    from concurrent.futures import ThreadPoolExecutor

    from rag.trace import summarize

    _ = ws.llm, ws.retriever  # load once, before the threads race for it
    before = {m: ws.store.count(m) for m in MODALITIES}
    asked = [questions[i % len(questions)] for i in range(users)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=users + 1) as pool:
        ingest = pool.submit(ws.ingest, Path(pdf).read_bytes(), Path(pdf).name)
        answers = list(pool.map(ws.ask, asked))
        report = ingest.result()
    seconds = time.perf_counter() - t0
    after = {m: ws.store.count(m) for m in MODALITIES}
    latencies = sorted(a.total_s for a in answers)
    traces = [summarize(Path(a.trace)) for a in answers]
    return {
        "users": users,
        "seconds": round(seconds, 1),
        "questions_per_minute": round(60 * users / seconds, 2),
        "latency_s": {"p50": _percentile(latencies, 50), "p95": _percentile(latencies, 95), "max": latencies[-1]},
        "errors": [a.error for a in answers if a.error],
        "incomplete_traces": [t.run_id for t in traces if t.status != "done"],
        "ingest": {"outcome": report.outcome, "error": report.error, "seconds": round(report.seconds, 1)},
        "fragments_added": {m: after[m] - before[m] for m in MODALITIES},
        "fragments_expected": report.fragments if report.outcome == "ingested" else {m: 0 for m in MODALITIES},
    }


def bench_faults(ws: Workspace, question: str = "What is the main finding?") -> dict:
    """How long each model fault takes to reach the user as an answer that explains it: a misbehaving
    OpenAI-compatible server on loopback, the openai client's own retries and timeouts, this store."""
    from rag.agent.run import run_question
    from rag.bench.faults import FaultServer, Reply, completion, error
    from rag.models.llm import make_llm

    reply = completion('{"found": true, "answer": "The report says so"}')  # a page read's reply
    rate_limited = error(429, "Rate limit reached", "rate_limit_exceeded", **{"Retry-After": "0"})
    scenarios = {  # name: (the server's replies, request timeout s, max retries, question)
        "warm-up": ([reply], 1.0, 2, question),  # the agent's first run loads what it needs; not reported
        "no fault: an answer": ([reply], 1.0, 2, question),
        "429 twice, then an answer": ([rate_limited, rate_limited, reply], 1.0, 2, question),
        "503 that persists": ([error(503, "The server is overloaded.")], 1.0, 2, question),
        "slower than the request timeout": ([Reply(delay=60, body=reply.body)], 0.5, 1, question),
        "context length exceeded (400)": ([error(400, "maximum context length is 4096 tokens",
                                                 "context_length_exceeded")], 1.0, 2, question),
        "question over the length limit": ([reply], 1.0, 2, "Tell me about incomes. " * 2200),
    }
    rows = []
    with FaultServer() as server, tempfile.TemporaryDirectory() as traces, \
            _environment(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="bench-faults-not-a-key"):
        for name, (replies, timeout_s, retries, asked) in scenarios.items():
            server.play(*replies)
            settings = ws.settings.model_copy(deep=True)
            settings.llm.request_timeout_s, settings.llm.max_retries = timeout_s, retries
            settings.agent.low_score = -1.0  # no paraphrase call: every request is the fault's
            settings.reader.max_pages = 1
            t0 = time.perf_counter()
            result = run_question(ws.with_settings(settings), make_llm(settings), asked, trace_dir=Path(traces))
            rows.append({"fault": name, "seconds": round(time.perf_counter() - t0, 2), "requests": len(server.requests),
                         "answered": result.error is None, "error": (result.error or "")[:100]})
    return {"faults": rows[1:]}


@contextlib.contextmanager
def _environment(**values: str):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _percentile(values: list[float], q: int) -> float:
    return round(float(np.percentile(values, q)), 2) if values else 0.0


def bench_model(settings: Settings, repeats: int = 3) -> dict:
    """The embedded model on this machine, on a page read as the reader sends it: seconds for the prompt
    cold, with the fixed task already cached (llama.cpp reuses the longest common prefix of the last
    call), and for a page read before, asked another question (resumed from its kept state); seconds a
    generated token, free and held to the reply's JSON grammar. Medians of `repeats`."""
    from llama_index.core.llms import ChatMessage, MessageRole

    from rag import prompts
    from rag.models.llm import make_llm
    from rag.models.structured import schema_of
    from rag.reader.question import understand
    from rag.reader.skills.read_page import reply_model

    llm = make_llm(settings)
    rows = "\n".join(f"Line item {n} | 2023: {n * 1234:,} | 2022: {n * 1111:,}" for n in range(1, 13))
    question = understand("What was line item 7 in 2023?")

    def messages(system: str, page: int, asked: str = question.text) -> list[ChatMessage]:
        text = prompts.PAGE.format(page=page, file="bench.pdf", text=rows, question=asked)
        return [ChatMessage(role=MessageRole.SYSTEM, content=system), ChatMessage(role=MessageRole.USER, content=text)]

    def timed(call) -> tuple[float, int]:
        t0 = time.perf_counter()
        raw = call()
        raw = getattr(raw, "raw", raw)
        return time.perf_counter() - t0, raw["usage"]["completion_tokens"]

    schema = schema_of(reply_model(question))
    runs: dict[str, list[float]] = {"prompt_cold_s": [], "prompt_cached_task_s": [], "page_again_s": [],
                                    "token_free_s": [], "token_grammar_s": []}
    for n in range(repeats):
        task = f"Run {n}. {prompts.READ_PAGE_SYSTEM}"
        runs["prompt_cold_s"].append(timed(lambda: llm.chat(messages(task, 1), max_tokens=1))[0])
        runs["prompt_cached_task_s"].append(timed(lambda: llm.chat(messages(task, 2), max_tokens=1))[0])
        again = messages(task, 1, "What was line item 3?")  # page 1 again, after page 2: from its kept state
        runs["page_again_s"].append(timed(lambda: llm.chat(again, max_tokens=1))[0])
        base = timed(lambda: llm.chat(messages(task, 2), max_tokens=1))[0]  # the whole prompt cached: decode only
        for key, call in (("token_free_s", lambda: llm.chat(messages(task, 2), max_tokens=40, stop=[])),
                          ("token_grammar_s", lambda: llm.json_chat(messages(task, 2), schema, 40))):
            spent, generated = timed(call)
            runs[key].append((spent - base) / max(generated - 1, 1))
    median = {k: round(float(np.median(v)), 4) for k, v in runs.items()}
    prompt = llm.count_tokens(prompts.READ_PAGE_SYSTEM + prompts.PAGE.format(page=1, file="bench.pdf", text=rows,
                                                                            question=question.text))
    return {"prompt_tokens": prompt, "task_tokens": llm.count_tokens(prompts.READ_PAGE_SYSTEM), **median,
            "prompt_tokens_per_s_cold": round(prompt / median["prompt_cold_s"], 1)}
