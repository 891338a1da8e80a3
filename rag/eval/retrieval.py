"""Retrieval-only evaluation: is a gold evidence page among the pages retrieved?

For each answerable question, search the collection that matches each of its evidence
sources (Table → table, Chart/Figure → image_caption, Pure-text/Layout → text), top-6,
within the question's own document, and the merged top-10 of the auto route. This is
the paper's retrieval-recall, measured by page. Beside it, the page the reader reads first (a page the
question names, else the best fragment's): with the embedded model, the only page read.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from rag.agent.documents import SearchedDocuments
from rag.eval.qa import GoldQuestion, ingest_referenced, load_questions
from rag.reader import understand
from rag.reader.pages import candidates
from rag.records import MODALITIES

RETRIEVAL_K = 6


class RetrievalOutcome(BaseModel):
    question: str
    doc: str
    gold_pages: list[int]
    modality_hits: dict[str, bool]
    modality_pages: dict[str, list[int]]
    merged_hit: bool
    merged_pages: list[int]
    first_read: int | None = None
    first_read_hit: bool = False


class RetrievalReport(BaseModel):
    outcomes: list[RetrievalOutcome]
    k: int

    def summary(self) -> dict:
        per_modality: dict[str, list[bool]] = defaultdict(list)
        for o in self.outcomes:
            for modality, hit in o.modality_hits.items():
                per_modality[modality].append(hit)
        recall = {m: _rate(per_modality[m]) for m in MODALITIES}
        recall["overall"] = _rate([any(o.modality_hits.values()) for o in self.outcomes])
        return {
            "questions": len(self.outcomes),
            "k": self.k,
            "recall_at_6": recall,
            "questions_per_modality": {m: len(per_modality[m]) for m in MODALITIES},
            "recall_merged_top10": _rate([o.merged_hit for o in self.outcomes]),
            "first_page_read": _rate([o.first_read_hit for o in self.outcomes]),
        }

    def table(self) -> str:
        s = self.summary()
        rows = [f"{'collection':15s} {'questions':>9s} {'recall@' + str(self.k):>9s}"]
        for m in MODALITIES:
            rows.append(f"{m:15s} {s['questions_per_modality'][m]:9d} {_fmt(s['recall_at_6'][m])}")
        rows.append(f"{'overall':15s} {s['questions']:9d} {_fmt(s['recall_at_6']['overall'])}")
        rows.append(f"{'merged top-10':15s} {s['questions']:9d} {_fmt(s['recall_merged_top10'])}")
        rows.append(f"{'first page read':15s} {s['questions']:9d} {_fmt(s['first_page_read'])}")
        return "\n".join(rows)


def evaluate_retrieval(ws, qa_path: Path, pdf_dir: Path, limit: int | None = None, k: int = RETRIEVAL_K) -> RetrievalReport:
    questions = [q for q in load_questions(qa_path) if not q.unanswerable and q.evidence_pages_1based]
    questions = questions[:limit] if limit else questions
    doc_ids = ingest_referenced(ws, questions, pdf_dir)
    return RetrievalReport(outcomes=[_judge(ws, q, doc_ids[q.doc_id], k) for q in questions], k=k)


def modality_hits(ws, q: GoldQuestion, doc_id: str, k: int) -> tuple[dict[str, bool], dict[str, list[int]]]:
    """Per evidence modality: is a gold page among that collection's top-k, and its pages."""
    gold = set(q.evidence_pages_1based)
    pages = {
        m: [h.fragment.page for h in ws.search(q.question, modality=m, k=k, doc_ids=[doc_id]).hits]
        for m in q.modalities
    }
    return {m: bool(gold & set(p)) for m, p in pages.items()}, pages


def _judge(ws, q: GoldQuestion, doc_id: str, k: int) -> RetrievalOutcome:
    hits, pages = modality_hits(ws, q, doc_id, k)
    merged = [h.fragment.page for h in ws.search(q.question, doc_ids=[doc_id]).hits]
    first = first_read(ws, q.question, doc_id)
    return RetrievalOutcome(
        question=q.question, doc=q.doc_id, gold_pages=q.evidence_pages_1based, modality_hits=hits,
        modality_pages=pages, merged_hit=bool(set(q.evidence_pages_1based) & set(merged)), merged_pages=merged,
        first_read=first, first_read_hit=first in q.evidence_pages_1based,
    )


def first_read(ws, question: str, doc_id: str) -> int | None:
    """The page the reader reads first: a page the question names, else the page of the best fragment found."""
    asked = understand(question)
    documents = SearchedDocuments(ws.store, [doc_id])
    hits = ws.search(asked.text, doc_ids=[doc_id], pages=asked.pages).hits
    return next((p.page for p in candidates(documents.named(asked), hits, set())), None)


def _rate(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _fmt(value: float | None) -> str:
    return f"{value:9.3f}" if value is not None else f"{'-':>9s}"
