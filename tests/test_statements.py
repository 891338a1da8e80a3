"""Statements read off a 10-K's text layer as frames (rag/ingest/statements/): four filings of different
layouts checked against rows, periods and scales written by hand from the printed pages; the frames kept
with the document in the store, removed with it, and read from the PDF for a document stored before."""

from __future__ import annotations

import pymupdf
import pytest
from conftest import BESTBUY, EVAL, PDFS, pages_of

from rag.ingest.statements import cell_value, fiscal_year_shift, load_frames, pdf_frames, save_frames, statement_kind

FIN = EVAL / "fin" / "pdfs"


def frames_of(path, pages):
    with pymupdf.open(path) as doc:
        return pdf_frames(doc, "doc", path.name, pages)


def row(frame, label):
    found = [r for r in frame.rows if r.label == label]
    assert len(found) == 1, [r.label for r in frame.rows]
    return found[0]


def test_boeing_balance_sheet_years_over_the_columns_and_a_date_on_the_left():
    [bs] = frames_of(FIN / "BOEING_2018_10K.pdf", [52])
    assert (bs.kind, bs.title, bs.page) == ("balance_sheet", "Consolidated Statements of Financial Position", 52)
    assert [(p.header, p.year) for p in bs.periods] == [("2018", 2018), ("2017", 2017)]
    assert (bs.scale, bs.currency, bs.context) == ("million", "$", "December 31,")
    assert len(bs.rows) == 35
    assert row(bs, "Property, plant and equipment, net").values == [12645, 12672]
    assert row(bs, "Cash and cash equivalents").cells == ["7,637", "8,813"]
    assert row(bs, "Treasury stock, at cost").values == [-52348, -43454]
    assert row(bs, "Total current assets").section == ["Assets"]
    assert row(bs, "Accounts payable").section == ["Liabilities and equity"]
    assert row(bs, "Retained earnings").section == ["Shareholders’ equity"]
    assert row(bs, "Total liabilities and equity").values == [117359, 112362]
    # figures inside a label stay words of the label
    assert row(bs, "Other assets, net of accumulated amortization of $503 and $482").values == [1826, 2027]


def test_netflix_statements_in_thousands_with_dashes_and_sections():
    income, cash = frames_of(FIN / "NETFLIX_2015_10K.pdf", [40, 42])
    assert (income.kind, income.title, income.scale) == ("income_statement", "CONSOLIDATED STATEMENTS OF OPERATIONS",
                                                         "thousand")
    assert [(p.header, p.year) for p in income.periods] == [("2015", 2015), ("2014", 2014), ("2013", 2013)]
    assert income.context == "Year ended December 31,"
    assert row(income, "Revenues").values == [6779511, 5504656, 4374562]
    assert row(income, "Operating income").values == [305826, 402648, 228347]
    loss = row(income, "Loss on extinguishment of debt")
    assert (loss.values, loss.cells, loss.section) == ([None, None, -25129], ["—", "—", "(25,129)"],
                                                       ["Other income (expense)"])
    assert row(income, "Income before income taxes").section == []
    basic = [r for r in income.rows if r.label == "Basic"]
    assert basic[0].per_share and basic[0].values == [0.29, 0.63, 0.28] and basic[0].section == ["Earnings per share"]
    assert not basic[1].per_share and basic[1].section == ["Weighted-average common shares outstanding"]
    assert cash.kind == "cash_flows" and cash.page == 42 and cash.scale == "thousand"
    assert row(cash, "Depreciation and amortization of property, equipment and intangibles").values == [62283, 54028, 48374]
    assert row(cash, "Purchases of property and equipment").section == ["Cash flows from investing activities"]
    assert row(cash, "Net cash (used in) provided by operating activities").values == [-749439, 16483, 97831]


