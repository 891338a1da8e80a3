"""A document's frames kept in one SQLite file: three tables (frames; periods; cells, one row per figure)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from itertools import groupby
from pathlib import Path

from rag.records import Period, StatementFrame, StatementRow

_TABLES = {
    "frames": ("frame", "page", "title", "kind", "scale", "currency", "context", "doc_id", "file"),
    "periods": ("frame", "col", "header", "year"),
    "cells": ("frame", "row", "label", "section", "per_share", "col", "value", "printed"),
}


def save_frames(frames: list[StatementFrame], path: Path) -> None:
    """Frames as three tables (frames; periods; cells, one row per figure), for `load_frames` or
    `pandas.read_sql`. Written with sqlite3 itself: importing pandas would cost the searchable stage 0.4 s."""
    rows = {
        "frames": [(n, f.page, f.title, f.kind, f.scale, f.currency, f.context, f.doc_id, f.file)
                   for n, f in enumerate(frames)],
        "periods": [(n, c, p.header, p.year) for n, f in enumerate(frames) for c, p in enumerate(f.periods)],
        "cells": [(n, r, row.label, json.dumps(row.section), int(row.per_share), c, row.values[c], row.cells[c])
                  for n, f in enumerate(frames) for r, row in enumerate(f.rows) for c in range(len(row.values))],
    }
    with closing(sqlite3.connect(path)) as db:
        for name, columns in _TABLES.items():
            db.execute(f"DROP TABLE IF EXISTS {name}")
            db.execute(f"CREATE TABLE {name} ({', '.join(columns)})")
            db.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(columns))})", rows[name])
        db.commit()


def load_frames(path: Path) -> list[StatementFrame]:
    with closing(sqlite3.connect(path)) as db:
        heads = db.execute("SELECT * FROM frames ORDER BY frame").fetchall()
        periods = db.execute("SELECT frame, header, year FROM periods ORDER BY frame, col").fetchall()
        cells = db.execute("SELECT frame, row, label, section, per_share, value, printed FROM cells "
                           "ORDER BY frame, row, col").fetchall()
    by_frame: dict[int, list[Period]] = {}
    for frame, header, year in periods:
        by_frame.setdefault(frame, []).append(Period(header=header, year=year))
    rows: dict[int, list[StatementRow]] = {}
    for (frame, row), group in groupby(cells, key=lambda c: (c[0], c[1])):
        group = list(group)
        _, _, label, section, per_share, _, _ = group[0]
        rows.setdefault(frame, []).append(StatementRow(
            label=label, section=json.loads(section), per_share=bool(per_share),
            values=[c[5] for c in group], cells=[c[6] for c in group]))
    return [StatementFrame(page=page, title=title, kind=kind, scale=scale, currency=currency,
                           context=context, doc_id=doc_id, file=file, periods=by_frame.get(n, []), rows=rows.get(n, []))
            for n, page, title, kind, scale, currency, context, doc_id, file in heads]
