"""`python -m rag bench …`: the benchmarks (ingest, retrieve, load, model, faults, ui)."""

from __future__ import annotations

import json
from pathlib import Path

from rag.cli.common import emit, workspace
from rag.settings import Settings


def register(sub) -> None:
    """`bench` and its benchmarks, each a command of its own."""
    p = sub.add_parser("bench", help="benchmarks")
    bench = p.add_subparsers(required=True, metavar="WHAT")
    b = bench.add_parser("ingest", help="ingestion throughput and where the time goes")
    b.add_argument("--pdfs", type=Path, required=True)
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench_ingest)
    b = bench.add_parser("retrieve", help="search latency and HNSW recall on synthetic fragments")
    b.add_argument("--fragments", default="10000,100000")
    b.add_argument("--queries", type=int, default=200)
    b.add_argument("--qa", type=Path, help="instead: HNSW recall on this store's real vectors, these questions as queries")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench_retrieve)
    b = bench.add_parser("load", help="simultaneous questions while a PDF is ingested: errors, latency, throughput")
    b.add_argument("--pdf", type=Path, required=True, help="a PDF to ingest during the questions")
    b.add_argument("--users", type=int, default=8)
    b.add_argument("--question", action="append", help="a question (repeatable; default: a few generic ones)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench_load)
    b = bench.add_parser("model", help="the embedded model's speeds: a page read's prompt cold and cached, generation free and under a grammar")
    b.add_argument("--repeats", type=int, default=3)
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench_model)
    b = bench.add_parser("faults", help="how long each model fault (429, 5xx, timeout, …) takes to become an explained answer")
    b.add_argument("--question", default="What is the main finding?")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench_faults)
    b = bench.add_parser("ui", help="several browsers asking at once: seconds to the queue position, first hop, answer")
    b.add_argument("--pdf", type=Path, required=True, help="the document the users ask about (a fresh store)")
    b.add_argument("--users", type=int, default=4)
    b.add_argument("--question", action="append", help="a question (repeatable; default: a few generic ones)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench_ui)


def cmd_bench_ingest(args, settings: Settings) -> int:
    from rag.bench import bench_ingest

    result = bench_ingest(settings, args.pdfs)
    emit(args, result, json.dumps(result, indent=2))
    return 0


def cmd_bench_model(args, settings: Settings) -> int:
    from rag.bench import bench_model

    result = bench_model(settings, args.repeats)
    emit(args, result, json.dumps(result, indent=2))
    return 0


def cmd_bench_load(args, settings: Settings) -> int:
    from rag.bench import bench_load

    ws = workspace(settings)
    if not ws.store.documents():
        raise SystemExit("no documents yet: python -m rag ingest FILE.pdf")
    questions = args.question or ["What is the main finding?", "What do the tables show?", "What does the chart show?"]
    result = bench_load(ws, questions, args.pdf, users=args.users)
    emit(args, result, json.dumps(result, indent=2))
    return 1 if result["errors"] or result["incomplete_traces"] else 0


def cmd_bench_faults(args, settings: Settings) -> int:
    from rag.bench import bench_faults

    ws = workspace(settings)
    if not ws.store.documents():
        raise SystemExit("no documents yet: python -m rag ingest FILE.pdf")
    result = bench_faults(ws, args.question)
    lines = [f"{r['seconds']:6.2f} s  {r['requests']} request(s)  {'answered' if r['answered'] else 'explained'}  "
             f"{r['fault']}" for r in result["faults"]]
    emit(args, result, "\n".join(lines))
    return 0


def cmd_bench_ui(args, settings: Settings) -> int:
    from rag.bench.ui import bench_ui_on_pdf

    questions = args.question or ["What is the main finding?", "What do the tables show?", "What does the chart show?",
                                  "Who conducted the survey?"]
    result = bench_ui_on_pdf(args.pdf, questions, users=args.users)
    lines = [f"user {n}: queue line {u['queue_s']} s (ahead {u['ahead']}), first hop {u['first_hop_s']} s "
             f"(server: run started {u.get('run_start_s')} s, first hop done {u.get('hop_end_s')} s, "
             f"search ms {u.get('search_ms')}, asked for the model {u.get('queue_event_s')} s), "
             f"answer {u['answer_s']} s{'  ERROR ' + u['error'] if u['error'] else ''}"
             for n, u in enumerate(result["per_user"], 1)]
    first = result["first_question"]
    lines.insert(0, f"first question alone, as the chat opens: answer on screen {first['answer_s']} s, the run "
                    f"{first['run_s']} s, {first['beyond_run_s']} s beyond the run (warm start)")
    lines.append(f"worst: queue line {result['max_queue_s']} s, first hop {result['max_first_hop_s']} s, "
                 f"answer {result['max_answer_s']} s; each answered its own question: {result['answered_own_question']}")
    emit(args, result, "\n".join(lines))
    return 1 if result["errors"] or not result["answered_own_question"] else 0


def cmd_bench_retrieve(args, settings: Settings) -> int:
    from rag.bench import bench_real_recall, bench_retrieve

    if args.qa:
        questions = [q["question"] for q in json.loads(args.qa.read_text())]
        result = bench_real_recall(settings, questions)
        emit(args, result, json.dumps(result, indent=2))
        return 0
    sizes = [int(s) for s in args.fragments.split(",")]
    result = bench_retrieve(settings, sizes, n_queries=args.queries)
    emit(args, result, json.dumps(result, indent=2))
    return 0
