"""OCR: scanned reports and picture-only slides become searchable pages; raster charts get their
labels read; the needs-OCR rule and the pixel → PDF point mapping on their own."""

from __future__ import annotations

import re

import pymupdf
import pytest
from conftest import PDFS, PEW, local_settings

from rag.eval.modes import oracle_hits
from rag.ingest import IngestError, ocr, parse_pdf
from rag.ingest.figures import find_page_figures
from rag.ingest.ocr import OcrLine
from rag.ingest.pdf import page_blocks
from rag.settings import IngestSettings
from rag.workspace import Workspace

SCANNED = [3, 8, 12]  # pages of the Pew report; the second is stored sideways and shown rotated
ROTATED = 2
SLIDES = [
    ("Solar installations doubled in rural districts",
     ["Rooftop panels now power most farm buildings", "Grid upgrades arrive in spring"],
     {"North": 40, "South": 75, "West": 55}),
    ("Employee training hours fell after the merger",
     ["Managers cancelled most workshops", "Online courses replaced classroom sessions"],
     {"2021": 80, "2022": 45, "2023": 30}),
]


# ---- documents made in the tests ----------------------------------------------------------------

def image_only_page(doc: pymupdf.Document, pix: pymupdf.Pixmap, size: pymupdf.Rect, rotated: bool = False):
    """A page holding nothing but the picture, shown at `size`; `rotated` stores it sideways under
    /Rotate 90, as scanners do with landscape feeds."""
    if not rotated:
        doc.new_page(width=size.width, height=size.height).insert_image(size, pixmap=pix)
        return
    page = doc.new_page(width=size.height, height=size.width)
    page.insert_image(page.rect, pixmap=pix, rotate=90)
    page.set_rotation(90)


def scanned_report() -> bytes:
    src = pymupdf.open(PDFS / PEW)
    doc = pymupdf.open()
    for n, page_no in enumerate(SCANNED, 1):
        page = src[page_no - 1]
        image_only_page(doc, page.get_pixmap(dpi=100), page.rect, rotated=n == ROTATED)
    return doc.tobytes()


def source_phrase(page_no: int) -> tuple[str, pymupdf.Rect]:
    """The first words of the page's longest paragraph in the original text layer, and where it is."""
    page = pymupdf.open(PDFS / PEW)[page_no - 1]
    box, text = max(page_blocks(page), key=lambda block: len(block[1]))
    return " ".join(text.split()[:14]), pymupdf.Rect(box)


def slide(title: str, bullets: list[str], bars: dict[str, int]) -> pymupdf.Pixmap:
    doc = pymupdf.open()
    page = doc.new_page(width=960, height=540)
    page.insert_text((50, 80), title, fontsize=34)
    for n, bullet in enumerate(bullets):
        page.insert_text((60, 160 + 50 * n), f"- {bullet}", fontsize=24)
    base = 470
    for n, (label, value) in enumerate(bars.items()):
        x = 560 + 120 * n
        page.draw_rect(pymupdf.Rect(x, base - 2.5 * value, x + 70, base), color=None, fill=(0.2, 0.4, 0.8))
        page.insert_text((x + 8, base + 30), label, fontsize=20)
        page.insert_text((x + 18, base - 2.5 * value - 10), str(value), fontsize=18)
    return page.get_pixmap(dpi=100)


def slide_deck() -> bytes:
    doc = pymupdf.open()
    for title, bullets, bars in SLIDES:
        image_only_page(doc, slide(title, bullets, bars), pymupdf.Rect(0, 0, 960, 540))
    return doc.tobytes()


def raster_chart() -> tuple[bytes, str]:
    """A Pew vector chart rendered into a picture on a page with a real caption; and its vector labels."""
    src = pymupdf.open(PDFS / PEW)[10]
    (chart,) = find_page_figures(src, page_blocks(src), "0" * 20, PEW)
    box = pymupdf.Rect(chart.bbox)
    doc = pymupdf.open()
    page = doc.new_page(width=src.rect.width, height=src.rect.height)
    page.insert_text((box.x0, box.y0 - 12), "Figure 1. Family income and the cost of living", fontsize=10)
    page.insert_image(box, pixmap=src.get_pixmap(dpi=200, clip=box))
    return doc.tobytes(), str(chart.extra["chart_text"])


