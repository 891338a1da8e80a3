"""The checks' table: what each check rejected and stopped, and what a subset of them would have answered, read
from the traces of a run that enforced them all (rag/eval/checks.py). Traces written here, by hand."""

from __future__ import annotations

import json

from rag.eval import checks


def trace(tmp_path, name: str, reads: list[tuple[str, dict, float]]) -> str:
    path = tmp_path / f"{name}.jsonl"
    spans = [{"kind": "run_start", "event": {"t_start": 100.0}}]
    spans += [{"kind": "read", "event": {"short": short, "answer": short, "checks": failed, "found": not failed,
                                         "t_end": 100.0 + t}} for short, failed, t in reads]
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    return str(path)


def row(tmp_path, name, gold, reads, unanswerable=False, short="Not answerable", seconds=20.0):
    return {"trace": trace(tmp_path, name, reads), "gold": gold, "format": "Str", "unanswerable": unanswerable,
            "short_answer": short, "seconds": seconds}


def test_each_check_counts_the_right_answers_it_rejected_and_the_wrong_ones_it_stopped(tmp_path):
    rows = [
        # a right answer rejected by number_line, then nothing: enforcing number_line loses it
        row(tmp_path, "a", "Pew Research Center", [("Pew Research Center", {"number_line": "…"}, 5.0), ("", {}, 9.0)]),
        # an unanswerable question: the wrong answer stopped by values_on_page
        row(tmp_path, "b", "Not answerable", [("42", {"values_on_page": "…"}, 4.0)], unanswerable=True),
        # passed every check on its second page
        row(tmp_path, "c", "Blue", [("Red", {"values_on_page": "…"}, 3.0), ("Blue", {}, 7.0)], short="Blue"),
    ]
    table = checks.table(rows)
    assert table["number_line"] == {"rejected right": 1}
    assert table["values_on_page"] == {"stopped wrong": 2}

    assert checks.with_checks(rows[0], set()) == ("Pew Research Center", 5.0)
    assert checks.with_checks(rows[0], {"number_line"}) == ("Not answerable", 20.0)
    assert checks.with_checks(rows[2], set()) == ("Red", 3.0)
    assert checks.with_checks(rows[2], {"values_on_page"}) == ("Blue", 7.0)

    kept = checks.simulate(rows, {"values_on_page"})
    assert kept["answerable"] == 1.0 and kept["unanswerable"] == 1.0
    none = checks.simulate(rows, set())
    assert none["answerable"] == 0.5 and none["unanswerable"] == 0.0
    assert "| values_on_page | 0 | 2 | yes |" in checks.markdown(rows)


def test_the_enforced_checks_are_checks_the_reader_knows():
    from rag.reader.verify import CHECKS
    from rag.settings import PRESETS

    for preset in PRESETS.values():
        assert set(preset.reader.checks) <= set(CHECKS), preset.preset
