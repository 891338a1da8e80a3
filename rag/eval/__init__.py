"""Evaluation: questions, scoring, answering modes, reports."""

MODES = ("agent", "single-pass", "text-only", "oracle")
SCORINGS = ("strict", "mmlongbench", "units")
