"""MMLongBench-Doc's published scoring rules, one case per rule (rag/eval/mmlongbench.py)."""

import pytest

from rag.eval.mmlongbench import anls, clean, exact_only, score


@pytest.mark.parametrize(
    ("pred", "gold", "fmt", "expected"),
    [
        # Int: the integer value, nothing else
        ("41", 41, "Int", 1.0),
        ("41.0", "41", "Int", 1.0),
        ("42", "41", "Int", 0.0),
        ("41%", "41", "Int", 0.0),  # no cleaning for integers
        ("21", "21%", "Int", 0.0),  # a gold that is not an integer cannot be matched
        ("Not answerable", "8", "Int", 0.0),
        # Float: 1% relative, percent forms equal, rounding to the shorter precision
        ("0.263", "0.263 ", "Float", 1.0),
        ("0.2655", "0.263", "Float", 1.0),  # within 1%
        ("0.27", "0.263", "Float", 0.0),
        ("27.2", "0.272", "Float", 1.0),
        ("0.272", "27.2%", "Float", 1.0),
        ("27.2%", "27.2", "Float", 1.0),
        ("$1,874", "1874", "Float", 0.0),  # a thousands comma is not cleaned
        ("$1874", "1874", "Float", 1.0),
        ("7", "7.0", "Float", 1.0),
        ("51.3", "51.286", "Float", 1.0),
        ("Not answerable", "2.91%", "Float", 0.0),
        # Str: ANLS above 0.5, partial credit
        ("Less well-off", "Less well-off", "Str", 1.0),
        ("less well off", "Less well-off", "Str", pytest.approx(1 - 1 / 13)),
        ("Pyke", "Pyke", "Str", 1.0),
        ("Prover9", "Pyke", "Str", 0.0),
        ("operating activities", "Operations activities", "Str", pytest.approx(1 - 2 / 21)),
        ("Florida", "Florida Department of Health", "Str", 0.0),  # 7 of 28 characters: under the threshold
        ("yes", "Yes", "Str", 1.0),
        ("Rick Scott (governor)", "Rick Scott", "Str", 1.0),  # parentheses removed
        # Str exact-match kinds: URLs, files, pages, phone-like numbers, times, dates, e-mails
        ("https://www.pewresearch.org", "https://pewresearch.org", "Str", 0.0),
        ("https://pewresearch.org", "https://pewresearch.org", "Str", 1.0),
        ("run_api.py", "run.py", "Str", 0.0),
        ("page 15", "page 5", "Str", 0.0),
        ("419-4372", "419-4373", "Str", 0.0),  # the rule knows two groups of digits
        ("9:00 a.m.", "9:30 a.m.", "Str", 0.0),
        ("2018-05-02", "2018-05-01", "Str", 0.0),
        ("2018-05", "2018-05", "Str", 1.0),
        ("info@pew.org", "info@pew.com", "Str", 0.0),
        # None (unanswerable): the refusal string, by ANLS
        ("Not answerable", "Not answerable", "None", 1.0),
        ("not answerable.", "Not answerable", "None", pytest.approx(1 - 1 / 15)),
        ("1,383", "Not answerable", "None", 0.0),
        # List: same length, sorted; numbers exact, strings by the minimum ANLS
        ("['90%', '39%', '42%']", "['90%', '42%', '39%']", "List", 1.0),
        ("['90%', '42%']", "['90%', '42%', '39%']", "List", 0.0),
        ("['3', '2', '2']", "['3', '2', '3']", "List", 0.0),
        ("['23', '21']", "['23', '21']", "List", 1.0),
        (["White", "10%"], "['White', '10%']", "List", 1.0),
        ("['Fact Checker']", "['Fact Checker']", "List", 1.0),
        ("['Fact Check']", "['Fact Checker']", "List", pytest.approx(1 - 2 / 12)),
        ("['strategies', 'objectives', 'strategic priority areas']",
         "['strategic priority areas', 'strategies', 'objectives']", "List", 1.0),
        ("['LONG HEALTHY LIFE', 'X']", "['LONG,HEALTHY LIFE', 'READINESS FOR EMERGING HEALTH THREATS']", "List", 0.0),
        ("Fact Checker", "['Fact Checker']", "List", 1.0),  # a bare value is a one-item list
    ],
)
def test_published_rules(pred, gold, fmt, expected):
    assert score(pred, gold, fmt) == expected


def test_anls_threshold_gives_no_credit_at_half_or_below():
    assert anls("abcd", "abxy") == 0.0  # exactly 0.5
    assert anls("abcde", "abcxy") == pytest.approx(0.6)
    assert anls("", "") == 1.0


def test_clean_drops_case_parentheses_quotes_dollar_and_percent():
    assert clean(' "$12.5%" ') == "12.5"
    assert clean("Revenue (in millions)") == "revenue"


def test_exact_only_kinds():
    assert exact_only("https://x.org") and exact_only("page 3") and exact_only("2023-01-28")
    assert not exact_only("florida department of health")
