"""Hop events as terminal lines, printed the moment they arrive."""

from __future__ import annotations

import sys

from rag.agent.events import (
    AnswerEvent,
    Computation,
    ErrorEvent,
    EvidencePicked,
    HopEnd,
    HopEvent,
    HopStart,
    LLMCall,
    PageRead,
    Paraphrase,
    Refusal,
    Stop,
    Thought,
    Verification,
    Waiting,
)
from rag.control import queue_text


def print_event(event: HopEvent, out=sys.stdout) -> None:
    line = _line(event)
    if line:
        print(line, file=out, flush=True)


def _line(e: HopEvent) -> str | None:
    if isinstance(e, HopStart):
        return f"\n▶ hop {e.hop}: {e.modality} search for “{e.query}” ({e.why})"
    if isinstance(e, HopEnd):
        rows = [f"  {h.score:.2f}  p.{h.fragment.page:<3} {h.fragment.modality:13s} {h.fragment.text[:90]}"
                for h in e.hits]
        head = f"  {len(e.hits)} fragments ({len(e.new_ids)} new) in {e.retrieval_ms:.0f} ms, route {'+'.join(e.route)}"
        return "\n".join([head, *rows])
    if isinstance(e, LLMCall):
        return f"  · LLM ({e.purpose}) {e.llm_ms / 1000:.1f} s, {e.prompt_tokens}→{e.completion_tokens} tokens"
    if isinstance(e, Thought):
        return f"  💭 {e.text}"
    if isinstance(e, Paraphrase):
        return f"  ↻ low scores ({e.best_score:.2f}); retrying as “{e.paraphrased}”"
    if isinstance(e, Waiting):
        return f"  ⧗ {queue_text(e.ahead, e.waited_s)}"
    if isinstance(e, Stop):
        return f"■ stop: {e.reason.replace('_', ' ')}" + (f" ({e.detail[:120]})" if e.detail else "")
    if isinstance(e, EvidencePicked):
        rows = [f"  ★ {x['id']} p.{x['page']:<3} {x['text'][:100]}" for x in e.evidence]
        by = " (by code: its label fits clearly)" if e.by == "code" else ""
        return "\n".join([f"  picked evidence: {', '.join(e.ids) or 'none'}{by}", *rows])
    if isinstance(e, Computation):
        body = "\n".join(f"    {line}" for line in e.program.splitlines())
        return f"  ⚙ program:\n{body}\n    → {e.result if e.error is None else 'error: ' + e.error}"
    if isinstance(e, Verification):
        return f"  {'✓' if e.ok else '✗'} {e.value!r} {'stands in' if e.ok else 'rejected:'} {', '.join(e.ids) if e.ok else e.reason}"
    if isinstance(e, PageRead):
        return f"  {e.describe()}" + ("" if e.found else f"\n    model said: {e.said[:160]}")
    if isinstance(e, Refusal):
        return f"  ⊘ not in the documents: {e.reason}"
    if isinstance(e, ErrorEvent):
        return f"✗ {e.message}"
    if isinstance(e, AnswerEvent):
        cites = ", ".join(f"{c['file']} p.{c['page']}" for c in e.citations)
        return f"\n{e.answer}\n" + (f"\nsources: {cites}" if cites else "")
    return None
