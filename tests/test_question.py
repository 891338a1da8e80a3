"""`understand`: what code tells from a question before any model reads it, on questions of every kind of
document (the wide set's seven kinds), read from their words alone."""

import pytest

from rag.reader.question import choices, named_pages, understand
from rag.records import LAST_PAGE


@pytest.mark.parametrize(("kind", "question", "expected"), [
    ("Financial report", "What was Best Buy's gross profit in fiscal 2023?", {"asked": "text", "years": ["2023"]}),
    ("Financial report", "What was the total of current liabilities at the end of 2017? Answer in USD millions.",
     {"asked": "number", "scale": "million", "years": ["2017"]}),
    ("Financial report", "What are the bankers' names associated with GODFREY PHILLIPS INDIA LIMITED?", {"asked": "list"}),
    ("Financial report", "What is the ratio of net income to revenue in 2022? Round your answer to two decimal places.",
     {"asked": "number", "decimals": 2}),
    ("Research report / Introduction", "Which group accounts for the second largest share in terms of religious "
     "demographics in Slide 4 in 2014?", {"asked": "text", "pages": [4], "years": ["2014"]}),
    ("Research report / Introduction", "Looking at the Slide of country overview, by what percent did \"Smartphone "
     "Penetration\" grow between 2013 and 2015?", {"asked": "number", "years": ["2013", "2015"]}),
    ("Academic paper", "How many more claims does the Wiki Table datasets have comparing to scientific articles datasets?",
     {"asked": "number", "structural": None}),
    ("Academic paper", "How many figures are there in the paper?", {"asked": "number", "structural": "figure"}),
    ("Guidebook", "For the users with the safety approval of UL Listed and CSA, what is the second bullet point for "
     "safety?", {"asked": "text"}),
    ("Guidebook", "How do you clean the screen of the display?", {"asked": "text", "open": True}),
    ("Administration/Industry file", "What is INF SERCRL LLP FAX No on page fourteen?", {"asked": "text", "pages": [14]}),
    ("Administration/Industry file", "How many quizzes are there in units 4, 5, and 6 combined?",
     {"asked": "number", "structural": None}),
    ("Tutorial/Workshop", "In the two years 2013-2014, in which year is there a lower percentage of users from rural "
     "locations?", {"asked": "number", "years": ["2013", "2014"]}),
    ("Tutorial/Workshop", "Does the slide on page 7 show Twitter's metrics? Directly answer 'yes' or 'no'.",
     {"asked": "yes_no", "pages": [7]}),
    ("Brochure", "How many sampled questions illustrated in this slides?", {"asked": "number"}),
    ("Brochure", "What is the top speed of the Camry XSE, in km?", {"asked": "number", "scale": None}),
])
def test_understand_reads_each_kind_of_question(kind, question, expected):
    q = understand(question)
    got = {key: getattr(q, key) for key in expected}
    assert got == expected, (kind, q)
    assert q.terms and all(t == t.lower() for t in q.terms)


def test_the_one_page_reference_parser():
    assert named_pages("What is on page 5 and pages 30-32?") == [5, 30, 31, 32]
    assert named_pages("the fax number on page fourteen, then the last page") == [14, LAST_PAGE]
    assert named_pages("the third slide") == [3]
    assert named_pages("What was revenue in 2023?") == []


def test_choices_the_question_offers_become_its_answers():
    assert choices("Which one is greater in population? Foreign born Latinos, or the Latinos interviewed by cellphone?") \
        == ["Foreign born Latinos", "the Latinos interviewed by cellphone"]
    assert choices("Among operations, investing, and financing activities, which brought in the most cash?") \
        == ["operations activities", "investing activities", "financing activities"]


def test_the_model_reads_the_question_without_what_code_carries_out():
    lookup = understand("What is the FY2023 total current liabilities for Best Buy? Answer in USD millions. "
                        "Base your judgments on the balance sheet.")
    assert lookup.task == ("What is the FY2023 total current liabilities for Best Buy? Base your judgments on the "
                           "balance sheet.") and lookup.scale == "million"
    assert understand("What were total assets at the end of fiscal 2023, in USD millions?").task == \
        "What were total assets at the end of fiscal 2023?"
    rounded = understand("What is the debt to EBITDA ratio in FY2021? Round your answer to three decimal places.")
    assert rounded.task == "What is the debt to EBITDA ratio in FY2021?" and rounded.decimals == 3
    assert understand("Answer this: who signed the letter?").task == "Answer this: who signed the letter?"
    preamble = understand("We keep the figures in one place. Please answer the following question: how much (in USD "
                          "millions) did the club spend on boats in FY2020?")
    assert preamble.task == ("We keep the figures in one place. Please answer the following question: how much did "
                             "the club spend on boats in FY2020?"), "the question after a preamble is kept, no '()'"
    assert understand("On what date was the certificate issued?").asked == "text", "a date is copied as printed"
    assert understand("In which year was the company founded?").asked == "number"


def test_the_scale_a_question_asks_for():
    assert understand("What were total assets? Answer in USD millions.").scale == "million"
    assert understand("How much cash, in thousands of dollars?").scale == "thousand"
    assert understand("What was revenue?").scale is None


def test_the_names_a_question_asks_about():
    assert understand("Who were the auditors of Acme Corp. in 2019?").names == ["Acme", "Corp"]
    assert understand("What score did GPT-4 and LLaVa reach on MMLU Physics? Answer in %.").names == \
        ["LLaVa", "MMLU", "Physics"], "a word with a digit names a model's version, not what a document must print"
    assert understand("According to the report, What is Figure 3's Source?").names == ["Source"], \
        "a sentence's first word, figures, tables and pages are no names"
    assert understand("what is advertising expense of Netflix in FY 2015? Answer in millions.").names == ["Netflix"]
    assert understand("WHICH YEAR DID THE SECURITY DIAGRAM DISCUSS?").names == [], "case tells nothing in capitals"
    assert understand("how many pages does the document have?").names == []
