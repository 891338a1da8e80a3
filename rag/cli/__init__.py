"""`python -m rag`: every feature from the command line, `--json` for scripts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag.cli import ask, bench, contents, documents, evaluate, rules
from rag.cli.common import RETRIEVAL_SWITCHES, set_option
from rag.cli.contents import table_lines as _table_lines  # noqa: F401 - importable here, as before the split
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rag", description=__doc__)
    parser.add_argument("--store", help="data directory (default: $RAG_DATA_DIR or ./data)")
    parser.add_argument("--preset", default="default",
                        help="settings preset: embedded, server, paper (default: the one of the model in use)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    set_option(parser)
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    for register in (documents.register, ask.register, evaluate.register_eval, contents.register,
                     evaluate.register_report, rules.register, bench.register):  # the order `--help` lists them in
        register(sub)
    return parser
