"""Answer scoring in the style of MMLongBench-Doc, by the gold answer's `answer_format`.

Rules:
- Int: one of the prediction's first two numbers equals the gold integer ("1,234" → 1234; "12%" → 12).
- Float: numbers match within 1% relative tolerance (no absolute one: 0.011 is not 0.109); a percentage and its
  fraction count as equal ("12.5%" ~ 0.125), since gold answers mix the two.
- Str: normalised match — lowercase, punctuation, articles and extra spaces removed — either
  equal up to small spelling differences (edit distance ≤ 10% of the length, so "Latino" ~
  "Latinos"; the benchmark's own ANLS is looser: partial credit down to 0.5), or the gold contained in the
  prediction when the gold is short (≤ 4 words).
- List: the gold items (a Python-style list or comma-separated) each match a distinct
  predicted item by the Str or number rules; order is ignored, and the prediction may not
  add more items than half again the gold list's length.
Page citations like "[p. 5]" are removed from the prediction first.
- None (unanswerable): correct when the prediction says the documents do not contain it.
A prediction is the system's short answer; the full prose answer is scored only if no
short answer was given.
"""

from __future__ import annotations

import ast
import math
import re
import string

from rapidfuzz.distance import Levenshtein

NOT_ANSWERABLE = re.compile(
    r"not (in|found in|contained in|mentioned in|stated in|answerable)|not in the documents|"
    r"no (information|answer|mention)|cannot be (found|answered|determined)|does not (say|mention|contain)|"
    r"unanswerable|<missing>",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d[\d,]*\.?\d*|-?\.\d+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CITATION = re.compile(r"\[p\.?\s*\d+\]", re.IGNORECASE)


def normalise(text: str) -> str:
    text = str(text).lower().replace("’", "'")
    text = "".join(ch if ch not in string.punctuation or ch in "%." else " " for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.replace(" .", " ").split()).strip(". ")


def numbers(text: str) -> list[float]:
    found = []
    for raw in _NUMBER.findall(str(text)):
        try:
            found.append(float(raw.replace(",", "")))
        except ValueError:
            continue
    return found


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.01, abs_tol=1e-9)


def match_float(pred: str, gold) -> bool:
    target = float(numbers(str(gold))[0]) if isinstance(gold, str) else float(gold)
    # A share may be written as a fraction or a percentage, but only a side that says "%" is one:
    # otherwise 52.75 (million) would pass for 5,275 as its hundredth.
    percent = any("%" in str(x) or "percent" in str(x).lower() for x in (pred, gold))
    candidates = [target, target * 100, target / 100] if percent else [target]
    return any(_close(p, c) for p in numbers(pred) for c in candidates)


def match_int(pred: str, gold) -> bool:
    target = numbers(str(gold))
    found = numbers(pred)
    return bool(target and found) and any(math.isclose(f, target[0]) for f in found[:2])


def match_str(pred: str, gold) -> bool:
    p, g = normalise(pred), normalise(gold)
    if not g:
        return False
    if p == g or Levenshtein.normalized_distance(p, g) <= 0.1 or (len(g.split()) <= 4 and re.search(rf"(^|\s){re.escape(g)}($|\s)", p)):
        return True
    gold_numbers = numbers(g)
    return bool(gold_numbers) and len(g.split()) <= 2 and match_float(pred, gold_numbers[0])


def gold_items(gold) -> list[str]:
    if isinstance(gold, list):
        return [str(x) for x in gold]
    try:
        parsed = ast.literal_eval(str(gold))
        if isinstance(parsed, (list, tuple)):
            return [str(x) for x in parsed]
    except (ValueError, SyntaxError):
        pass
    return [x.strip() for x in str(gold).split(",") if x.strip()]


def match_list(pred: str, gold) -> bool:
    items = gold_items(gold)
    left = [x.strip(" '\"") for x in re.split(r",|;|\band\b|\n", str(pred).strip("[]")) if x.strip(" '\"")]
    if not items or len(left) > math.ceil(len(items) * 1.5):
        return False
    for g in items:  # each gold item needs its own predicted item: ["3","2","2"] is not ["3","2","3"]
        found = next((p for p in left if match_str(p, g) or (numbers(g) and match_int(p, g))), None)
        if found is None:
            return False
        left.remove(found)
    return True


def says_not_answerable(pred: str) -> bool:
    return bool(NOT_ANSWERABLE.search(str(pred)))


def score(pred: str, gold, answer_format: str) -> bool:
    """True when the prediction answers the gold under the format's rule (see module doc)."""
    fmt = (answer_format or "Str").strip()
    pred = _CITATION.sub(" ", str(pred))  # "[p. 5]" is a page, not part of the answer
    if fmt == "None" or str(gold).strip().lower() in {"not answerable", "none"}:
        return says_not_answerable(pred)
    rule = {"Int": match_int, "Float": match_float, "List": match_list}.get(fmt, match_str)
    try:
        return rule(pred, gold)
    except (ValueError, IndexError):
        return False
