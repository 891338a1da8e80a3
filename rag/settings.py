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
    # A hop whose best score is at most this is retried once with a paraphrase (a model call). The paper
    # retries under 0.75; by default only a hop that found nothing is (0.0): paraphrases of hops that found
    # something cost a call each and seldom changed the pages read.
    low_score: float = 0.0
    # "coverage": the evidence holds (nearly) every content word of the question (code, no call);
    # "react": the model's own word in its ReAct step; "llm": an explicit yes/no call, as in the paper.
    sufficiency_check: Literal["coverage", "react", "llm"] = "coverage"
    coverage: float = 0.8
    # A whole answer; the local model on a busy 2-core machine needs minutes, not seconds.
    timeout_s: float = 240.0
    # Longer questions are refused: the ReAct prompt must hold the question and the fragments
    # within the token budget and the model's context window (2,000 characters ≈ 500 tokens).
    max_question_chars: int = 2000


DOCUMENT_SKILLS = ["printed", "outline", "metric", "names"]
# An answer stands on its page (its year, numbers, words) and on a line about what is asked (a figure's line names
# what the question asks of it, a count excepted; a phrase stands near such a line): on the blind set and dev a
# page's "found" on a line about something else was a wrong answer, never a right one (docs/results.md,
# "Answers on a line about what is asked").
PAGE_CHECKS = ["year_on_page", "decisive_line", "values_on_page", "words_on_page", "number_line", "words_line"]
# A number asked is code's guess from the wording ("how do they rate …" asks words): the free reply is kept
# when its words stand on the page; the typed reader's schema asked for a figure, so it is checked for one.
TYPED_CHECKS = ["has_number", "in_lines_read"]


class ReaderSettings(BaseModel):
    """How the pages found become an answer (rag/reader)."""

    # Skills besides reading a page (rag/reader/skills), in the order they are tried: "printed" counts or lists
    # the times a phrase is printed, the pages that print it, the web and e-mail addresses; "outline" counts the
    # document's pages, figures, tables and appendices; "metric" computes a figure of the statements (a lookup,
    # ratio, change, average) by a program the model writes over lookups code does; "names" says at once that no
    # document prints a name the question asks about. Then the page skill: "read_free", a free reply put in the
    # asked form by code, read the blind set better than the typed "read_page" (always there, last) with the
    # embedded model (docs/results.md, "The general path's floor").
    skills: list[str] = Field(default_factory=lambda: [*DOCUMENT_SKILLS, "read_free"])
    # Pages read per question at most, best first, until one answers, and how many fail before the ReAct step
    # may search again (while pages remain and the time budget lasts): the plain reader's three.
    max_pages: int = 3
    pages_per_search: int = 3
    # How much of one page the model reads, in its own tokens (a page up to half as much again is read whole,
    # a longer one as its best lines: rag/reader/pages.py). 1,100 holds most pages whole; the longer reads it
    # cuts were most of the p95 on two cores (docs/results.md, "A long page read as its best 1,100 tokens").
    page_tokens: int = 1100
    # A number at the row and the column the question names in one of the page's tables, or the item a table
    # ranks at the extreme it asks ("which … the most …"), is found by code before the model reads the page
    # (rag/reader/cells.py, rag/reader/ranks.py).
    cells: bool = True
    # A question of two or three facts (a difference, a sum, a choice by value) planned as parts, each searched
    # and read, composed by code (rag/reader/plan.py); off, it is read as one fact.
    plans: bool = True
    # Seconds a question may spend before another page is begun: the next page is read only when the
    # model's measured speed says it ends within the budget (the first page is always read).
    budget_s: float = 30.0
    # The model's page-reading speed (prompt tokens a second) until the first read measures it.
    tokens_per_s: float = 80.0
    # Seconds a person waits for an answer: a page read begun late in a question (after a program that found no
    # row, or a plan's first part) reads only what the model's measured speed reads in the time left, so a slow
    # machine reads less of the page rather than answering later (docs/results.md, "No answer slower than …");
    # 35 s, so that a machine of 30 prompt tokens a second answers within 45 s: a page reads slower a token than
    # the warm-up's shorter text it is first sized by, and a reply's tokens come after it.
    answer_s: float = 35.0
    # The checks that reject an answer (rag/reader/verify.py CHECKS): that it stands on its page and on a line
    # about what is asked. Those of a figure asked and of the lines read are the typed reader's (TYPED_CHECKS).
    # Every page read records the verdict of all of them.
    checks: list[str] = Field(default_factory=lambda: list(PAGE_CHECKS))


class LLMSettings(BaseModel):
    openai_model: str = "gpt-4o"
    compatible_model: str = "local-model"
    model_dir: Path = Path.home() / ".cache" / "multimodal-rag" / "models"
    threads: int = 2
    context_window: int = 4096
    # The embedded model's states kept in memory (~28 KB a token: 2 GB ≈ 100 pages read): a page read again
    # is read in ~2 s instead of ~10 (docs/results.md, "Pages read again from memory"). 0: none kept.
    cache_mb: int = 2048
    request_timeout_s: float = 60.0
    max_retries: int = 2


class Settings(BaseModel):
    preset: str = "embedded"  # the named preset these settings started from (shown with every run)
    data_dir: Path = Path("data")
    trace_dir: Path = Path("logs")
    eval_dir: Path = Path("eval")
    chroma_host: str | None = None
    chroma_port: int = 8000
    # The enrichment queue (rag/pipeline/worker.py): SQLite in data_dir when unset, else a Redis URL for a team.
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
        """One setting by its dotted name ("reader.max_pages", "agent.max_hops"), from text, validated; a
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
        """What a run's trace records: the preset and the settings a user can change per session (agent,
        reader, retrieval)."""
        return self.model_dump(mode="json", include={"preset", "agent", "reader", "retrieval"})

    @classmethod
    def from_env(cls, preset: str = "default", **overrides) -> Settings:
        """Settings from a named preset and the environment. "default" is the preset of the kind of model
        the environment gives: "server" with OPENAI_BASE_URL or OPENAI_API_KEY, else "embedded"."""
        env = os.environ
        if preset == "default":
            preset = "server" if env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY") else "embedded"
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of default, {', '.join(PRESETS)}")
        values = PRESETS[preset].model_dump()
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
    # The embedded 1.5B model on two cores: the best page read whole. Measured in docs/results.md.
    "embedded": Settings(preset="embedded"),
    # A model behind a server (OPENAI_BASE_URL, OPENAI_API_KEY): whole pages, more of them, and the
    # ReAct step searches again when two pages fail.
    "server": Settings(preset="server", reader=ReaderSettings(skills=DOCUMENT_SKILLS, page_tokens=2500, max_pages=6,
                                                              budget_s=60.0, tokens_per_s=1000.0, checks=PAGE_CHECKS + TYPED_CHECKS)),
    # The paper's design exactly, for ablations and comparisons.
    "paper": Settings(
        preset="paper",
        ingest=IngestSettings(ocr="off", chart_text=False, charts=False),
        agent=AgentSettings(low_score=0.75, sufficiency_check="llm"),
        retrieval=RetrievalSettings(hybrid=False, parent_page=False),
    ),
}
