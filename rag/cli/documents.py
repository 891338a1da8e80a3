"""`python -m rag` commands on the store's documents: ingest, docs, worker, retry, delete."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from rag.cli.common import emit, file_bytes, pdf_password, workspace
from rag.settings import Settings


def register(sub) -> None:
    """The commands on the store's documents: ingest, docs, worker, retry, delete."""
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


def cmd_ingest(args, settings: Settings) -> int:
    from rag.pipeline import worker
    from rag.pipeline.progress import ingest_bar
    from rag.records import IngestReport

    ws = workspace(settings)
    reports, queued = [], False
    for path in args.files:
        data = file_bytes(path)
        if data is None:
            report = IngestReport(file=path.name, outcome="error", error=f"cannot read {path}")
        else:
            with ingest_bar(path.name, enabled=not args.json) as progress:
                report = ws.ingest(data, path.name, progress, wait=args.wait,
                                   password=pdf_password(args))
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
    emit(args, payload, f"{len(ingested)} ingested, {pages_per_s:.1f} pages/s" if ingested else "nothing new ingested")
    return 1 if any(r.outcome == "error" for r in reports) else 0


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
    docs = workspace(settings).store.documents()
    payload = {"documents": [{**d.model_dump(include={"doc_id", "file", "pages", "fragments", "stage", "error",
                                                       "stage_seconds", "warnings"}), "pages_done": d.done_pages}
                             for d in docs]}
    lines = [f"{d.doc_id[:12]}  {d.pages:4d} pages  {_stage_text(d):32s} {d.fragments}  {d.file}" for d in docs]
    emit(args, payload, "\n".join(lines) or "no documents yet: python -m rag ingest FILE.pdf")
    return 0


def _stage_text(doc) -> str:
    if doc.error:
        return f"{doc.stage}, failed: {doc.error}"
    if doc.stage == "complete":
        return "complete"
    return f"{doc.stage}, {doc.done_pages}/{doc.pages} pages read"


def cmd_worker(args, settings: Settings) -> int:
    from rag.pipeline import worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    ws = workspace(settings)
    if not worker.claim_store(settings):
        raise SystemExit("another process on this machine reads this store's documents already")
    worker.Worker(ws, threads=args.threads).run(idle_exit_s=args.exit_when_idle)
    return 0


def cmd_retry(args, settings: Settings) -> int:
    from rag.pipeline import worker

    ws = workspace(settings)
    doc = ws.store.resolve(args.doc)
    if doc.stage == "complete":
        raise SystemExit(f"{doc.file} is read completely already")
    worker.retry(ws, doc.doc_id)
    worker.ensure_worker(settings)
    print(f"{doc.file}: queued to be read again")
    return 0


def cmd_delete(args, settings: Settings) -> int:
    store = workspace(settings).store
    doc = store.resolve(args.doc)
    store.delete(doc.doc_id)
    print(f"deleted {doc.file} [{doc.doc_id[:12]}]")
    return 0
