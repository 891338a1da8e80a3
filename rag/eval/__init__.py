"""Evaluation: questions, scoring, answering modes, reports."""

MODES = ("agent", "single-pass", "text-only", "oracle", "oracle-agent")
SCORINGS = ("strict", "mmlongbench", "units")
