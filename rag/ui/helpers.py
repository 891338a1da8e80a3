"""Pure helpers for the Streamlit UI: evidence as pictures and tables, answers as markdown.

No Streamlit here, so every function is testable on its own and the pages stay thin.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

from rag.agent.events import HopEvent, from_records
from rag.records import BBox

MISSING_BADGE = ":red-background[missing]"
HIGHLIGHT = (0.9, 0.1, 0.1)

def answer_markdown(answer: str) -> str:
    """The answer as Streamlit markdown: literal dollar signs, a red badge for <missing>."""
    return answer.replace("$", r"\$").replace("<missing>", MISSING_BADGE)


def page_png(pdf: Path, page: int, dpi: int = 72, highlight: BBox | None = None) -> bytes:
    """One page as PNG; `highlight` draws the cited fragment's box on it."""
    with pymupdf.open(pdf) as doc:
        p = doc[page - 1]
        if highlight:
            p.draw_rect(pymupdf.Rect(highlight) + (-3, -3, 3, 3), color=HIGHLIGHT, fill=HIGHLIGHT,
                        width=2, fill_opacity=0.12)
        return p.get_pixmap(dpi=dpi).tobytes("png")


def crop_png(pdf: Path, page: int, bbox: BBox, dpi: int = 110, pad: float = 6) -> bytes:
    """A figure cut out of its page, with a little margin."""
    with pymupdf.open(pdf) as doc:
        p = doc[page - 1]
        clip = (pymupdf.Rect(bbox) + (-pad, -pad, pad, pad)) & p.rect
        return p.get_pixmap(dpi=dpi, clip=clip).tobytes("png")


def events_from_trace(spans: list[dict]) -> list[HopEvent]:
    """A trace file's spans as typed hop events, skipping kinds this version does not know."""
    return from_records([s["event"] for s in spans if "event" in s])


READER_KINDS = {"compute", "read"}


def is_reader_step(event) -> bool:
    """The reader's events, and its model calls (their purpose names the reader's job)."""
    kind, purpose = (event["kind"], event.get("purpose")) if isinstance(event, dict) else (event.kind, getattr(event, "purpose", None))
    return kind in READER_KINDS or (kind == "llm" and purpose not in (None, "react", "paraphrase", "sufficiency"))


def timeline_rows(spans: list[dict]) -> list[dict]:
    """The spans that take time, as bars: hop label, kind, start and length in ms from the run's start."""
    events = [s["event"] for s in spans if "event" in s]
    if not events:
        return []
    t0 = events[0]["t_start"]
    rows = []
    for e in events:
        end = e.get("t_end") or e["t_start"]
        if e["kind"] == "answer":
            rows.append(_bar("run", "AGENT", "whole run", t0, t0, e["t_start"]))
        elif e["kind"] == "hop_end":
            rows.append(_bar(f"hop {e['hop']}", "RETRIEVER", f"{e['modality']}: {e['query']}", t0, e["t_start"], end))
        elif e["kind"] == "waiting" and end > e["t_start"]:
            rows.append(_bar(f"hop {e['hop']}", "QUEUE", "waiting for the model", t0, e["t_start"], end))
        elif e["kind"] in ("llm", "paraphrase") and end > e["t_start"]:
            lane = "reader" if is_reader_step(e) else f"hop {e['hop']}"
            rows.append(_bar(lane, "LLM", e.get("purpose", e["kind"]), t0, e["t_start"], end))
    return rows


def _bar(lane: str, kind: str, label: str, t0: float, start: float, end: float) -> dict:
    return {"lane": lane, "span_kind": kind, "label": label,
            "start_ms": round((start - t0) * 1000, 1), "ms": round(max(end - start, 0.0) * 1000, 1)}


def flat_settings(settings: dict, prefix: str = "") -> dict[str, object]:
    """Nested settings as one level of dotted names: {"agent.max_hops": 3, "retrieval.ratio.text": 6}."""
    flat: dict[str, object] = {}
    for name, value in settings.items():
        if isinstance(value, dict):
            flat.update(flat_settings(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def settings_diff(a: dict, b: dict) -> list[dict]:
    """The settings two runs used differently, one row per dotted name (a name one run lacks shows "–")."""
    fa, fb = flat_settings(a), flat_settings(b)
    return [{"setting": name, "first run": str(fa.get(name, "–")), "second run": str(fb.get(name, "–"))}
            for name in sorted(fa.keys() | fb.keys()) if fa.get(name, "–") != fb.get(name, "–")]
