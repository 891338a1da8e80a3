"""A question about a name that no searched document prints ("the bankers of Apple Inc." asked of an Indian
tobacco company's report) is not theirs to answer: said at once, no page read.

A name is printed when the documents hold each of its words, one slip allowed in a long word (an OCR'd or
misspelt "Netfilx" is Netflix). Documents still being read (OCR, tables) are not judged: their words are not all
known yet.
"""

from __future__ import annotations

from rapidfuzz import process
from rapidfuzz.distance import OSA

from rag.reader.question import Question
from rag.reader.skills.base import Call, Documents, Read, register
from rag.text import content_words

# letters from which one slip (OSA distance 1) still counts as the word: a shorter one has too many neighbours
# ("hover", "cover")
SLIP_FROM = 6


@register
class Names:
    name, reads = "names", "documents"

    async def answer(self, question: Question, documents: Documents, hits, call: Call) -> Read | None:
        if not question.names or not documents.docs or any(d.stage != "complete" for d in documents.docs):
            return None
        words = documents.words()
        if missing := [n for n in question.names if not printed(n, words)]:
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
    return len(word) >= SLIP_FROM and process.extractOne(word, words, scorer=OSA.distance, score_cutoff=1) is not None
