"""The rules that read a question's wording, in one table: each rule's pattern, what it recognises, an example it
takes and a counter-example it leaves (both checked by tests/test_wording.py), and `python -m rag rules` prints how
many questions of each evaluation set it takes. Regexes over page text, statements, formulas or model replies are
not here: they read no question.

A rule marked `normal` reads the question as rag.reader.lookup.normal writes it (lower case, words only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
           "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern
    recognises: str
    example: str
    counter: str
    normal: bool = False

    def __getattr__(self, name: str):  # search, sub, finditer, …: the pattern's own
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.pattern, name)


def _rule(pattern: str, recognises: str, example: str, counter: str, flags: int = re.I, normal: bool = False) -> Rule:
    return Rule(re.compile(pattern, flags), recognises, example, counter, normal)


_NUM = rf"(\d{{1,5}}|{'|'.join(NUMBERS)})"
_AS_PRINTED = r"(?:the\s+(?:word|words|term|phrase|name|acronym|string)\s+)?(?P<what>.{1,60}?)"
_KIND = (r"\b(?:(?P<url>(?:website |web )?(?:urls?|web ?sites?|web addresses|(?:hyper)?links))|"
         r"(?P<email>e-?mails?(?: address(?:es)?| ids?)?))\b")
_SCALE = r"\bin\s+(?:(?:usd|us\$|\$|dollars?|eur|euros?)\s+)?(thousands|millions|billions)\b"
_MORE = r"greater|higher|larger|more|bigger|longer|better"
_LESS = r"lower|smaller|less|fewer|shorter|worse"
_VS = r"(?:than|compared (?:to|with)|comparing (?:to|with)|versus|vs\.?)"
_GROWTH = r"\b(?:growth|grows?|grew|changes?|changed|increases?|increased|decreases?|decreased)\b"
_N, _0 = {"normal": True, "flags": 0}, {"flags": 0}

RULES: dict[str, Rule] = {
    # what the question asks and in which form (rag/reader/question.py)
    "page_ref": _rule(rf"\b(?:pages?|p\.|pp\.|slides?)\s*{_NUM}(?:\s*(?:-|–|to|and|&)\s*{_NUM})?\b",
                      "pages or slides named by number", "What do slides 4 to 6 cover?", "How long is the ferry route?"),
    "ordinal_page": _rule(rf"\b({'|'.join(ORDINALS)}|last|final)\s+(?:page|slide)\b",
                          "a page named by its place", "What heading opens the third slide?", "Who paged the doctor?"),
    "yes_no": _rule(r"^(is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b|\byes\b.{0,10}\bno\b",
                    "a yes/no question", "Does the bakery open on Sundays?", "When does the bakery open?"),
    "list": _rule(r"\b(list (?:all|the)|in (?:a |the )?list|list format|format of list|respectively|what are the|"
                  r"which are the|name (?:all|the)|enumerate)\b",
                  "a list asked", "Name all the towns the canal passes.", "Which town has the canal museum?"),
    "when": _rule(r"\b(?:which|what) (?:year|month|date|day)\b",
                  "a date or a year asked", "In which month did the harbour freeze?", "Why did the harbour freeze?"),
    "format": _rule(r"(?<=[.?!])\s*(?:please\s+)?(?:answer|round|express|format)\b"
                    r"(?!\s+(?:the\s+following|this|these)\b)[^.?!]*[.?!]?",
                    "an answer-format instruction after the question", "How tall is the mast? Round to metres.",
                    "Round the figure of the mast's height?"),
    "quantity": _rule(r"\b(how (?:many|much|long|old|far)|by what|(?:percent(?:age)?|proportion|share|number|amount|"
                      r"total|sum|average|mean|ratio|rate|value|price|cost|size|count|score|difference|gap)s?|"
                      r"decimal places?|round(?:ed)?|"
                      r"in (?:millions|billions|thousands|km|kilometers|miles|kg|pounds|hours|minutes|seconds|days|"
                      r"years|meters|usd|dollars|mw|kw|gb|mb))\b",
                      "a quantity asked", "How far is the lighthouse from the pier?", "Who built the lighthouse?"),
    "naming": _rule(r"(^|[,;:?]\s*)(?:(?:in|for|of|at|to|from|by) )?(which|who|whom|whose)\b",
                    "a name asked, at the question's start", "To whom did the mayor hand the keys?",
                    "How many keys did the mayor hand over?"),
    "which_late": _rule(r"[,;:?.]\s*which\b", "a name asked after a lead-in", "Of the three ferries, which is oldest?",
                        "The oldest ferry is which one?"),
    "open": _rule(r"^(?:why|how (?!many|much|long|old|far)|describe|explain|"
                  r"what (?:does|do|did) .{0,60}\b(?:mean|say|suggest|show))\b",
                  "an open question answered by a sentence", "Explain how the sluice gates work.",
                  "How many sluice gates are there?"),
    "choices": _rule(r"\?\s*(?P<opts>[^?]+?\bor\b[^?]+)\?\s*$|\bamong (?:the [^:,?]{1,40}: )?"
                     r"(?P<among>[^:?]+?,[^:?]+?\b(?:and|or)\b[^:?,]+?),\s*(?:which|what|who)\b",
                     "choices offered", "Which ferry is faster? The Osprey, or the Tern?",
                     "Which ferry is faster on the north crossing?"),
    "split_choices": _rule(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", "where one choice ends and the next begins",
                           "oats, barley or rye", "oats"),
    "scale": _rule(_SCALE, "the scale a value is asked in", "What were sales in USD millions?",
                   "What were sales in the millennium year?"),
    "scale_said": _rule(r",?\s*" + _SCALE + r"(?:\s+of\s+(?:us\s+)?dollars)?", "the scale's words, taken out of the task",
                        "What was the levy, in millions of dollars?", "What was the levy in dollars?"),
    "empty_brackets": _rule(r"\s*\(\s*\)", "brackets left empty", "the levy ( ) in 2020", "the levy (net) in 2020", **_0),
    "date_form": _rule(r"\b(?:YYYY|YY|MM|DD|Month|Day|Year)(?:[-/., ]{1,2}(?:YYYY|YY|MM|DD|Month|Day|Year)){1,2}\b",
                       "a date's form spelled out", "When did the dam open? Answer as DD/MM/YYYY.",
                       "Which year did the dam open?", **_0),
    "date_part": _rule(r"YYYY|YY|MM|DD|Month|Day|Year", "one part of a date's form", "YYYY", "yyyy", **_0),
    "decimals": _rule(r"\b(\d|one|two|three|four)\s+decimal", "decimal places asked",
                      "Give the yield to two decimal places.", "Give the yield as a decimal."),
    "counts": _rule(r"\bhow many\s+(?!(?:[\w-]+\s+){0,2}(?:shares?|times|points?|percent|percentage|dollars?|"
                    r"millions?|billions?|thousands?|days?)\b)",
                    "a count of things, not an amount", "How many kilns does the pottery run?",
                    "How many days did the kiln burn?"),
    "structure": _rule(r"\bhow many (pages?|slides?|appendi(?:x|ces)|figures?|charts?|images?|pictures?|diagrams?|"
                       r"tables?)\b", "a count of the document's own parts", "How many tables does the brochure hold?",
                       "How many chairs does the café seat?"),
    "name_word": _rule(r"(?<![\w'’-])[A-Za-z][\w&'’-]*", "a word that may name something", "Osprey", "42 -- ?", **_0),
    "sentence_start": _rule(r"(^|[.?!:;\"“(]\s*)$", "the start of a sentence, before a word", "It rained. ",
                            "It rained on", **_0),
    "title_case": _rule(r"\S\s+(?:The|Of|In|On|And|Is|Are|For|To|A|An)\s", "a question in title case",
                        "Who Won The Regatta?", "Who won the regatta?", **_0),
    "name_run": _rule(r"(?<![.?!:;\"“(]\s)(?<!^)\b((?:[A-Z][a-z][\w'’-]*\s+){1,4}[A-Z][a-z][\w'’-]*)",
                      "two capitalised words or more in a row", "Who coached Harbour Rowing Club?",
                      "Who coached the rowing club?", **_0),
    "times": _rule(r"\bhow many times (?:does|do|did|is|are|was|were|has|have)\s+" + _AS_PRINTED +
                   r"\s+(?:been\s+|be\s+)?(?:appear|occur|mention|cite|use|print|written|referenc|repeat|show)\w*\b",
                   "a phrase's times printed", "How many times does the word barley appear?",
                   "How many times did the mill flood?"),
    "pages_on": _rule(r"\bon (?:which|what) (?:pages?|slides?) (?:is|are|does|do|did|was|were)\s+(?:there\s+)?"
                      + _AS_PRINTED + r"\s+(?:printed|mentioned|written|shown|cited|given|listed|appear\w*)\b",
                      "the pages that print a phrase", "On which pages is Millbrook mentioned?",
                      "On which page does the timetable start?"),
    "pages_with": _rule(r"\b(?:which|what|how many) (?:pages?|slides?)\s+(?:does \w+ |do \w+ )?(?:mention|print|"
                        r"contain|include|show|cite|refer to|have|has|use)s?\s+" + _AS_PRINTED + r"\s*[?.]?\s*$",
                        "the pages that print a phrase", "Which pages mention Millbrook?",
                        "Which pages are in colour?"),
    "kind": _rule(_KIND, "a kind of item printed: web or e-mail addresses", "the hyperlinks",
                  "the linked chapters"),
    "kind_items": _rule(r"\b(?:how many|list (?:all )?(?:of )?(?:the )?|what are (?:all )?the)\s*(?:\w+\s+){0,2}?" + _KIND,
                        "web or e-mail addresses counted or listed", "How many e-mail addresses are given?",
                        "Where is the e-mail desk?"),
    "quoted_phrase": _rule(r"[\"“'‘](.+?)[\"”'’]", "a quoted phrase", "“tidal mill”", "tidal mill", **_0),
    "article": _rule(r"^(?:the|a|an)\s+", "an article before a phrase", "the tidal mill", "tidal mill"),
    # a question of two or three facts, and its parts (rag/reader/plan.py)
    "difference": _rule(r"\b(?:gap|difference)\b|\bhow (?:many|much) (?:more|less|fewer|lower|higher|greater|larger|"
                        r"smaller|bigger)\b|\bby (?:what|how much) (?:percentage|margin|amount)\b",
                        "a difference asked", "How many more bikes than cars crossed?", "How many bikes crossed?"),
    "sum": _rule(r"\b(?:in total|(?<!highest )(?<!lowest )(?<!higher )(?<!lower )total (?:number|percentage|amount|"
                 r"count|share) of|sum of|combined|collectively|altogether|added together)\b",
                 "a sum asked", "What did the two mills grind altogether?",
                 "Which mill had the highest total count of sacks?"),
    "average_of": _rule(r"\baverage of\b", "an average of things named", "What is the average of the two tides?",
                        "What is the average tide?"),
    "compare": _rule(rf"\bwhich\b[^?]*?\b(?P<more>{_MORE})\b|\bwhich\b[^?]*?\b(?P<less>{_LESS})\b",
                     "a choice by value", "Which pier is longer, east or west?", "Which pier has a café?"),
    "both": _rule(r"\S\s+(?:and|&)\s+\S", "things named side by side", "salt and pepper", "salt or pepper"),
    "than": _rule(rf"\b{_VS}\s+\S", "one thing against another", "taller than the spire", "taller still"),
    "than_at": _rule(rf"\s+{_VS}\s+", "where a thing compared begins", "oats versus rye", "oats, rye"),
    "quoted": _rule(r"[\"“`'‘]([^\"”`'’]{1,120})[\"”`'’]", "a quoted name", "the 'Tern' ferry", "the Tern ferry",
                    **_0),
    "token": _rule(r"[^\s,?!;:]+", "a word of the question", "ferry", " , ? ", **_0),
    "join": _rule(r"\s*(?:,\s*(?:and|&)?|\s(?:and|&))\s+", "what joins two quoted names", ", and ", " or "),
    "and": _rule(r",?\s+(?:and|&)\s+", "an and between names", "oats and rye", "oats or rye"),
    "comma_end": _rule(r",\s*$", "a comma before a name", "oats, ", "oats", **_0),
    "one_fact_how_much_is": _rule(rf"\bhow much (?:{_MORE}|{_LESS}|greater)\s+(is|was|are|were)\b",
                                  "how much more … is, as one fact's what is", "How much higher is the spire?",
                                  "How much is the spire?"),
    "one_fact_how_many_more": _rule(rf"\bhow (many|much) (?:{_MORE}|{_LESS}|greater)\b",
                                    "how many more, as one fact's how many", "How many more swans came?",
                                    "How many swans came?"),
    "one_fact_share_gap": _rule(r"\b(percentage|share|proportion)\s+(?:gap|difference)\s+(?:between|of|in)\b",
                                "a share's gap, as one share", "the share gap between towns", "the share of towns"),
    "one_fact_gap": _rule(r"\b(?:the\s+)?(?:absolute\s+)?(?:gap|difference)\s+(?:between|of|in)\s+",
                          "a gap's words, taken out", "the difference between tides", "a different tide"),
    "one_fact_sum_of": _rule(r"\b(?:the\s+)?(?:sum|total)\s+of\s+", "a sum's words, taken out", "the total of sacks",
                             "the total sacks"),
    "one_fact_total": _rule(r"\btotal\s+(number|percentage|amount|count|share)\b", "a total's word, taken out",
                            "the total number of sacks", "the total of sacks"),
    "one_fact_in_total": _rule(r"\s*\b(?:in total|combined|collectively|altogether|added together)\b",
                               "a sum's closing words, taken out", "sacks milled in total", "sacks milled"),
    # a figure of the statements (rag/reader/skills/metric.py, definitions.py, plausible.py, filings.py)
    "percent": _rule(r"%|\bpercent", "a percentage asked", "By how many percent did fees rise?", "How did fees rise?"),
    "metric_more": _rule(r"\b(?:change|growth|grows?|increases?|decreases?|difference|cagr|compared?|versus|vs|average|"
                         r"mean|per|ratio|margin|share|portion|percentage of|to|from|between)\b",
                         "more asked of a figure than the figure", "fees per member", "fees of members", **_N),
    "growth": _rule(_GROWTH, "a growth or a change", "how much did fees grow", "how high were fees", **_N),
    "span": _rule(r"\b(?:from|to|between)\b", "a span of years", "fees from 2019", "fees in 2019", **_N),
    "change": _rule(_GROWTH + r"|\b(?:differences?|moved?|declined?|fell|rose|improved?|"
                    r"expand(?:s|ed)?|expansion|contracted|contraction)\b",
                    "a change in any words", "the margin expanded", "how wide was the margin", **_N),
    "average": _rule(r"\b(?:average|mean)\b", "an average", "the mean margin", "the meaning of margin", **_N),
    "compound": _rule(r"\b(?:compound|compounded|cagr|annual|annually|annualized|average|per year|a year)\b",
                      "a rate per year", "growth per year", "growth over the decade", **_N),
    "defined": _rule(r"(?:(?P<named>(?:[\w&%'-]+ ){1,6})is defined as|\bdefine (?P<name>(?:[\w&%'-]+ ){1,6}?)as|"
                     r"(?P<listed>(?:[\w&%'-]+ ){0,5}[\w&%'-]+), defined as)"
                     r":?\s*(?P<formula>.+?)(?:\.(?:\s|$)|\?|;|$)",
                     "a definition the question states", "Cushion is defined as cash less debt.",
                     "How is the cushion defined?"),
    "definition_more": _rule(r"\b(?:less|minus|plus|divided|times|over|change|growth|difference|average|mean|ratio|"
                             r"margin|per|percentage|share|cagr|compared?|versus|vs)\b",
                             "more asked than the definition gives", "cushion less rent", "the cushion", **_N),
    "asked_of_year": _rule(r"\bfy ?\d{4}\W+(?P<asked>[\w&' -]+?)\s*\?", "what is asked of a fiscal year",
                           "What is the FY2031 cushion?", "What is the cushion in 2031?"),
    "growth_or_cagr": _rule(r"\b(?:growth|grows?|grew|cagr|changes?|changed|increases?|increased|decreases?|decreased|"
                            r"year over year|yoy)\b", "a growth, for its range", "fees year over year",
                            "fees this year", **_N),
    "margin": _rule(r"\bmargins?\b", "a margin: a share of revenue", "the pretax margin", "the markup on cost", **_N),
    "percent_of": _rule(r"\b(?:percentage|percent|(?<!per )(?:share|portion|proportion|fraction)) of\b",
                        "one figure as a part of another (a share only of the widest wholes)",
                        "rent as a share of fees", "fees per share of stock", **_N),
    "turnover_days": _rule(r"\b(?:turnover|days)\b", "a turnover or days, above nil", "stock turnover",
                           "stock turned over", **_N),
    "cycle": _rule(r"\bcycle\b", "a cycle, which may be below nil", "the cash cycle", "the cash cyclist", **_N),
    "form_asked": _rule(r"\b(10-?k|10-?q|20-?f|40-?f)\b", "a filing's form", "the 20-F for 2031", "the 20 filings"),
    # which item ranks at an extreme (rag/reader/ranks.py)
    "extreme": _rule(r"\b(?:(second|third|2nd|3rd)[\s-]+)?(highest|largest|greatest|biggest|most|top|maximum|"
                     r"lowest|smallest|least|fewest|minimum)\b",
                     "an extreme asked", "Which orchard grew the fewest pears?", "Which orchard grew pears?"),
    "rise": _rule(r"\b(?:gain(?:ed|s)?|gr[eo]wn?|grew|increas\w*|ris(?:e|en|es)|rose|chang\w*|improv\w*)\b",
                  "a rise between years", "Which orchard's yield rose most?", "Which orchard's yield was best?"),
    "fall": _rule(r"\b(?:drop\w*|declin\w*|fall\w*|fell|decreas\w*|shr[au]nk)\b", "a fall between years",
                  "Which orchard's yield shrank most?", "Which orchard's yield was worst?"),
    "which_who": _rule(r"\b(?:which|who)\b", "an item asked", "Who picked most?", "How many were picked?"),
    # where a skill looks, and what it leaves to a page read (rag/reader/skills, rag/reader/cells.py)
    "part_named": _rule(r"\b(?:sections?|chapters?|appendi(?:x|ces)|figures?|tables?|charts?|images?|pictures?|photos?|"
                        r"diagrams?|graphs?|logos?)\b", "a part the text layer does not bound",
                        "How often does Millbrook appear in chapter two?", "How often does Millbrook appear?"),
    "what_is": _rule(r"\s*what(?:'s| is| was| are| were)\b", "a what-is question", "What was the toll?",
                     "Whatever the toll?"),
}
