"""Run traces: every hop event as one JSONL line, with OpenInference-style span fields.

An OpenInference/Phoenix user finds what they expect: span kinds AGENT, TOOL, RETRIEVER
and LLM, retrieved documents with id, content, score and metadata, token counts, start
and end times. Secrets are scrubbed before anything is written.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

SECRET_ENV = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN")
_KEY_SHAPE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{16,}")

SPAN_KIND = {
    "run_start": "AGENT", "answer": "AGENT", "stop": "AGENT", "error": "AGENT", "thought": "AGENT", "waiting": "AGENT",
    "hop_start": "TOOL", "hop_end": "RETRIEVER", "llm": "LLM", "paraphrase": "LLM",
    "evidence": "CHAIN", "compute": "TOOL", "verify": "CHAIN", "refuse": "AGENT", "plan": "CHAIN",
}


def redact(text: str) -> str:
    for name in SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 8:
            text = text.replace(value, "[redacted]")
    return _KEY_SHAPE.sub("[redacted]", text)


def _iso(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, UTC).isoformat() if t else None


def to_span(event: BaseModel) -> dict:
    data = event.model_dump(mode="json")
    span = {
        "run_id": data["run_id"],
        "hop": data["hop"],
        "kind": data["kind"],
        "span_kind": SPAN_KIND.get(data["kind"], "CHAIN"),
        "start_time": _iso(data["t_start"]),
        "end_time": _iso(data.get("t_end") or data["t_start"]),
        "attributes": _attributes(data),
        "event": data,
    }
    return span


def _attributes(data: dict) -> dict:
    kind = data["kind"]
    if kind == "hop_end":
        return {
            "input.value": data["query"],
            "retrieval.documents": [
                {"document.id": h["fragment"]["id"], "document.content": h["fragment"]["text"],
                 "document.score": h["score"],
                 "document.metadata": {k: h["fragment"][k] for k in ("file", "page", "modality", "bbox")}}
                for h in data["hits"]
            ],
        }
    if kind == "llm":
        return {"llm.token_count.prompt": data["prompt_tokens"], "llm.token_count.completion": data["completion_tokens"],
                "output.value": data["output"]}
    if kind == "hop_start":
        return {"tool.name": data["why"], "input.value": data["query"]}
    if kind == "run_start":
        return {"input.value": data["question"], "llm.model_name": data["model"]}
    if kind == "answer":
        return {"output.value": data["answer"]}
    if kind == "evidence":
        return {"input.value": ", ".join(data["ids"])}
    if kind == "plan":
        return {"input.value": data["composition"], "output.value": "\n".join(data["parts"])}
    if kind == "compute":
        return {"tool.name": "Compute", "input.value": data["program"], "output.value": data["result"] or data["error"]}
    return {}


class TraceWriter:
    """Appends spans to logs/<run_id>.jsonl as the events arrive."""

    def __init__(self, directory: Path, run_id: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{run_id}.jsonl"

    def write(self, event: BaseModel) -> None:
        line = redact(json.dumps(to_span(event), ensure_ascii=False))
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")


def load_trace(path: Path) -> list[dict]:
    """A trace's spans, in the order they happened; a torn last line is skipped."""
    spans = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            spans.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return spans


class RunSummary(BaseModel):
    run_id: str
    path: str
    started: str | None
    question: str
    hops: int
    latency_s: float | None
    first_hop_s: float | None = None
    prompt_tokens: int
    completion_tokens: int
    status: str
    settings: dict = {}


def summarize(path: Path) -> RunSummary:
    spans = load_trace(path)
    events = [s["event"] for s in spans]
    start = next((e for e in events if e["kind"] == "run_start"), None)
    answer = next((e for e in events if e["kind"] == "answer"), None)
    llm = [e for e in events if e["kind"] == "llm"]
    latency = (answer["t_start"] - start["t_start"]) if start and answer else None
    hop = next((e for e in events if e["kind"] == "hop_end"), None)
    return RunSummary(
        run_id=path.stem, path=str(path), started=spans[0]["start_time"] if spans else None,
        question=start["question"] if start else "", hops=len({e["hop"] for e in events if e["kind"] == "hop_end"}),
        latency_s=round(latency, 2) if latency is not None else None,
        first_hop_s=round(hop["t_end"] - start["t_start"], 2) if start and hop and hop.get("t_end") else None,
        prompt_tokens=sum(e["prompt_tokens"] for e in llm), completion_tokens=sum(e["completion_tokens"] for e in llm),
        status="error" if any(e["kind"] == "error" for e in events) else (
            ("stopped" if answer.get("stop_reason") == "stopped" else "done") if answer else "incomplete"),
        settings=start.get("settings", {}) if start else {},
    )


def list_runs(directory: Path) -> list[RunSummary]:
    """Every run in the trace folder, newest first."""
    paths = sorted(Path(directory).glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [summarize(p) for p in paths]
