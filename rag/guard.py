"""Prompt-injection guard for document text on its way to the model.

Fragments reach the model quoted, between <fragments> tags, with a rule to ignore
instructions inside them; small local models still obey a planted "ignore all previous
instructions". So sentences that address the model itself are withheld from the prompt
(the document keeps them; the UI still shows them). A heuristic, not a proof: it stops the
common phrasings, and the quoting stays the first line of defence.
"""

from __future__ import annotations

import re

WITHHELD = "[instruction-like text withheld]"

_PATTERNS = [
    r"\b(ignore|disregard|forget|override|bypass)\b.{0,40}\b(instructions?|prompts?|rules|directions|guidelines|context|question|above)\b",
    (r"\b(reveal|print|show|output|repeat|leak|disclose|tell me)\b.{0,20}\b(your|system)\b.{0,20}"
     r"\b(prompt|instructions|settings|configuration|keys?|passwords?|secrets?|credentials)\b"),
    r"\b(reveal|print|show|output|leak|disclose)\b.{0,30}api[ _-]?key",
    r"\b(system|admin|developer) (notice|message|override|instruction)s?\b",
    r"\b(ai|assistant|language model|llm|chatbot)\b.{0,15}\breading this\b",
    r"\byou are now\b|\bnew instructions?\s*:|\bfrom now on,? you\b",
    r"\b(reply|respond|answer) (only )?with (only )?the word\b",
    r"\bdo not answer the question\b",
    r"\bcall the (tool|function)\b",
]
_INJECTION = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def withhold_instructions(text: str) -> str:
    """The text with every sentence that tries to instruct the model replaced by a marker."""
    if not _INJECTION.search(text):
        return text
    kept = [WITHHELD if _INJECTION.search(s) else s for s in _SENTENCE.split(text)]
    return re.sub(rf"({re.escape(WITHHELD)}\s*)+", WITHHELD + " ", " ".join(kept)).strip()
