"""The company's filing in a library of many (rag/reader/filings.py, SearchedDocuments.frames): each filing's
company read off its cover page or its statements' headers, by code; a metric question that names a company,
a form or a fiscal year is answered from that company's filing of that year, and the hop box says which and
why; one that names no company and fits several says which ones it found. The questions are ours; where the
agent runs, its LLM is scripted and must not be called (code answers), control flow only."""

from __future__ import annotations

import json

import pymupdf
import pytest
from conftest import EVAL, PDFS, frames_of, local_settings, pages_of
from scripted_llm import ScriptedLLM

from rag.agent.events import Computation, HopEnd, Scoped
from rag.agent.run import run_question
from rag.reader.filings import Filing, choose, filing_of, named_by
from rag.workspace import Workspace

NIKE, NETFLIX, COSTCO = (EVAL / "fin" / "pdfs" / "NIKE_2021_10K.pdf", EVAL / "fin" / "pdfs" / "NETFLIX_2015_10K.pdf",
                         EVAL / "wide" / "pdfs" / "COSTCO_2021_10K.pdf")


def filing(path, cover_pages=(1, 2)):
    frames = frames_of(path)
    with pymupdf.open(path) as doc:
        cover = "\n".join(doc[p - 1].get_text() for p in cover_pages)
        heads = {f.page: doc[f.page - 1].get_text() for f in frames}
    return filing_of(path.stem, path.name, cover, frames, heads)


@pytest.mark.parametrize(("path", "company", "names", "latest"), [
    (NIKE, "NIKE, Inc.", ["nike"], 2021),
    (COSTCO, "Costco Wholesale Corporation", ["costco wholesale", "costco"], 2021),
    (EVAL / "fin" / "pdfs" / "MGMRESORTS_2018_10K.pdf", "MGM RESORTS INTERNATIONAL",
     ["mgm resorts international", "mgm resorts", "mgm"], 2018),
    (PDFS / "BESTBUY_2023_10K.pdf", "BEST BUY CO., INC.", ["best buy", "bestbuy"], 2023),
])
def test_a_filings_company_is_read_off_its_cover_page(path, company, names, latest):
    got = filing(path)
    assert (got.company, got.source, got.form, got.years[0]) == (company, "its cover page", "10-K", latest)
    assert got.names[:len(names)] == names


def test_without_its_cover_page_the_statements_headers_name_the_company():
    got = filing(NETFLIX, cover_pages=(40,))  # a statement's page, no cover
    assert (got.company, got.source) == ("NETFLIX, INC.", "its statements' headers") and "netflix" in got.names


def made(doc_id: str, company: str, names: list[str], years: list[int], form: str = "10-K") -> Filing:
    return Filing(doc_id=doc_id, file=f"{doc_id}.pdf", company=company, source="its cover page", names=names,
                  years=years, form=form)


LIBRARY = [made("kite", "Kite Works, Inc.", ["kite works", "kite"], [2022, 2021, 2020]),
           made("kite-old", "Kite Works, Inc.", ["kite works", "kite"], [2020, 2019, 2018]),
           made("kite-q", "Kite Works, Inc.", ["kite works", "kite"], [2022, 2021], form="10-Q"),
           made("harbor", "Harbor General Corporation", ["harbor general"], [2022, 2021, 2020]),
           made("survey", "", [], [])]


def test_the_filing_of_the_company_the_form_and_the_year_named_is_chosen():
    choice, named = choose(LIBRARY, "What was Kite Works' FY2019 gross margin?", ranked=["harbor", "kite"])
    assert named and choice.doc_id == "kite-old", "the filing whose latest year is the year asked"
    assert "the company the question names (by its cover page)" in choice.why
    assert choose(LIBRARY, "What was Kite's FY2021 revenue in its 10-Q?", ["kite"])[0].doc_id == "kite-q"
    assert choose(LIBRARY, "What was Kite's FY2021 revenue?", ["kite-q", "kite"])[0].doc_id in ("kite", "kite-q")
    assert choose(LIBRARY, "what was harbor general's revenue in fy2022?", ["kite"])[0].doc_id == "harbor", \
        "a name of two words, in lower case"
    assert not named_by(LIBRARY[3], "Which is the general harbor of the city?"), "the words, not the name"


def test_a_question_naming_no_company_says_which_filings_it_found():
    choice, named = choose(LIBRARY, "What was the FY2022 operating margin?", ranked=["harbor", "kite"])
    assert not named and choice.doc_id == "harbor"
    assert "names no company, and 3 filings print FY2022: Kite Works, Inc. (kite.pdf), Kite Works, Inc. (kite-q.pdf), "\
           "Harbor General Corporation (harbor.pdf); this one the search ranked first" in choice.why
    only, _ = choose(LIBRARY, "What was the FY2018 operating margin?", ranked=["harbor"])
    assert only.doc_id == "kite-old" and "the only searched filing with statements of FY2018" in only.why


