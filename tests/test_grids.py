"""Tables without rules (rag/ingest/grids.py), read from real pages' words and a slide's OCR lines, checked
against rows written by hand from the pages; and a figure such a table prints looked up by code
(rag/reader/cells.py)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from scripted_llm import JsonReplies

from rag.ingest import parse_pdf
from rag.ingest.grids import find_grids
from rag.ingest.tables import find_page_tables, grid_tables
from rag.reader import PageRef, understand
from rag.reader.cells import cell
from rag.records import Table
from rag.settings import Settings

WIDE = Path(__file__).resolve().parents[2] / "shared/eval/wide/pdfs"
PDFS = WIDE.parent.parent / "pdfs"
PAPER = "STEPBACK.pdf"
SLIDES = "finalpresentationdeck-whatwhyhowofcertificationsocial-160324220748_95.pdf"
CODES = "8dfc21ec151fb9d3578fc32d5c4e5df9.pdf"
DOC_ID = "0123456789abcdef0123"


def page_grids(path: Path, page_no: int) -> list[Table]:
    with pymupdf.open(path) as doc:
        page = doc[page_no - 1]
        _, ruled = find_page_tables(page, DOC_ID, path.name)
        words = [w[:5] for w in page.get_text("words")]
        return grid_tables(words, [t.bbox for t in ruled], page_no, DOC_ID, path.name, len(ruled), 0)[1]


def test_a_papers_results_table_without_rules_keeps_its_decimals_header_and_title():
    [table] = page_grids(WIDE / PAPER, 6)
    assert table.title.startswith("Table 2: Strong performance of")
    assert table.header == ["Method", "TimeQA", "TQA Easy", "TQA Hard", "SituatedQA"]
    assert table.rows[0] == ["PaLM-2L", "41.5%", "42.6%", "40.4%", "54.3% (0.3%)"]
    assert table.rows[5] == ["PaLM-2L + RAG", "57.4%", "67.8%", "46.8%", "59.3% (0.4%)"]
    assert [r[0] for r in table.rows][-1] == "GPT-4" and len(table.rows) == 9


def test_its_rows_are_searchable_with_the_title_and_the_headers():
    with pymupdf.open(WIDE / PAPER) as doc:
        fragments, tables = grid_tables([w[:5] for w in doc[5].get_text("words")], [], 6, DOC_ID, PAPER, 0, 0)
    rag = next(f for f in fragments if f.text.split(" — ")[-1].startswith("Method: PaLM-2L + RAG"))
    assert rag.text.startswith("Table 2: Strong performance of")
    assert "TimeQA: 57.4%" in rag.text and rag.extra["title"] == tables[0].title
    assert [(c.header, c.number) for c in rag.cells[1:3]] == [("TimeQA", 57.4), ("TQA Easy", 67.8)]


def test_a_list_of_codes_in_columns_is_a_table():
    tables = page_grids(WIDE / CODES, 7)
    rows = [r for t in tables for r in t.rows]
    assert any(r[-1] == "TN01" and "Chattanooga" in r for r in rows)


@pytest.mark.parametrize("name, page_no", [
    ("tacl_a_00660.pdf", 3),  # a survey's running text in two columns
    ("2023.acl-long.386.pdf", 2),  # a paper's page of prose
    ("PH_2016.06.08_Economy-Final.pdf", 5),  # a report's text beside its charts
])
def test_prose_in_columns_is_no_table(name, page_no):
    parsed = parse_pdf((PDFS / name).read_bytes(), name, Settings().ingest, only=[page_no])
    assert [t for t in parsed.tables if not t.chart] == []


def test_two_columns_of_prose_are_no_grid():
    words = []
    for line in range(8):
        y = 100 + 12 * line
        words += [(50, y, 70, y + 9, "these"), (73, y, 95, y + 9, "words"), (98, y, 120, y + 9, "make"),
                  (123, y, 150, y + 9, "sentences"), (153, y, 170, y + 9, "that"), (173, y, 200, y + 9, "run"),
                  (300, y, 320, y + 9, "and"), (323, y, 350, y + 9, "another"), (353, y, 380, y + 9, "column"),
                  (383, y, 400, y + 9, "goes"), (403, y, 420, y + 9, "on"), (423, y, 450, y + 9, "here")]
    assert find_grids(words) == []


def test_a_slides_table_is_read_from_its_ocr_lines():
    data = (WIDE / SLIDES).read_bytes()
    parsed = parse_pdf(data, SLIDES, Settings().ingest, only=[12])
    assert parsed.ocr_pages == [12]
    [table] = [t for t in parsed.tables if t.page == 12 and not t.chart]
    assert table.header[:3] == ["User", "Profiles Viewed", "Profiles Saved"]
    assert table.header[-1] == "Response Rate(%)"
    assert [r[:3] for r in table.rows] == [["RecruiterA", "120", "5"], ["Recruiter B", "109", "51"]]
    ref = PageRef(doc_id=parsed.doc_id, file=SLIDES, page=12, score=1.0)
    found = cell(understand("How many profiles did Recruiter B view?"), [table], ref, parsed.page_texts[12])
    assert found is not None and found.short() == "109" and found.by == "code"


TABLE = Table(table_id="t", page=3, bbox=(0, 0, 1, 1), title="Table 1: Depots",
              header=["Depot", "Bicycles repaired", "Scooters repaired", "col4"],
              rows=[["North depot", "52", "17", "x"], ["North depot annex", "61", "9", ""],
                    ["South depot", "38", "—", ""], ["Group A", "4", "5", ""], ["Group B", "6", "7", ""]])
REF = PageRef(doc_id="d", file="f.pdf", page=3, score=1.0)


@pytest.mark.parametrize("question, short", [
    ("How many bicycles did the north depot repair?", "52"),
    ("How many bicycles did the north depot annex repair?", "61"),  # the label of most words held
    ("How many scooters did the north depot (annex) repair?", "9"),
    ("What is the number of scooters repaired at the south depot?", None),  # a dash is no figure
    ("How many scooters were repaired by Group B?", "7"),  # a capital letter alone tells rows apart
    ("How many bicycles were repaired?", None),  # no row named
    ("How many repairs did the north depot make?", None),  # no column named by all its words
    ("How many bicycles did the north annex of the depot repair?", "61"),
    ("Which depot repaired the most bicycles?", None),  # a choice, not a figure
])
def test_a_cell_at_the_row_and_column_named(question, short):
    found = cell(understand(question), [TABLE], REF, "")
    assert (found.short() if found else None) == short
    if found:
        assert found.pages == [REF] and found.program.startswith("value(table, row=")


def test_a_cell_beside_markers_under_a_heading_with_the_samples_size():
    survey = Table(table_id="s", page=2, bbox=(0, 0, 1, 1), title="Members who cycle to work",
                   header=["col1", "col2", "Share"],
                   rows=[["", "Gender", ""], ["a", "Male (n=612)", "65b"], ["b", "Female (n=914)", "55"]])
    found = cell(understand("What share of male members cycle to work?"), [survey], REF, "")
    assert found is not None and found.short() == "65" and found.inputs[0].row == "Male (n=612)"
    assert cell(understand("What share of male drivers park at home?"), [survey], REF, "") is None  # another table's


def test_the_reader_gives_a_named_cell_without_calling_the_model():
    """PageReader's code side, with a page source written here and a model that must not be called."""
    import asyncio

    from rag.reader import PageReader
    from rag.settings import ReaderSettings

    class Depots:
        def text(self, page):
            return "Table 1: Depots\nDepot Bicycles repaired Scooters repaired\nNorth depot 52 17\nSouth depot 38 —"

        def tables(self, page):
            return [TABLE]

    async def no_model(*args, **kwargs):
        raise AssertionError("the model was called")

    reader = PageReader(understand("How many bicycles did the south depot repair?"), ReaderSettings(), Depots(),
                        None, lambda text: len(text.split()), JsonReplies(no_model))
    got = asyncio.run(reader.read(REF))
    assert got.solution.short() == "38" and got.solution.by == "code"
    assert (got.record.skill, got.record.found, got.record.tokens > 0, got.calls) == ("table", True, True, [])
    off = PageReader(understand("How many bicycles did the south depot repair?"), ReaderSettings(cells=False),
                     Depots(), None, lambda text: len(text.split()), JsonReplies(no_model))
    with pytest.raises(AssertionError, match="the model was called"):
        asyncio.run(off.read(REF))


def test_rag_tables_lists_a_table_under_its_title():
    from rag.cli import _table_lines

    lines = _table_lines(TABLE)
    assert lines[0] == "p. 3 · table · Table 1: Depots"
    assert "North depot annex" in lines[1] and "Bicycles repaired" in lines[1]


def test_a_part_looks_its_figure_up_in_the_pages_found_before_any_is_read():
    """PageReader.look_up, with a page source written here: the first of the pages whose tables hold the cell."""
    from rag.reader import PageReader
    from rag.settings import ReaderSettings

    class TwoPages:
        def text(self, page):
            return ""

        def tables(self, page):
            return [TABLE] if page.page == 3 else []

    elsewhere = PageRef(doc_id="d", file="f.pdf", page=7, score=1.0)
    reader = PageReader(understand("How many scooters did Group A repair?"), ReaderSettings(), TwoPages(), None,
                        len, None)
    found = reader.look_up([elsewhere, REF, elsewhere])
    assert found.solution.short() == "5" and found.solution.pages == [REF]
    assert [p.page for p in reader.read_pages] == [3] and (found.record.page, found.record.skill) == (3, "table")
    assert reader.look_up([elsewhere]) is None
