"""The MMLongBench-style answer scorer, format by format, with the awkward cases."""

import pytest

from rag.eval.score import score


@pytest.mark.parametrize(
    ("pred", "gold", "fmt", "ok"),
    [
        ("1,234", "1234", "Int", True),
        ("There were 1,234 respondents [p. 3].", 1234, "Int", True),
        ("12%", "12", "Int", True),
        ("21%", "21%", "Int", True),
        ("1,235", "1234", "Int", False),
        ("12.5%", "0.125", "Float", True),
        ("0.125", "12.5%", "Float", True),
        ("The ratio is 0.263 [p. 40]", "0.263 ", "Float", True),
        ("1.08%", "1.08%", "Float", True),
        ("7.02", "7.0", "Float", True),
        ("7.5", "7.0", "Float", False),
        ("0.011", "0.109", "Float", False),  # relative tolerance: a small number is not inflated by ÷100
        ("139.12 million", "13929", "Float", False),  # a hundredth is a percent form only beside a "%"
        ("13.929", "13929", "Float", False),
        ("less well-off", "Less well-off", "Str", True),
        ("They said: Less well off.", "Less well-off", "Str", True),
        ("Florida Department of Health", "Florida Department of Health", "Str", True),
        ("Health", "Florida Department of Health", "Str", False),
        ("Rick Scott [p. 2]", "Rick Scott", "Str", True),
        ("90%, 39%, 42%", "['90%', '42%', '39%']", "List", True),
        ("23 and 21", "['23', '21']", "List", True),
        ("90%, 42%", "['90%', '42%', '39%']", "List", False),
        ("White; 10%", "['White', '10%']", "List", True),
        ("not in the documents", "Not answerable", "None", True),
        ("The report does not mention it.", "Not answerable", "None", True),
        ("42%", "Not answerable", "None", False),
        ("not in the documents", "1234", "Int", False),
        ("1 [p. 5] [p. 19]", "5", "Int", False),
        ('["3","2","2"] [p. 5]', "['3', '2', '3']", "List", False),
        ('["3","2","3"] [p. 5]', "['3', '2', '3']", "List", True),
        ("Latino interviewed by cellphone", "Latinos interviewed by cellphone", "Str", True),
        ("Latinos interviewed by landline", "Latinos interviewed by cellphone", "Str", False),
        ("12%", "0.12", "Float", True),
        ("$1,234.5 million", "1234.5", "Float", True),
        ('["Texas", "Florida"]', "['Florida', 'Texas']", "List", True),
        ("Texas, Florida, Ohio, Utah", "['Florida', 'Texas']", "List", False),
        ("Not answerable", "Not answerable", "None", True),
    ],
)
def test_scoring_rules(pred, gold, fmt, ok):
    assert score(pred, gold, fmt) is ok
