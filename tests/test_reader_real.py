"""The reader with the real embedded model on real dev documents: values read from statement rows,
a ratio computed by a program over two rows, a Pew percentage, a question about the document's
structure, and refusal when the evidence is absent. No scripted model here."""

from __future__ import annotations

import pymupdf
import pytest
from conftest import BESTBUY, PDFS, PEW, local_settings, pages_of

from rag.agent.events import Computation, EvidencePicked
from rag.workspace import Workspace

pytestmark = pytest.mark.slow


def cascade_workspace(folder, embed_model) -> Workspace:
    """These tests measure the evidence-line cascade: every question goes to it, whatever reader.engine's default."""
    ws = Workspace(local_settings(folder), embed_model=embed_model)
    ws.settings.reader.engine = "cascade"
    return ws


@pytest.fixture(scope="module")
def statements(tmp_path_factory, embed_model):
    """The 10-K's consolidated statements (pages 39-42) in a real store, with the embedded model."""
    ws = cascade_workspace(tmp_path_factory.mktemp("bb"), embed_model)
    assert ws.ingest(pages_of(BESTBUY, [39, 40, 41, 42]), "bestbuy-statements.pdf").status == "ingested"
    return ws


@pytest.fixture(scope="module")
def ten_k(tmp_path_factory, embed_model):
    """The whole 10-K, as a user uploads it: segment tables repeat the statement's line names."""
    ws = cascade_workspace(tmp_path_factory.mktemp("10k"), embed_model)
    assert ws.ingest((PDFS / BESTBUY).read_bytes(), BESTBUY).status == "ingested"
    return ws


@pytest.fixture(scope="module")
def pew(tmp_path_factory, embed_model):
    ws = cascade_workspace(tmp_path_factory.mktemp("pew"), embed_model)
    assert ws.ingest(pages_of(PEW, [1, 3, 4, 5, 19]), "pew.pdf").status == "ingested"
    return ws


@pytest.fixture(scope="module")
def political(tmp_path_factory, embed_model):
    """Page 10 of the Pew political survey: Trump's approval by group, a vector chart read at ingestion."""
    ws = cascade_workspace(tmp_path_factory.mktemp("pol"), embed_model)
    assert ws.ingest(pages_of("05-03-18-political-release.pdf", [10]), "political.pdf").status == "ingested"
    return ws


def ask(ws, question):
    events = []
    return ws.ask(question, on_event=events.append), events


def numbers(text: str) -> str:
    return text.replace(",", "").replace("$", "")


@pytest.mark.parametrize(("question", "value"), [
    ("What was Best Buy's gross profit in fiscal 2023?", "9912"),
    ("What was Best Buy's revenue in fiscal 2023, in millions of dollars?", "46298"),
])
def test_statement_values_are_read_and_cited(statements, question, value):
    result, events = ask(statements, question)
    assert result.error is None and result.short_answer == value, (result.answer, result.short_answer)
    assert result.citations and result.citations[0]["page"] == 2, "the income statement is page 2 of the cut"
    picked = [e for e in events if isinstance(e, EvidencePicked)]
    assert picked and all(i in [f"E{n}" for n in range(1, 200)] for i in picked[-1].ids)


@pytest.mark.parametrize(("question", "value"), [
    ("What was Best Buy's gross profit in fiscal 2023?", "9,912"),
    ("What was Best Buy's revenue in fiscal 2023, in millions of dollars?", "46,298"),
])
def test_statement_values_are_read_from_the_whole_report_not_a_segments_table(ten_k, question, value):
    result, _ = ask(ten_k, question)
    assert result.short_answer == value.replace(",", ""), result.answer  # the international segment's is $806
    with pymupdf.open(PDFS / BESTBUY) as doc:
        assert value in doc[result.citations[0]["page"] - 1].get_text(), "the cited page holds the value"


def test_a_count_the_report_totals_is_read_from_its_total_row(ten_k):
    result, _ = ask(ten_k, "How many Domestic stores does Best Buy have in fiscal 2023?")
    assert result.short_answer == "978", result.answer  # 9 were opened and 925 are Best Buy stores
    with pymupdf.open(PDFS / BESTBUY) as doc:
        assert "978" in doc[result.citations[0]["page"] - 1].get_text(), "the cited page holds the count"


def test_the_gap_between_the_youngest_and_the_oldest_is_subtracted_by_code(political):
    result, events = ask(political, "What is the percentage gap between the youngest age group and the oldest age "
                                     "group that strongly disapproves of the way Trump is handling his job?")
    computations = [e for e in events if isinstance(e, Computation) and e.error is None]
    assert result.short_answer == "7", (result.answer, computations)  # ages 18-29: 46, 65+: 39
    assert "'Ages 18-29', 'Disapprove Strongly'" in computations[-1].program


def test_a_ratio_over_two_statement_rows_is_computed_by_a_program(statements):
    result, events = ask(statements, "What was Best Buy's gross profit divided by its revenue in fiscal 2023? "
                                     "Round your answer to three decimal places.")
    computations = [e for e in events if isinstance(e, Computation) and e.error is None]
    assert computations, "the answer comes from a program, shown in the events"
    assert abs(float(result.short_answer) - 9912 / 46298) < 0.002, (result.answer, computations[-1].program)
    assert "Revenue" in computations[-1].program and "Gross profit" in computations[-1].program


def test_a_pew_percentage(pew):
    result, _ = ask(pew, "What percentage of Latinos expect their children to be better off financially than themselves?")
    assert result.short_answer == "72", result.answer
    assert result.citations and {c["page"] for c in result.citations} <= {3, 4}, "pages 4-5 of the report"


def test_a_question_about_the_documents_structure(pew):
    result, _ = ask(pew, "How many pages does the document have?")
    assert result.short_answer == "5", result.answer


def test_refusal_when_the_evidence_is_absent(statements):
    result, events = ask(statements, "What was Best Buy's revenue in fiscal 2031?")
    assert result.not_found and result.short_answer == "Not answerable"
    assert not [e for e in events if isinstance(e, EvidencePicked)], "code refuses before the model picks"


def test_a_financial_ratio_is_computed_by_its_textbook_definition(statements):
    result, events = ask(statements, "What is Best Buy's return on capital employed for the fiscal year ending "
                                     "January 28, 2023? Round your answer to three decimal places.")
    computations = [e for e in events if isinstance(e, Computation) and e.error is None]
    assert computations and "as textbooks define it" in computations[-1].program, "planned by code, not the model"
    assert result.short_answer == "0.263", (result.answer, computations[-1].program)  # 1,795 / (15,803 - 8,979)
