"""Parsing the real dev PDFs, and refusing bad files with one clear message."""

from __future__ import annotations

import re
from functools import cache

import pymupdf
import pytest
from conftest import BESTBUY, PDFS, PEW, pages_of, pdf_bytes

from rag.ingest import IngestError, doc_id_for, parse_pdf
from rag.ingest.pdf import split_long
from rag.settings import IngestSettings
from rag.workspace import safe_name

SETTINGS = IngestSettings()
ALL_PDFS = sorted(p.name for p in PDFS.glob("*.pdf"))


def test_dev_pdfs_are_there():
    assert len(ALL_PDFS) == 8


@cache
def parsed_dev_pdf(name: str):
    return parse_pdf(pdf_bytes(name), name, SETTINGS)


@pytest.mark.parametrize("name", ALL_PDFS)
def test_every_dev_pdf_yields_clean_text_fragments(name):
    parsed = parsed_dev_pdf(name)
    texts = [f for f in parsed.fragments if f.modality == "text"]
    assert len(texts) >= parsed.pages
    assert {f.page for f in texts} <= set(range(1, parsed.pages + 1))
    assert len({f.id for f in parsed.fragments}) == len(parsed.fragments)
    for f in texts:
        assert SETTINGS.min_block_chars < len(f.text) <= SETTINGS.max_block_chars
        assert not re.search(r"\s{2,}|\n", f.text)
        x0, y0, x1, y1 = f.bbox
        assert x0 <= x1 and y0 <= y1
    assert parsed.doc_id == doc_id_for(pdf_bytes(name)), "the id is the content hash, whatever the name"


def value_less(parsed) -> list[str]:
    """Table fragments (chart rows included) whose row holds nothing beside its label."""
    rows = {(t.table_id, i): row for t in parsed.tables for i, row in enumerate(t.rows)}
    return [f.text for f in parsed.fragments if f.modality == "table"
            and not any(cell.strip() for cell in rows[f.extra["table_id"], f.extra["row"]][1:])]


def test_no_dev_pdf_has_a_table_fragment_without_a_value():
    found = {name: value_less(parsed_dev_pdf(name)) for name in ALL_PDFS}
    assert sum(len(rows) for rows in found.values()) == 0, {n: rows[:5] for n, rows in found.items() if rows}
    tables = [f for name in ALL_PDFS for f in parsed_dev_pdf(name).fragments if f.modality == "table"]
    assert len(tables) > 1000 and any(f.extra.get("figure_id") for f in tables), "tables and charts were read"


def test_pages_are_one_based_and_match_the_pdf():
    parsed = parse_pdf(pdf_bytes("PH_2016.06.08_Economy-Final.pdf"), "pew.pdf", SETTINGS)
    doc = pymupdf.open(PDFS / "PH_2016.06.08_Economy-Final.pdf")
    fragment = next(f for f in parsed.fragments if "upward mobility" in f.text)
    page_text = " ".join(doc[fragment.page - 1].get_text().split())
    assert fragment.text[:40] in page_text


def test_long_text_is_split_on_sentences():
    text = " ".join(f"Sentence number {i} says something long enough to matter." for i in range(60))
    pieces = split_long(text, 300)
    assert all(len(p) <= 300 for p in pieces)
    assert all(p.endswith(".") for p in pieces)
    assert " ".join(pieces) == text


def _encrypted_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret quarterly numbers for the board meeting")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"GIF89a not a pdf at all", "not a PDF"),
        (b"%PDF-1.7\n" + b"\x00garbage" * 200, "corrupt"),
        (_encrypted_pdf(), "encrypted"),
    ],
    ids=["empty", "not-pdf", "corrupt", "encrypted"],
)
def test_bad_files_are_refused_with_a_clear_message(data, message):
    with pytest.raises(IngestError, match=message):
        parse_pdf(data, "bad.pdf", SETTINGS)


def test_encrypted_pdf_opens_with_its_password():
    parsed = parse_pdf(_encrypted_pdf(), "locked.pdf", SETTINGS, password="user")
    assert "quarterly numbers" in parsed.fragments[0].text


