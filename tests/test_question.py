"""What code tells from a question before any model reads it (rag/reader/cascade/question.py)."""

import pytest

from rag.reader.cascade.question import (
    analyse,
    answer_type,
    grounding_names,
    missing_names,
    missing_options,
    options,
)


@pytest.mark.parametrize(("question", "kind"), [
    ("What was Best Buy's gross profit in fiscal 2023?", "number"),
    ("How many domestic stores did the company have?", "number"),
    ("What is the percentage of people who do not go online?", "number"),
    ("Which subgroup gained the most confidence between 2008 and 2015?", "text"),
    ("Who produced the document that was revised in May 2016?", "text"),
    ("Does Section 3.3 cite more papers than Section 3.1? Directly answer 'yes' or 'no'.", "yes_no"),
    ("Is the survey's margin of error above 3 points?", "yes_no"),
    ("Please list the F1 scores for each dataset.", "list"),
    ("How many strategies are plotted for each stage, respectively? Write the answer in list format.", "list"),
    ("How does the company record merchandise inventories?", "text"),
    ("According to the survey, among households grouped by their current finances, which group holds the highest "
     "percentage expecting things to get worse?", "text"),
    ("What is the percentage gap between the youngest and the oldest group that disapproves of the president, who "
     "spoke last?", "number"),
])
def test_answer_type_is_predicted_from_the_question(question, kind):
    assert answer_type(question) == kind


def test_choices_the_question_offers():
    assert options("Which one is greater in population? Foreign born Latinos, or the Latinos interviewed by cellphone?") \
        == ["Foreign born Latinos", "the Latinos interviewed by cellphone"]
    assert options("Among operations, investing, and financing activities, which brought in the most cash?") \
        == ["operations activities", "investing activities", "financing activities"]
    assert options("Among the three strategies: early fusion, late fusion, and hybrid fusion, which one is most used?") \
        == ["early fusion", "late fusion", "hybrid fusion"]
    assert options("Which subgroup gained the most confidence?") == []
    assert analyse("Which is larger? Revenue, or cost?").answer_type == "choice"


def test_names_a_document_must_contain():
    names = grounding_names("According to the survey of April 25 - May 1, 2018, what do Joe Biden's supporters in FY2023 "
                            "say about Figure 7, per the HAQ report? Write it as a list, e.g. [\"A\", \"B\"]")
    assert {"2018", "2023", "Figure 7", "HAQ", "Joe", "Biden"} <= set(names)
    assert not {"According", "Write", "A", "B", "May"} & set(names), "question words and examples name nothing"
    assert grounding_names("WHAT IS THE 2nd OBJECTIVE OF REGULATORY EFFICIENCY?") == []


def test_missing_names_tolerate_case_quotes_and_a_typo_in_long_words():
    text = "The Democratic Party’s ratings, Figure 5 and the 2018 survey by Pew Research Center"
    assert missing_names(["democratic", "Demoncratic", "Pew", "Party's", "Figure 5", "2018"], text) == []
    assert missing_names(["2022", "Figure 7", "HAQ", "FEVER"], text + " FEVEROUS") == ["2022", "Figure 7", "HAQ", "FEVER"]


def test_questions_about_the_document_itself():
    assert analyse("How many appendices appear in the document?").structural
    assert analyse("What is the title of the diagram on page 9?").structural
    assert not analyse("What was the revenue in 2023?").structural


def test_an_option_is_mentioned_when_most_of_its_words_are():
    text = "Foreign-born Latinos were 795 of the sample; 1,051 cell phone interviews; landline interviews."
    assert missing_options(["Foreign born Latinos", "the Latinos interviewed by cellphone"], text) == []
    assert missing_options(["Martian settlers", "Latinos by landline"], text) == ["Martian settlers"]


def test_a_proper_name_of_several_words_must_stand_as_a_phrase():
    text = "Florida Department of Health. The Department funds research in Science and Technology."
    asked = grounding_names("What is the address of Florida Department of Science?")
    assert "Florida Department of Science" in asked
    assert missing_names(asked, text) == ["Florida Department of Science"], "each word is there, the name is not"
    assert missing_names(grounding_names("Who heads the Florida Department of Health?"), text) == []
    measure = "What is the Return on Capital Employed for fiscal 2023? Round to two decimal places."
    assert "Return on Capital Employed" not in grounding_names(measure), "a computed measure is the asker's name"
