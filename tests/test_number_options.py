"""A number question's options: ranked by how much of what is asked their labels say, and taken by code
when one clearly fits. Pure functions over real statement rows; no model."""

from __future__ import annotations

from rag.context import EvidenceItem
from rag.records import Cell
from rag.reader.cascade import (
    Candidate,
    clear_choice,
    counted_totals,
    number_candidates,
    numbers_written,
    option_scores,
    rank_candidates,
    word_rarity,
)

ROWS = [
    ("Equity — Best Buy Co., Inc. Shareholders' Equity — Common stock, $0.10 par value: Issued and outstanding"
     " - 218.1 million shares | January 28, 2023: 22"),
    "Fiscal Years Ended: Net earnings | January 28, 2023: $1,419",
    "Fiscal Years Ended: Revenue | January 28, 2023: $46,298",
    "Fiscal Years Ended: Cost of sales | January 28, 2023: 36,386",
    "Fiscal Years Ended: Net earnings per share | January 28, 2023: $6.29",
]
HEAD = "Best Buy Co., Inc. Consolidated {} $ in millions Fiscal Years Ended January 28, 2023 {}"
PAGES = "\f".join(HEAD.format(title, body) for title, body in [  # pages, split as the reader gets them
    ("Balance Sheets", "Equity Common stock 22"),
    ("Statements of Earnings", "Revenue 46,298 Cost of sales 36,386 Net earnings 1,419"),
    ("Statements of Cash Flows", "Net earnings 1,419"),
])


def table_rows(rows: list[str], page: int) -> list[EvidenceItem]:
    """Rows written as the store prints them ("Header: value | value"), with the cells ingestion gave them."""
    return [EvidenceItem(id=f"E{n}", text=row, kind="table", doc_id="d", file="bb.pdf", page=page, score=0.5,
                         cells=[Cell.read(*part.split(": ", 1)) if ": " in part else Cell.read("", part)
                                for part in row.split(" | ")])
            for n, row in enumerate(rows, 1)]


def options():
    return number_candidates(table_rows(ROWS, 1))


def test_words_on_every_page_weigh_less_than_words_on_one():
    rarity = word_rarity(PAGES)
    assert rarity["best"] < rarity["earning"] < rarity["revenue"]


def test_the_owner_of_a_possessive_and_a_rows_headings_do_not_outrank_the_row_asked_for():
    question = "What was Best Buy's revenue in fiscal 2023, in millions of dollars?"
    ranked = rank_candidates(options(), question, word_rarity(PAGES))
    assert ranked[0].value == "$46,298"
    scores = option_scores(options(), question, word_rarity(PAGES))
    assert scores[0] < scores[2] / 2, "the common stock row says only whose value and which year"


def test_code_takes_an_option_that_clearly_fits_and_leaves_close_ones_to_the_model():
    rarity = word_rarity(PAGES)
    chosen = clear_choice(options(), "What was Best Buy's revenue in fiscal 2023?", rarity, margin=1.5)
    assert chosen is not None and chosen.value == "$46,298" and chosen.by == "code"
    assert clear_choice(options(), "What were the net earnings in 2023?", rarity, margin=1.5) is None
    assert clear_choice(options(), "How many employees were there in 2023?", rarity, margin=1.5) is None


def test_the_days_of_a_date_range_are_not_options():
    assert numbers_written("Survey conducted April 25-May 1, 2018, among 1,503 adults") == ["1,503"]
    assert numbers_written("from July 18 to September 30, 2013; 27% in May 12 to 15 groups") == ["27%", "12", "15"]


def test_a_count_is_a_whole_number_that_is_not_a_year():
    line = EvidenceItem(id="E1", text="Section 5.2 of the 2016.3 plan lists 7 leaders and $1.5 million, 2,240 staff",
                        kind="text", doc_id="d", file="plan.pdf", page=1, score=0.5)
    assert [c.value for c in number_candidates([line], count=True)] == ["7", "2,240"]
    assert [c.value for c in number_candidates([line])] == ["2016.3", "7", "$1.5", "2,240"], "5.2 is a section"



def test_a_count_the_document_totals_is_its_total_row():
    rows = ["Missouri | U.S. Stores(1): 17 | Total Domestic store count | U.S. Stores(1): 978",
            "Total Domestic segment stores | 2023 Stores Opened: 9 | 2023 Stores Closed: (15) | "
            "2023 Total Stores at End of Fiscal Year: 978",
            "Best Buy | 2023 Stores Opened: 1 | 2023 Total Stores at End of Fiscal Year: 925"]
    items = table_rows(rows, 19)
    totals = counted_totals(number_candidates(items, count=True), "How many domestic stores does Best Buy have?")
    assert sorted(o.value for o in totals) == ["(15)", "9", "978", "978"], "the rows that total domestic stores"
    assert counted_totals(number_candidates(items, count=True), "How many people work at Best Buy?") == []


def test_a_label_saying_the_opposite_of_what_is_asked_does_not_fit():
    """The seniors report's pie: "Use SNS", "Go online, no SNS", "Do not go online"; "use" is on every
    page of a report on technology use, so it tells the first two apart only by what "no" denies."""
    item = EvidenceItem(id="E1", text="pie", kind="table", doc_id="d", file="f.pdf", page=6, score=0.5)
    pie = [Candidate(v, label, item) for v, label in [("27%", "Use SNS"), ("32%", "Go online, no SNS"),
                                                       ("41%", "Do not go online")]]
    rarity = {"use": 0.05, "sns": 1.0, "online": 0.3, "not": 0.2, "percentage": 0.1, "people": 0.1, "who": 0.0}
    assert clear_choice(pie, "the percentage of people who only use SNS", rarity, 1.3).value == "27%"
    assert clear_choice(pie, "the percentage of people who do not go online", rarity, 1.3).value == "41%"
    users = [Candidate("79", "Internet users · Net", item), Candidate("48", "Non-Users · Net", item)]
    assert clear_choice(users, "What share of internet users agree, net?", {}, 1.3).value == "79"
    assert clear_choice(users, "What share of non-users agree, net?", {}, 1.3).value == "48"
