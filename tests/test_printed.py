"""What the documents print, counted and listed by code (rag/reader/occurrences.py, skills/printed.py): on a PDF
made here with known phrases and addresses, on a real slide deck, and through the agent on a real store with a
scripted LLM that must not be called."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest
from conftest import asked_of

from rag.reader.occurrences import distinct, found, page_texts, phrase_pattern
from rag.reader.question import understand

WIDE = Path(__file__).resolve().parents[2] / "shared/eval/wide/pdfs"


def newsletter_pdf() -> bytes:
    """Three pages: the trust's name three times over pages 1 and 3, a web address on each of pages 1 and 2 (one
    printed twice, once without its scheme), an e-mail address on page 3 only."""
    doc = pymupdf.open()
    pages = [
        "Harbour Trust newsletter. The Harbour Trust met in May. Read more at https://harbour.example.org/news",
        "Ferry timetables change in June. See www.ferries.example.com for the times, or harbour.example.org/news.",
        "Questions to the Harbour Trusts' secretary: clerk@harbour.example.org. Minutes of the HARBOUR board follow.",
    ]
    for text in pages:
        doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 400), text, fontsize=11)
    return doc.tobytes()


def test_what_is_to_be_found_as_printed_is_told_from_the_question():
    cases = {
        'How many times does "SLA" appear in the slides?': ("SLA", False, "times"),
        "How many times is Clause 4.2 cited in the contract?": ("Clause 4.2", False, "times"),
        "On which pages is an e-mail address printed?": ("email", True, "pages"),
        "Which pages mention Riverside Depot?": ("Riverside Depot", False, "pages"),
        "How many pages mention the word 'tariff'?": ("tariff", False, "pages"),
        "How many URLs does the brochure list?": ("url", True, "items"),
        "List all the web addresses given on page 4.": ("url", True, "items"),
    }
    for asked, expected in cases.items():
        printed = understand(asked).printed
        assert printed and (printed.what, printed.kind, printed.per) == expected, asked
    for other in ("How many times larger is the north depot than the south one?", "How many times does the logo appear?",
                  "What is the e-mail address of the project's secretary?", "How many times did the fund raise fees?"):
        assert understand(other).printed is None, other


def test_a_phrase_is_found_as_printed_in_its_plural_with_or_without_a_hyphen_and_an_acronym_only_in_capitals():
    assert phrase_pattern("Annex B-7").findall("Annexes B-7 and B-8; annex B7; not Annex B-70") == \
        ["Annexes B-7", "annex B7"]
    assert phrase_pattern("HIT").findall("HIT Applications, a hit, WHITE, HITs") == ["HIT", "HITs"]


def test_a_pdfs_phrases_and_addresses_are_found_page_by_page():
    with pymupdf.open(stream=newsletter_pdf()) as doc:
        texts = page_texts(doc, {})
    assert {p: len(hits) for p, hits in found(texts, "Harbour Trust", False).items()} == {1: 2, 3: 1}
    urls = found(texts, "url", True)
    assert urls == {1: ["https://harbour.example.org/news"], 2: ["www.ferries.example.com", "harbour.example.org/news"]}
    assert distinct([u for hits in urls.values() for u in hits]) == ["https://harbour.example.org/news",
                                                                       "www.ferries.example.com"]
    assert found(texts, "email", True) == {3: ["clerk@harbour.example.org"]}, "an e-mail's domain is not a web address"


def test_a_slide_decks_acronym_is_found_on_the_slides_that_print_it():
    with pymupdf.open(WIDE / "c31e6580d0175ab3f9d99d1ff0bfa000.pdf") as doc:
        texts = page_texts(doc, {})
    assert sorted(found(texts, "HIT", False)) == [1, 3, 4]


@pytest.fixture
def ask(workspace, tmp_path):
    return asked_of(workspace, tmp_path / "logs", newsletter_pdf(), "newsletter.pdf")


def test_the_agent_counts_and_lists_what_is_printed_by_code_and_cites_each_page(ask):
    times = ask('How many times does "Harbour Trust" appear in the newsletter?')
    assert times.short_answer == "3" and [c.page for c in times.citations] == [1, 3]
    assert ask("On which pages is an e-mail address printed?").short_answer == '["3"]'
    assert ask("How many web addresses does the newsletter print?").short_answer == "2"
    assert ask("How many times does Harbour Trust appear on page 3?").short_answer == "1"
    none = ask("Which pages mention Tidewater Board?")
    assert none.short_answer == "Not answerable" and 'no page prints "Tidewater Board"' in none.answer


def test_the_cli_finds_a_phrase_or_the_addresses_a_pdf_prints_and_refuses_a_non_pdf(tmp_path, capsys):
    from rag.cli import main

    pdf = tmp_path / "newsletter.pdf"
    pdf.write_bytes(newsletter_pdf())
    assert main(["printed", str(pdf), "Harbour Trust"]) == 0
    assert capsys.readouterr().out.splitlines() == ["p. 1 · 2 · Harbour Trust; Harbour Trust",
                                                    "p. 3 · 1 · Harbour Trusts"]
    assert main(["printed", str(pdf), "--kind", "email", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"pages": {"3": ["clerk@harbour.example.org"]}}
    (tmp_path / "notes.txt").write_text("plain words")
    with pytest.raises(SystemExit, match="not a PDF"):
        main(["printed", str(tmp_path / "notes.txt"), "Harbour"])
