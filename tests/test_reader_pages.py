"""The page reader's code side, with no model: which pages are read and which of their lines, the checks
that an answer stands on its page, and values given with their page's unit and scale, converted by code.
Page texts are real pages of a manual, a 10-K, a survey report and a slide deck (dev and wide sets)."""

from __future__ import annotations

import asyncio
import json

import pymupdf
import pytest
from conftest import BESTBUY, EVAL, PDFS, pages_of
from scripted_llm import JsonReplies

from rag.ingest import parse_pdf
from rag.ingest.pdf import page_rows
from rag.models.structured import schema_of
from rag.reader.answer import Solution, not_found, valued
from rag.reader.pages import PageRef, best_lines, candidates
from rag.reader.question import understand
from rag.reader.skills import page_skills
from rag.reader.skills.read_page import reply_model
from rag.reader.verify import as_printed, in_asked_column, on_page, values_on_page, verdicts
from rag.records import Fragment, Hit
from rag.settings import IngestSettings
from rag.text import cell_number, numbers, plain_number, stem

WIDE = EVAL / "wide" / "pdfs"
MANUAL = WIDE / "91521110100M_4K_UHD_Display_User_Manual_V1.1.pdf"
COSTCO = WIDE / "COSTCO_2021_10K.pdf"


def why_not(*args) -> str | None:
    """The first check an answer fails, every check enforced (as the presets do)."""
    return next(iter(verdicts(*args).values()), None)


def page_text(path, page: int) -> str:
    with pymupdf.open(path) as doc:
        return doc[page - 1].get_text()


def text_layer(path, page: int) -> str:
    """A page as the searchable stage stores it: a statement's rows on their own lines."""
    with pymupdf.open(path) as doc:
        return "\n".join(text for _, text in page_rows(doc[page - 1]))


def test_reading_the_page_is_the_skill_for_every_question():
    for question in ("How many more times did A view profiles than B?", "What is the rated power of the turbine?"):
        assert [skill.name for skill in page_skills(understand(question), ["outline"])] == ["read_page"]


def test_a_skill_registers_itself_and_the_settings_switch_and_order_them():
    from rag.reader.skills import SKILLS, document_skills, register

    assert {"printed", "outline", "metric", "names", "read_page"} <= set(SKILLS), "each skill's file registers it"
    assert [s.name for s in document_skills(["metric", "outline"])] == ["metric", "outline"]
    assert document_skills(["read_page"]) == [], "a page skill is not tried before pages are read"

    @register
    class Echo:
        name, reads = "echo", "documents"

    try:
        assert [s.name for s in document_skills(["echo", "metric"])] == ["echo", "metric"]
    finally:
        del SKILLS["echo"]
    with pytest.raises(ValueError, match="unknown skill metirc"):
        document_skills(["metirc"])


def test_named_pages_come_first_then_pages_in_hit_order_each_once():
    def hit(page, score):
        f = Fragment(id=f"d:text:{page}:{score}", doc_id="d", file="f.pdf", page=page, modality="text", text="x", bbox=(0, 0, 1, 1))
        return Hit(fragment=f, score=score, collection="text")

    named = [PageRef(doc_id="d", file="f.pdf", page=9, named=True)]
    got = candidates(named, [hit(3, 0.9), hit(5, 0.8), hit(3, 0.7), hit(9, 0.6)], read={("d", 5)})
    assert [p.page for p in got] == [9, 3]


def test_a_long_page_is_read_as_its_best_lines_a_short_one_whole():
    text = ingested_page(COSTCO, 36)  # the income statement, its rows as "Header: value" lines
    count = lambda s: len(s.split())
    question = "What was Costco's total revenue in FY2021?"
    part = best_lines(text, question, understand(question).terms, None, count, 60)
    assert count(text) > 200 and count(part) <= 75
    assert "Total revenue" in part and text.splitlines()[0] in part, "the best row, and the page's first line"
    kept = [ln for ln in part.splitlines() if ln != "…"]
    assert all(ln in text.splitlines() for ln in kept) and kept == sorted(kept, key=text.splitlines().index)
    short = page_text(MANUAL, 5)
    assert best_lines(short, "anything", ["anything"], None, count, 10_000) == short


