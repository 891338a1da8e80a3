"""Scoring an analyst's metric in the unit asked (the fin set: FinanceBench's metric questions).

A question of such a set names the unit its gold is in (`usd_millions`, `usd_billions`, `percent`, `ratio`).
An answer is right when its number, in that unit, is within the gold's rounding (half a unit of its last
printed decimal) or within 1% of it, whichever is wider. A percentage may be written as a fraction ("0.054"
for 5.4%) only when it carries no "%"; a refusal is wrong.
"""

from __future__ import annotations

import re

from rag.eval.score import numbers, says_not_answerable

UNITS = ("usd_millions", "usd_billions", "percent", "ratio")
_KINDS = [("average", re.compile(r"\baverage\b|\bmean\b", re.I)),
          ("growth", re.compile(r"\b(?:change|growth|grow|increase|decrease|cagr)\b", re.I))]


def score(pred: str, gold: str, unit: str) -> bool:
    """The answer's number in the gold's unit is the gold's, within its rounding or 1%."""
    if not pred or says_not_answerable(pred) or not (found := numbers(pred)) or not (want := numbers(gold)):
        return False
    value, target = found[0], want[0]
    decimals = len(gold.split(".")[1].rstrip("%").strip()) if "." in gold else 0
    tolerance = max(0.5 * 10 ** -decimals, 0.01 * abs(target))
    candidates = [value]
    if unit == "percent" and "%" not in pred:
        candidates.append(value * 100)
    return any(abs(c - target) <= tolerance + 1e-9 for c in candidates)


def metric_kind(question: str, unit: str) -> str:
    """What a metric question asks, by its first sentence (a definition may follow): an average over years, a
    change or growth, a ratio or margin, or a value looked up (or added up) in the unit asked."""
    for kind, pattern in _KINDS:
        if pattern.search(question.split("?")[0]):
            return kind
    return "ratio" if unit in ("ratio", "percent") else "lookup"
