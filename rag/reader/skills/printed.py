"""What the documents print, counted or listed by code: the times a phrase is printed, the pages that print it,
the web or e-mail addresses they print (rag/reader/occurrences.py), over the pages named or the whole documents,
shown as the program that counts them, each page cited. A model reading one page at a time cannot count
what is spread over forty."""

from __future__ import annotations


from rag.reader.answer import Solution
from rag.reader.occurrences import KIND_NAMES, distinct, found
from rag.reader.pages import PageRef
from rag.reader.program import run_program
from rag.reader.question import Question
from rag.reader.skills.base import Documents, JsonModel, Read, register
from rag.reader.wording import RULES
from rag.records import LAST_PAGE

_MAX_CITED = 12


@register
class PrintedSkill:
    name, reads = "printed", "documents"

    def applies(self, question: Question) -> bool:
        return not (question.printed is None or (RULES["part_named"].search(question.text) and not question.pages))

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None:
        """Each time the phrase or kind asked is printed, on the pages named or anywhere in the documents."""
        asked = question.printed
        where = [(d, page, items) for d in documents.docs
                 for page, items in found(_in_scope(question, d, documents.printed(d.doc_id)), asked.what,
                                          asked.kind).items()]
        if not where:
            what = f"a {KIND_NAMES[asked.what]}" if asked.kind else f'"{asked.what}"'
            return Read(reason=f"no page {'named ' if question.pages else ''}prints {what}", final=True)
        program = _program(question, where, several=len({d.doc_id for d, _, _ in where}) > 1)
        value = run_program(program)
        pages = [PageRef(doc_id=d.doc_id, file=d.file, page=p) for d, p, _ in where][:_MAX_CITED]
        if isinstance(value, list):
            return Read(solution=Solution(skill=self.name, asked="list", value="; ".join(value), items=value,
                                          program=program, by="code", pages=pages))
        return Read(solution=Solution(skill=self.name, asked="number", value=str(value), program=program, by="code",
                                      pages=pages))


def _in_scope(question: Question, doc, texts: dict[int, str]) -> dict[int, str]:
    if not question.pages:
        return texts
    named = {doc.pages if p == LAST_PAGE else p for p in question.pages}
    return {p: t for p, t in texts.items() if p in named}


def _program(question: Question, where: list, several: bool) -> str:
    """The count or the list, as a program over what each page prints."""
    asked = question.printed
    pages = [f"{d.file} p. {p}" if several else str(p) for d, p, _ in where]
    listed = question.asked in ("list", "text")
    if asked.per == "items":
        items = distinct([item for _, _, found_there in where for item in found_there])
        return f"printed = {items!r}\nans = {'printed' if listed else 'len(printed)'}"
    if asked.per == "times" and not listed:
        return f"times = {[len(items) for _, _, items in where]!r}  # on pages {', '.join(pages)}\nans = sum(times)"
    return f"pages = {pages!r}\nans = {'pages' if listed else 'len(pages)'}"
