"""What a page prints in colour, read as data (rag/ingest/colours.py) for `python -m rag colours`: on a PDF made
here with known inks, grounds, a highlight and a link, and on a real brochure's table."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from rag.ingest.colours import colour_name, page_colours

WIDE = Path(__file__).resolve().parents[2] / "shared/eval/wide/pdfs"
RED, BLUE, ORANGE, YELLOW = (0.75, 0.05, 0.05), (0.0, 0.3, 0.8), (0.95, 0.55, 0.1), (1.0, 1.0, 0.0)


def coloured_pdf() -> bytes:
    """Two pages: black body text, two headings in red (one over two lines), a link in blue, a word in an
    orange box, a line under a yellow highlight; the second page only black."""
    doc = pymupdf.open()
    page = doc.new_page()
    body = "The quarterly review covers staffing, budgets and the new depot in plain black ink. " * 3
    page.insert_textbox(pymupdf.Rect(50, 200, 550, 300), body, fontsize=10)
    page.insert_text((50, 80), "Harbour Renewal", fontsize=14, color=RED)
    page.insert_text((50, 120), "Budget Outlook For", fontsize=14, color=RED)
    page.insert_text((50, 137), "The Coming Year", fontsize=14, color=RED)
    page.insert_text((50, 330), "See the depot website", fontsize=10, color=BLUE)
    page.insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(48, 320, 160, 334), "uri": "https://example.org"})
    page.draw_rect(pymupdf.Rect(48, 360, 140, 380), color=ORANGE, fill=ORANGE)
    page.insert_text((52, 374), "Approve plan", fontsize=10)
    page.insert_text((50, 420), "The ferry timetable changes in March.", fontsize=10)
    page.add_highlight_annot(page.search_for("The ferry timetable changes in March.")[0])
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 300), body, fontsize=10)
    return doc.tobytes()


def test_colours_are_named_as_a_reader_names_them():
    named = {(0.6, 0.0, 0.0): "red", (0.88, 0.96, 1.0): "blue", (1.0, 1.0, 0.0): "yellow", (0.0, 0.69, 0.31): "green",
             (0.95, 0.95, 0.95): "white", (0.2, 0.2, 0.2): "black", (0.65, 0.65, 0.65): "grey",
             (0.5, 0.3, 0.1): "brown", (0.95, 0.55, 0.1): "orange", (0.44, 0.19, 0.63): "purple"}
    assert {rgb: colour_name(rgb) for rgb in named} == named


def test_a_pages_inks_and_grounds_are_read_and_a_link_is_not():
    with pymupdf.open(stream=coloured_pdf()) as doc:
        runs = page_colours(doc[0], 1).runs
        assert page_colours(doc[1], 2).runs == [], "black body text is no colour"
    inks = [(r.colour, r.text) for r in runs if not r.ground]
    assert inks == [("red", "Harbour Renewal"), ("red", "Budget Outlook For The Coming Year")], \
        "a heading over two lines is one run; the blue link is left out"
    grounds = [(r.colour, r.text) for r in runs if r.ground]
    assert grounds == [("orange", "Approve plan"), ("yellow", "The ferry timetable changes in March.")]


def test_a_brochures_coloured_row_labels_are_read_each_whole():
    with pymupdf.open(WIDE / "obs-productdesc-en.pdf") as doc:
        runs = [r.text for r in page_colours(doc[6], 7).runs if r.colour == "blue" and not r.ground]
    assert runs[:2] == ["Designed durability", "Designed durability (multi-AZ)"], runs


def test_the_cli_lists_a_pdfs_coloured_words_and_refuses_a_non_pdf(tmp_path, capsys):
    from rag.cli import main

    pdf = tmp_path / "review.pdf"
    pdf.write_bytes(coloured_pdf())
    assert main(["colours", str(pdf), "--colour", "red"]) == 0
    assert capsys.readouterr().out.splitlines() == ["p. 1 · red · Harbour Renewal",
                                                    "p. 1 · red · Budget Outlook For The Coming Year"]
    assert main(["colours", str(pdf), "--page", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 4
    (tmp_path / "notes.txt").write_text("plain words")
    with pytest.raises(SystemExit, match="not a PDF"):
        main(["colours", str(tmp_path / "notes.txt")])
