"""The document's structure as a tool (rag/reader/outline.py): outline, headings, tables and figures per page."""

from __future__ import annotations

import pymupdf
import pytest
from conftest import PDFS, local_settings, pdf_bytes

from rag.outline import detect_headings, outline
from rag.reader.skills.outline import counting_program, numbered
from rag.reader.program import run_program
from rag.reader.question import understand
from rag.workspace import Workspace

STRATEGIC_PLAN = "e79deb02a0c0e87511080836c5d4347b.pdf"


@pytest.fixture(scope="module")
def plan(tmp_path_factory, embed_model):
    ws = Workspace(local_settings(tmp_path_factory.mktemp("plan")), embed_model=embed_model)
    report = ws.ingest(pdf_bytes(STRATEGIC_PLAN), STRATEGIC_PLAN)
    return ws, outline(ws.store, report.doc_id)


def test_a_pdf_without_a_table_of_contents_gets_its_headings_from_type_size_and_weight(plan):
    _, doc = plan
    assert not doc.from_toc and doc.pages == 17
    titles = [h.title for h in doc.headings]
    assert {"Appendix A", "Appendix B", "Appendix C", "Appendix D", "Appendix E"} <= set(titles)
    assert "Executive Summary" in titles


def test_numbered_section_headings_of_a_paper(tmp_path):
    with pymupdf.open(PDFS / "2023.findings-emnlp.248.pdf") as pdf:
        titles = {h.title: h.page for h in detect_headings(pdf)}
    assert titles["1 Introduction"] == 1 and titles["4.1 Main Results"] == 7


def test_each_page_lists_its_tables_and_figures(plan):
    ws, doc = plan
    figures = sum(len(c.figures) for c in doc.contents)
    tables = sum(len(c.tables) for c in doc.contents)
    info = ws.store.documents()[0]
    assert figures == info.fragments["image_caption"] and tables == len(ws.store.tables(info.doc_id))
    (page, first), *rest = doc.lines()
    assert page == 1 and first.startswith(f"The document {STRATEGIC_PLAN} has 17 pages")
    assert any(line.startswith("p.1: 1 figure") for _, line in rest)


@pytest.mark.parametrize(("question", "count"), [
    ("How many appendices appear in the document?", 5),
    ("How many pages does the document have?", 17),
])
def test_counts_the_outline_answers_are_programs(plan, question, count):
    _, doc = plan
    program = counting_program(understand(question), doc, {})
    assert program and run_program(program) == count


def printed(name: str) -> dict[int, str]:
    with pymupdf.open(PDFS / name) as pdf:
        return {n: page.get_text() for n, page in enumerate(pdf, 1)}


def test_figures_and_tables_are_counted_by_their_numbered_captions(plan):
    _, doc = plan
    paper = printed("2023.acl-long.386.pdf")  # captions "Figure 1:" … "Figure 8:", "Table 1:" … "Table 3:"
    assert run_program(counting_program(understand("How many figures does the paper have?"), doc, paper)) == 8
    assert run_program(counting_program(understand("How many tables are there?"), doc, paper)) == 3
    on_pages = counting_program(understand("How many tables are on pages 1-7?"), doc, paper)
    assert run_program(on_pages) == 1
    # a document that numbers none of its pictures: its pages are read, no count of the images found
    assert counting_program(understand("How many figures are on pages 2-4?"), doc, printed(STRATEGIC_PLAN)) is None
    assert counting_program(understand("How many people are in the picture?"), doc, paper) is None


def test_captions_with_a_gap_in_their_numbers_are_not_counted():
    pages = {1: "Figure 1: Sales by region\nbody text", 2: "Figure 2. Costs\n", 3: "Figure 4: Staff\n"}
    assert numbered(pages, "figures") == []
    pages[3] = "as shown in\nFigure 3: Staff\n"
    assert [label for _, label in numbered(pages, "figures")] == ["Figure 1", "Figure 2", "Figure 3"]
