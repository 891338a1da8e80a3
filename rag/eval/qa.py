"""MMLongBench-Doc question files and the documents they refer to."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import AliasChoices, BaseModel, Field

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


class GoldQuestion(BaseModel):
    """A benchmark's item: a question about one PDF with its gold answer and evidence (the reader's own
    `Question` is what it makes of a question asked)."""

    doc_id: str = Field(description="the PDF's file name")
    question: str
    answer: str | int | float | list | None = None
    answer_format: str = "Str"
    evidence_pages_1based: list[int] = Field(default_factory=list)
    evidence_sources: list[str] = Field(default_factory=list)
    unanswerable: bool = False
    doc_type: str = ""
    unit: str | None = Field(None, description="the unit an analyst's metric is asked in (rag/eval/units.py)")
    task: str | None = Field(None, validation_alias=AliasChoices("task", "v2_task_type"),
                             description="what the question asks of its pages: lookup, count, compare, derive, …")

    @property
    def modalities(self) -> list[Modality]:
        found = {SOURCE_MODALITY.get(s, "text") for s in self.evidence_sources} or {"text"}
        return sorted(found)

    @property
    def source(self) -> str:
        return self.evidence_sources[0] if self.evidence_sources else "none"


def load_questions(path: Path, limit: int | None = None) -> list[GoldQuestion]:
    items = [GoldQuestion.model_validate(q) for q in json.loads(Path(path).read_text())]
    return items[:limit] if limit else items


def ingest_referenced(ws, questions: list[GoldQuestion], pdf_dir: Path | None) -> dict[str, str]:
    """File name → doc id for each referenced PDF: the store's copy when it holds one, else
    ingested from pdf_dir. Files found in neither are left out."""
    ready = {d.file: d.doc_id for d in ws.store.documents()}
    doc_ids = {}
    for name in sorted({q.doc_id for q in questions}):
        if name in ready:
            doc_ids[name] = ready[name]
        elif pdf_dir is not None and (Path(pdf_dir) / name).is_file():
            report = ws.ingest((Path(pdf_dir) / name).read_bytes(), name)
            if report.outcome == "error":
                raise RuntimeError(f"{name}: {report.error}")
            doc_ids[name] = report.doc_id
    return doc_ids
