"""Number options: where they come from and how they rank (pure code), and how a chosen page line becomes
cited evidence. The reader's model is scripted here (it always takes option 1): these tests check the
control flow, not answer quality (that is tests/test_reader_real.py, with the real model)."""

from __future__ import annotations

import asyncio
import json

from rag.agent.question import analyse
from rag.agent.reader import Candidate, Reader, ReaderInput, fits, number_options, rank_candidates
from rag.context import EvidenceItem, build, page_rows
from rag.models.structured import StructuredReply

PAGE = """Consolidated Statements of Earnings
$ in millions, except per share amounts
Revenue | 2023: $46,298 | 2022: $51,761
Gross profit | 2023: 9,912 | 2022: 11,640
Net earnings were lower than a year ago."""


def item(text: str, kind: str = "text", ident: str = "") -> EvidenceItem:
    return EvidenceItem(id=ident, text=text, kind=kind, doc_id="d", file="f.pdf", page=40)


def test_a_pages_table_rows_are_rows_and_the_rest_joined_lines():
    rows = page_rows("d", "f.pdf", 40, PAGE)
    assert [r.kind for r in rows if " | " in r.text] == ["table", "table"]
    assert all(r.page == 40 and not r.id for r in rows), "page rows are not numbered until chosen"
    assert any("Net earnings were lower" in r.text and r.kind == "page" for r in rows)


def test_options_name_the_thing_asked_before_labels_that_match_only_its_time_or_unit():
    options = [Candidate("157.71", "Fiscal Years Ended: S&P 500 · January 28, 2023", item("x")),
               Candidate("1,383", "Goodwill · 2023", item("y"))]
    ranked = rank_candidates(options, "What goodwill did the company have for the fiscal year ending January 28, 2023?")
    assert [o.value for o in ranked] == ["1,383", "157.71"]


def test_a_percentage_is_asked_for_as_a_percentage_and_a_year_only_when_asked():
    items = [item("The share of adults who go online rose after 2008 to 59%, and 12 of the 20 groups agreed.")]
    assert number_options(items, "What share of adults go online?")[0].value == "59%"
    assert number_options(items, "How many of the groups agreed?")[0].value in {"12", "20"}, "a count, not 59% or 2008"
    share = Candidate("72%", "[…] of Latinos expect their children to be better off", items[0])
    assert fits(share, "the share expecting their children to be better off") == (True, True), "a label wants no kind"


def read_with_first_option(question: str, evidence_lines: list[str]):
    """The reader over evidence lines and PAGE's rows, its model always taking option 1."""
    calls, events = [], []

    async def first_option(purpose, messages, model, max_tokens):
        calls.append(messages[-1].content)
        return StructuredReply(value=model.model_validate(json.loads('{"option": "1"}')))

    evidence = build([item(line) for line in evidence_lines], lambda t: len(t.split()), 100)
    given = ReaderInput(evidence=evidence, document_text=PAGE, page_rows=page_rows("d", "f.pdf", 40, PAGE))
    result = asyncio.run(Reader(first_option, lambda kind, data: events.append((kind, data)))
                         .read(question, analyse(question), given))
    return result, evidence, calls, events


def test_a_number_from_a_page_row_is_offered_and_cited_as_numbered_evidence():
    question = "What was the gross profit in fiscal 2023?"
    result, evidence, calls, events = read_with_first_option(question, ["Revenue grew in most categories."])
    assert "Gross profit · 2023: 9,912" in calls[0] and "11,640" not in calls[0], "another year's value is no option"
    assert result.value == "9,912" and result.picked == ["E2"] and result.cited[0].text.startswith("Gross profit")
    assert evidence.ids == ["E1", "E2"], "the chosen row is numbered after the evidence"
    assert ("pick", {"ids": ["E2"], "attempt": 1, "evidence": [result.cited[0].model_dump(
        include={"id", "text", "page", "file", "kind", "fragment_id"})]}) in events


def test_the_days_of_a_date_range_are_no_options():
    text = "Source: Survey of U.S. adults conducted April 25-May 1, 2018 and Dec. 8-13, 2015: 541 rated them poor."
    assert [o.value for o in number_options([item(text)], "How many adults rated them poor?")] == ["541"]


def test_page_rows_are_offered_only_when_one_of_them_ranks_first():
    question = "What was the gross profit in fiscal 2023?"
    result, evidence, calls, _ = read_with_first_option(question, ["Gross profit in fiscal 2023 was $9.9 billion."])
    assert result.value == "$9.9" and result.picked == ["E1"] and evidence.ids == ["E1"]
    assert "Revenue" not in calls[0], "the evidence's own number ranks first: no page rows among the options"


def test_a_value_in_a_list_is_labelled_by_its_own_item_only():
    chart = item("Older adults online. In the chart: Use SNS: 27%; Do not go online: 41%; Go online, no SNS: 32%")
    labels = {o.value: o.context for o in number_options([chart], "What percentage do not go online?")}
    assert labels["41%"] == "Do not go online: […]" and "Do not go online" not in labels["27%"] + labels["32%"]
