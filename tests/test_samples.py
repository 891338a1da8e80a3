"""How many people a survey's share stands for: the sample sizes real Pew reports state, the group a
question counts, and the chart values a share is chosen among. Pure functions over real PDFs; no model."""

from __future__ import annotations

import asyncio

import pymupdf
import pytest
from conftest import PDFS, pdf_bytes

from rag.context import Evidence, EvidenceItem
from rag.ingest import parse_pdf
from rag.reader.cascade import Candidate, Reader, ReaderInput, chart_cells, is_share, number_candidates
from rag.reader.cascade.question import analyse
from rag.reader.cascade.samples import counted_people, names_group, sample_for, sample_sizes
from rag.settings import Settings

POLITICS = "05-03-18-political-release.pdf"
SENIORS = "PIP_Seniors-and-Tech-Use_040314.pdf"


@pytest.fixture(scope="module")
def parsed():
    """The two survey reports as ingestion reads them: page texts and tables."""
    return {name: parse_pdf(pdf_bytes(name), name, Settings().ingest) for name in (POLITICS, SENIORS)}


def samples_of(parsed):
    return sample_sizes("d", parsed.file, parsed.page_texts, parsed.tables)


@pytest.fixture(scope="module")
def politics(parsed):
    return samples_of(parsed[POLITICS])


@pytest.fixture(scope="module")
def seniors(parsed):
    return samples_of(parsed[SENIORS])


def test_a_survey_states_its_total_sample_and_its_groups_sizes(politics, seniors):
    assert {(s.n, s.label) for s in politics} >= {(1503, ""), (644, "Rep/Lean Rep"), (710, "Dem/Lean Dem")}
    total = next(s for s in politics if s.label == "")
    assert total.item.page == 16 and "national sample of 1,503 adults" in total.item.text
    labelled = {s.label: s.n for s in seniors}
    assert labelled["Total for all 65+"] == 1526 and labelled["Men"] == 612 and labelled["80+"] == 350
    assert all(not any(w.rstrip("%").isdigit() for w in s.label.split()) for s in seniors), \
        "a group's label holds no value of the row before it"


def test_the_group_a_question_counts_is_its_sample_and_no_group_the_whole_survey(politics, seniors):
    assert sample_for("Democratic", politics).n == 710, "Dem/Lean Dem abbreviates Democratic"
    assert sample_for("", politics).n == 1503
    assert sample_for("non-partisan", politics) is None, "a group the survey does not size is not counted"
    assert sample_for("65+ age group", seniors).n == 1526
    assert sample_for("", seniors).n == 6010, "the first total stated, not a later survey's (6,224)"
    with pymupdf.open(PDFS / "2023.acl-long.386.pdf") as doc:
        assert sample_sizes("d", "acl", {n: p.get_text() for n, p in enumerate(doc, 1)}, []) == [], "no survey"


def test_what_a_question_counts_each_alternative_of_an_or_apart():
    counted = counted_people("How many people who do not go online or only use SNS in the Older Adults survey?")
    assert counted.group == "" and counted.parts == ["do not go online", "only use SNS"]
    assert counted.shares[0] == "the percentage of people who do not go online"
    one = counted_people("Among the adults surveyed, how many Democratic adults rated the economy as poor?")
    assert one.group == "Democratic" and one.shares == [
        "Among the adults surveyed, what percentage of Democratic adults rated the economy as poor?"]
    assert counted_people("How many strengths are mentioned in Appendix C?") is None


def test_a_figures_chart_values_are_labelled_like_a_tables_cells():
    chart = "Total — Poor: 36, Excellent: 9, Poor + Not good: 58; Rep/Lean Rep — Poor: 7, Good +"
    assert chart_cells(chart) == [("36", "Total · Poor"), ("9", "Total · Excellent"),
                                  ("58", "Total · Poor + Not good"), ("7", "Rep/Lean Rep · Poor")]
    assert chart_cells("Use SNS: 27%; Do not go online: 41%") == [("27%", "Use SNS"), ("41%", "Do not go online")]
    figure = EvidenceItem(id="E1", text="Trump officials' ethics. In the chart: Total — Poor: 36, Excellent: 9",
                          kind="image_caption", doc_id="d", file="f.pdf", page=4)
    assert ("36", "Total · Poor") in [(c.value, c.context) for c in number_candidates([figure])]


def test_a_share_is_a_percentage_or_a_charted_value_never_a_bare_number_of_prose():
    prose = EvidenceItem(text="a sample of 6,010 adults ages 18 and older", kind="text", doc_id="d", file="f", page=1)
    assert is_share(Candidate("36", "Total · Poor", prose)) and is_share(Candidate("41%", "of seniors […]", prose))
    assert not is_share(Candidate("18", "adults ages […] and older", prose))
    assert not is_share(Candidate("1,503", "Total sample", prose)) and not is_share(Candidate("$40", "Price", prose))


def test_a_group_is_named_by_its_labels_abbreviations_and_no_other_group():
    assert names_group("Dem/Lean Dem", "Democratic") and not names_group("Rep/Lean Rep", "Democratic")
    assert names_group("65+ · 3-5 times per week", "65+ age group") == 1
    assert names_group("65-69 · Go online", "65+ age group") == 0, "65-69 is another group than 65+"


def test_the_sample_is_the_survey_the_share_comes_from(politics, seniors):
    """Two surveys in the store: the share is of the politics survey's adults, so its 1,503 is the base,
    not the first total of whichever document comes first. No model call: the one option is clear."""
    def call(*_):
        raise AssertionError("code decides: no model call")

    chart = EvidenceItem(id="E1", text="Ethics. In the chart: Total — Poor: 36, Excellent: 9", kind="image_caption",
                         doc_id="politics", file=POLITICS, page=4, score=0.7)
    samples = [s._replace(item=s.item.model_copy(update={"doc_id": doc}))
               for doc, found in (("seniors", seniors), ("politics", politics)) for s in found]
    question = "How many adults rated the ethical standards of Trump officials as poor?"
    given = ReaderInput(evidence=Evidence(items=[chart]), samples=samples, document_text=chart.text + " Trump")
    result = asyncio.run(Reader(call, lambda *_: None).read(question, analyse(question), given))
    assert result.short == "541" and "sample = 1503" in result.program
    assert {(c.doc_id, c.page) for c in result.cited} == {("politics", 4), ("politics", 16)}