def test_oversized_file_is_refused():
    with pytest.raises(IngestError, match="over the 1 MB limit"):
        parse_pdf(pdf_bytes("PH_2016.06.08_Economy-Final.pdf"), "big.pdf", IngestSettings(max_file_mb=1))


def test_blank_pdf_says_it_has_no_text_layer():
    doc = pymupdf.open()
    doc.new_page()
    with pytest.raises(IngestError, match="no text layer"):
        parse_pdf(doc.tobytes(), "scan.pdf", SETTINGS)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [("../../etc/passwd.pdf", "passwd.pdf"), ("C:\\Users\\x\\report.pdf", "report.pdf"),
     ("отчёт 2023.pdf", "отчёт 2023.pdf"), ("a\x00b.pdf", "ab.pdf"), ("..", "document.pdf")],
)
def test_file_names_lose_directories_but_keep_their_script(raw, shown):
    assert safe_name(raw) == shown


def test_pages_parsed_in_two_worker_processes_equal_one_process():
    data = pages_of(PEW, list(range(1, 13)))
    seen = []
    two = parse_pdf(data, "pew.pdf", SETTINGS.model_copy(update={"workers": 2}),
                    progress=lambda stage, done, total: seen.append((stage, done, total)))
    one = parse_pdf(data, "pew.pdf", SETTINGS.model_copy(update={"workers": 1}))
    assert [f.model_dump() for f in two.fragments] == [f.model_dump() for f in one.fragments]
    assert two.page_texts == one.page_texts and two.page_labels == one.page_labels
    assert [t.model_dump() for t in two.tables] == [t.model_dump() for t in one.tables]
    parsed = [done for stage, done, _ in seen if stage == "parse"]
    assert parsed == sorted(parsed) and parsed[-1] == 12 and len(parsed) >= 3, "the bar moves per chunk"


def test_printed_page_numbers_are_read_from_the_margins():
    parsed = parse_pdf(pages_of(PEW, [1, 2, 3]), "pew.pdf", SETTINGS)
    assert parsed.page_labels == {1: "", 2: "1", 3: "2"}, "the cover has none; years in footers are not numbers"


def test_page_text_keeps_tables_as_header_value_rows():
    parsed = parse_pdf(pages_of(BESTBUY, [40]), "bestbuy.pdf", SETTINGS)
    text = parsed.page_texts[1]
    assert "Revenue | January 28, 2023: $46,298 | January 29, 2022: $51,761" in text
    assert text.index("Consolidated Statements of Earnings") < text.index("Revenue |")


def _layout_sessions() -> list:
    """The ONNX sessions of PyMuPDF's layout model, which gates find_tables."""
    import onnxruntime as ort

    model = next(c.cell_contents for c in pymupdf._get_layout.__closure__)
    found, todo, seen = [], [model], set()
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for value in getattr(obj, "__dict__", {}).values():
            if isinstance(value, ort.InferenceSession):
                found.append(value)
            elif type(value).__module__.startswith("pymupdf.layout"):
                todo.append(value)
    return found


def _threads_and_tables(data: bytes) -> tuple[set[int], list[dict]]:
    threads = {s.get_session_options().intra_op_num_threads for s in _layout_sessions()}
    tables = parse_pdf(data, "10k.pdf", SETTINGS.model_copy(update={"workers": 1})).tables
    return threads, [t.model_dump() for t in tables]


def test_parsing_workers_run_the_layout_model_on_one_thread_and_find_the_same_tables(monkeypatch):
    """Two workers and the embedder share two cores: a worker's layout model gets one sleeping thread."""
    import multiprocessing
    import sys
    from concurrent.futures import ProcessPoolExecutor

    from rag.ingest import _in_worker

    # An earlier test (Streamlit's AppTest) can leave a script as __main__, which a spawned worker would run.
    monkeypatch.delattr(sys.modules["__main__"], "__file__", raising=False)
    data = pages_of(BESTBUY, [40, 41, 42, 43])  # financial statements
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn, initializer=_in_worker) as pool:
        threads, tables = pool.submit(_threads_and_tables, data).result()
    here_threads, here_tables = _threads_and_tables(data)
    assert threads == {1} and here_threads != {1}
    assert len(tables) >= 2 and tables == here_tables
