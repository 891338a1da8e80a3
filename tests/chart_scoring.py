"""Scoring chart readings against the hand-checked values (tests/chart_truth.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher

_WORD = re.compile(r"[a-z0-9]+")


def text_key(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def same_text(a: str, b: str, fuzzy: bool) -> bool:
    a, b = text_key(a), text_key(b)
    return a == b or (fuzzy and SequenceMatcher(None, a, b).ratio() >= 0.85)


def value_key(text: str) -> float | None:
    cleaned = re.sub(r"[^\d.\-+]", "", text.replace(",", ""))
    try:
        return float(cleaned)
    except ValueError:
        return None


@dataclass
class Score:
    labels: int = 0  # data labels whose category the chart prints
    right: int = 0
    wrong: list = field(default_factory=list)  # pairs the reader made that the chart does not say
    unreadable: int = 0  # labels whose category the chart does not print
    unreadable_paired: int = 0

    def add(self, other: Score) -> None:
        self.labels += other.labels
        self.right += other.right
        self.wrong += other.wrong
        self.unreadable += other.unreadable
        self.unreadable_paired += other.unreadable_paired

    @property
    def accuracy(self) -> float:
        return self.right / self.labels if self.labels else 0.0


def score(truth: list[tuple], found: list[tuple], fuzzy: bool = False) -> Score:
    """`truth` (category or None, series, value); `found` (category, series, value) from the reader."""
    result = Score()

    def match(t, f) -> bool:
        return (
            value_key(t[2]) == value_key(f[2])
            and same_text(t[1], f[1], fuzzy)
            and t[0] is not None
            and same_text(t[0], f[0], fuzzy)
        )

    for t in truth:
        if t[0] is None:
            result.unreadable += 1
            result.unreadable_paired += any(
                value_key(t[2]) == value_key(f[2])
                and same_text(t[1], f[1], fuzzy)
                and not any(match(u, f) for u in truth)
                for f in found
            )
        else:
            result.labels += 1
            result.right += any(match(t, f) for f in found)
    result.wrong = [f for f in found if not any(match(t, f) for t in truth)]
    return result
