"""The words a page prints in a colour, or on a coloured ground ("the terms set in green", "the rows shaded
in grey", "the label on a purple background"): looked up by code in what the page's text layer and drawings say of
their colours (rag/ingest/colours.py), listed or counted, each with its page; none in that colour is said, not
guessed, unless the pages looked at are scans, whose colours are not read."""

from __future__ import annotations


from rag.reader.answer import Solution
from rag.reader.pages import PageRef
from rag.reader.program import run_program
from rag.reader.question import Question, spelled_number
from rag.reader.skills.base import Documents, JsonModel, Read, register
from rag.reader.skills.pictures import PICTURES_UNREAD
from rag.reader.wording import RULES
from rag.records import LAST_PAGE

_MAX_LISTED = 12  # more runs than this across the documents: the question means the page the search found


@register
class Colours:
    name, reads = "colours", "documents"

    def applies(self, question: Question) -> bool:
        return question.colour is not None

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None:
        """The words in the colour asked, on the pages named, the page where the search found the figure or table
        named, or anywhere in the documents: listed in reading order, or counted."""
        pages, where = in_scope(question, documents, hits)
        runs = _in_colour(question, pages)
        what = f"on a {question.colour} ground" if question.on_ground else f"in {question.colour}"
        if not runs:
            scanned = any(p.scanned for _, p in pages)
            return Read(reason=PICTURES_UNREAD if scanned else f"no words are printed {what} {where}", final=True)
        if question.asked != "number" and RULES["of_them"].search(question.text):
            return None
        return Read(solution=_listed(question, runs, what))


def _listed(question: Question, runs: list, what: str) -> Solution:
    texts = [r.text for _, r in runs]
    if question.asked == "number":
        program = f"printed = {texts!r}  # {what}\nans = len(printed)"
    else:
        texts = list(dict.fromkeys(texts))
        first = RULES["first_n"].search(question.text)
        n = first and spelled_number(first.group(1))
        picked = f"[{', '.join(f'printed[{i}]' for i in range(min(n, len(texts))))}]" if first else "printed"
        program = f"printed = {texts!r}  # {what}\nans = {picked}"
    value = run_program(program)
    where = dict.fromkeys((d.doc_id, d.file, r.page) for d, r in runs)
    pages = [PageRef(doc_id=d, file=f, page=p) for d, f, p in where]
    if not isinstance(value, list):
        return Solution(skill="colours", asked="number", value=str(value), program=program, by="code", pages=pages)
    return Solution(skill="colours", asked="list" if len(value) > 1 else "text", value="; ".join(value), items=value,
                    program=program, by="code", pages=pages)


def in_scope(question: Question, documents: Documents, hits) -> tuple[list, str]:
    """The pages (document, page colours) the question looks at, and where that is, as said."""
    every = [(d, p) for d in documents.docs for p in documents.colours(d.doc_id)]
    if question.pages:
        named = {(d.doc_id, d.pages if n == LAST_PAGE else n) for d in documents.docs for n in question.pages}
        return [(d, p) for d, p in every if (d.doc_id, p.page) in named], "on the pages named"
    modality = "image_caption" if RULES["figure_named"].search(question.text) else \
        "table" if RULES["table_named"].search(question.text) else None
    found = next((h.fragment for h in hits if h.fragment.modality == modality), hits[0].fragment if hits else None)
    if found is None or modality is None and len({r.text for _, r in _in_colour(question, every)}) <= _MAX_LISTED:
        return every, "in the documents"
    return [(d, p) for d, p in every if (d.doc_id, p.page) == (found.doc_id, found.page)], \
        f"on p. {found.page}, where the search found it"


def _in_colour(question: Question, pages: list) -> list:
    """The runs (document, run) of these pages in the colour asked, as ink or as ground."""
    return [(d, r) for d, p in pages for r in p.runs if r.colour == question.colour and r.ground == question.on_ground]
