"""What the command groups share: the options several take, the workspace they open, a file read, a PDF
opened, and a result printed (JSON with --json, else text)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rag.settings import Settings

RETRIEVAL_SWITCHES = {
    "hybrid": "BM25 beside dense search, fused by reciprocal rank",
    "parent_page": "rank pages by their fragments and whole text; the agent reads the pages",
    "adaptive_k": "a Gaussian mixture over similarities decides how many fragments to keep",
}


def retrieval_switches(p: argparse.ArgumentParser) -> None:
    for name, help in RETRIEVAL_SWITCHES.items():
        p.add_argument(f"--{name.replace('_', '-')}", action=argparse.BooleanOptionalAction, help=help)
    set_option(p, default=argparse.SUPPRESS)  # after the command too, without clearing one given before it


def set_option(p: argparse.ArgumentParser, default=None) -> None:
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", default=default,
                   help="override one setting, e.g. --set reader.max_pages=3 (repeatable)")


def workspace(settings: Settings):
    from rag.workspace import Workspace

    return Workspace(settings)


def emit(args, payload: dict, text: str) -> None:
    print(json.dumps(payload, ensure_ascii=False) if args.json else text)


def file_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def pdf_password(args) -> str | None:
    return args.password or os.environ.get("RAG_PDF_PASSWORD")


def opened(args, settings: Settings):
    """The PDF `args.file`, opened and checked, or one clear message (not a PDF, encrypted, corrupt, too big)."""
    from rag.ingest.pdf import IngestError, open_pdf

    try:
        return open_pdf(file_bytes(args.file) or b"", settings.ingest.max_file_mb,
                        pdf_password(args))
    except IngestError as exc:
        raise SystemExit(f"cannot read {args.file}: {exc}") from None
