"""The page reader's code side, with no model: what `understand` tells from questions of every kind of
document, which pages are read and how much of each, and the checks that an answer stands on its page.
Page texts are real pages of a manual, a 10-K, a survey report and a slide deck (dev and wide sets)."""

from __future__ import annotations

import json

import pymupdf
import pytest
from conftest import BESTBUY, EVAL, PDFS, pages_of

from rag.ingest import parse_pdf
from rag.models.structured import schema_of
from rag.reader.answer import Solution, not_found
from rag.reader.pages import PageRef, candidates, window
from rag.reader.question import LAST_PAGE, understand
from rag.reader.skills import page_skill
from rag.reader.skills.compute import rounded
from rag.reader.skills.read_page import NUMBER_CHARS, reply_model, with_unit
from rag.reader.verify import on_page, values_on_page, why_not
from rag.records import Fragment, Hit
from rag.settings import IngestSettings
from rag.text import cell_number, numbers, plain_number, stem

WIDE = EVAL / "wide" / "pdfs"
MANUAL = WIDE / "91521110100M_4K_UHD_Display_User_Manual_V1.1.pdf"
COSTCO = WIDE / "COSTCO_2021_10K.pdf"


def page_text(path, page: int) -> str:
    with pymupdf.open(path) as doc:
        return doc[page - 1].get_text()


@pytest.mark.parametrize(("question", "asked", "arithmetic"), [
    ("How much rated power does the Zephyr ZX-9 turbine produce?", "number", False),  # a brochure
    ("What is the resolution of the display in the user manual?", "text", False),  # a manual
    ("How many more times did Recruiter A view profiles than Recruiter B?", "number", True),  # a slide deck
    ("What was Costco's total revenue in FY2021? Answer in millions.", "number", False),  # a 10-K
    ("Does the handbook allow students to defer their fees? Directly answer 'yes' or 'no'.", "yes_no", False),
    ("List the datasets the paper evaluates on.", "list", False),  # a paper
    ("How does this document define the law of good gestalt?", "text", False),  # a tutorial
    ("What is the gap between the shares of Republicans and Democrats, in percentage points?", "number", True),
])
def test_understand_tells_the_asked_type(question, asked, arithmetic):
    q = understand(question)
    assert (q.asked, q.arithmetic) == (asked, arithmetic)


def test_understand_reads_named_pages_years_units_and_counts():
    assert understand("How many distinct people are involved in the pictures in Pages 30-35?").pages == \
        [30, 31, 32, 33, 34, 35]
    q = understand("How many distinct people are involved in the pictures in Pages 30-35?")
    assert q.pictures and q.counted == "distinct people are"
    assert understand("What is the title on the last page?").pages == [LAST_PAGE]
    assert understand("What does slide two show?").pages == [2]
    assert understand("Which category has the most increase from 2005 to 2010?").model_dump(
        include={"years", "direction"}) == {"years": ["2005", "2010"], "direction": "most"}
    assert understand("What was the net income in millions?").unit == "millions"
    assert understand("What is the ratio? Round your answer to three decimal places.").decimals == 3
    assert understand("How many districts were sampled during Wave III?").pages == []


def test_the_question_chooses_the_skill():
    enabled = {"compute", "outline"}
    assert page_skill(understand("How many more times did A view profiles than B?"), enabled).name == "compute"
    assert page_skill(understand("What is the rated power of the turbine?"), enabled).name == "read_page"
    assert page_skill(understand("How many more times did A view profiles than B?"), set()).name == "read_page"


def test_named_pages_come_first_then_pages_in_hit_order_each_once():
    def hit(page, score):
        f = Fragment(id=f"d:text:{page}:{score}", doc_id="d", file="f.pdf", page=page, modality="text", text="x", bbox=(0, 0, 1, 1))
        return Hit(fragment=f, score=score, collection="text")

    named = [PageRef(doc_id="d", file="f.pdf", page=9, named=True)]
    got = candidates(named, [hit(3, 0.9), hit(5, 0.8), hit(3, 0.7), hit(9, 0.6)], read={("d", 5)})
    assert [p.page for p in got] == [9, 3]


def test_a_long_page_is_read_as_a_window_around_what_the_question_names():
    text = page_text(COSTCO, 40)
    count = lambda s: len(s.split())
    assert count(text) > 300
    part = window(text, "total revenue net sales membership fees", count, 120)
    assert count(part) <= 130 and part in "\n".join(ln for ln in text.splitlines() if ln.strip())
    short = page_text(MANUAL, 5)
    assert window(short, "anything", count, 10_000) == short


def test_an_answer_must_stand_on_its_page():
    manual = page_text(MANUAL, 5)
    line = next(ln for ln in manual.splitlines() if len(ln) > 30)
    assert on_page(line, manual) and not on_page("The turbine produces 4.2 MW of rated power.", manual)
    assert why_not("Yes", line, manual, "yes_no") is None
    assert why_not("Yes", "a line this page never wrote about turbines", manual, "yes_no")
    words = " ".join(line.split()[:4])
    assert why_not(words, line, manual, "text") is None
    assert why_not("quarterly dividend payout", "", manual, "text") == "its words are not on the page"


def test_numbers_are_compared_as_values():
    page = "Net sales were $9,912 million, up 4.2% from (1,203) last year."
    assert numbers(page) == [9912.0, 4.2, 1203.0]
    assert values_on_page("9912", page) and values_on_page("$9,912 million", page)
    assert values_on_page("0.042", page)  # a share written as a percentage on the page
    assert not values_on_page("9,921", page)
    assert why_not("about 9.9 billion", "", page, "number") == "its numbers are not on the page"
    assert numbers("COVID-19 cases in Q3") == []


