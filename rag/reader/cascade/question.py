"""What code can tell from a question before any model reads it: the answer's type, whether it needs
arithmetic, the terms the evidence must cover, and the names the documents must contain.

Nothing here looks at a benchmark's answer format: the type is predicted from the question's words.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from rag.text import STOPWORDS
from rapidfuzz.distance import Levenshtein

AnswerType = Literal["number", "text", "list", "yes_no", "choice"]

_YES_NO = re.compile(r"^(is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", re.I)
_CHOICE = re.compile(r"\bor\b", re.I)
_LIST = re.compile(
    r"\b(list (?:all|the)|in (?:a |the )?list|list format|format of list|respectively|what are the|which are the|"
    r"name (?:all|the)|enumerate)\b", re.I)
_NUMBER = re.compile(
    r"\b(how many|how much|what (?:is the |was the )?(?:percentage|proportion|share|number|amount|total|ratio|rate)|"
    r"revenues?|sales|income|profits?|earnings|goodwill|assets|liabilities|equity|cash|debt|costs?|expenses|price|"
    r"margins?|scores?|accuracy|performance|f1|size|population|counts?|value|per share|"
    r"percentage|ratio|decimal places?|in millions?|in billions?|round(?:ed)? (?:your|the)? ?answer|gap|"
    r"difference|average|sum of|total)\b", re.I)
_COMPUTE = re.compile(
    r"\b(ratio|gap|difference|differ|change|increase|decrease|growth|grew|in total|total number|combined|"
    r"sum|average|mean|times|return on|margin|turnover|coverage|per share|decimal places?|round(?:ed)?|"
    r"how many more|how much more|percentage points?|more than|less than|compared|free cash flow|working capital|"
    r"ebitda|payout|days (?:payable|sales|inventory))\b", re.I)
_STRUCTURE = re.compile(
    r"\b(how many (?:pages?|sections?|chapters?|appendi\w+|figures?|tables?|charts?|images?|pictures?|diagrams?|"
    r"slides?|references|headings?|parts?)|appendi(?:x|ces)|chapters?|sections? \d|title of|(?:on|in) (?:the )?"
    r"(?:first |last |final )?(?:page|slide)|which (?:page|slide)|what (?:page|slide))\b", re.I)
_COUNT = re.compile(r"\bhow many\b", re.I)
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_MONTH_YEAR = re.compile(rf"\b(?:{'|'.join(_MONTHS)})\.?\s+(?:1[89]\d\d|20\d\d)\b", re.I)
_NUMBERED = re.compile(r"\b(?:figure|fig\.|table|section|chapter|appendix|exhibit)\s+(?:[A-Z]|\d+(?:\.\d+)*)\b", re.I)
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+(?:-[A-Z0-9]+)*\b")
_CAPITALISED = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z][\w-]*")
# A proper name of several words ("Florida Department of Health"): the documents must hold it as a phrase.
_PROPER_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z][\w-]*(?:\s+(?:(?:of|and|for|the)\s+)?[A-Z][a-z][\w-]*)+")
_QUOTED = re.compile(r"\"([^\"]{3,60})\"|“([^”]{3,60})”|‘([^’]{3,60})’|(?<!\w)'([^']{3,60})'(?!\w)")
_EXAMPLE = re.compile(r"\b(?:e\.g\.,?|for example:?)\s*(\[[^\]]*\]|\"[^\"]*\"|\S+)", re.I)
_FISCAL = re.compile(r"\bFY\s?'?((?:19|20)\d\d)\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’-]+|\d[\d,.]*%?")

# Words that ask rather than name: never a term the evidence must hold.
_NOT_NAMES = {"According", "Among", "Please", "Write", "Answer", "Directly", "Represent", "Round", "Based",
              "Float", "Integer", "List", "String", "Int", "Str", "Yes", "No", "FY", "Q", "Figure", "Fig", "Table",
              "Section", "Chapter", "Appendix", "Exhibit", "Page", "Slide"}


class QuestionInfo(BaseModel):
    answer_type: AnswerType
    options: list[str] = []
    compute: bool
    count: bool
    structural: bool
    terms: list[str]
    names: list[str]


def analyse(question: str) -> QuestionInfo:
    choices = options(question)
    return QuestionInfo(answer_type="choice" if choices else answer_type(question), options=choices,
                        compute=needs_computation(question),
                        count=bool(_COUNT.search(question)),
                        structural=bool(_STRUCTURE.search(question)), terms=key_terms(question), names=grounding_names(question))


def answer_type(question: str) -> AnswerType:
    q = question.strip()
    if re.search(r"\byes\b.{0,10}\bno\b", q, re.I) or (_YES_NO.match(q) and not _CHOICE.search(q)):
        return "yes_no"
    if _LIST.search(q):
        return "list"
    if re.search(r"\bhow (many|much)\b|\b(which|what) (year|month|date|day|number|amount|percentage|share)\b", q, re.I):
        return "number"
    # a name, even when it mentions a percentage; late in a long question only "…, which X"
    if re.search(r"(^|[,;:?]\s*)(?:(?:in|for|of|at|to|from|by) )?(which|who|whom|whose)\b", q[:60], re.I) or \
            re.search(r"[,;:?.]\s*which\b", q, re.I):
        return "text"
    if _NUMBER.search(q):
        return "number"
    return "text"


_AFTER_QUESTION = re.compile(r"\?\s*(?P<opts>[^?]+?\bor\b[^?]+)\?\s*$", re.I)
_AMONG = re.compile(r"\bamong (?:the [^:,?]{1,40}: )?(?P<opts>[^:?]+?,[^:?]+?\b(?:and|or)\b[^:?,]+?),\s*(?:which|what|who)\b", re.I)
_SPLIT_OPTIONS = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", re.I)


def options(question: str) -> list[str]:
    """The choices a question offers ("…? X, or Y?", "Among X, Y and Z, which …"), when it offers some."""
    match = _AFTER_QUESTION.search(question) or _AMONG.search(question)
    if not match:
        return []
    found = [o.strip(" .'\"") for o in _SPLIT_OPTIONS.split(match.group("opts")) if o.strip(" .'\"")]
    if len(found) < 2 or any(len(o.split()) > 8 for o in found):
        return []
    last = found[-1].split()
    if len(last) > 1 and all(len(o.split()) == 1 for o in found[:-1]):  # "operations, investing and financing activities"
        found = [f"{o} {last[-1]}" for o in found[:-1]] + [found[-1]]
    return found


def needs_computation(question: str) -> bool:
    return bool(_COMPUTE.search(question))


def key_terms(question: str) -> list[str]:
    """The question's content words and numbers, lower-cased, in order."""
    words = [w.lower().strip("'’.,") for w in _WORD.findall(question)]
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS and len(w) > 1))


