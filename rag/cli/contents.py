"""`python -m rag` commands that read what a PDF holds as data: charts, colours, printed, tables."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from rag.cli.common import emit, file_bytes, opened, pdf_password, workspace
from rag.records import StatementKind
from rag.settings import Settings


def register(sub) -> None:
    """The commands that read a PDF's contents as data: charts, colours, printed, tables."""
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


def cmd_charts(args, settings: Settings) -> int:
    from rag.ingest import pdf_charts
    from rag.ingest.charts import chart_json

    data = file_bytes(args.file)
    if data is None:
        raise SystemExit(f"cannot read {args.file}")
    tables = pdf_charts(data, args.file.name, settings.ingest, args.page,
                        password=pdf_password(args))
    payload = {"charts": [chart_json(t) for t in tables]}
    lines = []
    for table, chart in zip(tables, payload["charts"]):
        doubt = " · ambiguous: some labels left unpaired" if chart["ambiguous"] else ""
        lines.append(f"p. {chart['page']} · {chart['kind']} · {chart['title'] or '(no title)'} [{chart['figure_id']}]{doubt}")
        lines.append(table.to_dataframe().to_string(index=False))
        lines.append("")
    emit(args, payload, "\n".join(lines) or "no chart values found")
    return 0


def cmd_colours(args, settings: Settings) -> int:
    from rag.ingest.colours import page_colours

    with opened(args, settings) as doc:
        runs = [r for n, page in enumerate(doc, 1) if not args.page or n in args.page for r in page_colours(page, n).runs
                if not args.colour or r.colour == args.colour.lower().replace("gray", "grey")]
    lines = [f"p. {r.page} · {r.colour}{' ground' if r.ground else ''} · {r.text}" for r in runs]
    emit(args, {"runs": [r.model_dump(mode="json") for r in runs]}, "\n".join(lines) or "no coloured words found")
    return 0


def cmd_printed(args, settings: Settings) -> int:
    from rag.reader.occurrences import found, page_texts

    if not (args.phrase or args.kind):
        raise SystemExit("name a phrase, or --kind url / --kind email")
    with opened(args, settings) as doc:
        pages = found(page_texts(doc, {}), args.kind or args.phrase, bool(args.kind))
    lines = [f"p. {page} · {len(items)} · {'; '.join(items)}" for page, items in pages.items()]
    emit(args, {"pages": {str(p): items for p, items in pages.items()}}, "\n".join(lines) or "printed on no page")
    return 0


def cmd_tables(args, settings: Settings) -> int:
    path = Path(args.doc)
    if path.suffix.lower() == ".pdf" and path.is_file():  # not ingested: its statements, read from the text layer
        from rag.ingest.statements import pdf_frames

        doc_id, file, frames, tables = "", path.name, pdf_frames(path, "", path.name), []
    else:
        store = workspace(settings).store
        doc = store.resolve(args.doc)
        doc_id, file, frames, tables = doc.doc_id, doc.file, store.frames(doc.doc_id), store.tables(doc.doc_id)
    frames = [f for f in frames if not args.kind or f.kind in args.kind]
    tables = [t for t in tables if not args.kind or "other" in args.kind]
    lines = [line for f in frames for line in frame_lines(f)] + [line for t in tables for line in table_lines(t)]
    payload = {"doc_id": doc_id, "file": file, "frames": [f.model_dump(mode="json") for f in frames],
               "tables": [t.model_dump(mode="json") for t in tables]}
    emit(args, payload, "\n".join(lines) or f"no tables found in {file}")
    return 0


def table_lines(table) -> list[str]:
    """A table read at the complete stage (a ruled table, or a chart's values) as rows under its header."""
    what = f"chart · {table.chart.title or '(no title)'}" if table.chart else f"table · {table.title or '(no title)'}"
    return [f"p. {table.page} · {what}", table.to_dataframe().to_string(index=False), ""]


def frame_lines(frame) -> list[str]:
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