# ---- scanned report and slides, through a real store ---------------------------------------------

@pytest.fixture(scope="module")
def scanned(tmp_path_factory, embed_model):
    ws = Workspace(local_settings(tmp_path_factory.mktemp("scan")), embed_model=embed_model)
    calls = []
    report = ws.ingest(scanned_report(), "scan.pdf", progress=lambda *call: calls.append(call))
    assert report.outcome == "ingested", report.error
    return ws, report, calls


def test_a_scanned_report_is_read_with_ocr_and_says_so(scanned):
    ws, report, _ = scanned
    assert report.ocr_pages == [1, 2, 3]
    assert report.notes and "3 pages read with OCR" in report.notes[0]
    assert report.timings["ocr"] > 0 and not report.warnings
    texts = ws.search("report findings", modality="text").hits
    assert texts and all(h.fragment.extra.get("source") == "ocr" for h in texts)


@pytest.mark.parametrize("n", range(1, len(SCANNED) + 1))
def test_a_phrase_of_each_scanned_page_finds_that_page(scanned, n):
    ws, _, _ = scanned
    phrase, _ = source_phrase(SCANNED[n - 1])
    hits = ws.search(phrase, modality="text").hits
    assert hits[0].fragment.page == n, (phrase, hits[0].fragment.text)


def test_a_scanned_page_keeps_the_words_under_a_chart_read_off_its_picture(scanned):
    """A chart found in a scan's picture covers the page: its rows join the page text the model reads,
    and the words OCR found stay."""
    ws, report, _ = scanned
    texts = ws.store.page_texts(report.doc_id, [1, 2, 3])
    for n, page_no in enumerate(SCANNED, 1):
        words = source_phrase(page_no)[0].lower().split()
        assert sum(w in texts.get(n, "").lower() for w in words) >= 0.8 * len(words), (n, texts.get(n, "")[:300])


def test_the_oracle_reads_a_scanned_page_by_its_ocr_text(scanned):
    """A scan has no text layer: the oracle mode's gold pages must be the text the store read."""
    ws, report, _ = scanned
    hits = oracle_hits(ws, [report.doc_id], [3, 1])
    texts = ws.store.page_texts(report.doc_id, [1, 3])
    assert [(h.fragment.page, h.fragment.text) for h in hits] == [(p, t.strip()) for p, t in texts.items()]
    assert len(hits) == 2 and all(h.fragment.text for h in hits)


def test_boxes_on_the_rotated_scan_land_where_the_text_is(scanned):
    ws, _, _ = scanned
    phrase, where = source_phrase(SCANNED[ROTATED - 1])
    top = ws.search(phrase, modality="text").hits[0].fragment
    with pymupdf.open(ws.store.pdf_path(top.doc_id)) as doc:
        shown = pymupdf.Rect(top.bbox) * doc[top.page - 1].rotation_matrix
    assert (shown & where).get_area() >= 0.5 * where.get_area(), (shown, where)


def test_ocr_progress_comes_before_each_page_and_ends_complete(scanned):
    _, _, calls = scanned
    ocr_calls = [c for c in calls if c[0] == "ocr"]
    assert ocr_calls == [("ocr", 0, 3), ("ocr", 1, 3), ("ocr", 2, 3), ("ocr", 3, 3)]
    assert calls.index(("ocr", 1, 3)) > calls.index(("parse", 1, 3))


def test_with_ocr_off_a_scan_is_refused_as_before(tmp_path, embed_model):
    settings = local_settings(tmp_path)
    settings.ingest.ocr = "off"
    report = Workspace(settings, embed_model=embed_model).ingest(scanned_report(), "scan.pdf")
    assert report.outcome == "error" and "no text layer" in report.error


def test_picture_only_slides_are_searchable_by_their_words(tmp_path, embed_model):
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    report = ws.ingest(slide_deck(), "deck.pdf")
    assert report.outcome == "ingested" and report.ocr_pages == [1, 2]
    for n, (_, bullets, _) in enumerate(SLIDES, 1):
        hits = ws.search(bullets[0], modality="text").hits
        assert hits[0].fragment.page == n, (bullets[0], hits[0].fragment.text)