def ingested_page(path, page: int) -> str:
    """A page's text as the store keeps it: its table rows with their labels and headers."""
    return parse_pdf(pages_of(path, [page]), "page.pdf", IngestSettings()).page_texts[1]


def test_a_number_must_stand_on_a_line_about_what_is_asked():
    earnings, cash_flows = (ingested_page(PDFS / BESTBUY, p) for p in (40, 42))
    revenue = "What was Best Buy's revenue in fiscal 2023, in millions of dollars?"
    assert why_not("46,298", "", earnings, "number", revenue) is None
    # net earnings off the cash-flow statement; "Fiscal Years Ended", on every row, names none of them
    assert why_not("1,419", "", cash_flows, "number", revenue) == "its number stands on no line about what is asked"
    assert why_not("1,419", "", cash_flows, "number", "What were Best Buy's net earnings in fiscal 2023?") is None
    specs = ingested_page(MANUAL, 33)
    weight = "What is the weight of the display's AC adapter?"
    assert why_not("0.7 kg", "", specs, "number", weight) is None
    assert why_not("1060", "", specs, "number", weight) == "its number stands on no line about what is asked"


def test_words_must_stand_near_a_line_about_what_is_asked():
    power = ingested_page(MANUAL, 7)
    assert why_not("Blue", "", power, "text", "What colour does the POWER indicator glow when the monitor is on?") is None
    cover = ingested_page(PDFS / "e79deb02a0c0e87511080836c5d4347b.pdf", 1)  # a state agency's plan
    assert why_not("Rick Scott", "", cover, "text", "What is the name of the governor on the cover?") is None, \
        "the line under the name says GOVERNOR"
    sunset = ingested_page(WIDE / "san-francisco-11-contents.pdf", 37)  # a city guide's map
    assert why_not("The Sunset Recreation Center", "", sunset, "text", "Name a restaurant between 45th Ave. and 44th Ave.") \
        == "its words stand on no line about what is asked", "a map label no line calls a restaurant"


def test_a_number_answer_is_held_to_a_value_and_its_unit():
    """The grammar the embedded model decodes under: a run of digits cannot reach the token limit."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    rules = json_schema_to_gbnf(json.dumps(schema_of(reply_model("number")))).splitlines()
    assert next(r for r in rules if r.startswith("answer ::=")).count("char") == NUMBER_CHARS
    assert next(r for r in json_schema_to_gbnf(json.dumps(schema_of(reply_model("text")))).splitlines()
                if r.startswith("answer ::=")).count("char") > NUMBER_CHARS


def test_a_value_keeps_the_unit_its_page_gives():
    assert with_unit("4.2", "Rated power: 4.2 MW at 12 m/s") == "4.2 MW"
    assert with_unit("36", "Poor: 36% of adults") == "36%"
    assert with_unit("9,912", "Revenue 9,912 million in fiscal 2023") == "9,912 million"
    assert with_unit("4.2 MW", "Rated power: 4.2 MW") == "4.2 MW"
    statement = page_text(COSTCO, 37)
    assert "(amounts in millions" in statement and with_unit("195,929", statement) == "195,929 million"
    assert with_unit("9,912", "($ in millions)\nGross profit | 2023: 9,912 | 2022: 11,640") == "$9,912 million"
    assert with_unit("9,912", "($ and shares in millions, except per share amounts)\nGross profit 9,912") == "$9,912 million"


def test_the_answer_a_person_reads_and_the_short_one_scored():
    page = PageRef(doc_id="d", file="f.pdf", page=40)
    value = Solution(skill="read_page", asked="number", value="$9,912 million", pages=[page])
    assert (value.sentence(), value.short()) == ("$9,912 million [p. 40]", "9912")
    listed = Solution(skill="read_page", asked="list", items=["CUB", "Flowers"], pages=[page])
    assert listed.sentence() == "CUB; Flowers [p. 40]" and listed.short() == '["CUB", "Flowers"]'
    answer, short = not_found([page])
    assert short == "Not answerable" and "p. 40" in answer
    assert plain_number(0.1090) == "0.109" and stem("Latinos") == stem("latino")
    assert rounded(11.0, None) == "11" and rounded(2 / 3, None) == "0.67" and rounded(2 / 3, 3) == "0.667"


def test_the_dev_survey_page_is_read_whole():
    text = page_text(PDFS / "PH_2016.06.08_Economy-Final.pdf", 4)
    assert window(text, "economic mobility children", lambda s: len(s) // 4, 5000) == text


@pytest.mark.parametrize("header, value, expected", [
    ("Revenue ($ millions)", "9,912", (9912.0, "$ millions")),  # the header states the unit
    ("Share (%)", "55", (55.0, "%")),
    ("Total (in millions)", "12.5", (12.5, "in millions")),
    ("Rated power", "4.2 MW", (4.2, "MW")),  # the cell does
    ("", "$1,234.5", (1234.5, "$")),
    ("", "41% same", (None, "")),  # words around a value: not a value
    ("", "Q3 2015", (None, "")),
    ("Ages", "18-29", (None, "")),
])
def test_a_cell_is_a_number_only_when_it_is_one_value(header, value, expected):
    assert cell_number(header, value) == expected
