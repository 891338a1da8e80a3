"""Charts as data: the hand-checked dev charts read at ingestion, the chart stored as a table linked to
its figure, the figure's compact values, and `python -m rag charts`.

The checked values (tests/chart_truth.py) were written down by looking at the rendered pages; the
scores printed here are the README's (pytest -s shows them; test-artifacts/chart_pairing.json keeps them).
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pymupdf
import pytest
from chart_scoring import Score, score
from chart_truth import CHECKED, ECONOMY, POLITICS
from conftest import PDFS, ROOT, local_settings, pages_of
from test_cli import rag

from rag.ingest import parse_pdf, pdf_charts
from rag.ingest.charts import PageInk, long_rows, read_chart
from rag.ingest.charts.pixels import read_pixels
from rag.ingest.figures import Line, detect_figures

ARTIFACTS = ROOT / "test-artifacts"


def slide_pdf(checked) -> bytes:
    """The chart as a picture on a page of its own: a slide deck exported to PDF."""
    clip, dpi = checked.slide
    pix = pymupdf.open(PDFS / checked.pdf)[checked.page - 1].get_pixmap(dpi=dpi, clip=clip)
    doc = pymupdf.open()
    width, height = clip[2] - clip[0], clip[3] - clip[1]
    doc.new_page(width=width + 72, height=height + 72).insert_image(
        pymupdf.Rect(36, 36, 36 + width, 36 + height), stream=pix.tobytes("png")
    )
    return doc.tobytes()


@pytest.fixture(scope="module")
def readings() -> list[tuple]:
    """(checked chart, its chart table or None) for every checked chart, read as ingestion reads them."""
    settings = local_settings(None).ingest
    read: dict[tuple, list] = {}
    out = []
    for checked in CHECKED:
        if checked.slide:
            key, data, page, n = (checked.name, 1), slide_pdf(checked), 1, 0
        else:
            key, data, page, n = (
                (checked.pdf, checked.page),
                (PDFS / checked.pdf).read_bytes(),
                checked.page,
                checked.n,
            )
        if key not in read:
            read[key] = pdf_charts(data, checked.pdf, settings, [page])
        table = next((t for t in read[key] if t.chart.figure_id.endswith(f":image_caption:{page}:{n}")), None)
        out.append((checked, table))
    return out


def scored(checked, table) -> Score:
    found = long_rows(table) if table is not None else []
    ocr = checked.raster or (table is not None and table.chart.source == "ocr")
    return score(checked.triples(), found, fuzzy=ocr)  # OCR may read "AII" for "All": not a pairing error


def test_the_checked_set_covers_the_chart_kinds():
    kinds = Counter(c.kind for c in CHECKED)
    assert len(CHECKED) >= 25
    assert sum(c.raster for c in CHECKED) >= 3
    assert {"bar", "stacked bar", "line", "pie"} <= set(kinds)
    assert sum(len(c.triples()) for c in CHECKED) >= 500


def test_data_labels_are_paired_right(readings):
    total, by_kind, lines = Score(), {}, []
    for checked, table in readings:
        result = scored(checked, table)
        total.add(result)
        kind = checked.kind + (" (raster)" if checked.raster else "")
        by_kind.setdefault(kind, Score()).add(result)
        state = "no table" if table is None else "ambiguous" if table.chart.ambiguous else "read"
        lines.append(f"{checked.name:30s} {checked.kind:12s} {state:9s} {result.right:3d}/{result.labels:3d}")
    report = {
        "charts": len(readings),
        "labels": total.labels,
        "right": total.right,
        "accuracy": round(total.accuracy, 3),
        "wrong": len(total.wrong),
        "by_kind": {
            k: {"labels": s.labels, "right": s.right, "accuracy": round(s.accuracy, 3), "wrong": len(s.wrong)}
            for k, s in by_kind.items()
        },
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "chart_pairing.json").write_text(json.dumps(report, indent=2))
    print("\n".join(lines), json.dumps(report, indent=2), sep="\n")
    assert total.accuracy >= 0.90, report


def test_no_wrong_pairing_on_charts_marked_ambiguous(readings):
    for checked, table in readings:
        if table is not None and table.chart.ambiguous:
            assert scored(checked, table).wrong == [], checked.name


def test_a_label_whose_category_the_chart_does_not_print_stays_unpaired(readings):
    unreadable = [
        (checked, table) for checked, table in readings if any(t[0] is None for t in checked.triples())
    ]
    assert unreadable
    for checked, table in unreadable:
        result = scored(checked, table)
        assert result.unreadable_paired == 0, checked.name
        assert table is None or table.chart.ambiguous, checked.name


@pytest.fixture(scope="module")
def economy_pages():
    """Pages 10, 11 (bar charts) and 9 (a line chart) of the Pew economy report, parsed as ingestion does."""
    return parse_pdf(pages_of(ECONOMY, [9, 10, 11]), "economy-cut.pdf", local_settings(None).ingest)


def test_a_chart_is_a_table_linked_to_its_figure(economy_pages):
    charts = [t for t in economy_pages.tables if t.chart is not None]
    figures = {f.id: f for f in economy_pages.fragments if f.modality == "image_caption"}
    assert len(charts) == 3 and all(t.chart.figure_id in figures for t in charts)
    bars = next(t for t in charts if t.page == 2)
    assert bars.header == ["category", "2015", "2008", "Change '08-'15"]
    assert bars.to_dataframe().set_index("category").loc["Foreign born"].tolist() == ["31", "14", "+18"]
    figure = figures[bars.chart.figure_id]
    assert figure.extra["chart_table_id"] == bars.table_id and figure.extra["chart_ambiguous"] == 0
    assert (
        "In the chart: General population — 2015: 43, 2008: 41, Change '08-'15: +2; All Latinos"
        in figure.text
    )


def test_chart_rows_are_table_fragments(economy_pages):
    rows = [f for f in economy_pages.fragments if f.modality == "table" and "figure_id" in f.extra]
    texts = {f.text for f in rows}
    assert (
        "Chart: Ratings of personal finances improve among most Latino groups | Foreign born | 2015: 31 | "
        "2008: 14 | Change '08-'15: +18"
    ) in texts
    assert any(
        t.startswith("Chart: In 2015, half of Hispanic adults said their family income")
        and t.endswith(
            " … | 2014 · White | Falling behind: 59 | Staying about even with: 33 | Going up faster than: 7"
        )
        for t in texts
    )
    assert len({f.id for f in economy_pages.fragments}) == len(economy_pages.fragments)


def test_a_bar_chart_taken_for_a_table_is_read_as_a_chart(economy_pages):
    """PyMuPDF finds a 19-column "table" in the bar chart of page 10 ("General General", "2008 2008 …")."""
    tables = [t for t in economy_pages.tables if t.chart is None]
    assert not any("General General" in " ".join(row) for t in tables for row in t.rows)


def test_page_text_reads_a_chart_as_rows(economy_pages):
    assert "category: Foreign born | 2015: 31 | 2008: 14 | Change '08-'15: +18" in economy_pages.page_texts[2]


def test_an_ambiguous_chart_keeps_its_label_text():
    """The legend of this chart does not match its bars' colours: no value is given a series."""
    parsed = parse_pdf(pages_of(POLITICS, [9]), "politics-p9.pdf", local_settings(None).ingest)
    figure = next(f for f in parsed.fragments if f.modality == "image_caption")
    assert "chart_table_id" not in figure.extra or figure.extra["chart_ambiguous"] == 1
    assert "In the chart: Poor Not good Good Excellent" in figure.text


