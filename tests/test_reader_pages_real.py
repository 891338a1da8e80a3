"""The reader with the real embedded model, on three kinds of document: 10-Ks' statements (dev and wide), a
display's user manual and a slide deck (wide). Values keep their units and scale, answers cite the page they
stand on, and a question the pages do not answer is refused. No scripted model here."""

from __future__ import annotations

import pymupdf
import pytest
from conftest import BESTBUY, EVAL, local_settings, pages_of, pdf_bytes

from rag.agent.events import PageRead
from rag.workspace import Workspace

pytestmark = pytest.mark.slow

WIDE = EVAL / "wide" / "pdfs"
MANUAL = "91521110100M_4K_UHD_Display_User_Manual_V1.1.pdf"
NETFLIX = "NETFLIX_2015_10K.pdf"
DECK = "finalpresentationdeck-whatwhyhowofcertificationsocial-160324220748_95.pdf"


def store(tmp_path_factory, embed_model, data: bytes, name: str) -> Workspace:
    return store_at(tmp_path_factory, embed_model, data, name, "complete")


def store_at(tmp_path_factory, embed_model, data: bytes, name: str, stage="searchable") -> Workspace:
    ws = Workspace(local_settings(tmp_path_factory.mktemp("real")), embed_model=embed_model)
    assert ws.ingest(data, name, wait=stage).outcome == "ingested"
    return ws


@pytest.fixture(scope="module")
def statements(tmp_path_factory, embed_model):
    """The 10-K's consolidated statements (pages 39-42)."""
    return store(tmp_path_factory, embed_model, pages_of(BESTBUY, [39, 40, 41, 42]), "bestbuy-statements.pdf")


@pytest.fixture(scope="module")
def manual(tmp_path_factory, embed_model):
    """A display's user manual: its power chapter and its specification table (pages 7 and 31)."""
    with pymupdf.open(WIDE / MANUAL) as doc:
        doc.select([6, 30])
        data = doc.tobytes(garbage=3, deflate=True)
    return store(tmp_path_factory, embed_model, data, "display-manual.pdf")


@pytest.fixture(scope="module")
def deck(tmp_path_factory, embed_model):
    """A slide deck whose slides are pictures: their words come from OCR at ingestion (slides 4-8)."""
    with pymupdf.open(WIDE / DECK) as doc:
        doc.select([3, 4, 5, 6, 7])
        data = doc.tobytes(garbage=3, deflate=True)
    return store(tmp_path_factory, embed_model, data, "certification-deck.pdf")


@pytest.fixture(scope="module")
def searchable_10k(tmp_path_factory, embed_model):
    """A whole 10-K at its first stage: the text layer and BM25, no tables, no vectors, no worker."""
    ws = Workspace(local_settings(tmp_path_factory.mktemp("real")), embed_model=embed_model)
    assert ws.ingest(pdf_bytes(BESTBUY), BESTBUY, wait="searchable").outcome == "ingested"
    return ws


def ask(ws, question):
    events = []
    return ws.ask(question, on_event=events.append), [e for e in events if isinstance(e, PageRead)]


def cited_text(ws, result) -> str:
    c = result.citations[0]
    return ws.store.page_texts(c.doc_id, [c.page])[c.page]


def test_a_statement_value_is_read_with_its_unit_and_cited(statements):
    question, value = "What was Best Buy's gross profit in fiscal 2023?", "9912"
    result, reads = ask(statements, question)
    assert result.error is None and result.short_answer == value, (result.answer, [r.said for r in reads])
    assert "million" in result.answer and "$" in result.answer, "the statement says $ in millions"
    assert result.skill == "metric" and f"{int(value):,}" in cited_text(statements, result), "looked up by code"


def test_a_manual_is_read_in_its_own_words(manual):
    result, reads = ask(manual, "What colour does the POWER indicator glow when the monitor is powered on?")
    assert result.short_answer.lower().strip(". ") == "blue", (result.answer, [r.said for r in reads])
    assert result.citations[0].page == 1


def test_a_manual_value_keeps_its_unit(manual):
    result, reads = ask(manual, "What is the response time of the monitor?")
    assert "12" in result.short_answer and "ms" in result.answer, (result.answer, [r.said for r in reads])
    assert result.citations[0].page == 2


def test_a_slide_decks_date_is_read_from_its_slide(deck):
    # The search ranks the deck's title slide first; the date is on the second page found.
    deck.settings.reader.max_pages = 2
    # what is read, not how fast: a busy machine must not skip the page, nor read less of it
    deck.settings.reader.budget_s = deck.settings.reader.answer_s = 600.0
    result, reads = ask(deck, "On what date was the sample Recruiter certification issued?")
    assert "09/20/2014" in result.short_answer, (result.answer, [r.said for r in reads])
    assert result.citations[0].page == 2 and "09/20/2014" in cited_text(deck, result)


def test_a_question_no_page_answers_is_refused(statements):
    result, reads = ask(statements, "How many employees did Best Buy's call centres have in 1987?")
    assert result.not_found and result.short_answer == "Not answerable", result.answer
    assert reads and all(not r.found for r in reads) and "no page read" in result.answer


def test_a_balance_sheet_total_is_read_at_the_searchable_stage(searchable_10k):
    [doc] = searchable_10k.store.documents()
    assert doc.stage == "searchable"
    result, reads = ask(searchable_10k, "What is the FY2023 total current liabilities for Best Buy? Answer in USD "
                                        "millions. Base your judgments on the balance sheet.")
    assert result.short_answer == "8979", (result.answer, [r.said for r in reads])
    assert "8,979 million" in result.answer and result.citations[0].page == 39


def test_a_value_in_thousands_is_converted_to_the_millions_asked(tmp_path_factory, embed_model):
    ws = store_at(tmp_path_factory, embed_model, pages_of(WIDE / NETFLIX, [43, 44]), "netflix-statements.pdf")
    result, reads = ask(ws, "What were Netflix's total current liabilities at the end of 2015? Answer in USD millions.")
    assert result.answer.startswith("$3,529.6 million = "), (result.answer, [r.said for r in reads])
    assert "3,529,624 [p. 1]" in result.answer and "in thousands" in result.answer, "the printed input and its scale"
    assert result.short_answer == "3529.62" and result.citations[0].page == 1