def test_the_embedder_ranks_lines_that_share_no_word_with_the_question():
    lines = "Opening hours\nThe museum opens at 9 am and closes at 5 pm.\nTickets cost 12 euros.\n" + \
            "\n".join(f"Gallery {n} holds paintings of the period." for n in range(40))
    cosine = lambda q, ls: [0.9 if "opens" in ln else 0.0 for ln in ls]  # as an embedder would rank them
    part = best_lines(lines, "When can I visit?", ["visit"], cosine, lambda s: len(s.split()), 30)
    assert "opens at 9 am" in part


def test_an_answer_must_stand_on_its_page():
    manual = page_text(MANUAL, 5)
    line = next(ln for ln in manual.splitlines() if len(ln) > 30)
    assert on_page(line, manual) and not on_page("The turbine produces 4.2 MW of rated power.", manual)
    assert why_not("Yes", line, manual, "yes_no", []) is None
    assert why_not("Yes", "a line this page never wrote about turbines", manual, "yes_no", [])
    words = " ".join(line.split()[:4])
    assert why_not(words, line, manual, "text", []) is None
    assert why_not("quarterly dividend payout", "", manual, "text", []) == "its words are not on the page"


def test_numbers_are_compared_as_values():
    page = "Net sales were $9,912 million, up 4.2% from (1,203) last year."
    assert numbers(page) == [9912.0, 4.2, 1203.0]
    assert values_on_page("9912", page) and values_on_page("$9,912 million", page)
    assert values_on_page("0.042", page)  # a share written as a percentage on the page
    assert not values_on_page("9,921", page)
    assert why_not("about 9.9 billion", "", page, "number", []) == "its numbers are not on the page"
    assert numbers("COVID-19 cases in Q3") == []


def ingested_page(path, page: int) -> str:
    """A page's text as the store keeps it: its table rows with their labels and headers."""
    return parse_pdf(pages_of(path, [page]), "page.pdf", IngestSettings()).page_texts[1]


def asks(question: str) -> list[str]:
    return understand(question).terms


def test_a_number_must_stand_on_a_line_about_what_is_asked():
    earnings, cash_flows = (ingested_page(PDFS / BESTBUY, p) for p in (40, 42))
    revenue = asks("What was Best Buy's revenue in fiscal 2023, in millions of dollars?")
    assert why_not("46,298", "", earnings, "number", revenue) is None
    # net earnings off the cash-flow statement; "Fiscal Years Ended", on every row, names none of them
    assert why_not("1,419", "", cash_flows, "number", revenue) == "its number stands on no line about what is asked"
    assert why_not("1,419", "", cash_flows, "number", asks("What were Best Buy's net earnings in fiscal 2023?")) is None
    specs = ingested_page(MANUAL, 33)
    weight = asks("What is the weight of the display's AC adapter?")
    assert why_not("0.7 kg", "", specs, "number", weight) is None
    assert why_not("1060", "", specs, "number", weight) == "its number stands on no line about what is asked"


def test_words_must_stand_near_a_line_about_what_is_asked():
    power = ingested_page(MANUAL, 7)
    assert why_not("Blue", "", power, "text", asks("What colour does the POWER indicator glow when the monitor is on?")) is None
    cover = ingested_page(PDFS / "e79deb02a0c0e87511080836c5d4347b.pdf", 1)  # a state agency's plan
    assert why_not("Rick Scott", "", cover, "text", asks("What is the name of the governor on the cover?")) is None, \
        "the line under the name says GOVERNOR"
    sunset = ingested_page(WIDE / "san-francisco-11-contents.pdf", 37)  # a city guide's map
    assert why_not("The Sunset Recreation Center", "", sunset, "text", asks("Name a restaurant between 45th Ave. and 44th Ave.")) \
        == "its words stand on no line about what is asked", "a map label no line calls a restaurant"


