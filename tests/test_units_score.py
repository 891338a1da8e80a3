"""An analyst's metric scored in the unit its question asks (rag/eval/units.py), by the fin set's rule."""

from rag.eval.units import metric_kind, score


def test_a_metric_is_right_within_its_rounding_or_one_percent():
    assert score("24.26", "24.26", "ratio") and score("24.3", "24.26", "ratio"), "within 1%"
    assert not score("24.9", "24.26", "ratio")
    assert score("1.9", "1.9%", "percent") and score("1.94%", "1.9%", "percent"), "half a unit of its last decimal"
    assert not score("2.0", "1.9%", "percent") and not score("2.0%", "1.9%", "percent")
    assert score("0.019", "1.9%", "percent"), "a fraction without % is the same share"
    assert not score("0.019%", "1.9%", "percent")
    assert score("12645", "$12645.00", "usd_millions") and score("$12,700 million", "$12645.00", "usd_millions")
    assert not score("12,645,000", "$12645.00", "usd_millions"), "thousands are not the millions asked"
    assert score("0.4", "$0.40", "usd_billions") and not score("400", "$0.40", "usd_billions")
    assert not score("Not answerable", "$0.40", "usd_billions") and not score("", "1.73", "ratio")


def test_a_metric_question_is_named_by_what_it_asks():
    assert metric_kind("What is the FY2017 - FY2019 3 year average of capex as a % of revenue? Answer in percents.",
                       "percent") == "average"
    assert metric_kind("What is Adobe's year-over-year change in unadjusted operating income from FY2015 to FY2016?",
                       "percent") == "growth"
    assert metric_kind("What is the FY2019 fixed asset turnover ratio? It is revenue / (average PP&E between FY2018 "
                       "and FY2019).", "ratio") == "ratio", "an average in its definition does not make it one"
    assert metric_kind("What is Boeing's year end FY2018 net property, plant, and equipment (in USD millions)?",
                       "usd_millions") == "lookup"
