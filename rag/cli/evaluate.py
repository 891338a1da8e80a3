"""`python -m rag` commands that evaluate: eval (MMLongBench-style questions) and report (runs compared)."""

from __future__ import annotations

from pathlib import Path

from rag.cli.common import emit, retrieval_switches, workspace
from rag.eval import MODES, SCORINGS
from rag.settings import Settings


def register_eval(sub) -> None:
    """`eval`: questions answered (or searched) and scored."""
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
    p.add_argument("--library", action="store_true",
                   help="every question searches every document in the store, as the chat's 'all documents' does")
    p.add_argument("--json", action="store_true")
    retrieval_switches(p)
    p.set_defaults(func=cmd_eval)


def register_report(sub) -> None:
    """`report`: evaluation runs compared side by side."""
    p = sub.add_parser("report", help="compare evaluation results folders side by side")
    p.add_argument("runs", nargs="+", type=Path, help="results folders written by eval")
    p.add_argument("--out", type=Path, default=Path("eval-report"), help="where report.md and report.html go")
    p.add_argument("--rescore", action="store_true", help="score the answers again with the current scorer first")
    p.add_argument("--checks", action="store_true",
                   help="for each run: the right answers each check rejected and the wrong ones it stopped")
    p.set_defaults(func=cmd_report)


def cmd_eval(args, settings: Settings) -> int:
    if args.retrieval_only and args.ablation:
        from rag.eval.ablation import ablation_table, run_ablation

        if not args.pdfs:
            raise SystemExit("--ablation ingests the PDFs once per ingestion setting: give --pdfs")
        rows = run_ablation(settings, args.qa, args.pdfs, limit=args.limit)
        emit(args, {"steps": rows}, ablation_table(rows))
        return 0
    if args.retrieval_only:
        from rag.eval.retrieval import evaluate_retrieval

        report = evaluate_retrieval(workspace(settings), args.qa, args.pdfs, limit=args.limit)
        emit(args, report.summary(), report.table())
        return 0
    from rag.eval.answers import evaluate_answers

    if args.max_hops:
        settings.agent.max_hops = args.max_hops
    out = args.out or settings.eval_dir / (f"agent-hops{settings.agent.max_hops}" if args.mode == "agent" else args.mode)
    summary = evaluate_answers(workspace(settings), args.qa, args.pdfs, out, mode=args.mode,
                               limit=args.limit, resume=args.resume, scoring=args.scoring, library=args.library)
    from rag.eval.report import kinds_table, summary_table

    table = summary_table([summary], args.scoring) + "\n\n" + kinds_table(summary)
    emit(args, summary, table + f"\n\nreport: {out / 'report.md'}")
    return 0


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
