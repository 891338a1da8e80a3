"""The computation tool's evaluator: what it runs, and everything it refuses (rag/reader/program.py)."""

import time

import pandas as pd
import pytest

from rag.reader.program import MAX_SECONDS, ComputeError, run_program


def test_program_of_thought_over_evidence_values():
    program = "gross_profit = 9912  # E2\nrevenue = 46298  # E1\nans = round(gross_profit / revenue * 100, 2)"
    assert run_program(program) == 21.41


def test_last_expression_is_the_result_without_ans():
    assert run_program("a = 3\nb = 4\na * b + 1") == 13
    assert run_program("x = [1, 2, 3]\nsum(x) / len(x)") == 2.0
    assert run_program("max(7.0 - 3.5, abs(-2))") == 3.5


def test_names_given_by_the_caller_and_dataframe_aggregation():
    df = pd.DataFrame({"year": ["2022", "2023"], "revenue": [51761, 46298]})
    assert run_program("ans = df['revenue'].sum()", {"df": df}) == 98059
    assert run_program("ans = df.loc[df['year'] == '2023', 'revenue'].item()", {"df": df}) == 46298
    assert run_program("ans = df['revenue'].max() - df['revenue'].min()", {"df": df}) == 5463


@pytest.mark.parametrize(
    ("program", "why"),
    [
        ("import os", "Import"),
        ("from os import system", "ImportFrom"),
        ("__import__('os').system('true')", "__import__"),
        ("ans = (1).__class__", "__class__"),
        ("ans = ().__class__.__bases__[0].__subclasses__()", "not allowed: name .__"),
        ("ans = df.to_csv('/tmp/x')", "to_csv"),
        ("ans = df.__dict__", "__dict__"),
        ("ans = df.eval('1+1')", "eval"),
        ("ans = df.values.tofile('/tmp/x')", "tofile"),
        ("ans = open('/etc/passwd').read()", "open"),
        ("ans = eval('1+1')", "eval"),
        ("ans = exec('x=1')", "exec"),
        ("ans = getattr(1, 'real')", "getattr"),
        ("f = lambda: 1", "Lambda"),
        ("def f():\n    return 1", "FunctionDef"),
        ("while True:\n    pass", "While"),
        ("for i in range(10**9):\n    pass", "For"),
        ("ans = [i for i in range(10)]", "ListComp"),
        ("ans = 'a' * 10", "repeating"),
        ("ans = 10 ** 100", "exponent"),
        ("ans = 2 ** 10 ** 10", "exponent"),
        ("ans = 99999999 ** 60", "too large"),
        ("x = 1\nx.real", "real"),
        ("ans = 1 / 0", "division by zero"),
        ("ans = unknown_name + 1", "unknown name"),
        ("ans = _private", "_private"),
        ("ans = (", "syntax"),
    ],
)
def test_refused(program, why):
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ComputeError, match=why):
        run_program(program, {"df": df})


def test_a_program_that_would_run_long_is_stopped_at_the_time_limit():
    # No loops exist, so time comes from work per operation: many sorts of a large column.
    import numpy as np

    df = pd.DataFrame({"a": np.random.default_rng(0).random(2_000_000)})
    program = "ans = " + " + ".join(["df['a'].sort_values().sum()"] * 40)
    start = time.monotonic()
    with pytest.raises(ComputeError, match="took longer"):
        run_program(program, {"df": df})
    assert time.monotonic() - start < MAX_SECONDS + 1.0


def test_a_long_program_is_refused_before_it_runs():
    with pytest.raises(ComputeError, match="too long"):
        run_program("x = 1\n" * 1000)
