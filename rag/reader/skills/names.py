"""A question about a proper name that no searched document prints ("the founders of Lake Placid Rowing Club" asked
of a bank's annual report) is not theirs to answer: said at once, no page read. Only a name of two capitalised
words or more is judged (rag/reader/question.py `proper_names`): one capitalised word may be a common noun, an
acronym a term the documents spell out, and neither is a reason to refuse.

A name is printed when the documents hold each of its words in one of its forms ("Canadian" where "Canada" is
printed), one slip allowed in a long word (an OCR'd or misspelt "Sorbonne" written "Sorbone"). Documents still being read
(OCR, tables) are not judged: their words are not all known yet.
"""

from __future__ import annotations

import os

from rapidfuzz import process
from rapidfuzz.distance import OSA

from rag.reader.question import Question
from rag.reader.skills.base import Documents, JsonModel, Read, register
from rag.text import content_words

# letters from which one slip (OSA distance 1) still counts as the word: a shorter one has too many neighbours
# ("hover", "cover")
SLIP_FROM = 6
STEM = 5  # letters two forms of one name share at least ("Canad-ian", "Japan-ese")


@register
class Names:
    name, reads = "names", "documents"

    def applies(self, question: Question) -> bool:
        return bool(question.proper_names)

    async def answer(self, question: Question, documents: Documents, hits, model: JsonModel) -> Read | None:
        if not documents.docs or any(d.stage != "complete" for d in documents.docs):
            return None
        words = documents.words()
        if missing := [n for n in question.proper_names if not printed(n, words)]:
            return Read(reason=f"no document searched mentions {', '.join(f'“{n}”' for n in missing)}", final=True)
        return None


def vocabulary(text: str) -> set[str]:
    """The stems a text prints, a hyphenated word also as its parts and joined ("Wi-Fi": wi, fi, wifi)."""
    return set(content_words(text.replace("-", " "))) | set(content_words(text.replace("-", "")))


def printed(name: str, words: set[str]) -> bool:
    """Whether the documents' `words` hold the name: all its parts, or its parts joined."""
    parts = content_words(name.replace("-", " "))
    return all(_held(w, words) for w in parts) or all(_held(w, words) for w in content_words(name.replace("-", "")))


def _held(word: str, words: set[str]) -> bool:
    if word in words:
        return True
    if len(word) >= SLIP_FROM and process.extractOne(word, words, scorer=OSA.distance, score_cutoff=1) is not None:
        return True
    return any(_same_name(word, w) for w in words if w[:STEM] == word[:STEM])


def _same_name(a: str, b: str) -> bool:
    """One name in two forms: a country and its people ("Canada", "Canadian"), a word and its derivative."""
    shared = len(os.path.commonprefix([a, b]))
    return shared >= max(STEM, min(len(a), len(b)) - 1)
