"""What each retrieval addition buys: the paper's design, then one addition at a time on top.

Additions that change ingestion (OCR, chart text) get a store of their own, ingested from
scratch so that its pages/s is measured; the others only change how the store is searched.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from rag.eval.retrieval import evaluate_retrieval
from rag.settings import Settings
from rag.workspace import Workspace

# (label, ingest settings, retrieval settings): each step keeps the ones before it.
STEPS: list[tuple[str, dict, dict]] = [
    ("paper's design", {"ocr": "off", "chart_text": False},
     {"hybrid": False, "parent_page": False, "adaptive_k": False}),
    ("+ OCR", {"ocr": "auto"}, {}),
    ("+ chart text", {"chart_text": True}, {}),
    ("+ hybrid BM25", {}, {"hybrid": True}),
    ("+ parent page", {}, {"parent_page": True}),
    ("+ adaptive k", {}, {"adaptive_k": True}),
]


def run_ablation(settings: Settings, qa: Path, pdfs: Path, limit: int | None = None) -> list[dict]:
    rows, ingest, retrieval, ws = [], {}, {}, None
    with tempfile.TemporaryDirectory() as tmp:
        for n, (label, ingest_step, retrieval_step) in enumerate(STEPS):
            ingest, retrieval = {**ingest, **ingest_step}, {**retrieval, **retrieval_step}
            fresh = ws is None or bool(ingest_step)
            if fresh:
                ws = _workspace(settings, Path(tmp) / f"store{n}", ingest, ws)
            for name, value in retrieval.items():
                setattr(ws.settings.retrieval, name, value)
            if fresh:
                pages, seconds = _ingest_all(ws, pdfs)
            else:  # BM25 indexes this step builds count as ingestion
                seconds += _timed(ws.retriever.warm)
            summary = evaluate_retrieval(ws, qa, None, limit=limit).summary()
            rows.append({"step": label, **summary["recall_at_6"], "merged_top10": summary["recall_merged_top10"],
                         "questions": summary["questions"], "ingest_pages_per_s": _rate(pages, seconds)})
    return rows


def _workspace(settings: Settings, data_dir: Path, ingest: dict, previous: Workspace | None) -> Workspace:
    local = settings.model_copy(deep=True, update={"data_dir": data_dir, "chroma_host": None})
    local.ingest = local.ingest.model_copy(update=ingest)
    return Workspace(local, embed_model=previous.embed_model if previous else None)


def _ingest_all(ws: Workspace, pdfs: Path) -> tuple[float, float]:
    """Pages and seconds to ingest every PDF of the folder."""
    _ = ws.store  # opening the store is start-up, not ingestion
    pages = seconds = 0.0
    for path in sorted(Path(pdfs).glob("*.pdf")):
        report = ws.ingest(path.read_bytes(), path.name)
        if report.outcome == "error":
            raise RuntimeError(f"{path.name}: {report.error}")
        pages += report.pages
        seconds += report.seconds
    return pages, seconds


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _rate(pages: float, seconds: float) -> float:
    return round(pages / seconds, 2) if seconds else 0.0


def ablation_table(rows: list[dict]) -> str:
    head = "| step | text | table | chart/figure | overall | merged top-10 | ingest pages/s |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [r["text"], r["table"], r["image_caption"], r["overall"], r["merged_top10"]]
        lines.append(f"| {r['step']} | " + " | ".join(f"{c:.2f}" if c is not None else "–" for c in cells)
                     + f" | {r['ingest_pages_per_s']} |")
    return "\n".join(lines)
