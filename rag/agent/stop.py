"""The paper's four stop rules, in its order, as one plain function of the run state."""

from __future__ import annotations

from rag.agent.state import RunState


def stop_reason(state: RunState) -> str | None:
    """Why the search stops after the last hop, or None to search on.

    1. hop cap; 2. the last hop added no new fragment; 3. the sufficiency self-check said the evidence
    covers the question; 4. the evidence would exceed the input-token budget."""
    cfg = state.settings
    if state.hops >= cfg.max_hops:
        return "hop_cap"
    if not state.last_new_ids:
        return "no_new_fragments"
    if state.sufficient:
        return "sufficient"
    if state.evidence_tokens > cfg.token_budget:
        return "token_budget"
    return None
