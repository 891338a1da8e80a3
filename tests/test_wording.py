"""The wording rules (rag/reader/wording.py): each takes its example and leaves its counter-example, and
`python -m rag rules` counts the questions and the right answers each takes."""

from __future__ import annotations

import json

import pytest

from rag.cli import main
from rag.reader.lookup import normal
from rag.reader.wording import RULES


@pytest.mark.parametrize("name", list(RULES))
def test_rule_takes_its_example_and_leaves_its_counter(name):
    rule = RULES[name]
    read = normal if rule.normal else str
    assert rule.recognises and rule.example != rule.counter
    assert rule.search(read(rule.example)), f"{name} misses its example"
    assert not rule.search(read(rule.counter)), f"{name} takes its counter-example"


def test_rules_command_counts_sets_and_a_run(tmp_path, capsys):
    sets = tmp_path / "sets"
    (sets / "qa").mkdir(parents=True)
    (sets / "qa" / "dev.json").write_text(json.dumps([{"question": "Does the ferry sail at night?"},
                                                       {"question": "How many piers does the harbour have?"}]))
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"question": "Is the lock open in winter?", "score_mmlongbench": 1.0},
            {"question": "Was the bridge rebuilt?", "score_mmlongbench": 0.0},
            {"question": "How many locks are there?", "score_mmlongbench": 1.0}]
    (run / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["rules", "--eval", str(sets), "--run", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sets"] == {"dev": 2}
    assert data["rules"]["yes_no"]["takes"] == {"dev": 1}
    assert data["rules"]["yes_no"]["right"][str(run)] == {"taken": 2, "right": 1.0}
    assert data["rules"]["counts"]["right"][str(run)] == {"taken": 1, "right": 1.0}
    assert main(["rules", "--eval", str(sets)]) == 0
    assert "yes_no" in capsys.readouterr().out