def test_a_page_whose_ocr_fails_is_skipped_not_the_document(monkeypatch):
    real = ocr.read_page

    def flaky(page, dpi):
        if page.number == 1:
            raise RuntimeError("onnxruntime fell over")
        return real(page, dpi)

    monkeypatch.setattr(ocr, "read_page", flaky)
    parsed = parse_pdf(slide_deck(), "deck.pdf", IngestSettings())
    assert parsed.bad_pages == [2]
    assert parsed.warnings == ["page 2: OCR failed, page skipped (RuntimeError: onnxruntime fell over)"]
    assert {f.page for f in parsed.fragments} == {1}


def test_ocr_that_finds_nothing_refuses_with_a_clear_message():
    doc = pymupdf.open()
    blank = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 600, 800), False)
    blank.clear_with(255)
    image_only_page(doc, blank, pymupdf.Rect(0, 0, 600, 800))
    with pytest.raises(IngestError, match="OCR found no text"):
        parse_pdf(doc.tobytes(), "blank-scan.pdf", IngestSettings())


# ---- chart text from raster charts ------------------------------------------------------------

@pytest.fixture(scope="module")
def raster_figure():
    data, vector_labels = raster_chart()
    parsed = parse_pdf(data, "raster.pdf", IngestSettings())
    (figure,) = [f for f in parsed.fragments if f.modality == "image_caption"]
    return figure, vector_labels, data


def label_words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W\d_]{4,}", text)}


def test_a_raster_chart_gets_its_labels_read(raster_figure):
    figure, vector_labels, _ = raster_figure
    assert figure.extra["kind"] == "raster" and figure.extra["chart_text_source"] == "ocr"
    expected, read = label_words(vector_labels), label_words(str(figure.extra["chart_text"]))
    assert len(expected) >= 5 and len(expected & read) >= 0.8 * len(expected), expected - read
    assert "Family income" in figure.text and "In the chart: " in figure.text


def test_without_chart_text_the_fragment_is_its_caption(raster_figure):
    figure, _, data = raster_figure
    parsed = parse_pdf(data, "raster.pdf", IngestSettings(chart_text=False))
    (plain,) = [f for f in parsed.fragments if f.modality == "image_caption"]
    assert plain.text == plain.extra["caption"] == figure.extra["caption"]
    assert "In the chart" not in plain.text and plain.extra["chart_text"]


# ---- the rule and the geometry on their own ------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "usable"),
    [("", False), ("Page 3", False), ("\ufffd" * 40 + " ok", False), ("(cid:12)(cid:7)" * 30 + " a few words", False),
     ("Hispanics are more optimistic about their finances than in 2008.", True)],
)
def test_text_layer_usable(text, usable):
    assert ocr.text_layer_usable(text) is usable


def test_only_image_pages_without_a_text_layer_need_ocr():
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 300, 200), False)
    pix.clear_with(200)
    doc = pymupdf.open()
    doc.new_page()  # blank: nothing to read
    doc.new_page().insert_image(pymupdf.Rect(0, 0, 612, 792), pixmap=pix)  # a scan
    logo = doc.new_page()
    logo.insert_image(pymupdf.Rect(20, 20, 120, 80), pixmap=pix)  # a logo alone
    text = doc.new_page()
    text.insert_image(pymupdf.Rect(0, 0, 612, 500), pixmap=pix)
    text.insert_text((72, 600), "A real text layer under a large photograph of the plant.")
    assert [ocr.needs_ocr(p) for p in doc] == [False, True, False, False]


def test_no_dev_page_with_a_text_layer_is_read_with_ocr():
    for path in sorted(PDFS.glob("*.pdf")):
        with pymupdf.open(path) as doc:
            assert [p.number + 1 for p in doc if ocr.needs_ocr(p)] == [], path.name


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_pixel_boxes_map_back_to_unrotated_points(rotation):
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    page.set_rotation(rotation)
    target = pymupdf.Rect(100, 150, 300, 170)  # unrotated, as the text layer reports boxes
    zoom, clip = 2.0, pymupdf.Rect(40, 60, 500, 500)  # a rendered clip of the shown page
    shown = target * page.rotation_matrix
    quad = [((x - clip.x0) * zoom, (y - clip.y0) * zoom) for x, y in (shown.tl, shown.tr, shown.br, shown.bl)]
    box = ocr.to_page_box(quad, zoom, clip.tl, page.derotation_matrix)
    assert box == pytest.approx(tuple(target), abs=1e-3)


