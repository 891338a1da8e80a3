"""MMLongBench-Doc's published scoring, written from its rules, so our figures compare with the papers'.

The prediction is the short answer (the benchmark's "extracted answer"); a refusal is "Not answerable".
- Int: the prediction as an integer equals the gold integer (a gold that is not an integer scores 0).
- Float: both cleaned (lower case, "(…)" removed, outer quotes, a leading "$" and a trailing "%" stripped)
  and compared within 1% relative, the gold also as its percent forms (27.2% = 0.272 = 27.2), or equal
  when rounded to the shorter of the two precisions (at least 2 decimals).
- Str (and None, the unanswerable): cleaned; exact for URLs, code files, "page …", phone-like numbers,
  times, dates (YYYY-MM-DD, YYYY-MM) and e-mail addresses; otherwise ANLS: 1 - edit distance / the longer
  length, 0 when that is not above 0.5 (partial credit above).
- List: the same length, or 0. Both cleaned and sorted; exact (joined) when the gold items are numbers or
  exact-match strings, else the minimum ANLS over the pairs.
Accuracy is the mean score.
"""

from __future__ import annotations

import ast
import math
import re

from rapidfuzz.distance import Levenshtein

_PARENS = re.compile(r"\s*\([^)]*\)")
_QUOTES = re.compile(r"^['\"]|['\"]$")
_EXACT = [
    re.compile(r"\d+(-\d+|\s\d+)?"),  # phone-like numbers
    re.compile(r"\d{4}[-\s]\d{2}[-\s]\d{2}"),  # YYYY-MM-DD
    re.compile(r"\d{4}[-\s]\d{2}"),  # YYYY-MM
    re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}"),  # e-mail
]


def clean(value) -> str:
    s = _PARENS.sub("", str(value).lower().strip()).strip()
    s = _QUOTES.sub("", s).strip()
    return s.lstrip("$").strip().rstrip("%").strip()


def exact_only(s: str) -> bool:
    """Strings the benchmark compares exactly rather than by ANLS."""
    return ("https://" in s or s.endswith((".py", "ipynb")) or s.startswith("page")
            or "a.m." in s or "p.m." in s or any(p.fullmatch(s) for p in _EXACT))


def anls(gold: str, pred: str, threshold: float = 0.5) -> float:
    longest = max(len(gold), len(pred))
    similarity = 1.0 - (Levenshtein.distance(gold, pred) / longest if longest else 0.0)
    return similarity if similarity > threshold else 0.0


def _precision(x: float) -> int:
    text = str(x)
    return len(text.split(".")[-1]) if "." in text else 3


def float_equal(gold: float, pred: float) -> bool:
    for target in (gold / 100, gold, gold * 100):
        if math.isclose(target, pred, rel_tol=0.01):
            return True
        digits = max(min(_precision(pred), _precision(target)), 2)
        if round(pred, digits) == round(target, digits):
            return True
    return False


def _as_list(value) -> list:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            pass
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def score(pred, gold, answer_format: str) -> float:
    """The benchmark's score of one prediction, in [0, 1]."""
    fmt = (answer_format or "Str").strip()
    if fmt == "Int":
        try:
            return float(int(gold) == int(float(pred)))
        except (TypeError, ValueError):
            return 0.0
    if fmt == "Float":
        try:
            return float(float_equal(float(clean(gold)), float(clean(pred))))
        except (TypeError, ValueError):
            return 0.0
    if fmt in ("Str", "None"):
        g, p = clean(gold), clean(pred)
        return float(g == p) if exact_only(g) else anls(g, p)
    golds, preds = _as_list(gold), _as_list(pred)
    if len(golds) != len(preds):
        return 0.0
    golds, preds = sorted(map(clean, golds)), sorted(map(clean, preds))
    if _is_number(golds[0]) or exact_only(golds[0]):
        return float("-".join(golds) == "-".join(preds))
    return min(anls(g, p) for g, p in zip(golds, preds))
