"""Evaluation on MMLongBench-Doc-style questions."""
