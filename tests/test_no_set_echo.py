"""The library holds no rule drawn from an evaluation set: no line of rag/, app_pages/ or streamlit_app.py repeats
six words in a row of a question or gold answer of dev, wide, fin or val, or holds a word a set's question
misspells ("recieve" for "receive"). The sets are read from ../shared/eval, never copied here."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pymupdf
import wordninja
from rapidfuzz import process
from rapidfuzz.distance import OSA

from conftest import EVAL, ROOT

SETS = {"dev": (EVAL / "qa" / "dev.json", EVAL / "pdfs"), "dev_v2": (EVAL / "qa" / "dev_v2.json", EVAL / "pdfs"),
        "wide": (EVAL / "wide" / "qa.json", EVAL / "wide" / "pdfs"), "fin": (EVAL / "fin" / "qa.json", EVAL / "fin" / "pdfs"),
        "val": (EVAL / "val" / "qa.json", EVAL / "val" / "pdfs")}
SHINGLE = 6
# English as written on the web (wordninja's 126k words, already a dependency for OCR): a word outside it
# that its own document never prints, one slip from a word inside it, is a misspelling
ENGLISH = wordninja.DEFAULT_LANGUAGE_MODEL._wordcost
SLIP_FROM = 6  # letters from which any one slip counts; below, only two letters swapped ("teh")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def shingles(text: str) -> set[str]:
    w = words(text)
    return {" ".join(w[i:i + SHINGLE]) for i in range(len(w) - SHINGLE + 1)}


def misspelt(word: str, printed: set[str]) -> bool:
    """A word no dictionary or document holds, one slip from one the dictionary holds."""
    word = word.lower()
    if len(word) < 4 or word in ENGLISH or word in printed:
        return False
    near = process.extract(word, ENGLISH.keys(), scorer=OSA.distance, score_cutoff=1, limit=None)
    return any(len(word) >= SLIP_FROM or sorted(word) == sorted(known) for known, _, _ in near)


@cache
def _printed(pdf: Path) -> frozenset[str]:
    with pymupdf.open(pdf) as doc:
        return frozenset(re.findall(r"[a-z]+", " ".join(page.get_text() for page in doc).lower()))


@cache
def set_texts() -> tuple[frozenset[str], frozenset[str]]:
    """Every six-word run of the sets' questions and answers, and the words their questions misspell."""
    runs, slips = set(), set()
    for qa, pdfs in SETS.values():
        for q in json.loads(qa.read_text()):
            runs |= shingles(q["question"]) | shingles(str(q.get("answer", "")))
            unknown = [w for w in re.findall(r"[A-Za-z]+", q["question"]) if len(w) >= 4 and w.lower() not in ENGLISH]
            if unknown and (pdfs / q["doc_id"]).exists():
                slips |= {w.lower() for w in unknown if misspelt(w, _printed(pdfs / q["doc_id"]))}
    return frozenset(runs), frozenset(slips)


def library_lines():
    files = sorted([*ROOT.glob("rag/**/*.py"), *ROOT.glob("app_pages/**/*.py"), ROOT / "streamlit_app.py"])
    for path in files:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            yield f"{path.relative_to(ROOT)}:{n}", line


def echoes(lines, runs: frozenset[str], slips: frozenset[str]) -> list[str]:
    found = []
    for where, line in lines:
        if repeated := shingles(line) & runs:
            found.append(f"{where}: repeats “{min(repeated)}”")
        if slipped := set(words(line)) & slips:
            found.append(f"{where}: holds the misspelling “{min(slipped)}”")
    return found


def test_a_misspelling_is_told_from_a_word_and_a_term():
    assert misspelt("quesiton", set()) and misspelt("wiht", set())  # a long word's slip; a short word's swap
    assert not misspelt("wiqh", set())  # short, and no swap of a word: a guess
    assert not misspelt("question", set())
    assert not misspelt("EBITDA", set())  # a term no dictionary holds, but no slip from a word
    assert not misspelt("Quesiton", {"quesiton"})  # printed by its document: a name, not a slip


def test_the_check_finds_an_echo_and_passes_other_words():
    runs = frozenset(shingles("What was the share of respondents who named a tree as their favourite?"))
    lines = [("a.py:1", "# the share of respondents who named a tree as their favourite"),
             ("a.py:2", "# a share of the people asked who chose a tree"),
             ("a.py:3", "_FORMAT = re.compile(r'answer|anwser')")]
    found = echoes(lines, runs, frozenset({"anwser"}))
    assert [f.split(":")[1] for f in found] == ["1", "3"]


def test_no_line_of_the_library_echoes_a_set():
    runs, slips = set_texts()
    assert len(runs) > 1000 and slips, "the sets were read"
    assert echoes(library_lines(), runs, slips) == []
