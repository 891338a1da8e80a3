"""The searched documents as the run's tools see them: the reader's pages (a named page, a page's text and
tables), what the document skills ask (statements, outline, the words printed), and the embedder's
similarity of a page's lines to the question."""

from __future__ import annotations

from copy import copy
from functools import cache, lru_cache

import numpy as np
import pymupdf

from rag.outline import Outline, outline
from rag.reader import PageRef, Question
from rag.reader.definitions import SAID
from rag.reader.filings import Choice, Chosen, Filing, choose, filing_of
from rag.reader.lookup import GLOSSARY, normal
from rag.reader.occurrences import page_texts
from rag.reader.skills.names import printed, vocabulary
from rag.records import LAST_PAGE, StatementFrame, Table


class SearchedDocuments:
    """The pages of the searched documents as the reader sees them: named ones, their text and tables when
    they are read, and what the documents' outlines answer."""

    def __init__(self, store, doc_ids: list[str] | None) -> None:
        self.store = store
        self.docs = [d for d in store.documents() if doc_ids is None or d.doc_id in doc_ids]

    def only(self, doc_id: str) -> SearchedDocuments:
        """These documents narrowed to one (the store's list is not read again)."""
        narrowed = copy(self)
        narrowed.docs = [d for d in self.docs if d.doc_id == doc_id]
        return narrowed

    def filing_named(self, text: str) -> Choice | None:
        """Of several searched filings, the one of the company (and the form and fiscal year) the question
        `text` names, by the names each filing prints; None when it names no company's, or one document is
        searched."""
        if len(self.docs) < 2:
            return None
        choice, named = choose(self.filings(), text, [])
        return choice if named and choice.doc_id else None

    def filings(self) -> list[Filing]:
        """Each searched document as a company's filing (cached by its version)."""
        return [_filing(self.store, d.doc_id, d.version, d.file) for d in self.docs]

    def named(self, question: Question) -> list[PageRef]:
        return [PageRef(doc_id=d.doc_id, file=d.file, page=d.pages if p == LAST_PAGE else p, score=1.0, named=True)
                for p in question.pages for d in self.docs if p == LAST_PAGE or 1 <= p <= d.pages]

    def pages_numbered(self, page: int, hits) -> list[PageRef]:
        """Page `page` of the document a hit found it in, else of each searched document that has it."""
        found = [PageRef(doc_id=h.fragment.doc_id, file=h.fragment.file, page=page, score=1.0) for h in hits
                 if h.fragment.page == page][:1]
        return found or [PageRef(doc_id=d.doc_id, file=d.file, page=page, score=1.0) for d in self.docs
                         if 1 <= page <= d.pages]

    def text(self, page: PageRef) -> str:
        return self.store.page_texts(page.doc_id, [page.page]).get(page.page, "")

    def tables(self, page: PageRef) -> list[Table]:
        return [t for t in self.store.tables(page.doc_id) if t.page == page.page]

    def frames(self, hits, names: list[str] = (), asked: str = "") -> list[StatementFrame]:
        """The statement frames of one document, a metric being one company's: the one searched; of several,
        the filing of the company, form and fiscal year the question `asked` names, by the names each filing
        prints (rag/reader/filings.py); else the only one that prints every name the question asks about ("Best
        Buy's margin" asked over a 10-K's statement pages and a survey the search likes better); else of the
        filings whose statements print the years asked, the best hit's. The frames say which and why
        (`Chosen.why`); none, and why, when the question names a company no searched document prints."""
        if len(self.docs) == 1:
            return self.store.frames(self.docs[0].doc_id)
        ranked = [h.fragment.doc_id for h in hits]
        choice, named = choose(self.filings(), asked, ranked)
        if not named and names:
            words = {d.doc_id: _words(self.store, d.doc_id, d.version, d.pages) for d in self.docs}
            naming = [d for d in self.docs if all(printed(n, words[d.doc_id]) for n in names)]
            if len(naming) == 1:
                why = f"from {naming[0].file}: the only searched document that prints {', '.join(names)}"
                choice = Choice(doc_id=naming[0].doc_id, why=why)
            elif unknown := [n for n in names if _proper(n) and not any(printed(n, w) for w in words.values())]:
                return Chosen([], why=f"no searched filing is of {', '.join(unknown)}: no statement read")
        doc_id = choice.doc_id or (ranked[0] if ranked else None)
        return Chosen(self.store.frames(doc_id) if doc_id else [], why=choice.why)

    def outline(self, doc_id: str) -> Outline:
        return outline(self.store, doc_id)

    def words(self) -> set[str]:
        return set().union(*(_words(self.store, d.doc_id, d.version, d.pages) for d in self.docs))

    def printed(self, doc_id: str) -> dict[int, str]:
        info = next(d for d in self.docs if d.doc_id == doc_id)
        return _printed(self.store, doc_id, info.version, info.pages)

    def outline_text(self) -> str:
        return "\n\n".join(self.outline(d.doc_id).text(40) for d in self.docs[:3])


def _proper(name: str) -> bool:
    """A name of a company, maybe: written in capitals and small letters ("Apple", not "EBITDA"), and no word
    of an analyst's for a row or a metric ("Quick" of "Quick Ratio")."""
    return name != name.upper() and not set(normal(name).split()) & _analysts_words()


@cache
def _analysts_words() -> frozenset[str]:
    wordings = [w for c in GLOSSARY.values() for w in (*c.said, *c.printed)] + [w for w, _ in SAID]
    return frozenset(word for wording in wordings for word in normal(wording).split())


@lru_cache(maxsize=64)
def _filing(store, doc_id: str, version: int, file: str) -> Filing:
    """A searched document as a company's filing: its cover page (pages 1–2) and its statements' headers."""
    frames = store.frames(doc_id)
    cover = "\n".join(store.page_texts(doc_id, [1, 2]).values())
    pages = sorted({f.page for f in frames if f.kind in ("income_statement", "balance_sheet", "cash_flows")})[:3]
    return filing_of(doc_id, file, cover, frames, store.page_texts(doc_id, pages))


@lru_cache(maxsize=32)
def _words(store, doc_id: str, version: int, pages: int) -> frozenset[str]:
    return frozenset(vocabulary("\n".join(store.page_texts(doc_id, list(range(1, pages + 1))).values())))


@lru_cache(maxsize=4)
def _printed(store, doc_id: str, version: int, pages: int) -> dict[int, str]:
    with pymupdf.open(store.pdf_path(doc_id)) as doc:
        return page_texts(doc, store.page_texts(doc_id, list(range(1, pages + 1))))


def similarity(embed_model):
    """Lines' cosine with the question, by the embedder already loaded (the question embedded once)."""
    asked: dict[str, np.ndarray] = {}

    def cosines(question: str, lines: list[str]) -> list[float]:
        if question not in asked:
            asked[question] = _unit(embed_model.get_query_embedding(question))
        vectors = np.array(embed_model.get_text_embedding_batch(lines))
        return list(map(float, (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)) @ asked[question]))

    return cosines


def _unit(vector) -> np.ndarray:
    v = np.array(vector)
    return v / np.linalg.norm(v)
