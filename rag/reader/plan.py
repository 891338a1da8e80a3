"""A question's plan: one fact, or two or three facts and the one composition code makes of them.

Code tells the composition from the question's wording ("how many more … than …", "the gap between … and
…", "the total of … and …", "which is higher? A, or B?"); a question without such wording is one fact and
keeps the one fast read. Code writes the single-fact parts where the wording is plain (the things named side
by side, or one "than" another); otherwise the model writes them, held by a JSON schema (one small job:
rewriting words, no figure), and code checks them. Each part reads its value off its own page, and code
composes the values (rag/reader/compose.py).
"""

from __future__ import annotations

import re
from typing import Literal

from llama_index.core.llms import ChatMessage
from pydantic import BaseModel, Field

from rag import prompts
from rag.models.structured import JsonModel
from rag.reader.question import Question, understand
from rag.reader.skills.base import few_shot
from rag.reader.wording import RULES

Composition = Literal["difference", "sum", "average", "greater", "lesser"]
MAX_PARTS = 3
PART_CHARS = 200  # a part the model writes
PLAN_TOKENS = 20 + MAX_PARTS * PART_CHARS // 3



class Part(BaseModel):
    """One fact the answer needs, as its own question; `label` names it in the answer (a choice it stands for)."""

    question: str
    label: str = ""


class Plan(BaseModel):
    """What the question needs: no parts (one fact, today's read) or 2–3 parts and their composition."""

    composition: Composition | None = None
    parts: list[Part] = Field(default_factory=list)
    by: Literal["code", "model"] = "code"
    said: str = Field("", description="the model's reply, for the trace")


class PlanReply(BaseModel):
    """What the model writes: the single-fact questions, in the order the question names them."""

    parts: list[str] = Field(json_schema_extra={"minItems": 2, "maxItems": MAX_PARTS,
                                                "items": {"type": "string", "maxLength": PART_CHARS}})


def composition(question: Question) -> Composition | None:
    """The composition the wording asks for, or None for a question of one fact."""
    text = question.task or question.text
    if question.structural or question.asked not in ("number", "text"):
        return None
    if question.options and (found := RULES["compare"].search(text)):
        return "greater" if found.group("more") else "lesser"
    if question.asked != "number":
        return None
    if RULES["difference"].search(text) and (RULES["than"].search(text) or RULES["both"].search(text)):
        return "difference"
    if RULES["sum"].search(text) and RULES["both"].search(text):
        return "sum"
    if RULES["average_of"].search(text) and RULES["both"].search(text):
        return "average"
    return None


# words where a named thing ends, or before which it begins ("the gap between A and B that …", "A in 2019")
_BOUNDARY = set("""between of for in on at to from by with among who whom that which whose when where while during
regarding according than compared comparing versus vs do does did is are was were has have had""".split())
# the wording of a composition, so that each part asks for one figure: "how many more X" → "how many X"
_ONE_FACT = [("one_fact_how_much_is", r"what \1"), ("one_fact_how_many_more", r"how \1"),
             ("one_fact_share_gap", r"\1 of"), ("one_fact_gap", ""), ("one_fact_sum_of", ""),
             ("one_fact_total", r"\1"), ("one_fact_in_total", "")]


def by_code(question: Question, kind: Composition) -> list[Part]:
    """The parts where the wording is plain: the things named side by side ("A and B", "A, B, and C", quoted
    names), or one thing "than" another; each part is the question with one of them, in one fact's words."""
    text = " ".join((question.task or question.text).split())
    if kind in ("greater", "lesser"):
        return []
    cue = (RULES["difference"].search(text) or RULES["sum"].search(text) or RULES["average_of"].search(text)).start()
    spans = _than(text) if RULES["than_at"].search(text) else _side_by_side(text, cue)
    if not spans:
        return []
    questions = [_one_fact(text, spans, n) for n in range(len(spans))]
    if len(set(q.lower() for q in questions)) != len(questions):
        return []
    return [Part(question=q, label=text[slice(*span)].strip("\"“”`'‘’")) for q, span in zip(questions, spans)]


def _side_by_side(text: str, cue: int) -> list[tuple[int, int]]:
    """The spans of two or three things joined by "and" (the first "and" after the wording that asks to compose
    them, else the last before it): quoted names, else the words after "and" up to where a name ends, and as
    many words before it, each comma before those another thing (a list's middle item sets the length)."""
    quoted = [m.span(1) for m in RULES["quoted"].finditer(text)]
    joined = all(RULES["join"].fullmatch(text[a[1] + 1:b[0] - 1]) for a, b in zip(quoted, quoted[1:]))
    if 2 <= len(quoted) <= MAX_PARTS and joined:
        return quoted
    joins = list(RULES["and"].finditer(text))
    join = next((j for j in joins if j.start() >= cue), joins[-1] if joins else None)
    if join is None:
        return []
    items: list[tuple[int, int]] = []
    at = join.start()
    while len(items) < MAX_PARTS - 1 and (left := _words(text, at, forward=False)):
        items.insert(0, left)
        if not (comma := RULES["comma_end"].search(text[:left[0]])):
            break
        at = comma.start()
    if len(items) == 2:  # "A, B, and C": B's length is every item's
        size = len(RULES["token"].findall(text[slice(*items[1])]))
        items = [_words(text, items[0][1], forward=False, limit=size), items[1]]
    else:
        size = 6
    right = _words(text, join.end(), forward=True, limit=size)
    if not items or not right or None in items:
        return []
    if len(items) == 1:
        items = [_words(text, join.start(), forward=False, limit=len(RULES["token"].findall(text[slice(*right)])))]
    return [*items, right]


