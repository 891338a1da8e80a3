"""Table rows and figure captions from the real dev PDFs, a handful of pages each."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from rag.ids import fragment_id
from rag.ingest.figures import FIGURE_TEXT_CHARS, detect_figures, find_page_figures
from rag.ingest.pdf import page_blocks
from rag.ingest.tables import find_page_tables, page_may_have_tables
from rag.records import cells_text

PDFS = Path(__file__).resolve().parents[2] / "shared/eval/pdfs"
WIDE = PDFS.parent / "wide/pdfs"
BESTBUY = "BESTBUY_2023_10K.pdf"
PEW_ECONOMY = "PH_2016.06.08_Economy-Final.pdf"
PEW_POLITICS = "05-03-18-political-release.pdf"
DOC_ID = "0123456789abcdef0123"


@pytest.fixture(scope="module")
def docs():
    opened = {name: pymupdf.open(PDFS / name) for name in (BESTBUY, PEW_ECONOMY, PEW_POLITICS)}
    yield opened
    for doc in opened.values():
        doc.close()


@pytest.fixture(scope="module")
def earnings(docs):
    """Consolidated Statements of Earnings, BESTBUY page 40."""
    return find_page_tables(docs[BESTBUY][39], DOC_ID, BESTBUY)


def figures(docs, name: str, page_no: int, **kwargs):
    page = docs[name][page_no - 1]
    return find_page_figures(page, page_blocks(page), DOC_ID, name, **kwargs)


def test_statement_rows_read_on_their_own(earnings):
    fragments, tables = earnings
    assert len(tables) == 1
    assert tables[0].header[1:] == ["January 28, 2023", "January 29, 2022", "January 30, 2021"]
    revenue = next(f for f in fragments if "Revenue" in f.text)
    assert " | " in revenue.text
    assert "January 28, 2023: $46,298" in revenue.text
    assert "January 30, 2021: $47,262" in revenue.text
    assert revenue.modality == "table" and revenue.page == 40
    assert [f.id for f in fragments] == [fragment_id(DOC_ID, "table", 40, n) for n in range(len(fragments))]
    assert revenue.extra == {"table_id": f"{DOC_ID[:16]}:t40:0", "row": 0, "ncols": 4, "title": tables[0].title}


def test_a_row_keeps_its_cells_typed_and_its_text_is_made_from_them(earnings):
    fragments, _ = earnings
    revenue = next(f for f in fragments if "Revenue" in f.text)
    assert [(c.header, c.value, c.number, c.unit) for c in revenue.cells[:2]] == [
        ("Fiscal Years Ended", "Revenue", None, ""), ("January 28, 2023", "$46,298", 46298.0, "$")]
    assert all(f.text.endswith(cells_text(f.cells)) for f in fragments)


@pytest.mark.parametrize("name, page_no, row, header, value, number, unit", [
    ("COSTCO_2021_10K.pdf", 5, "Gold Star", "", "50,200", 50200.0, ""),  # a 10-K's columns without headers
    ("PG_2020.05.21_International-Cooperation-COVID_FINAL.pdf", 19, "Total", "More", "29%", 29.0, "%"),  # survey shares
    ("91521110100M_4K_UHD_Display_User_Manual_V1.1.pdf", 7, "Searching for a signal", "Blue ON", "ON", None, ""),  # a manual
])
def test_cells_on_other_kinds_of_document(name, page_no, row, header, value, number, unit):
    with pymupdf.open(WIDE / name) as doc:
        fragments, _ = find_page_tables(doc[page_no - 1], DOC_ID, name)
    [found] = [f for f in fragments if row in f.text]
    [cell] = [c for c in found.cells if (c.header, c.value) == (header, value)]
    assert (cell.number, cell.unit) == (number, unit)


def test_table_loads_back_as_dataframe(earnings):
    fragments, (table,) = earnings
    frame = table.to_dataframe()
    assert frame.shape == (len(table.rows), len(table.header)) == (len(fragments), 4)
    assert frame.iloc[0].tolist() == table.rows[0]
    assert all(any(row) for row in table.rows)


def rows_of(docs, name: str, page_no: int) -> list[str]:
    return [cells_text(f.cells) for f in find_page_tables(docs[name][page_no - 1], DOC_ID, name)[0]]


def test_a_row_without_values_heads_the_rows_under_it(docs):
    seniors = pymupdf.open(PDFS / "PIP_Seniors-and-Tech-Use_040314.pdf")
    rows = [cells_text(f.cells) for f in find_page_tables(seniors[7], DOC_ID, "seniors.pdf")[0]]
    assert "Household Income — $50,000-$74,999 | Go online: 86 | Broadband at home: 73" in rows
    assert not [r for r in rows if r.startswith(("Household Income |", "Education |"))]


def test_an_indented_heading_covers_only_the_rows_indented_under_it(docs):
    rows = rows_of(docs, BESTBUY, 39)  # the balance sheet
    assert "Current assets — Cash and cash equivalents | January 28, 2023: $1,874 | January 29, 2022: $2,936" in rows
    assert "Goodwill | January 28, 2023: 1,383 | January 29, 2022: 1,384" in rows, "back at the heading's level"
    assert any(r.startswith("Current liabilities — Accounts payable |") for r in rows)


def test_a_typed_name_under_a_signature_is_not_a_heading(docs):
    rows = rows_of(docs, BESTBUY, 68)
    assert "Signature: /s/ Lisa M. Caputo | Title: Director | Date: March 17, 2023" in rows
    assert not [r for r in rows if " — " in r]


@pytest.mark.parametrize("page_no", [40, 41, 42, 43])
def test_prefilter_keeps_statement_pages(docs, page_no):
    page = docs[BESTBUY][page_no - 1]
    assert page.find_tables().tables, "the full detector should find this statement"
    assert page_may_have_tables(page)


@pytest.mark.parametrize("page_no", [8, 9, 10])
def test_prefilter_skips_prose_pages(docs, page_no):
    page = docs[BESTBUY][page_no - 1]
    assert not page_may_have_tables(page)
    assert find_page_tables(page, DOC_ID, BESTBUY) == ([], [])


@pytest.mark.parametrize(
    ("name", "page_no", "title"),
    [
        (PEW_ECONOMY, 10, "Ratings of personal finances improve among most Latino groups"),
        (PEW_ECONOMY, 4, "Hispanics more confident in personal finances than in 2008"),
        (PEW_POLITICS, 5, "confidence in Trump to handle several policy areas mixed"),
    ],
)
def test_vector_charts_get_their_title_as_caption(docs, name, page_no, title):
    found = figures(docs, name, page_no)
    assert found and all(f.extra["kind"] == "vector" and f.text for f in found)
    chart = next(f for f in found if title in f.text)
    assert "Source: " in chart.text
    assert chart.id == fragment_id(DOC_ID, "image_caption", page_no, found.index(chart))
    assert chart.modality == "image_caption"


def test_chart_text_holds_labels_inside_the_figure(docs):
    (chart,) = figures(docs, PEW_ECONOMY, 10)
    assert "All Latinos" in chart.extra["chart_text"]
    assert "All Latinos" not in chart.extra["caption"]
    assert len(chart.extra["chart_text"]) <= 600


def test_vector_chart_fragment_embeds_its_labels_after_the_caption(docs):
    (chart,) = figures(docs, PEW_ECONOMY, 10)
    caption = chart.extra["caption"]
    assert chart.text.startswith(caption) and "In the chart: " in chart.text
    assert "All Latinos" in chart.text
    assert len(chart.text) <= max(FIGURE_TEXT_CHARS, len(caption) + 170), "bounded, a long caption still leaves room"
    (plain,) = figures(docs, PEW_ECONOMY, 10, chart_text=False)
    assert plain.text == caption and "All Latinos" not in plain.text
    assert plain.extra["chart_text"] == chart.extra["chart_text"], "kept for display either way"


@pytest.mark.parametrize("max_chars", [40, 120])
def test_caption_parts_respect_the_cap(docs, max_chars):
    found = figures(docs, PEW_POLITICS, 3, max_chars=max_chars) + figures(docs, PEW_ECONOMY, 4, max_chars=max_chars)
    assert found
    for fragment in found:
        parts = fragment.extra["caption_source"].split("+")
        assert len(fragment.extra["caption"]) <= len(parts) * (max_chars + 2)
    assert any(len(f.extra["caption"]) > max_chars for f in found), "title, nearby and source each get the cap"


def test_raster_chart_is_found(docs):
    (chart,) = figures(docs, PEW_ECONOMY, 6)
    assert chart.extra["kind"] == "raster"
    assert "Latino unemployment rate is declining" in chart.text


def test_text_pages_have_no_figures(docs):
    assert figures(docs, PEW_ECONOMY, 8) == []
    assert figures(docs, PEW_POLITICS, 2) == []


def test_shaded_statement_is_left_to_the_table(docs, earnings):
    """Cell shading looks like a bar chart to the path clustering; the table's bbox settles it."""
    _, tables = earnings
    assert figures(docs, BESTBUY, 40, exclude=[t.bbox for t in tables]) == []


