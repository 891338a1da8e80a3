"""The computation tool's evaluator: what it runs, and everything it refuses (rag/reader/program.py)."""

import pytest

from rag.reader.program import ComputeError, run_program


def test_program_of_thought_over_evidence_values():
    program = "gross_profit = 9912  # E2\nrevenue = 46298  # E1\nans = round(gross_profit / revenue * 100, 2)"
    assert run_program(program) == 21.41


def test_last_expression_is_the_result_without_ans():
    assert run_program("a = 3\nb = 4\na * b + 1") == 13
    assert run_program("x = [1, 2, 3]\nsum(x) / len(x)") == 2.0
    assert run_program("max(7.0 - 3.5, abs(-2))") == 3.5


@pytest.mark.parametrize(
    ("program", "why"),
    [
        ("import os", "Import"),
        ("from os import system", "ImportFrom"),
        ("__import__('os').system('true')", "Attribute"),
        ("ans = (1).__class__", "Attribute"),
        ("ans = ().__class__.__bases__[0].__subclasses__()", "Attribute"),
        ("ans = [1].index(1)", "Attribute"),
        ("ans = open('/etc/passwd').read()", "Attribute"),
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
        ("x = 1\nx.real", "Attribute"),
        ("ans = 1 / 0", "division by zero"),
        ("ans = unknown_name + 1", "unknown name"),
        ("ans = _private", "_private"),
        ("ans = (", "syntax"),
    ],
)
def test_refused(program, why):
    with pytest.raises(ComputeError, match=why):
        run_program(program)


def test_a_long_program_is_refused_before_it_runs():
    with pytest.raises(ComputeError, match="too long"):
        run_program("x = 1\n" * 1000)
