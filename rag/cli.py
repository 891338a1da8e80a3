"""`python -m rag`: every feature from the command line, `--json` for scripts."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import get_args

from rag.eval import MODES, SCORINGS
from rag.records import StatementKind
from rag.settings import Settings
from rag.trace import redact


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    overrides = {"data_dir": Path(args.store)} if args.store else {}
    settings = Settings.from_env(args.preset, **overrides)
    for assignment in args.set or []:
        settings.set(*assignment.split("=", 1))
    for name in RETRIEVAL_SWITCHES:
        if getattr(args, name, None) is not None:
            setattr(settings.retrieval, name, getattr(args, name))
    try:
        return args.func(args, settings)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one clear line for the user; --debug shows the traceback
        if args.debug:
            raise
        print(redact(f"error: {exc}"), file=sys.stderr)
        return 1


RETRIEVAL_SWITCHES = {
    "hybrid": "BM25 beside dense search, fused by reciprocal rank",
    "parent_page": "rank pages by their fragments and whole text; the agent reads the pages",
    "adaptive_k": "a Gaussian mixture over similarities decides how many fragments to keep",
}


def _retrieval_switches(p: argparse.ArgumentParser) -> None:
    for name, help in RETRIEVAL_SWITCHES.items():
        p.add_argument(f"--{name.replace('_', '-')}", action=argparse.BooleanOptionalAction, help=help)
    _set_option(p, default=argparse.SUPPRESS)  # after the command too, without clearing one given before it


def _set_option(p: argparse.ArgumentParser, default=None) -> None:
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", default=default,
                   help="override one setting, e.g. --set reader.max_pages=3 (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rag", description=__doc__)
    parser.add_argument("--store", help="data directory (default: $RAG_DATA_DIR or ./data)")
    parser.add_argument("--preset", default="default",
                        help="settings preset: embedded, server, paper (default: the one of the model in use)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    _set_option(parser)
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", help="make PDF files searchable; tables, charts and OCR follow in the background")
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--password", help="password of encrypted PDFs (default: $RAG_PDF_PASSWORD)")
    p.add_argument("--wait", choices=["searchable", "complete"], default="searchable",
                   help="return once the text layer is searchable (default; a worker reads the rest), or read "
                        "everything here first")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("docs", help="list indexed documents and how far each is read")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)

    p = sub.add_parser("worker", help="read queued documents to complete (tables, charts, OCR) until stopped")
    p.add_argument("--threads", type=int, default=1, help="documents read at once by this process")
    p.add_argument("--exit-when-idle", type=float, metavar="SECONDS", help="end once the queue has been empty this long")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("retry", help="read a document whose reading failed again")
    p.add_argument("doc", help="doc id, id prefix or file name")
    p.set_defaults(func=cmd_retry)

    p = sub.add_parser("delete", help="delete a document and all its fragments")
    p.add_argument("doc", help="doc id, id prefix or file name")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("search", help="multimodal search")
    p.add_argument("query")
    p.add_argument("--modality", default="auto", choices=["auto", "text", "table", "image_caption"])
    p.add_argument("-k", type=int, default=None, help="results per collection")
    p.add_argument("--doc", action="append", help="restrict to a document (repeatable)")
    p.add_argument("--json", action="store_true")
    _retrieval_switches(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="ask the agent a question; hops print as they happen")
    p.add_argument("question")
    p.add_argument("--max-hops", type=int)
    p.add_argument("--doc", action="append", help="restrict to a document (repeatable)")
    p.add_argument("--json", action="store_true")
    _retrieval_switches(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("plan", help="a question's plan: one fact, or the parts searched and read on their own and "
                                    "how code composes them")
    p.add_argument("question")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("glossary", help="the analysts' vocabulary: the statement rows their words name and the "
                                        "metrics defined once; with TERM, what it names")
    p.add_argument("term", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_glossary)

    p = sub.add_parser("conversations", help="the chat's saved conversations: list them, show or delete one")
    p.add_argument("action", nargs="?", choices=["list", "show", "delete"], default="list")
    p.add_argument("id", nargs="?", help="a conversation id (from the list, or the chat's ?conversation=)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_conversations)

    p = sub.add_parser("eval", help="evaluate on MMLongBench-style questions")
    p.add_argument("--qa", type=Path, required=True)
    p.add_argument("--pdfs", type=Path, help="folder of the questions' PDFs (default: documents already ingested)")
    p.add_argument("--retrieval-only", action="store_true")
    p.add_argument("--ablation", action="store_true",
                   help="with --retrieval-only: the paper's design, then each addition on top (re-ingests --pdfs)")
    p.add_argument("--limit", type=int)
    p.add_argument("--mode", default="agent", choices=MODES, help="how questions are answered (default: agent)")
    p.add_argument("--max-hops", type=int)
    p.add_argument("--out", type=Path, help="results folder (default: EVAL_DIR/<mode>)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    p.add_argument("--scoring", default="strict", choices=SCORINGS,
                   help="which scorer the progress bar uses (all are always computed; units: an analyst's metric "
                        "in the unit its question asks, for sets that name it)")
    p.add_argument("--json", action="store_true")
    _retrieval_switches(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("charts", help="the values read off a PDF's charts (category, series, value)")
    p.add_argument("file", type=Path)
    p.add_argument("--page", type=int, action="append", help="only this page (repeatable)")
    p.add_argument("--password", help="password of an encrypted PDF (default: $RAG_PDF_PASSWORD)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_charts)

    p = sub.add_parser("colours", help="the words a PDF prints in colour or on a coloured ground (a box, a highlight)")
    p.add_argument("file", type=Path)
    p.add_argument("--page", type=int, action="append", help="only this page (repeatable)")
    p.add_argument("--colour", help="only this colour (red, orange, yellow, green, blue, purple, pink, brown, grey)")
    p.add_argument("--password", help="password of an encrypted PDF (default: $RAG_PDF_PASSWORD)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_colours)

    p = sub.add_parser("printed", help="where a PDF prints a phrase, a web address or an e-mail address, page by page")
    p.add_argument("file", type=Path)
    p.add_argument("phrase", nargs="?", help="the words to find (a plural and a hyphen left out are found too)")
    p.add_argument("--kind", choices=["url", "email"], help="find every web address or e-mail address instead")
    p.add_argument("--password", help="password of an encrypted PDF (default: $RAG_PDF_PASSWORD)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_printed)

    p = sub.add_parser("tables", help="a document's tables as data: its statements (rows by fiscal year, scale, "
                                      "page), its sentences of figures by year, then the tables and chart values "
                                      "read at the complete stage")
    p.add_argument("doc", help="doc id, id prefix or file name of an ingested document, or a PDF file's path")
    p.add_argument("--kind", choices=get_args(StatementKind), action="append",
                   help="only statements of this kind (repeatable; other: every other table too; sentence: a "
                        "note's sentence that prints a figure per year)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tables)

    p = sub.add_parser("report", help="compare evaluation results folders side by side")
    p.add_argument("runs", nargs="+", type=Path, help="results folders written by eval")
    p.add_argument("--out", type=Path, default=Path("eval-report"), help="where report.md and report.html go")
    p.add_argument("--rescore", action="store_true", help="score the answers again with the current scorer first")
    p.add_argument("--checks", action="store_true",
                   help="for each run: the right answers each check rejected and the wrong ones it stopped")
    p.set_defaults(func=cmd_report)

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
    return parser


def _workspace(settings: Settings):
    from rag.workspace import Workspace

    return Workspace(settings)


def _emit(args, payload: dict, text: str) -> None:
    print(json.dumps(payload, ensure_ascii=False) if args.json else text)


def cmd_ingest(args, settings: Settings) -> int:
    from rag.pipeline import worker
    from rag.pipeline.progress import ingest_bar
    from rag.records import IngestReport

    ws = _workspace(settings)
    reports, queued = [], False
    for path in args.files:
        data = _read(path)
        if data is None:
            report = IngestReport(file=path.name, outcome="error", error=f"cannot read {path}")
        else:
            with ingest_bar(path.name, enabled=not args.json) as progress:
                report = ws.ingest(data, path.name, progress, wait=args.wait,
                                   password=args.password or os.environ.get("RAG_PDF_PASSWORD"))
        reports.append(report)
        queued = worker.queue_rest(settings, report) or queued
        if not args.json:
            print(_describe(report), file=sys.stderr if report.outcome == "error" else sys.stdout)
    if queued and worker.ensure_worker(settings) and not args.json:
        print("a worker reads the rest in the background: python -m rag docs shows how far it is")
    ingested = [r for r in reports if r.outcome == "ingested"]
    pages_per_s = sum(r.pages for r in ingested) / max(sum(r.seconds for r in ingested), 1e-9)
    payload = {
        "documents": [
            {**r.model_dump(include={"doc_id", "file", "pages", "fragments", "seconds", "outcome", "stage", "stage_seconds",
                                   "error", "warnings", "notes", "ocr_pages"}),
             "pages_per_second": round(r.pages / r.seconds, 2) if r.outcome == "ingested" and r.seconds else None}
            for r in reports
        ],
        "pages_per_second": round(pages_per_s, 2) if ingested else 0.0,
    }
    _emit(args, payload, f"{len(ingested)} ingested, {pages_per_s:.1f} pages/s" if ingested else "nothing new ingested")
    return 1 if any(r.outcome == "error" for r in reports) else 0


def cmd_worker(args, settings: Settings) -> int:
    from rag.pipeline import worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    ws = _workspace(settings)
    if not worker.claim_store(settings):
        raise SystemExit("another process on this machine reads this store's documents already")
    worker.Worker(ws, threads=args.threads).run(idle_exit_s=args.exit_when_idle)
    return 0


def cmd_retry(args, settings: Settings) -> int:
    from rag.pipeline import worker

    ws = _workspace(settings)
    doc = ws.store.resolve(args.doc)
    if doc.stage == "complete":
        raise SystemExit(f"{doc.file} is read completely already")
    worker.retry(ws, doc.doc_id)
    worker.ensure_worker(settings)
    print(f"{doc.file}: queued to be read again")
    return 0


def _opened(args, settings: Settings):
    """The PDF `args.file`, opened and checked, or one clear message (not a PDF, encrypted, corrupt, too big)."""
    from rag.ingest.pdf import IngestError, open_pdf

    try:
        return open_pdf(_read(args.file) or b"", settings.ingest.max_file_mb,
                        args.password or os.environ.get("RAG_PDF_PASSWORD"))
    except IngestError as exc:
        raise SystemExit(f"cannot read {args.file}: {exc}") from None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _describe(report) -> str:
    if report.outcome == "error" and not report.stage:
        return f"✗ {report.file}: {report.error}"
    counts = ", ".join(f"{n} {m}" for m, n in report.fragments.items())
    if report.outcome == "skipped":
        verb = "already indexed"
    elif report.stage == "complete":
        verb = f"{report.seconds:.1f} s, {report.pages / report.seconds:.1f} pages/s"
    else:
        verb = f"searchable after {report.seconds:.1f} s; tables, charts and OCR follow"
    warn = "".join(f"\n  · {n}" for n in report.notes) + "".join(f"\n  ! {w}" for w in report.warnings)
    failed = f"\n  ✗ {report.error} (python -m rag retry {report.doc_id[:12]})" if report.error else ""
    return f"✓ {report.file} [{report.doc_id[:12]}] {report.pages} pages: {counts} ({verb}){warn}{failed}"


def cmd_docs(args, settings: Settings) -> int:
    docs = _workspace(settings).store.documents()
    payload = {"documents": [{**d.model_dump(include={"doc_id", "file", "pages", "fragments", "stage", "error",
                                                       "stage_seconds", "warnings"}), "pages_done": d.done_pages}
                             for d in docs]}
    lines = [f"{d.doc_id[:12]}  {d.pages:4d} pages  {_stage_text(d):32s} {d.fragments}  {d.file}" for d in docs]
    _emit(args, payload, "\n".join(lines) or "no documents yet: python -m rag ingest FILE.pdf")
    return 0


def _stage_text(doc) -> str:
    if doc.error:
        return f"{doc.stage}, failed: {doc.error}"
    if doc.stage == "complete":
        return "complete"
    return f"{doc.stage}, {doc.done_pages}/{doc.pages} pages read"


def cmd_delete(args, settings: Settings) -> int:
    store = _workspace(settings).store
    doc = store.resolve(args.doc)
    store.delete(doc.doc_id)
    print(f"deleted {doc.file} [{doc.doc_id[:12]}]")
    return 0


def cmd_search(args, settings: Settings) -> int:
    ws = _workspace(settings)
    doc_ids = [ws.store.resolve(d).doc_id for d in args.doc] if args.doc else None
    result = ws.search(args.query, modality=args.modality, k=args.k, doc_ids=doc_ids)
    payload = {
        "query": result.query,
        "route": result.route,
        "results": [
            {"id": h.fragment.id, "modality": h.fragment.modality, "file": h.fragment.file,
             "page": h.fragment.page, "score": round(h.score, 4), "text": h.fragment.text,
             "bbox": h.fragment.bbox}
            for h in result.hits
        ],
        "timings_ms": result.timings_ms,
    }
    lines = [f"route: {'+'.join(result.route)}   {result.timings_ms}"]
    lines += [
        f"{h.score:.3f}  {h.fragment.modality:13s} {h.fragment.file} p.{h.fragment.page}  {h.fragment.text[:100]}"
        for h in result.hits
    ]
    _emit(args, payload, "\n".join(lines))
    return 0


def cmd_ask(args, settings: Settings) -> int:
    from rag.agent.printer import print_event

    if args.max_hops:
        settings.agent.max_hops = args.max_hops
    ws = _workspace(settings)
    if not ws.store.documents():
        raise SystemExit("no documents yet: python -m rag ingest FILE.pdf")
    doc_ids = [ws.store.resolve(d).doc_id for d in args.doc] if args.doc else None
    result = ws.ask(args.question, doc_ids=doc_ids, on_event=None if args.json else print_event)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
    return 0


def cmd_plan(args, settings: Settings) -> int:
    """The plan `ask` follows; the model is loaded only when code cannot write the parts."""
    from rag.models.structured import ask_json
    from rag.reader.plan import planned
    from rag.reader.question import understand

    ws = _workspace(settings)

    async def call(purpose, messages, model, max_tokens, page=0):
        return await ask_json(ws.llm, messages, model, max_tokens)

    plan = asyncio.run(planned(understand(args.question), call))
    lines = [f"{plan.composition} of {len(plan.parts)} parts, written by {plan.by}:"] + \
        [f"  {n}. {p.question}" for n, p in enumerate(plan.parts, 1)] if plan.parts else ["one fact: one read"]
    _emit(args, plan.model_dump(), "\n".join(lines))
    return 0


def cmd_glossary(args, settings: Settings) -> int:
    """Every concept (statement, analysts' words, printed rows) and definition, or those a term names."""
    from rag.reader.definitions import DEFINITIONS, metrics_named
    from rag.reader.lookup import GLOSSARY, KIND_NAMES, concept_of

    concept = concept_of(args.term) if args.term else None
    concepts = {n: c for n, c in GLOSSARY.items() if not args.term or c is concept}
    metrics = {n: d for n, d in DEFINITIONS.items() if not args.term or n in metrics_named(args.term)}
    data = {"rows": {n: {"statement": KIND_NAMES[c.kind], "said": list(c.said), "printed": list(c.printed)}
                     for n, c in concepts.items()},
            "metrics": {n: {"said": list(d.said), "formula": d.formula} for n, d in metrics.items()}}
    lines = [f"{n} ({KIND_NAMES[c.kind]}): {'; '.join(c.printed)}" for n, c in concepts.items()] + \
        [f"{n} = {d.formula}" for n, d in metrics.items()]
    _emit(args, data, "\n".join(lines) or f"no row or metric is named {args.term!r}")
    return 0 if lines else 1


def cmd_conversations(args, settings: Settings) -> int:
    from rag.ui.conversations import Conversations

    store = Conversations.of(settings)
    if args.action == "list":
        found = store.list(limit=-1)
        lines = [f"{c.id}  {c.turns:3d} question(s)  {c.title}" for c in found]
        _emit(args, {"conversations": [c.model_dump() for c in found]}, "\n".join(lines) or "no conversations yet")
        return 0
    if not args.id or store.get(args.id) is None:
        raise SystemExit(f"no conversation {args.id!r}: python -m rag conversations")
    if args.action == "delete":
        store.delete(args.id)
        print(f"deleted conversation {args.id}")
        return 0
    turns = store.turns(args.id)
    lines = [f"Q{t.n}: {t.question}\nA{t.n} [{t.status}, run {t.run_id}]: {t.answer.answer if t.answer else t.error}\n"
             for t in turns]
    _emit(args, {"id": args.id, "turns": [t.model_dump(mode="json") for t in turns]}, "\n".join(lines))
    return 0


def cmd_eval(args, settings: Settings) -> int:
    if args.retrieval_only and args.ablation:
        from rag.eval.ablation import ablation_table, run_ablation

        if not args.pdfs:
            raise SystemExit("--ablation ingests the PDFs once per ingestion setting: give --pdfs")
        rows = run_ablation(settings, args.qa, args.pdfs, limit=args.limit)
        _emit(args, {"steps": rows}, ablation_table(rows))
        return 0
    if args.retrieval_only:
        from rag.eval.retrieval import evaluate_retrieval

        report = evaluate_retrieval(_workspace(settings), args.qa, args.pdfs, limit=args.limit)
        _emit(args, report.summary(), report.table())
        return 0
    from rag.eval.answers import evaluate_answers

    if args.max_hops:
        settings.agent.max_hops = args.max_hops
    out = args.out or settings.eval_dir / (f"agent-hops{settings.agent.max_hops}" if args.mode == "agent" else args.mode)
    summary = evaluate_answers(_workspace(settings), args.qa, args.pdfs, out, mode=args.mode,
                               limit=args.limit, resume=args.resume, scoring=args.scoring)
    from rag.eval.report import kinds_table, summary_table

    table = summary_table([summary], args.scoring) + "\n\n" + kinds_table(summary)
    _emit(args, summary, table + f"\n\nreport: {out / 'report.md'}")
    return 0


def cmd_charts(args, settings: Settings) -> int:
    from rag.ingest import pdf_charts
    from rag.ingest.charts import chart_json

    data = _read(args.file)
    if data is None:
        raise SystemExit(f"cannot read {args.file}")
    tables = pdf_charts(data, args.file.name, settings.ingest, args.page,
                        password=args.password or os.environ.get("RAG_PDF_PASSWORD"))
    payload = {"charts": [chart_json(t) for t in tables]}
    lines = []
    for table, chart in zip(tables, payload["charts"]):
        doubt = " · ambiguous: some labels left unpaired" if chart["ambiguous"] else ""
        lines.append(f"p. {chart['page']} · {chart['kind']} · {chart['title'] or '(no title)'} [{chart['figure_id']}]{doubt}")
        lines.append(table.to_dataframe().to_string(index=False))
        lines.append("")
    _emit(args, payload, "\n".join(lines) or "no chart values found")
    return 0


def cmd_colours(args, settings: Settings) -> int:
    from rag.ingest.colours import page_colours

    with _opened(args, settings) as doc:
        runs = [r for n, page in enumerate(doc, 1) if not args.page or n in args.page for r in page_colours(page, n).runs
                if not args.colour or r.colour == args.colour.lower().replace("gray", "grey")]
    lines = [f"p. {r.page} · {r.colour}{' ground' if r.ground else ''} · {r.text}" for r in runs]
    _emit(args, {"runs": [r.model_dump(mode="json") for r in runs]}, "\n".join(lines) or "no coloured words found")
    return 0


def cmd_printed(args, settings: Settings) -> int:
    from rag.reader.occurrences import found, page_texts

    if not (args.phrase or args.kind):
        raise SystemExit("name a phrase, or --kind url / --kind email")
    with _opened(args, settings) as doc:
        pages = found(page_texts(doc, {}), args.kind or args.phrase, bool(args.kind))
    lines = [f"p. {page} · {len(items)} · {'; '.join(items)}" for page, items in pages.items()]
    _emit(args, {"pages": {str(p): items for p, items in pages.items()}}, "\n".join(lines) or "printed on no page")
    return 0


def cmd_tables(args, settings: Settings) -> int:
    path = Path(args.doc)
    if path.suffix.lower() == ".pdf" and path.is_file():  # not ingested: its statements, read from the text layer
        from rag.ingest.statements import pdf_frames

        doc_id, file, frames, tables = "", path.name, pdf_frames(path, "", path.name), []
    else:
        store = _workspace(settings).store
        doc = store.resolve(args.doc)
        doc_id, file, frames, tables = doc.doc_id, doc.file, store.frames(doc.doc_id), store.tables(doc.doc_id)
    frames = [f for f in frames if not args.kind or f.kind in args.kind]
    tables = [t for t in tables if not args.kind or "other" in args.kind]
    lines = [line for f in frames for line in _frame_lines(f)] + [line for t in tables for line in _table_lines(t)]
    payload = {"doc_id": doc_id, "file": file, "frames": [f.model_dump(mode="json") for f in frames],
               "tables": [t.model_dump(mode="json") for t in tables]}
    _emit(args, payload, "\n".join(lines) or f"no tables found in {file}")
    return 0


def _table_lines(table) -> list[str]:
    """A table read at the complete stage (a ruled table, or a chart's values) as rows under its header."""
    what = f"chart · {table.chart.title or '(no title)'}" if table.chart else f"table · {table.title or '(no title)'}"
    return [f"p. {table.page} · {what}", table.to_dataframe().to_string(index=False), ""]


def _frame_lines(frame) -> list[str]:
    """A frame as the page prints it: headings once, rows indented under them, figures in columns."""
    unit = " ".join(x for x in (frame.currency, f"in {frame.scale}s" if frame.scale else "") if x)
    out = [f"p. {frame.page} · {frame.kind} · {frame.title or '(no title)'}{f' ({unit})' if unit else ''}"]
    widths = [max(12, len(p.header)) for p in frame.periods]
    out.append(" " * 62 + "  ".join(f"{p.header:>{w}}" for p, w in zip(frame.periods, widths)))
    shown: list[str] = []
    for row in frame.rows:
        for depth, name in enumerate(row.section):
            if shown[depth:depth + 1] != [name]:
                out.append(f"{'  ' * depth}{name}"[:62])
                shown = shown[:depth] + [name]
        shown = shown[:len(row.section)]
        label = f"{'  ' * len(row.section)}{row.label}"
        out.append(f"{label[:60]:62}" + "  ".join(f"{c:>{w}}" for c, w in zip(row.cells, widths)))
    return [*out, ""]


def cmd_report(args, settings: Settings) -> int:
    from rag.eval.report import write_comparison

    if args.rescore:
        from rag.eval.answers import rescore

        for run in args.runs:
            rescore(run)
    if args.checks:
        from rag.eval import checks
        from rag.eval.report import load_run

        for run in args.runs:
            print(f"{run}\n\n{checks.markdown(load_run(run)[1])}\n")
        return 0
    print(write_comparison(args.runs, args.out))
    print(f"report: {args.out / 'report.md'}, {args.out / 'report.html'}")
    return 0


def cmd_bench_ingest(args, settings: Settings) -> int:
    from rag.bench import bench_ingest

    result = bench_ingest(settings, args.pdfs)
    _emit(args, result, json.dumps(result, indent=2))
    return 0


def cmd_bench_model(args, settings: Settings) -> int:
    from rag.bench import bench_model

    result = bench_model(settings, args.repeats)
    _emit(args, result, json.dumps(result, indent=2))
    return 0


def cmd_bench_load(args, settings: Settings) -> int:
    from rag.bench import bench_load

    ws = _workspace(settings)
    if not ws.store.documents():
        raise SystemExit("no documents yet: python -m rag ingest FILE.pdf")
    questions = args.question or ["What is the main finding?", "What do the tables show?", "What does the chart show?"]
    result = bench_load(ws, questions, args.pdf, users=args.users)
    _emit(args, result, json.dumps(result, indent=2))
    return 1 if result["errors"] or result["incomplete_traces"] else 0


def cmd_bench_faults(args, settings: Settings) -> int:
    from rag.bench import bench_faults

    ws = _workspace(settings)
    if not ws.store.documents():
        raise SystemExit("no documents yet: python -m rag ingest FILE.pdf")
    result = bench_faults(ws, args.question)
    lines = [f"{r['seconds']:6.2f} s  {r['requests']} request(s)  {'answered' if r['answered'] else 'explained'}  "
             f"{r['fault']}" for r in result["faults"]]
    _emit(args, result, "\n".join(lines))
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
    _emit(args, result, "\n".join(lines))
    return 1 if result["errors"] or not result["answered_own_question"] else 0


def cmd_bench_retrieve(args, settings: Settings) -> int:
    from rag.bench import bench_real_recall, bench_retrieve

    if args.qa:
        questions = [q["question"] for q in json.loads(args.qa.read_text())]
        result = bench_real_recall(settings, questions)
        _emit(args, result, json.dumps(result, indent=2))
        return 0
    sizes = [int(s) for s in args.fragments.split(",")]
    result = bench_retrieve(settings, sizes, n_queries=args.queries)
    _emit(args, result, json.dumps(result, indent=2))
    return 0
