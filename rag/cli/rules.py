"""`python -m rag rules`: the rules that read a question's wording (rag/reader/wording.py), each with what it
recognises and how many questions of each evaluation set it takes; with `--run DIR`, how many of those an eval
run answered right. Counts only: no question is printed."""

from __future__ import annotations

import json
from pathlib import Path

from rag.cli.common import emit
from rag.settings import Settings

EVAL = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
SETS = {"dev": "qa/dev.json", "wide": "wide/qa.json", "fin": "fin/qa.json", "val": "val/qa.json"}
SCORES = ("score_mmlongbench", "score_units", "score")


def register(sub) -> None:
    p = sub.add_parser("rules", help="the rules that read a question's wording: what each recognises and how many "
                                     "questions of dev, wide, fin and val it takes")
    p.add_argument("--eval", type=Path, default=EVAL, help="the evaluation sets' folder (default: ../shared/eval)")
    p.add_argument("--run", type=Path, action="append", default=[],
                   help="an eval run's folder (its questions.jsonl): the right answers each rule takes (repeatable)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rules)


def takes(name: str, questions: list[str]) -> list[bool]:
    """Whether the rule matches each question, read as the rule reads it."""
    from rag.reader.lookup import normal
    from rag.reader.wording import RULES

    rule = RULES[name]
    return [bool(rule.search(normal(q) if rule.normal else q)) for q in questions]


def set_questions(folder: Path) -> dict[str, list[str]]:
    """Each evaluation set's questions, the sets not found left out."""
    return {name: [q["question"] for q in json.loads((folder / path).read_text())]
            for name, path in SETS.items() if (folder / path).exists()}


def run_rows(folder: Path) -> tuple[list[str], list[float]]:
    """An eval run's questions and their scores (the mmlongbench score, else the units scorer's)."""
    rows = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines() if line.strip()]
    score = next((k for k in SCORES if rows and k in rows[0]), None)
    if score is None:
        raise SystemExit(f"{folder / 'questions.jsonl'}: no {', '.join(SCORES)} field")
    return [r["question"] for r in rows], [float(r.get(score) or 0) for r in rows]


def cmd_rules(args, settings: Settings) -> int:
    from rag.reader.wording import RULES

    sets = set_questions(args.eval)
    runs = {str(folder): run_rows(folder) for folder in args.run}
    data: dict[str, dict] = {}
    for name, rule in RULES.items():
        row = {"recognises": rule.recognises, "takes": {s: sum(takes(name, qs)) for s, qs in sets.items()}}
        if runs:
            row["right"] = {}
            for run, (questions, scores) in runs.items():
                taken = takes(name, questions)
                row["right"][run] = {"taken": sum(taken), "right": round(sum(s for s, t in zip(scores, taken) if t), 1)}
        data[name] = row
    head = f"{'rule':<24} " + " ".join(f"{s:>5}" for s in sets) + "".join(f"  right/taken {r}" for r in runs)
    lines = [head] + [f"{n:<24} " + " ".join(f"{r['takes'][s]:>5}" for s in sets) +
                      "".join(f"  {v['right']:g}/{v['taken']}" for v in r.get("right", {}).values()) +
                      f"  {r['recognises']}" for n, r in data.items()]
    emit(args, {"sets": {s: len(qs) for s, qs in sets.items()}, "rules": data}, "\n".join(lines))
    return 0
