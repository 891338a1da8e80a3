"""Shared fixtures: the real dev PDFs from ../shared/eval, real Chroma stores in tmp dirs."""

from __future__ import annotations

import socket
from pathlib import Path

import pymupdf
import pytest

from rag.embed import local_minilm
from rag.ingest.statements import pdf_frames
from rag.settings import Settings
from rag.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval"
PDFS = EVAL / "pdfs"
DEV_QA = EVAL / "qa" / "dev.json"
PEW = "PH_2016.06.08_Economy-Final.pdf"
BESTBUY = "BESTBUY_2023_10K.pdf"


def asked_of(workspace: Workspace, logs: Path, pdf: bytes, name: str):
    """Ingest a PDF made by a test; its questions are then asked of the agent with a scripted LLM that must not
    be called: code answers them."""
    from scripted_llm import ScriptedLLM

    from rag.agent.run import run_question

    report = workspace.ingest(pdf, name)
    assert report.outcome == "ingested", report.error

    def ask(question: str):
        llm = ScriptedLLM(replies=[])
        result = run_question(workspace, llm, question, trace_dir=logs)
        assert not llm.prompts, "code answers: no model call"
        return result
    return ask


def free_port() -> int:
    """A loopback port nobody listens on, for servers the tests start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pdf_bytes(name: str) -> bytes:
    return (PDFS / name).read_bytes()


def pages_of(name: str | Path, pages: list[int]) -> bytes:
    """A real PDF cut down to a few pages: real content, fast to index. `name` is a dev PDF's file name, or
    any PDF's path."""
    doc = pymupdf.open(PDFS / name)
    doc.select([p - 1 for p in pages])
    return doc.tobytes(garbage=3, deflate=True)  # without unused objects: a real small file


def screenshot_of(locator, path: Path, tries: int = 3) -> None:
    """An element's picture for the artifacts. Streamlit redraws a finished turn or a refreshed card, which can
    detach the element mid-shot: take it again, and settle for the whole page rather than fail a test on a
    picture."""
    from playwright.sync_api import Error

    for _ in range(tries):
        try:
            locator.screenshot(path=str(path), timeout=10_000)
            return
        except Error:
            locator.page.wait_for_timeout(500)
    locator.page.screenshot(path=str(path), full_page=True)


def local_settings(data_dir: Path | None, **overrides) -> Settings:
    """Settings that never reach a network, whatever the environment says."""
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    return Settings.from_env(embed_provider="local", chroma_host=None, **overrides)


@pytest.fixture(scope="session")
def embed_model():
    return local_minilm()


@pytest.fixture
def workspace(tmp_path, embed_model) -> Workspace:
    return Workspace(local_settings(tmp_path), embed_model=embed_model)


@pytest.fixture(scope="session")
def pew_workspace(tmp_path_factory, embed_model) -> Workspace:
    """One store with a Pew report (text + vector charts) indexed, shared by read-only tests."""
    ws = Workspace(local_settings(tmp_path_factory.mktemp("pew")), embed_model=embed_model)
    report = ws.ingest(pdf_bytes(PEW), PEW)
    assert report.outcome == "ingested", report.error
    return ws


def frames_of(path: Path):
    """A 10-K's statement frames, read from its PDF as at *searchable*."""
    with pymupdf.open(path) as doc:
        return pdf_frames(doc, path.stem, path.name)


@pytest.fixture(scope="session")
def bestbuy():
    return frames_of(PDFS / BESTBUY)


@pytest.fixture(scope="session")
def nike():
    return frames_of(EVAL / "fin" / "pdfs" / "NIKE_2021_10K.pdf")


@pytest.fixture(scope="session")
def netflix():
    return frames_of(EVAL / "fin" / "pdfs" / "NETFLIX_2015_10K.pdf")
