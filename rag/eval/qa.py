"""MMLongBench-Doc question files and the documents they refer to."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from rag.records import Modality

SOURCE_MODALITY: dict[str, Modality] = {
    "Table": "table",
    "Chart": "image_caption",
    "Figure": "image_caption",
    "Pure-text": "text",
    "Pure-text (Plain-text)": "text",
    "Layout": "text",
    "Generalized-text (Layout)": "text",
}


class Question(BaseModel):
    doc_id: str = Field(description="the PDF's file name")
    question: str
    answer: str | int | float | list | None = None
    answer_format: str = "Str"
    evidence_pages_1based: list[int] = Field(default_factory=list)
    evidence_sources: list[str] = Field(default_factory=list)
    unanswerable: bool = False

    @property
    def modalities(self) -> list[Modality]:
        found = {SOURCE_MODALITY.get(s, "text") for s in self.evidence_sources} or {"text"}
        return sorted(found)

    @property
    def source(self) -> str:
        return self.evidence_sources[0] if self.evidence_sources else "none"


def load_questions(path: Path, limit: int | None = None) -> list[Question]:
    items = [Question.model_validate(q) for q in json.loads(Path(path).read_text())]
    return items[:limit] if limit else items


def ingest_referenced(ws, questions: list[Question], pdf_dir: Path) -> dict[str, str]:
    """Ingest each referenced PDF once; returns file name → doc id."""
    doc_ids = {}
    for name in sorted({q.doc_id for q in questions}):
        report = ws.ingest((Path(pdf_dir) / name).read_bytes(), name)
        if report.status == "error":
            raise RuntimeError(f"{name}: {report.error}")
        doc_ids[name] = report.doc_id
    return doc_ids
