"""A step that fails on a page costs that step only, and the ingest report says which step and why.

Each test makes one step raise (monkeypatch) on a few real pages, parsed in this process."""

from __future__ import annotations

import logging

import pymupdf
from conftest import BESTBUY, PEW, local_settings, pages_of

import rag.ingest as ingest
from rag.ingest import charts, ocr, parse_pdf
from rag.settings import IngestSettings
from rag.workspace import Workspace

STATEMENT = pages_of(BESTBUY, [40, 9])  # the statement of earnings, then a page of prose
CHARTS = pages_of(PEW, [4, 6])  # a vector chart, then a raster chart (its labels read with OCR)


def boom(*args, **kwargs):
    raise ValueError("boom")


def parse(data: bytes, **settings):
    return parse_pdf(data, "doc.pdf", IngestSettings(**settings))


def test_a_failed_table_extraction_keeps_the_page_text_and_is_named(monkeypatch):
    healthy = parse(STATEMENT)
    assert any(f.modality == "table" and f.page == 1 for f in healthy.fragments) and not healthy.warnings
    monkeypatch.setattr(ingest, "find_page_tables", boom)
    parsed = parse(STATEMENT)
    assert "page 1: table extraction failed (ValueError: boom)" in parsed.warnings
    assert not [f for f in parsed.fragments if f.modality == "table"]
    assert {f.page for f in parsed.fragments if f.modality == "text"} == {1, 2}
    assert parsed.bad_pages == []


def test_find_tables_returning_nothing_is_a_named_failure(monkeypatch):
    monkeypatch.setattr(pymupdf.Page, "find_tables", lambda self, **kwargs: None)
    parsed = parse(STATEMENT)
    assert any(w.startswith("page 1: table extraction failed (RuntimeError: PyMuPDF's find_tables failed")
               for w in parsed.warnings), parsed.warnings


def test_a_failed_chart_reading_keeps_the_figure_and_is_named(monkeypatch):
    monkeypatch.setattr(charts, "read_chart", boom)
    parsed = parse(CHARTS)
    assert "page 1: chart reading failed (ValueError: boom)" in parsed.warnings
    figure = next(f for f in parsed.fragments if f.modality == "image_caption" and f.page == 1)
    assert "Hispanics more confident in personal finances" in figure.text
    assert not [t for t in parsed.tables if t.chart is not None]


def test_a_failed_check_of_a_table_for_a_chart_keeps_the_table_and_is_named(monkeypatch):
    monkeypatch.setattr(charts, "read_chart", boom)
    parsed = parse(STATEMENT)
    assert "page 1: reading a table as a chart failed (ValueError: boom)" in parsed.warnings
    assert any("Revenue | January 28, 2023: $46,298" in f.text for f in parsed.fragments)


def test_a_failed_chart_ocr_keeps_the_caption_and_is_named(monkeypatch):
    monkeypatch.setattr(ocr, "read_region", boom)
    parsed = parse(CHARTS)
    assert "page 2: chart OCR failed (ValueError: boom)" in parsed.warnings
    figure = next(f for f in parsed.fragments if f.modality == "image_caption" and f.page == 2)
    assert "Latino unemployment rate is declining" in figure.text


def test_a_failed_figure_detection_keeps_the_text_and_is_named(monkeypatch):
    monkeypatch.setattr(ingest, "find_page_figures", boom)
    parsed = parse(CHARTS)
    assert {"page 1: figure detection failed (ValueError: boom)",
            "page 2: figure detection failed (ValueError: boom)"} <= set(parsed.warnings)
    assert {f.page for f in parsed.fragments if f.modality == "text"} == {1, 2}


def test_a_failed_check_for_ocr_reads_the_text_layer_and_is_named(monkeypatch):
    monkeypatch.setattr(ocr, "needs_ocr", boom)
    parsed = parse(STATEMENT)
    assert "page 2: the check for OCR failed, read without OCR (ValueError: boom)" in parsed.warnings
    assert {f.page for f in parsed.fragments if f.modality == "text"} == {1, 2}


def test_an_unreadable_page_is_skipped_with_its_cause(monkeypatch):
    real = ingest.page_blocks

    def second_fails(page):
        if page.number == 1:
            raise RuntimeError("cannot decode content stream")
        return real(page)

    monkeypatch.setattr(ingest, "page_blocks", second_fails)
    parsed = parse(STATEMENT)
    assert parsed.bad_pages == [2]
    assert parsed.warnings == ["page 2: unreadable, page skipped (RuntimeError: cannot decode content stream)"]
    assert {f.page for f in parsed.fragments} == {1}


def test_the_report_and_the_log_name_the_failed_step(monkeypatch, tmp_path, embed_model, caplog):
    monkeypatch.setattr(ingest, "find_page_tables", boom)
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    with caplog.at_level(logging.WARNING, logger="rag.ingest"):
        report = ws.ingest(STATEMENT, "statement.pdf")
    assert report.outcome == "ingested" and report.fragments["text"] > 0 and report.fragments["table"] == 0
    assert report.warnings == [f"page {n}: table extraction failed (ValueError: boom)" for n in (1, 2)]
    assert "statement.pdf: page 1: table extraction failed (ValueError: boom)" in caplog.messages