def test_read_page_finds_text_where_the_text_layer_has_it():
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    page.insert_text((100, 300), "Quarterly revenue grew in the north", fontsize=16)
    page.set_rotation(90)
    (truth,) = [pymupdf.Rect(b[:4]) for b in page.get_text("blocks")]
    (line,) = ocr.read_page(page, 120)
    assert line.text == "Quarterly revenue grew in the north"
    assert (pymupdf.Rect(line.box) & truth).get_area() >= 0.7 * truth.get_area()


def test_dropped_spaces_are_put_back_only_in_long_letter_runs():
    assert ocr.fix_spacing("theirpersonalfinances improved") == "their personal finances improved"
    assert ocr.fix_spacing("pressures,including,butnotlimitedto") == "pressures, including, but not limited to"
    for kept in ("responsibilities", "1,000 units", "e.g. U.S. policy", "COVID-19", "multimodal"):
        assert ocr.fix_spacing(kept) == kept


def test_lines_group_into_paragraphs_by_column_and_size():
    def line(x0, y0, x1, text, height=10):
        return OcrLine((x0, y0, x1, y0 + height), text, 0.9)

    lines = [
        line(50, 40, 500, "A heading set large", height=20),
        line(50, 70, 250, "left column first line of the para-"), line(300, 70, 500, "right column starts"),
        line(50, 82, 250, "graph goes on here"), line(300, 82, 500, "and ends here"),
        line(50, 200, 250, "a paragraph far below"),
    ]
    blocks = [text for _, text in ocr.group_blocks(lines)]
    assert blocks == ["A heading set large", "left column first line of the paragraph goes on here",
                      "right column starts and ends here", "a paragraph far below"]



def test_upload_page_says_which_pages_were_read_with_ocr(tmp_path, monkeypatch, embed_model):
    from test_app import app, open_workspace, wait_until_read

    from rag.records import UNREAD

    from app_pages.common import workspace

    ws = open_workspace(tmp_path, monkeypatch, embed_model)
    try:
        at = app("app_pages/upload.py")
        at.file_uploader[0].set_value(("deck.pdf", slide_deck(), "application/pdf")).run()
        assert not at.exception, at.exception
        assert "deck.pdf" in at.success[0].value and not at.warning
        [doc] = ws.store.documents()
        assert doc.file == "deck.pdf" and doc.pages_left(UNREAD) == [1, 2], "known to be unread, not empty"
        assert any("still being read (OCR)" in doc.still_reading() for doc in ws.store.documents())
        wait_until_read(ws, doc.doc_id)  # by the worker the app hosts
        at.run()
        assert any("2 pages read with OCR" in c.value for c in at.caption)
    finally:
        workspace.clear()


def _figure_card(ws, query):
    from app_pages.common import fragment_card

    fragment_card(ws, ws.search(query, modality="image_caption").hits[0])


def test_a_figure_card_shows_the_caption_then_what_the_chart_holds(pew_workspace):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_figure_card, args=(pew_workspace, "ratings of personal finances by Latino group"),
                               default_timeout=30).run()
    assert not at.exception, at.exception
    hit = pew_workspace.search("ratings of personal finances by Latino group", modality="image_caption").hits[0]
    caption, inside = hit.fragment.extra["caption"], hit.fragment.extra["chart_text"]
    assert inside and "In the chart: " in hit.fragment.text
    assert at.markdown[0].value.strip("*") == caption.replace("$", r"\$")
    if "chart_table_id" in hit.fragment.extra:  # read as a chart (issue 13): its values, not the label bag
        assert at.caption[-1].value.startswith("Values read off the chart") and at.table
        shown = " ".join(str(v) for v in at.table[0].value.to_numpy().ravel())
        assert any(n in shown for n in inside.split() if n.strip("%").isdigit())
    else:
        assert at.caption[-1].value.startswith("In the chart: ") and inside[:40] in at.caption[-1].value