def grounding_names(question: str) -> list[str]:
    """What the question names that a document answering it must contain: years and month-year dates,
    numbered figures/tables/sections, quoted phrases, acronyms and capitalised words (not the first)."""
    q = _EXAMPLE.sub(" ", question.replace("’", "'"))
    q = _FISCAL.sub(lambda m: f"fiscal {m.group(1)}", q)
    # A section or chapter is named by its number in headings ("3.3 Post-hoc Correction"); figures and
    # tables by their caption's own words ("Figure 7").
    numbered = [re.sub(r"^(?:section|chapter)\s+", "", n, flags=re.I) for n in _NUMBERED.findall(q)]
    names = _MONTH_YEAR.findall(q) + _YEAR.findall(q) + numbered
    names += [next(g for g in m if g) for m in _QUOTED.findall(q) if len(next(g for g in m if g).split()) <= 6]
    if sum(c.isupper() for c in q) < 0.5 * sum(c.isalpha() for c in q):  # a question in capitals names nothing
        names += _ACRONYM.findall(q)
        found = _CAPITALISED.findall(q.strip())
        if not needs_computation(q):  # a computed measure ("Return on Capital Employed") is named by the asker
            found += _PROPER_NAME.findall(q.strip())
        names += [w.removesuffix("'s") for w in found]
    return list(dict.fromkeys(n for n in names if n not in _NOT_NAMES and n.lower() not in _MONTHS
                              and n.lower() not in STOPWORDS))


def missing_names(names: list[str], text: str) -> list[str]:
    """The names a text does not contain (case-insensitive; long single words allow a typo)."""
    low = " ".join(text.lower().replace("’", "'").split())
    words = None
    missing = []
    for name in names:
        needle = name.lower()
        if _contains(low, needle):
            continue
        if " " not in needle and len(needle) >= 7:
            words = words if words is not None else set(_WORD.findall(low))
            if any(abs(len(w) - len(needle)) <= 2 and Levenshtein.distance(w, needle) <= 2 for w in words):
                continue
        missing.append(name)
    return missing


def missing_options(choices: list[str], text: str) -> list[str]:
    """The options a text does not mention: most of an option's content words are absent (an option is a
    phrase, worded as the asker likes: "interviewed by cellphone" for "cell phone interviews")."""
    return [c for c in choices if len(missing_names(terms := key_terms(c), text)) > len(terms) / 2]


def _contains(text: str, needle: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None
