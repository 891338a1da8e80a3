"""Charts drawn here with PyMuPDF, not taken from the dev PDFs: the pairing rules on layouts and colours
of our own — grouped and stacked bars with a legend, columns with labels on top, a line chart with
markers, a chart whose legend matches no bar — and the doubt cases that must stay unpaired."""

from __future__ import annotations

import pymupdf
import pytest
from conftest import local_settings

from rag.ingest import pdf_charts
from rag.ingest.charts import long_rows

RED, BLUE, GREEN, GREY = (0.8, 0.2, 0.2), (0.2, 0.3, 0.7), (0.2, 0.6, 0.3), (0.5, 0.5, 0.5)


def text(page: pymupdf.Page, x: float, y: float, s: str, size: float = 8, right: bool = False, colour=(0, 0, 0)):
    """A label whose baseline is at y; `right` sets its right edge at x."""
    if right:
        x -= pymupdf.get_text_length(s, fontsize=size)
    page.insert_text((x, y), s, fontsize=size, color=colour)


def rect(page: pymupdf.Page, box, colour) -> None:
    page.draw_rect(pymupdf.Rect(box), color=None, fill=colour, width=0)


def rule(page: pymupdf.Page, a: tuple, b: tuple) -> None:
    """An axis or a gridline."""
    page.draw_line(a, b, color=GREY, width=0.5)


def legend(page: pymupdf.Page, x: float, y: float, entries: list[tuple[str, tuple]]) -> None:
    for name, colour in entries:
        rect(page, (x, y - 6, x + 6, y), colour)
        text(page, x + 9, y, name)
        x += 20 + pymupdf.get_text_length(name, fontsize=8)


def document(draw) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=300)
    text(page, 40, 30, "Sales by region and year", size=12)
    draw(page)
    return doc.tobytes()


def grouped_bars(page: pymupdf.Page) -> None:
    legend(page, 120, 55, [("2022", RED), ("2023", BLUE)])
    rule(page, (120, 65), (120, 190))
    for n, (region, a, b) in enumerate([("North", 40, 55), ("South", 75, 60), ("West", 20, 35)]):
        top = 70 + n * 40
        text(page, 110, top + 12, region, right=True)
        for k, (value, colour) in enumerate([(a, RED), (b, BLUE)]):
            y = top + k * 12
            rect(page, (120, y, 120 + 2.5 * value, y + 12), colour)
            text(page, 124 + 2.5 * value, y + 9, str(value))


def stacked_columns(page: pymupdf.Page) -> None:
    legend(page, 80, 55, [("Online", GREEN), ("In store", RED)])
    base = 250
    rule(page, (80, base), (320, base))
    for n, (year, online, store) in enumerate([("2021", 30, 50), ("2022", 45, 40), ("2023", 60, 25)]):
        x = 90 + n * 70
        rect(page, (x, base - 2 * online, x + 40, base), GREEN)
        rect(page, (x, base - 2 * (online + store), x + 40, base - 2 * online), RED)
        text(page, x + 14, base - online - 2, str(online), colour=(1, 1, 1))
        text(page, x + 14, base - 2 * online - store - 2, str(store), colour=(1, 1, 1))
        text(page, x + 12, base + 12, year)


def line_with_markers(page: pymupdf.Page) -> None:
    years, values = ["2019", "2020", "2021", "2022"], {"Cars": (RED, [12, 18, 15, 22]), "Bikes": (BLUE, [30, 26, 34, 38])}
    for k, year in enumerate(years):
        text(page, 80 + k * 80, 262, year)
    for y in (50, 100, 150, 200, 250):
        rule(page, (80, y), (350, y))
    for name, (colour, ys) in values.items():
        points = [pymupdf.Point(90 + k * 80, 250 - 5 * v) for k, v in enumerate(ys)]
        page.draw_polyline(points, color=colour, width=2)
        for p, v in zip(points, ys):
            page.draw_circle(p, 3, color=colour, fill=(1, 1, 1), width=1.5)
            text(page, p.x - 5, p.y - 7, str(v))
        text(page, points[-1].x + 10, points[-1].y + 3, name, colour=colour)


def legend_matches_nothing(page: pymupdf.Page) -> None:
    legend(page, 120, 55, [("Yes", GREY), ("No", GREEN)])
    rule(page, (120, 65), (120, 130))
    for n, (who, yes, no) in enumerate([("Men", 40, 60), ("Women", 55, 45)]):
        y = 70 + n * 30
        text(page, 110, y + 12, who, right=True)
        rect(page, (120, y, 120 + 2 * yes, y + 16), RED)  # a colour the legend does not show
        rect(page, (120 + 2 * yes, y, 320, y + 16), BLUE)
        text(page, 124, y + 11, str(yes))
        text(page, 124 + 2 * yes, y + 11, str(no))


def read(draw) -> tuple:
    tables = pdf_charts(document(draw), "drawn.pdf", local_settings(None).ingest, [1])
    assert len(tables) <= 1
    return (tables[0].chart, set(long_rows(tables[0]))) if tables else (None, set())


def test_grouped_horizontal_bars_with_a_legend():
    chart, rows = read(grouped_bars)
    assert not chart.ambiguous and chart.kind == "bar"
    assert rows == {("North", "2022", "40"), ("North", "2023", "55"), ("South", "2022", "75"),
                    ("South", "2023", "60"), ("West", "2022", "20"), ("West", "2023", "35")}


def test_stacked_columns_with_labels_inside():
    chart, rows = read(stacked_columns)
    assert not chart.ambiguous and chart.kind == "stacked bar"
    assert rows == {("2021", "Online", "30"), ("2021", "In store", "50"), ("2022", "Online", "45"),
                    ("2022", "In store", "40"), ("2023", "Online", "60"), ("2023", "In store", "25")}


def test_lines_named_by_labels_in_their_colour():
    chart, rows = read(line_with_markers)
    assert not chart.ambiguous and chart.kind == "line"
    assert rows == {(year, "Cars", str(v)) for year, v in zip(["2019", "2020", "2021", "2022"], [12, 18, 15, 22])} | {
        (year, "Bikes", str(v)) for year, v in zip(["2019", "2020", "2021", "2022"], [30, 26, 34, 38])}


def test_a_legend_that_matches_no_bar_names_nothing():
    chart, rows = read(legend_matches_nothing)
    assert chart is None or chart.ambiguous
    assert not any(series in ("Yes", "No") for _, series, _ in rows)


@pytest.mark.parametrize("draw", [grouped_bars, stacked_columns, line_with_markers])
def test_the_figure_fragment_reads_as_values(draw):
    from rag.ingest import parse_pdf

    parsed = parse_pdf(document(draw), "drawn.pdf", local_settings(None).ingest)
    figure = next(f for f in parsed.fragments if f.modality == "image_caption")
    assert "In the chart: " in figure.text and " — " in figure.text
    assert any(f.modality == "table" and f.text.startswith("Chart: ") for f in parsed.fragments)
