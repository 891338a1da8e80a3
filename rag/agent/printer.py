"""Hop events as terminal lines, printed the moment they arrive: each event's own headline and details."""

from __future__ import annotations

import sys

from rag.agent.events import AnswerEvent, HopEvent, HopStart

_MARK = {"step": "  ", "note": "  · ", "thought": "  💭 ", "info": "  ⊘ ", "warning": "✗ "}


def print_event(event: HopEvent, out=sys.stdout) -> None:
    line = _lines(event)
    if line:
        print(line, file=out, flush=True)


def _lines(e: HopEvent) -> str | None:
    if isinstance(e, AnswerEvent):
        cites = ", ".join(f"{c.file} p.{c.page}" for c in e.citations)
        reading = f"\n⏳ {e.still_reading}" + (" Ask again once they are read." if e.ask_again else "") \
            if e.still_reading else ""
        return f"\n{e.answer}\n" + (f"\nsources: {cites}" if cites else "") + reading
    headline = e.headline()
    if headline is None:
        return None
    first = f"\n▶ {headline}" if isinstance(e, HopStart) else _MARK[e.style] + headline
    return "\n".join([first, *(f"      {line}" for line in e.details())])