def test_cli_prints_a_pdfs_charts_as_json(tmp_path):
    pdf = tmp_path / "economy.pdf"
    pdf.write_bytes((PDFS / ECONOMY).read_bytes())
    out = json.loads(rag(tmp_path / "store", "charts", str(pdf), "--page", "11", "--json").stdout)
    [chart] = out["charts"]
    assert set(chart) == {"page", "figure_id", "title", "kind", "ambiguous", "rows"}
    assert chart["page"] == 11 and chart["kind"] == "stacked bar" and chart["ambiguous"] is False
    assert chart["figure_id"].endswith(":image_caption:11:0")
    assert {"category": "2014 · White", "series": "Falling behind", "value": "59"} in chart["rows"]
    assert len(chart["rows"]) == 18
    text = rag(tmp_path / "store", "charts", str(pdf), "--page", "11").stdout
    assert "p. 11 · stacked bar · In 2015, half of Hispanic adults" in text and "2014 · White" in text


def test_pictures_without_chart_numbers_cost_no_pixel_reading():
    """A cover photo under its title (the text layer holds the words) is not OCR'd again, and a picture
    whose OCR holds no value a chart could hold is not read for marks: both leave no chart."""
    cover = pymupdf.open(PDFS / "e79deb02a0c0e87511080836c5d4347b.pdf")[0]
    (photo,) = [r for r in detect_figures(cover, []) if r.kind == "raster" and r.box[3] - r.box[1] > 500]
    read = []

    def spy(box):
        read.append(box)
        return []

    assert read_chart(cover, photo.box, "raster", PageInk.of(cover), [], spy) is None
    assert read == [], "the cover's words come from its text layer"
    words = [Line(pymupdf.Rect(100, 300, 300, 320), "Strategic Plan 2016-2018", 12, False)]
    labels, marks = read_pixels(cover, photo.box, photo.box, [], lambda _box: words, raster=True)
    assert (labels, marks.bars, marks.curves) == ([], [], [])


def test_chart_morphology_matches_scipy_pixel_for_pixel():
    """The marks' opening and closing run on OpenCV for speed: on the colour masks of a real picture and
    on areas cut by the picture's edge they equal scipy.ndimage's, whose semantics they keep."""
    from scipy import ndimage

    from rag.ingest.charts.marks import _COLOUR_TOLERANCE, _open_close, _palette

    cover = pymupdf.open(PDFS / "e79deb02a0c0e87511080836c5d4347b.pdf")[0]
    pix = cover.get_pixmap(dpi=100, alpha=False, colorspace=pymupdf.csRGB)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3).astype(np.int16)
    palette = _palette(image)
    assert len(palette) >= 3
    masks = [np.abs(image - np.array(colour)).max(axis=2) <= _COLOUR_TOLERANCE for colour in palette]
    bar = np.zeros((40, 60), dtype=bool)
    bar[5:30, :20] = True  # a bar cut by the picture's edge: the outside counts as empty
    for mask in [*masks, bar, np.ones((40, 60), dtype=bool)]:
        expected = ndimage.binary_closing(ndimage.binary_opening(mask), iterations=2)
        assert np.array_equal(_open_close(mask), expected)