def _than(text: str) -> list[tuple[int, int]]:
    """"A … than B": B up to where a name ends; A the words before "than" most like B (their shared words in
    the same places), else the words just before it."""
    at = RULES["than_at"].search(text)
    right = _words(text, at.end(), forward=True)
    if not right:
        return []
    b = RULES["token"].findall(text[right[0]:right[1]])
    tokens = list(RULES["token"].finditer(text[:at.start()]))
    best, span = 0, None
    for i in range(len(tokens) - len(b) + 1):
        window = tokens[i:i + len(b)]
        if any(t.group().lower() in _BOUNDARY for t in window):
            continue
        shared = sum(t.group().lower() == w.lower() for t, w in zip(window, b))
        if shared and shared >= best:  # of windows alike, the one nearest "than"
            best, span = shared, (window[0].start(), window[-1].end())
    if span is None:
        span = _words(text, at.start(), forward=False, limit=len(b))
    elif text[slice(*span)].lower() == text[slice(*right)].lower():  # "B + x … than B": A goes on to "than"
        span = (span[0], len(text[:at.start()].rstrip()))
    return [span, right] if span else []


def _words(text: str, at: int, forward: bool, limit: int = 6) -> tuple[int, int] | None:
    """Up to `limit` words from `at`, forward or back, stopping where a name ends (a boundary word, punctuation)."""
    token = RULES["token"]
    tokens = list(token.finditer(text, at)) if forward else list(reversed(list(token.finditer(text[:at]))))
    found: list[re.Match] = []
    for m in tokens:
        between = (text[found[-1].end():m.start()] if forward else text[m.end():found[-1].start()]) if found else ""
        if m.group().lower() in _BOUNDARY or len(found) == limit or between.strip():
            break
        found.append(m)
    if not found:
        return None
    first, last = (found[0], found[-1]) if forward else (found[-1], found[0])
    return first.start(), last.end()


def _one_fact(text: str, spans: list[tuple[int, int]], keep: int) -> str:
    """The question with the `keep`-th thing in the place of them all, in one fact's words."""
    first, last = spans[0], spans[-1]
    than = RULES["than_at"].search(text, first[1], last[0]) if len(spans) == 2 else None
    if than:  # "A … than B": the part about B puts B in A's place, and "than B" goes
        out = text[:first[0]] + text[slice(*spans[keep])] + text[first[1]:than.start()] + text[last[1]:]
    else:
        out = text[:first[0]] + text[slice(*spans[keep])] + text[last[1]:]
    for rule, replacement in _ONE_FACT:
        out = RULES[rule].sub(replacement, out)
    out = " ".join(out.split()).replace(" ?", "?")
    return out[0].upper() + out[1:]


def checked(question: Question, kind: Composition, reply: PlanReply, said: str = "") -> Plan:
    """The model's parts as a plan, or no plan when they do not hold: one per choice a comparison offers, each
    a question of its own (distinct, not the question again)."""
    parts = [" ".join(p.split()) for p in reply.parts]
    parts = [p for p in dict.fromkeys(parts) if p.endswith("?") and len(p.split()) >= 3
             and p.lower() != question.text.strip().lower()]
    labels = list(question.options) if kind in ("greater", "lesser") else [""] * len(parts)
    if len(parts) < 2 or len(parts) != len(labels):
        return Plan(said=said)
    return Plan(composition=kind, parts=[Part(question=p, label=label) for p, label in zip(parts, labels)],
                by="model", said=said)


def part_question(part: Part) -> Question:
    """A part as the reader reads it: one figure (a comparison's too), never a choice or a list."""
    q = understand(part.question)
    return q.model_copy(update={"asked": "number", "options": []})


async def planned(question: Question, model: JsonModel, kind: Composition | None = None) -> Plan:
    """The question's plan: none for one fact; code's parts where the wording is plain (no model call); else
    the model's, checked by code. `kind`: the composition its route found, else found here."""
    if (kind := kind or composition(question)) is None:
        return Plan()
    if parts := by_code(question, kind):
        return Plan(composition=kind, parts=parts)
    reply = await model.json("write plan", messages(question), PlanReply, PLAN_TOKENS)
    if reply.value is None:
        return Plan(said=reply.text[:300])
    return checked(question, kind, reply.value, reply.text)


def messages(question: Question) -> list[ChatMessage]:
    return few_shot(prompts.PLAN_SYSTEM, prompts.PLAN_EXAMPLES, question.task or question.text)