def test_excluded_areas_are_not_figures(docs):
    (chart,) = figures(docs, PEW_ECONOMY, 10)
    assert figures(docs, PEW_ECONOMY, 10, exclude=[chart.bbox]) == []


@pytest.mark.parametrize("with_chart", [True, False])
def test_a_figure_without_caption_is_known_by_its_chart_text(with_chart):
    from rag.ingest.figures import figure_text

    labels = "North South West 40 75 55 " * 30
    text = figure_text("", labels, with_chart, max_chars=120)
    assert text and labels.startswith(text) and len(text) <= (FIGURE_TEXT_CHARS if with_chart else 120)
    assert figure_text("Sales by region", labels, with_chart, 120).startswith("Sales by region")


def test_charts_whose_clipped_backdrops_overlap_are_two_figures():
    """The ACL paper's page 7 paints each figure on a white backdrop clipped to the figure; the boxes
    PyMuPDF reports ignore the clip and overlap, which once made both figures one region."""
    page = pymupdf.open(PDFS / "2023.acl-long.386.pdf")[6]
    lines, bars = detect_figures(page, [])
    assert lines.box[3] < 190 < bars.box[1]  # Figure 4 (three line charts) above Figure 5 (bars)
    assert lines.box[0] > 60 and lines.box[2] < 530  # the clip, not the backdrop's 750-point box


def test_bars_drawn_as_one_path_per_series_are_a_chart_not_table_stripes():
    """The seniors report's page 4 draws each series' four bars as one path: every path spans the chart,
    as a table's zebra stripes do, but its rectangles stand apart."""
    page = pymupdf.open(PDFS / "PIP_Seniors-and-Tech-Use_040314.pdf")[3]
    [chart] = detect_figures(page, [])
    assert 315 <= chart.box[0] and chart.box[2] <= 546 and 440 <= chart.box[1] and chart.box[3] <= 628
    statement = pymupdf.open(PDFS / BESTBUY)[49]  # shaded rows that span the table
    assert not any(r.box[1] < 400 < r.box[3] and r.kind == "vector" for r in detect_figures(statement, []))