def test_nike_headers_beside_the_scale_and_a_spanning_date():
    income, balance = frames_of(FIN / "NIKE_2021_10K.pdf", [59, 61])
    assert (income.kind, income.title) == ("income_statement", "CONSOLIDATED STATEMENTS OF INCOME")
    assert [p.header for p in income.periods] == ["2021", "2020", "2019"] and income.context == "YEAR ENDED MAY 31,"
    assert (income.scale, income.currency) == ("million", "$")
    assert row(income, "Cost of sales").values == [24576, 21162, 21643]
    assert row(income, "Other (income) expense, net").values == [14, 139, -78]
    assert (balance.kind, [p.year for p in balance.periods]) == ("balance_sheet", [2021, 2020])
    inventories = row(balance, "Inventories")
    assert (inventories.values, inventories.section) == ([6854, 7367], ["Current assets"])
    assert row(balance, "Current portion of long-term debt").values == [None, 3]
    assert row(balance, "Property, plant and equipment, net").section == []
    assert row(balance, "TOTAL LIABILITIES AND SHAREHOLDERS' EQUITY").values == [37740, 31342]


def test_best_buy_dated_columns_and_a_wrapped_label():
    balance, income, comprehensive, cash = frames_of(PDFS / BESTBUY, [39, 40, 41, 42])
    assert [(p.header, p.year) for p in income.periods] == [
        ("January 28, 2023", 2023), ("January 29, 2022", 2022), ("January 30, 2021", 2021)]
    assert income.context == "Fiscal Years Ended" and income.title == "Consolidated Statements of Earnings"
    assert row(income, "Revenue").values == [46298, 51761, 47262]
    assert row(income, "Restructuring charges").cells == ["147", "(34)", "254"]
    assert row(income, "Equity in income of affiliates").values == [1, 4, None]
    assert [p.header for p in balance.periods] == ["January 28, 2023", "January 29, 2022"]
    assert row(balance, "Merchandise inventories").section == ["Current assets"]
    assert row(balance, "Net property and equipment").values == [2352, 2250]
    assert row(balance, "Operating lease assets").section == []
    assert comprehensive.kind == "other" and comprehensive.title == "Consolidated Statements of Comprehensive Income"
    capex = row(cash, "Additions to property and equipment, net of $35, $46 and $32, respectively, of non-cash "
                      "capital expenditures")
    assert (capex.values, capex.section) == ([-930, -737, -713], ["Investing activities"])
    assert row(cash, "Total cash provided by operating activities").values == [1824, 3252, 4927]


def test_a_statement_continued_on_the_next_page_keeps_its_periods():
    frames = frames_of(FIN / "PEPSICO_2022_10K.pdf", [64, 65])
    assert [f.kind for f in frames] == ["cash_flows", "cash_flows"]
    assert frames[1].title == "Consolidated Statement of Cash Flows (continued)"
    assert [p.year for p in frames[1].periods] == [2022, 2021, 2020]


def test_a_statements_next_page_headed_by_its_years_alone_goes_on_with_it():
    """CVS's cash flow statement: its second page repeats the years with no title; its rows are the statement's
    (depreciation and amortization), not a note's table."""
    first, second = frames_of(FIN / "CVSHEALTH_2018_10K.pdf", [305, 306])
    assert (second.kind, second.title) == ("cash_flows", first.title) == ("cash_flows", "Consolidated Statements of "
                                                                                        "Cash Flows")
    assert row(second, "Depreciation and amortization").values[:3] == [2718, 2479, 2475]
    assert all(f.kind == "other" for f in frames_of(FIN / "CVSHEALTH_2018_10K.pdf", [311, 312])), \
        "a note's tables, pages after the statements: no statement's"


@pytest.mark.parametrize(("printed", "number"), [
    ("(1,234)", -1234), ("$7,637", 7637), ("$(52)", -52), ("—", None), ("-", None), ("1,573.0", 1573.0),
    ("12,645(a)", 12645), ("0.29", 0.29), ("-3", -3)])
def test_a_printed_figure_as_a_number(printed, number):
    assert cell_value(printed) == number


