"""Figures a sentence prints for each year, read as data (rag/ingest/sentences.py): real notes of three 10-Ks
checked against the rows written by hand from their pages, the shapes that are not a series left alone, and
the metric path looking such a row up, alone or beside a statement's row printed in another scale."""

from __future__ import annotations

import pymupdf
import pytest
from conftest import EVAL, PDFS, frames_of, pages_of
from test_metric import by_code, program, solve

from rag.ingest.sentences import sentence_frames
from rag.ingest.statements import pdf_frames
from rag.reader.lookup import value

FIN = EVAL / "fin" / "pdfs"


def read_text(text: str, scale: str | None = None):
    """Each row a sentence gives: its name, figures as printed, years and scale."""
    return [(f.rows[0].label, f.rows[0].cells, [p.year for p in f.periods], f.scale)
            for f in sentence_frames(text, 1, "doc", "doc.pdf", scale)]


def read(path, page: int, scale: str | None = "million"):
    with pymupdf.open(path) as doc:
        return read_text(doc[page - 1].get_text(), scale)


def test_a_list_of_figures_for_a_list_of_years_is_a_row():
    netflix = FIN / "NETFLIX_2015_10K.pdf"
    assert ("Advertising expenses", ["714.3", "533.1", "404.0"], [2015, 2014, 2013], "million") in read(netflix, 47)
    # the page's running head before the subject is not part of the row's name
    assert ("Rent expense associated with the operating leases", ["34.7", "26.6", "27.9"], [2015, 2014, 2013],
            "million") in read(netflix, 54)
    # each year written "fiscal 2023"
    assert ("Advertising expenses", ["864", "915", "819"], [2023, 2022, 2021], "million") in \
        read(PDFS / "BESTBUY_2023_10K.pdf", 51)


def test_each_figure_with_its_year_is_a_row_too_and_an_aside_is_not_its_name():
    kraft = FIN / "KRAFTHEINZ_2019_10K.pdf"
    assert ("Depreciation expense", ["708", "693", "753"], [2019, 2018, 2017], "million") in read(kraft, 67)
    assert ("Restructuring expenses", ["368", "118"], [2018, 2017], "million") in read(kraft, 66)
    said = ("Advertising expense, which is generally included in general and administrative expenses, was $305 "
            "million, $223 million and $171 million for 2018, 2017 and 2016, respectively.")
    [(label, cells, years, scale)] = read_text(said)
    assert (label, cells, years, scale) == ("Advertising expense", ["305", "223", "171"], [2018, 2017, 2016], "million")


def test_dollars_without_a_scale_take_the_documents_and_a_price_or_a_rate_none():
    costco = FIN.parent.parent / "wide" / "pdfs" / "COSTCO_2021_10K.pdf"
    assert ("Credit and debit card receivables", ["1,816", "1,636"], [2021, 2020], "million") in read(costco, 41)
    with pymupdf.open(costco) as doc:
        [price] = [f for f in sentence_frames(doc[55].get_text(), 56, "doc", "c.pdf", "million")
                   if "grant date fair value" in f.rows[0].label]
    assert (price.rows[0].cells, price.scale, price.rows[0].per_share) == (["369.15", "294.08", "224.00"], None, True)
    rate = read_text("The effective tax rate was 24.1%, 21.0% and 19.5% for 2019, 2018 and 2017, respectively.", "million")
    assert rate == [("The effective tax rate", ["24.1", "21.0", "19.5"], [2019, 2018, 2017], None)]


@pytest.mark.parametrize("text", [
    "Advertising expenses were $714 million and $533 million for the years ended December 31, 2015, 2014 and 2013.",
    "Fees were $1.3 billion and $328 million in 2018 and 2017, respectively.",  # two units: no one scale
    "Accounts receivable, net of allowances of $132 and $190, respectively, were collected.",  # no years
    "Rental expenses under operating leases were $35 million for the year ended December 31, 2018.",  # one figure
])
def test_what_is_not_one_figure_per_year_is_no_row(text):
    assert read_text(text, "million") == []


@pytest.fixture(scope="module")
def netflix():
    with pymupdf.open(FIN / "NETFLIX_2015_10K.pdf") as doc:
        return pdf_frames(doc, "netflix", "NETFLIX_2015_10K.pdf", [40, 43, 47, 54])


def test_a_figure_only_a_note_prints_is_looked_up_and_cited_with_its_sentence(netflix):
    found = value(netflix, "advertising expense", 2015)
    assert (found.value, found.scale, found.page, found.kind) == (714.3, "million", 47, "sentence")
    assert found.title.startswith("Advertising expenses were $714.3 million")
    # a statement's row of like name comes before a sentence's
    assert value(netflix, "revenues", 2015).kind == "income_statement"


def test_a_ratio_of_a_notes_figure_to_a_statements_printed_in_another_scale(netflix):
    answer = by_code("What were Netflix's advertising expenses in FY2015? Answer in USD millions.", netflix)
    assert answer.short_value == "714.3" and answer.pages[0].page == 47
    ratio = solve("What is Netflix's FY2015 advertising expense to revenue ratio? Round to three decimal places.",
                  program(("ad", "advertising expense", "income statement"), ("rev", "revenues", "income statement"),
                          formula="ad_2015 / rev_2015"), netflix).solution
    assert ratio.short_value == "0.105" and {p.page for p in ratio.pages} == {40, 47}  # millions over thousands


def test_a_documents_sentences_come_after_its_statements():
    """A statement continued onto the next page joins the frame before it: no sentence comes between."""
    kinds = [f.kind for f in frames_of(FIN / "NETFLIX_2015_10K.pdf")]
    n = kinds.count("sentence")
    assert n >= 3 and kinds[-n:] == ["sentence"] * n


def test_the_searchable_stage_keeps_a_notes_sentences_with_the_statements(workspace):
    report = workspace.ingest(pages_of(FIN / "NETFLIX_2015_10K.pdf", [40, 47]), "netflix-notes.pdf")
    assert report.outcome == "ingested"
    frames = workspace.store.frames(report.doc_id)
    [sentence] = [f for f in frames if f.kind == "sentence" and f.rows[0].label == "Advertising expenses"]
    assert (sentence.page, sentence.scale, sentence.doc_id) == (2, "million", report.doc_id)
    assert value(frames, "advertising expense", 2015).value == 714.3
