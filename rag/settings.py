"""One settings object for every knob, read from the environment, with named presets.

Secrets (API keys) are read from the environment when a client is built and never
stored here, so dumping settings into a trace or the UI cannot leak them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from rag.records import Modality


class IngestSettings(BaseModel):
    min_block_chars: int = 20
    max_block_chars: int = 1200
    caption_window: float = 120.0
    caption_max_chars: int = 120
    max_file_mb: int = 200
    # Texts per call to the embedder, sorted by length; its token budget bounds the memory.
    embed_batch: int = 256
    # "auto" reads a page with OCR when it has no usable text layer and is mostly images
    # (scans, picture-only slides); "off" refuses such documents as before.
    ocr: Literal["auto", "off"] = "auto"
    ocr_dpi: int = 120  # the recogniser sees each line at a fixed height; more dpi mostly slows detection
    # Figure fragments embed the text inside the chart (labels, legend, values) after the caption;
    # False gives caption-only fragments, the paper's design.
    chart_text: bool = True
    # Charts as data: each figure's data labels paired with category and series by geometry, kept as a
    # table (rag/ingest/charts/).
    charts: bool = True
    # Processes that parse pages side by side (documents of 8 pages or more): one per core.
    workers: int = 2


class StoreSettings(BaseModel):
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 100


class RetrievalSettings(BaseModel):
    k_per_collection: int = 6
    context_k: int = 10
    ratio: dict[Modality, int] = Field(
        default_factory=lambda: {"text": 6, "table": 2, "image_caption": 2}
    )
    router_threshold: float = 0.35
    # BM25 beside the dense search in every collection, fused by reciprocal rank.
    hybrid: bool = True
    # Fragments lead to their pages: pages are ranked with their whole text too, and each page
    # gives its best fragment.
    parent_page: bool = True
    # With parent pages, how much of the pages' text around the fragments the model reads. Off by
    # default: the embedded 1.5B model picks wrong numbers more often with whole pages in front of
    # it (tests/test_llm_real.py); 1200 suits a larger model behind OPENAI_BASE_URL.
    page_context_tokens: int = 0
    # ViDoRAG's adaptive top-K: a Gaussian mixture over the candidates' similarities decides
    # how many fragments per collection are kept, between the floor and the ceiling.
    adaptive_k: bool = False
    adaptive_k_min: int = 2
    adaptive_k_max: int = 10
    # How many fragments each retriever hands to fusion and page ranking.
    candidates: int = 30


class AgentSettings(BaseModel):
    max_hops: int = 3
    temperature: float = 0.0
    max_output_tokens: int = 700
    token_budget: int = 3000
    # The paper retries hops scoring under 0.75; MiniLM cosines of relevant passages sit around
    # 0.4-0.7, so the default preset uses a threshold calibrated for it (the paper preset keeps 0.75).
    low_score: float = 0.45
    # "coverage": the evidence holds (nearly) every content word of the question (code, no call);
    # "react": the model's own word in its ReAct step; "llm": an explicit yes/no call, as in the paper.
    sufficiency_check: Literal["coverage", "react", "llm"] = "coverage"
    coverage: float = 0.8
    # A whole answer; the local model on a busy 2-core machine needs minutes, not seconds.
    timeout_s: float = 240.0
    # Longer questions are refused: the ReAct prompt must hold the question and the fragments
    # within the token budget and the model's context window (2,000 characters ≈ 500 tokens).
    max_question_chars: int = 2000


class ReaderSettings(BaseModel):
    """How evidence becomes an answer; each step can be switched off for ablations."""

    # "pages": the model reads the best pages one at a time and code checks what it found (rag/reader);
    # "cascade": the evidence-line reader (rag/reader/cascade/); "auto": the cascade's extremes for
    # comparisons (most, least), page reading for the rest. Whole sets (docs/results.md): auto 49.0 of
    # wide's 221 right, pages 48.6, the cascade 32.3; on dev auto 34.9, pages 22.4, the cascade 47.0.
    engine: Literal["auto", "pages", "cascade"] = "auto"
    # The skills the page reader may use besides reading ("compute": arithmetic by code; "outline": counts
    # of the document's pages, figures and tables). Compute is opt-in: on the wide quarter it answered 9
    # questions and none right, and its guesses answered an unanswerable one (docs/results.md).
    skills: list[str] = Field(default_factory=lambda: ["outline"])
    # Pages read per question at most, and how many fail before the ReAct step may search again (while
    # pages remain). The 1.5B model never searched again there (0 of 15 steps on wide, each ~17 s), so
    # by default the pages run out first; more pages suit a larger model behind OPENAI_BASE_URL.
    max_pages: int = 2
    pages_per_search: int = 2
    # How much of one page the model reads, in its own tokens: a longer page is read as a window. Whole
    # slides fit; a dense 10-K page is cut. Wide probes: 300 tokens 1/9, 1000 tokens 2/9 right; the whole
    # page (up to 2,375 tokens) gave the same answers as the 800-token window on all 6 long first pages
    # of 26 questions, at up to 66 s a read.
    page_tokens: int = 800

    # How much numbered evidence the model picks from, in its own tokens: every token is read on a CPU.
    evidence_tokens: int = 400
    # Fragments reordered by how much of the question they hold, fused with the retrieval's order.
    rerank: bool = True
    # The best evidence next to the question (last) or first; the 1.5B model picks better with it first.
    best_last: bool = False
    # Lines picked for lists and computations (one for everything else).
    max_picks: int = 3
    # A number question is a multiple choice among this many numbers of the evidence, each shown with
    # its row and column or the words around it (0: pick a line, then a number in it).
    max_options: int = 8
    # The options come from this much of the evidence: only they are shown, so they may reach further
    # than `evidence_tokens` (the rows past the lines a model reads are often the ones asked for).
    option_tokens: int = 1500
    # Code takes the option whose label fits the question this many times better than any option with
    # another value, instead of asking the model (0: the model always chooses).
    decide_margin: float = 1.3
    # Pages the question names, and for questions about the document's structure its outline.
    outline: bool = True
    outline_lines: int = 60
    # Answers typed from the question (number, list, yes/no, one of its options); off: all free text.
    typed: bool = True
    # A number asked of a table row is the cell in the column the question names, chosen by code.
    table_cells: bool = True
    # Arithmetic questions are answered by a program over evidence values; with `dataframes` the program
    # may also select and aggregate the picked rows' tables (off: the 1.5B model writes invalid pandas).
    compute: bool = True
    dataframes: bool = False
    # A computation is planned from the question alone (named quantities and one expression), then each
    # quantity is a multiple choice over the evidence's numbers like a lookup (off: pick lines, then the
    # model names values and the expression in one reply).
    operand_choice: bool = True
    lookup_k: int = 4  # fragments a quantity's own search adds to the evidence (0: none)
    # "Which row has the highest …" is answered by code comparing a table's rows (rag/reader/cascade/extremes.py),
    # or refused when no table of the evidence compares them: a model's pick cannot be checked.
    compare: bool = True
    # Financial ratios ("return on capital employed") are planned by their textbook definitions
    # (rag/reader/cascade/formulas.py), not by the model.
    ratios: bool = True
    # "How many adults …" in a survey report: the share who did, of the sample size the report states
    # (rag/reader/cascade/samples.py).
    people_counts: bool = True
    # Answers must stand in the evidence they cite; failures are retried, then the next evidence.
    verify: bool = True
    # Questions naming what the documents never mention (a year, an acronym, "Figure 7") are refused.
    refuse_unnamed: bool = True
    # Refused when no evidence is this similar to the question (cosine; calibrated on dev, see README).
    min_score: float = 0.0


class LLMSettings(BaseModel):
    openai_model: str = "gpt-4o"
    compatible_model: str = "local-model"
    model_dir: Path = Path.home() / ".cache" / "multimodal-rag" / "models"
    threads: int = 2
    context_window: int = 4096
    request_timeout_s: float = 60.0
    max_retries: int = 2


class Settings(BaseModel):
    data_dir: Path = Path("data")
    trace_dir: Path = Path("logs")
    eval_dir: Path = Path("eval")
    chroma_host: str | None = None
    chroma_port: int = 8000
    # The enrichment queue (rag/jobs.py): SQLite in data_dir when unset, else a Redis URL for a team.
    queue_url: str | None = None
    # This machine starts a worker for its store (the app's server hosts one, `rag ingest` starts one when
    # none runs); off (RAG_WORKER=off) when a team runs `python -m rag worker` where it wants them.
    local_worker: bool = True
    embed_provider: str = "local"
    openai_embed_model: str = "text-embedding-3-small"
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    reader: ReaderSettings = Field(default_factory=ReaderSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    def set(self, path: str, value: str) -> None:
        """One setting by its dotted name ("reader.verify", "agent.max_hops"), from text, validated; a
        list is written as JSON ("reader.skills=[]")."""
        from pydantic import TypeAdapter, ValidationError

        *parents, name = path.split(".")
        target = self
        for part in parents:
            target = getattr(target, part)
        if name not in type(target).model_fields:
            raise ValueError(f"unknown setting {path!r}")
        adapter = TypeAdapter(type(target).model_fields[name].annotation)
        try:
            parsed = adapter.validate_python(value)
        except ValidationError:
            parsed = adapter.validate_json(value)
        setattr(target, name, parsed)

    def for_trace(self) -> dict:
        """What a run's trace records: the settings a user can change per session (agent, reader, retrieval)."""
        return self.model_dump(mode="json", include={"agent", "reader", "retrieval"})

    @classmethod
    def from_env(cls, preset: str = "default", **overrides) -> Settings:
        values = PRESETS[preset].model_dump()
        env = os.environ
        if env.get("RAG_DATA_DIR"):
            values["data_dir"] = Path(env["RAG_DATA_DIR"])
        if env.get("RAG_LOG_DIR"):
            values["trace_dir"] = Path(env["RAG_LOG_DIR"])
        if env.get("RAG_MAX_FILE_MB"):
            values["ingest"]["max_file_mb"] = int(env["RAG_MAX_FILE_MB"])
        if env.get("RAG_OCR"):
            values["ingest"]["ocr"] = env["RAG_OCR"]
        if env.get("RAG_EVAL_DIR"):
            values["eval_dir"] = Path(env["RAG_EVAL_DIR"])
        if env.get("CHROMA_HOST"):
            values["chroma_host"] = env["CHROMA_HOST"]
            values["chroma_port"] = int(env.get("CHROMA_PORT", "8000"))
        if env.get("RAG_QUEUE_URL"):
            values["queue_url"] = env["RAG_QUEUE_URL"]
        if env.get("RAG_WORKER") == "off":
            values["local_worker"] = False
        if env.get("RAG_EMBED_PROVIDER"):
            values["embed_provider"] = env["RAG_EMBED_PROVIDER"]
        elif env.get("OPENAI_API_KEY") and not env.get("OPENAI_BASE_URL"):
            values["embed_provider"] = "openai"
        if env.get("OPENAI_MODEL"):
            values["llm"]["openai_model"] = values["llm"]["compatible_model"] = env["OPENAI_MODEL"]
        if env.get("RAG_MODEL_DIR"):
            values["llm"]["model_dir"] = Path(env["RAG_MODEL_DIR"])
        values.update(overrides)
        return cls.model_validate(values)


PRESETS: dict[str, Settings] = {
    "default": Settings(),
    # The paper's design exactly, for ablations and comparisons.
    "paper": Settings(
        ingest=IngestSettings(ocr="off", chart_text=False, charts=False),
        agent=AgentSettings(low_score=0.75, sufficiency_check="llm"),
        retrieval=RetrievalSettings(hybrid=False, parent_page=False),
    ),
}