def test_a_number_answer_is_held_to_a_value_and_its_unit_a_choice_to_its_options():
    """The grammar the embedded model decodes under: a run of digits cannot reach the token limit."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    def rules(question: str) -> list[str]:
        return json_schema_to_gbnf(json.dumps(schema_of(reply_model(understand(question))))).splitlines()

    number = next(r for r in rules("How many stores?") if r.startswith("answer ::="))
    assert "char" not in number and '","' in " ".join(rules("How many stores?")), "digits in groups of three"
    assert next(r for r in rules("Who signed it?") if r.startswith("answer ::=")).count("char") >= 300, \
        "a span's bound no right answer meets"
    assert "Foreign born Latinos" in " ".join(rules("Which is larger? Foreign born Latinos, or the US born?"))


def test_a_value_keeps_the_unit_and_scale_its_page_gives():
    plain = understand("What is it?")
    assert valued("4.2", "Rated power: 4.2 MW at 12 m/s", plain) == ("4.2 MW", "4.2")
    assert valued("36", "Poor: 36% of adults", plain) == ("36%", "36")
    assert valued("4.2 MW", "Rated power: 4.2 MW", plain) == ("4.2 MW", "4.2")
    statement = page_text(COSTCO, 37)
    assert "(amounts in millions" in statement and valued("195,929", statement, plain) == ("$195,929 million", "195929")
    assert valued("9,912", "($ in millions)\nGross profit | 2023: 9,912", plain) == ("$9,912 million", "9912")


def test_code_converts_a_value_to_the_scale_asked_and_shows_both():
    in_millions = understand("What were total current liabilities at the end of 2017? Answer in USD millions.")
    thousands = "(in thousands, except per share data)\nTotal current liabilities $ 5,466,312 $ 4,586,657"
    assert valued("5,466,312", thousands, in_millions) == ("$5,466.3 million ($5,466,312 thousand)", "5466.31")
    millions = "(In millions)\nTotal assets $ 59,268 $ 58,124"
    assert valued("59,268", millions, in_millions) == ("$59,268 million", "59268")
    row_without_dollar = "(in thousands)\nCash $ 1,809,330\nTotal current liabilities 3,529,624 2,832,125"
    assert valued("3,529,624", row_without_dollar, in_millions)[0] == "$3,529.6 million ($3,529,624 thousand)"
    in_billions = understand("What were total assets, in billions?")
    assert valued("59,268", "($ in millions)\nTotal assets 59,268", in_billions)[0] == "$59.27 billion ($59,268 million)"


def test_a_number_the_model_rewrote_in_another_scale_goes_back_to_the_one_printed():
    thousands = "(in thousands)\nTotal current liabilities $ 5,466,312"
    assert as_printed("5.466312 million USD", thousands) == "5,466,312"
    assert as_printed("59.268 million", "(In millions)\nTotal assets 59,268") == "59,268"
    assert as_printed("5,466,312", thousands) == "5,466,312"
    assert as_printed("1500", "Total Latinos | Sample size: 1,500") == "1,500", "shown as the page prints it"
    assert as_printed("7 million", thousands) == "7 million", "no figure of the page in another scale"
    assert as_printed("10,573.000000000000", "Gross profit 9,912 11,640 10,573") == "10,573"
    cash_flow = "Net cash provided by operating activities 8,958 6,053 4,934"
    assert as_printed("8,958,861,635,674.0000", cash_flow) == "8,958", "a reply that ran on past the figure"
    assert as_printed("8,959,000", cash_flow) == "8,959,000", "no figure of the page begins it"


def test_a_figure_copied_from_another_years_column_is_taken_from_the_asked_one():
    earnings = text_layer(PDFS / BESTBUY, 40)  # "Fiscal Years Ended January 28, 2023 January 29, 2022 January 30, 2021"
    assert in_asked_column("10,573", earnings, ["2023"]) == "9,912"
    assert in_asked_column("$9,912 million", earnings, ["2022"]) == "$11,640 million"
    assert in_asked_column("(34)", earnings, ["2023"]) == "147" and in_asked_column("147", earnings, ["2022"]) == "(34)"
    assert in_asked_column("10,573", earnings, []) == "10,573", "no year asked: the figure as copied"
    balance = text_layer(COSTCO, 38)
    assert understand("What is the FY2021 total assets in USD millions?").years == ["2021"]
    assert in_asked_column("55,556", balance, ["2021"]) == "59,268", "the 2020 column's total, asked for 2021"
    assert in_asked_column("59,268", balance, ["2019"]) == "59,268", "a year no column names"
    stored = "Fiscal Years Ended: Gross profit | January 28, 2023: 9,912 | January 29, 2022: 11,640"  # a table's row
    assert in_asked_column("11,640", stored, ["2023"]) == "9,912"


def test_a_number_reply_is_a_figure_as_printed():
    import re

    from rag.reader.skills.read_page import NUMBER_PATTERN
    printed = ["41,190", "$5,466,312", "(34)", "36%", "2015", "-749,439", "0.25"]
    runaway = ["41,190,000,000,000,000", "0.4123456789012", "222222222222222222222222", "1039.88-608.34=431.54"]
    words = ["4.2 MW PWNED", "4.2 MW", "$9,912 million"]  # the unit and scale come from the page, by code
    assert all(re.fullmatch(NUMBER_PATTERN.strip("^$"), v) for v in printed)
    assert not any(re.fullmatch(NUMBER_PATTERN.strip("^$"), v) for v in runaway + words)


def test_a_reply_cut_off_while_the_model_ran_on_keeps_what_it_had_written():
    from rag.reader.skills.read_page import _cut_short

    assert _cut_short('{"found":true,"answer":"10,573.0000000000000', "number").answer == "10,573.0000000000000"
    assert _cut_short('{"found":false,"answer":"', "number") is None and _cut_short('{"found":true', "text") is None
    assert _cut_short('{"found":true,"answer":["a", "b', "list") is None


def test_a_date_is_shown_and_scored_whole():
    asked = understand("On what date was the sample Recruiter certification issued?")
    assert valued("09/20/2014", "Issued 09/20/2014", asked) == ("09/20/2014", "")
    assert Solution(skill="read_page", asked="number", value="09/20/2014").short() == "09/20/2014"


def test_a_date_is_scored_in_the_form_the_question_spells_out():
    asked = understand("When did the lease start? Give it as YYYY-MM-DD.")
    assert asked.date_form == "%Y-%m-%d"
    assert valued("11/03/2019", "Lease start 11/03/2019", asked) == ("2019-11-03 (11/03/2019)", "2019-11-03")
    assert valued("March 8, 2021", "", understand("When, in DD/MM/YYYY, was it built?"))[1] == "08/03/2021"
    assert understand("When did the lease start?").date_form is None, "no form spelled out: the date as printed"
    assert valued("before the audit", "", asked) == ("before the audit", ""), "no date: as given"


def test_the_answer_a_person_reads_and_the_short_one_scored():
    page = PageRef(doc_id="d", file="f.pdf", page=40)
    value = Solution(skill="read_page", asked="number", value="$9,912 million", pages=[page])
    assert (value.sentence(), value.short()) == ("$9,912 million [p. 40]", "9912")
    listed = Solution(skill="read_page", asked="list", items=["CUB", "Flowers"], pages=[page])
    assert listed.sentence() == "CUB; Flowers [p. 40]" and listed.short() == '["CUB", "Flowers"]'
    answer, short = not_found([page])
    assert short == "Not answerable" and "p. 40" in answer
    assert plain_number(0.1090) == "0.109" and stem("Latinos") == stem("latino")


def test_the_dev_survey_page_is_read_whole():
    text = page_text(PDFS / "PH_2016.06.08_Economy-Final.pdf", 4)
    assert best_lines(text, "economic mobility", ["mobility"], None, lambda s: len(s) // 4, 5000) == text


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


def test_a_document_still_being_read_is_not_judged_by_its_words():
    """OCR and tables add words until a document is complete: before that a name it lacks proves nothing."""
    from rag.records import DocumentInfo
    from rag.reader.skills import SKILLS

    class Docs:
        def __init__(self, stage):
            self.docs = [DocumentInfo(doc_id="d", file="d.pdf", pages=1, fragments={}, stage=stage)]

        def words(self):
            return {"latino", "children"}

    ask = understand("What do Latinos in New Brunswick think?")
    said = asyncio.run(SKILLS["names"].answer(ask, Docs("complete"), [], None))
    assert said.final and "“New Brunswick”" in said.reason and "Latinos" not in said.reason
    assert asyncio.run(SKILLS["names"].answer(ask, Docs("searchable"), [], None)) is None


def test_a_name_is_printed_up_to_one_slip_in_a_long_word():
    from rag.reader.skills.names import printed, vocabulary

    words = vocabulary("Sorbonne, Inc. streams over a WiFi link; cover the lid. Non-GAAP figures.")
    assert printed("Sorbone", words) and printed("Wi-Fi", words) and printed("Non-GAAP", words)
    assert not printed("HOVER", words), "a short word has too many neighbours for a slip"
    assert not printed("Apple", words)


def test_a_name_in_another_form_is_printed():
    from rag.reader.skills.names import printed, vocabulary

    words = vocabulary("Sales in Canada and Japan rose; the newsletter is out.")
    assert printed("Canadian", words) and printed("Japanese", words)
    assert not printed("Newspaper", words) and not printed("Chinese", words)


def test_a_page_begun_late_in_a_question_is_read_as_what_fits_the_time_left(monkeypatch):
    """PageReader's window with a scripted model (control flow only: it records the page text it is given and
    finds nothing). Begun at once, the 10-K's income statement is read whole; begun 45 s into a question whose
    model reads 30 tokens a second, only the page's best lines for the 5 s left, and never fewer than
    MIN_WINDOW tokens."""
    from rag import reader as page_reader
    from rag.models.structured import StructuredReply
    from rag.reader import MIN_WINDOW, PageReader
    from rag.settings import ReaderSettings

    text = ingested_page(COSTCO, 36)
    count = lambda s: len(s.split())

    class Page:
        def text(self, page):
            return text

        def tables(self, page):
            return []

    given = []

    async def model(purpose, messages, reply, max_tokens, page=0):
        given.append(messages[-1].content)
        return StructuredReply(value=reply.model_validate({"found": False, "answer": ""}), text="{}")

    monkeypatch.setattr(page_reader, "SPEED", page_reader.Speed())
    page_reader.SPEED.saw(300, 10.0)  # 30 tokens a second; the scripted model, instant, is no measure of speed
    monkeypatch.setattr(page_reader.SPEED, "saw", lambda tokens, seconds: None)
    question = understand("What was Costco's total revenue in FY2021?")
    settings = ReaderSettings(answer_s=50.0, checks=[])
    reader = PageReader(question, settings, Page(), None, count, JsonReplies(model))
    assert reader.window(0.0) == settings.page_tokens and reader.window(30.0) == 600
    assert reader.window(45.0) == reader.window(70.0) == MIN_WINDOW
    for spent in (0.0, 45.0, 35.0):
        asyncio.run(reader.read(PageRef(doc_id="d", file="c.pdf", page=36, score=1.0), spent=spent))
    whole, late, later_than_most = given
    assert count(text) <= settings.page_tokens * 1.5 and text.splitlines()[5] in whole
    assert count(late) < MIN_WINDOW * 1.3 < count(text) and "Total revenue" in late
    assert reader.window(35.0) == 450 < count(text) <= 450 * 1.5  # read whole once, as a page up to a half longer
    assert count(later_than_most) < 450 * 1.1, "the time left bounds it: not read whole"


def test_the_reading_speed_is_not_taken_from_a_page_read_again_from_memory():
    from rag.reader import Speed

    speed = Speed()
    assert speed.rate is None and speed.seconds(600, 80.0) == 7.5
    for seconds in (20.0, 0.3, 25.0, 0.2, 22.0):  # two pages read again from their kept states
        speed.saw(1000, seconds)
    assert speed.rate == 50.0 and speed.seconds(600, 80.0) == 12.0