@pytest.mark.parametrize(("title", "kind"), [
    ("CONSOLIDATED BALANCE SHEETS", "balance_sheet"), ("Consolidated Statements of Financial Position", "balance_sheet"),
    ("Consolidated Statements of Earnings", "income_statement"), ("CONSOLIDATED STATEMENTS OF OPERATIONS", "income_statement"),
    ("Consolidated Statements of Operations and Comprehensive Income (Loss)", "income_statement"),
    ("Consolidated Statements of Comprehensive Income", "other"), ("Consolidated Statement of Cash Flows", "cash_flows"),
    ("Consolidated Statements of Shareholders' Equity", "equity"),
    ("the difference is recorded within operating income in our Consolidated Statements of Earnings.", "other"),
    ("Selected Financial Data", "other")])
def test_the_title_names_the_kind(title, kind):
    assert statement_kind(title) == kind


def test_a_fiscal_year_is_the_year_its_column_prints_unless_the_document_says_otherwise():
    assert fiscal_year_shift("Our fiscal year ends on the Saturday nearest the end of January. Fiscal 2023 …") == 0
    assert fiscal_year_shift("fiscal 2023 ended January 28, 2023, fiscal 2022 ended January 29, 2022") == 0
    assert fiscal_year_shift("Fiscal 2022 ended January 28, 2023 and fiscal 2021 ended January 29, 2022") == -1


def test_frames_are_kept_in_sqlite_and_read_back_the_same(tmp_path):
    frames = frames_of(PDFS / BESTBUY, [39, 40, 42])
    save_frames(frames, tmp_path / "f.sqlite")
    assert load_frames(tmp_path / "f.sqlite") == frames
    import sqlite3

    import pandas as pd

    with sqlite3.connect(tmp_path / "f.sqlite") as db:
        cells = pd.read_sql("SELECT * FROM cells WHERE label = 'Revenue'", db)
    assert list(cells.value) == [46298, 51761, 47262]


def test_the_searchable_stage_stores_the_frames_and_delete_removes_them(workspace):
    report = workspace.ingest(pages_of(BESTBUY, [39, 40, 41, 42]), "bestbuy-statements.pdf", wait="searchable")
    assert report.outcome == "ingested" and report.stage == "searchable"
    store = workspace.store
    frames = store.frames(report.doc_id)
    assert [f.kind for f in frames] == ["balance_sheet", "income_statement", "other", "cash_flows"]
    assert [f.page for f in frames] == [1, 2, 3, 4] and frames[1].file == "bestbuy-statements.pdf"
    path = store.files / "frames" / f"{report.doc_id}.sqlite"
    path.unlink()  # a document stored before frames were kept: read from its PDF, then kept
    assert store.frames(report.doc_id) == frames and path.exists()
    store.delete(report.doc_id)
    assert not path.exists() and store.frames(report.doc_id) == []


def test_the_cli_prints_a_pdfs_statements(capsys):
    from rag.cli import main

    assert main(["tables", str(FIN / "NIKE_2021_10K.pdf"), "--kind", "balance_sheet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("p. 61 · balance_sheet · CONSOLIDATED BALANCE SHEETS ($ in millions)")
    assert "  Inventories" in out and "6,854" in out
    assert main(["tables", str(FIN / "NIKE_2021_10K.pdf"), "--kind", "income_statement", "--json"]) == 0
    import json

    [income] = json.loads(capsys.readouterr().out)["frames"]
    assert income["page"] == 59 and income["periods"][0] == {"header": "2021", "year": 2021}


def test_the_cli_prints_a_stored_documents_statements_then_its_other_tables(pew_workspace, capsys):
    """A Pew report read to complete: no statements (two tables by year), its charts' values as tables, each
    with its page."""
    import json

    from rag.cli import main

    [doc] = pew_workspace.store.documents()
    assert main(["--store", str(pew_workspace.settings.data_dir), "tables", doc.doc_id[:10], "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["kind"] for f in out["frames"]] == ["other", "other"]
    assert len(out["tables"]) == len(pew_workspace.store.tables(doc.doc_id)) and any(t["chart"] for t in out["tables"])
    assert all(t["page"] >= 1 and t["rows"] for t in out["tables"])
    assert main(["--store", str(pew_workspace.settings.data_dir), "tables", doc.doc_id[:10]]) == 0
    assert "· chart · " in capsys.readouterr().out