@pytest.fixture(scope="module")
def library(tmp_path_factory, embed_model):
    """Three 10-Ks in one store, each its cover page and its statements (searchable from their text layer)."""
    ws = Workspace(local_settings(tmp_path_factory.mktemp("library")), embed_model=embed_model)
    for path, pages in ((NIKE, [1, 59, 61, 62]), (COSTCO, [1, 36, 38, 40]), (NETFLIX, [1, 40, 42, 43])):
        report = ws.ingest(pages_of(path, pages), path.name, wait="searchable")
        assert report.stage == "searchable", report
    return ws


def asked(ws, question: str, tmp_path, replies=()):
    events: list = []
    llm = ScriptedLLM(replies=list(replies))
    result = run_question(ws, llm, question, trace_dir=tmp_path, on_event=events.append)
    asked.scoped = [e for e in events if isinstance(e, Scoped)]
    asked.hits = [h for e in events if isinstance(e, HopEnd) for h in e.hits]
    return result, [e for e in events if isinstance(e, Computation)], llm


def test_a_metric_question_naming_one_company_is_answered_from_its_filing(library, tmp_path):
    """"EBITDA" is printed by no filing here, so "every name the question asks about" found none: the company is
    found by the name its cover page prints."""
    store = library.store
    assert not any("EBITDA" in text for d in store.documents() for text in store.page_texts(d.doc_id, [1, 2, 3, 4])
                   .values())
    result, [computed], llm = asked(library, "What was Netflix's EBITDA margin in FY2015, in percent?", tmp_path)
    assert not llm.prompts and result.skill == "metric"
    assert result.answer.startswith("5.43% = "), result.answer  # (305,826 + 62,283) / 6,779,511
    assert {c.file for c in result.citations} == {NETFLIX.name}
    [scoped] = asked.scoped
    assert scoped.file == NETFLIX.name and scoped.headline().startswith(
        f"Searching one filing: from {NETFLIX.name}: Netflix, Inc.'s filing of FY2015, the company the question names")


def test_a_question_naming_a_company_reads_only_its_filings_pages(library, tmp_path):
    """Not a metric: the pages read are the company's filing's, found before any search across the others."""
    def page(prompt):
        found = "Issaquah" in prompt
        return json.dumps({"found": found, "answer": "Issaquah, Washington" if found else ""})

    result, _, _ = asked(library, "In which city are Costco's executive offices?", tmp_path, [page] * 3)
    assert [s.file for s in asked.scoped] == [COSTCO.name] and {h.fragment.file for h in asked.hits} == {COSTCO.name}
    assert result.short_answer == "Issaquah, Washington" and {c.file for c in result.citations} == {COSTCO.name}
    asked(library, "In which city are the executive offices?", tmp_path, [page] * 3)
    assert not asked.scoped and len({h.fragment.file for h in asked.hits}) > 1, "no company named: all are searched"


def test_a_question_naming_no_company_is_answered_from_the_best_hits_filing_and_says_which_it_found(library, tmp_path):
    result, [computed], _ = asked(library, "What was net income in fiscal 2021, in USD millions?", tmp_path)
    assert result.skill == "metric" and "the question names no company, and 2 filings print FY2021: " in computed.result
    assert "NIKE, Inc." in computed.result and "Costco Wholesale Corporation" in computed.result


def test_a_company_no_searched_filing_is_of_gets_no_other_companys_figure(library, tmp_path):
    result, computed, _ = asked(library, "What was Zephyrine Foods' net income in FY2021?", tmp_path)
    assert result.skill != "metric" and not result.program
    assert any("no searched filing is of Zephyrine" in (c.error or "") for c in computed), computed


def test_a_metric_written_with_capitals_names_no_company_and_the_only_filing_of_its_year_answers(library, tmp_path):
    result, [computed], llm = asked(library, "What was the Current Ratio in FY2015?", tmp_path)
    assert not llm.prompts and result.skill == "metric" and result.answer.startswith("1.54 = "), result.answer
    assert "the only searched filing with statements of FY2015" in computed.result


def test_an_evaluation_over_the_library_searches_every_filing_and_names_the_one_it_cited(library, tmp_path):
    """`rag eval --library`: a question over all the store's documents, as the chat's "all documents" asks; the
    filing its answer cites is in the row. The question and gold are ours (the printed current ratio)."""
    from rag.eval.answers import evaluate_answers

    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps([{"doc_id": NETFLIX.name, "question": "What was the Current Ratio in FY2015?",
                               "answer": "1.54", "answer_format": "Float", "unit": "ratio",
                               "evidence_pages_1based": [2], "evidence_sources": ["Table"], "unanswerable": False}]))
    library.llm = ScriptedLLM(replies=[])
    summary = evaluate_answers(library, qa, None, tmp_path / "run", library=True, scoring="units")
    [row] = [json.loads(line) for line in (tmp_path / "run" / "questions.jsonl").read_text().splitlines()]
    assert summary["library"] and row["cited"] == [NETFLIX.name] and row["short_answer"] == "1.54", row
    assert "the only searched filing with statements of FY2015" in row["answer"]
