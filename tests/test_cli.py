"""`python -m rag` as a user runs it: subprocesses, JSON shapes, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import DEV_QA, PDFS, PEW, ROOT, pages_of


def rag(store, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAG_EMBED_PROVIDER": "local", "PYTHONPATH": str(ROOT), **(env or {})}
    env.pop("CHROMA_HOST", None)
    proc = subprocess.run([sys.executable, "-m", "rag", "--store", str(store), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("cli")
    small = store.parent / "pew-pages.pdf"
    small.write_bytes(pages_of(PEW, [3, 4, 5, 6]))
    not_pdf = store.parent / "notes.pdf"
    not_pdf.write_text("just some notes")
    proc = rag(store, "ingest", str(small), str(not_pdf), "--json", check=False)
    return store, proc


def test_ingest_json_reports_each_file_and_fails_on_a_bad_one(cli_store):
    _store, proc = cli_store
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    good, bad = out["documents"]
    assert good["outcome"] == "ingested" and good["pages"] == 4 and good["fragments"]["text"] > 10
    assert set(good["fragments"]) == {"text", "table", "image_caption"} and good["seconds"] > 0
    assert good["pages_per_second"] == pytest.approx(4 / good["seconds"], abs=0.005)  # rounded to 2 decimals
    assert bad["outcome"] == "error" and "not a PDF" in bad["error"]
    assert out["pages_per_second"] > 0


def test_docs_search_and_delete(cli_store):
    store, _ = cli_store
    docs = json.loads(rag(store, "docs", "--json").stdout)["documents"]
    assert [d["file"] for d in docs] == ["pew-pages.pdf"]
    found = json.loads(rag(store, "search", "upward mobility for their children", "--json").stdout)
    assert found["route"] and found["results"][0]["page"] in {1, 2, 3, 4}
    assert set(found["results"][0]) >= {"id", "modality", "file", "page", "score", "text", "bbox"}
    assert set(found["timings_ms"]) >= {"text", "table", "image_caption", "total"}
    one = json.loads(rag(store, "search", "mobility", "--modality", "text", "-k", "2", "--json").stdout)
    assert len(one["results"]) == 2 and {r["modality"] for r in one["results"]} == {"text"}
    assert "deleted pew-pages.pdf" in rag(store, "delete", docs[0]["doc_id"][:10]).stdout
    assert json.loads(rag(store, "docs", "--json").stdout)["documents"] == []
    gone = rag(store, "delete", "pew-pages.pdf", check=False)
    assert gone.returncode == 1 and "no single document" in gone.stderr


def test_retrieval_eval_json(tmp_path):
    questions = [q for q in json.loads(DEV_QA.read_text()) if q["doc_id"] == PEW][:3]
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps(questions))
    out = json.loads(rag(tmp_path / "store", "eval", "--retrieval-only", "--qa", str(qa),
                         "--pdfs", str(PDFS), "--json").stdout)
    assert out["questions"] == sum(not q["unanswerable"] for q in questions)
    assert set(out["recall_at_6"]) == {"text", "table", "image_caption", "overall"}
    assert 0 <= out["recall_merged_top10"] <= 1


def test_retrieval_ablation_adds_one_step_at_a_time(tmp_path):
    """The paper's design, then each addition, on a folder holding only the questions' PDF."""
    questions = [q for q in json.loads(DEV_QA.read_text()) if q["doc_id"] == PEW and not q["unanswerable"]][:2]
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "pdfs" / PEW).write_bytes((PDFS / PEW).read_bytes())
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps(questions))
    out = json.loads(rag(tmp_path / "store", "eval", "--retrieval-only", "--ablation", "--qa", str(qa),
                         "--pdfs", str(tmp_path / "pdfs"), "--json").stdout)
    steps = [r["step"] for r in out["steps"]]
    assert steps == ["paper's design", "+ OCR", "+ chart text", "+ hybrid BM25", "+ parent page", "+ adaptive k"]
    assert all(r["questions"] == 2 and r["ingest_pages_per_s"] > 0 for r in out["steps"])
    refused = rag(tmp_path / "store", "eval", "--retrieval-only", "--ablation", "--qa", str(qa), check=False)
    assert refused.returncode == 1 and "--pdfs" in refused.stderr


def test_bench_retrieve_reports_latency_and_recall(tmp_path):
    out = json.loads(rag(tmp_path, "bench", "retrieve", "--fragments", "600", "--queries", "10", "--json").stdout)
    [row] = out["results"]
    assert row["fragments"] == 600 and 0 < row["p50_ms"] <= row["p95_ms"]
    assert 0.9 <= row["hnsw_recall_at_k"] <= 1.0


def test_bench_ingest_reports_throughput_and_peak_memory(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "pew-8.pdf").write_bytes(pages_of(PEW, list(range(1, 9))))  # 8 pages: parsed in worker processes
    out = json.loads(rag(tmp_path / "store", "bench", "ingest", "--pdfs", str(pdfs), "--json").stdout)
    assert out["pages"] == 8 and out["pages_per_second"] > 0 and out["seconds_by_step"]["embed"] > 0
    assert out["peak_rss_mb"]["process"] > 0 and out["peak_rss_mb"]["largest_worker"] > 0
    assert out["by_document"]["pew-8.pdf"]["pages"] == 8 and out["by_document"]["pew-8.pdf"]["seconds_by_step"]["embed"] > 0


def test_conversations_are_listed_shown_and_deleted(tmp_path):
    from rag.ui.conversations import Conversations

    saved = Conversations(tmp_path / "conversations.sqlite")
    cid = saved.create("How do Latinos see their finances?")
    turn = saved.start_turn(cid, "How do Latinos see their finances?")
    saved.save(turn.model_copy(update={"status": "error", "error": "no answer within 240 s"}))
    [listed] = json.loads(rag(tmp_path, "conversations", "--json").stdout)["conversations"]
    assert (listed["id"], listed["turns"]) == (cid, 1)
    shown = json.loads(rag(tmp_path, "conversations", "show", cid, "--json").stdout)
    assert [(t["question"], t["status"], t["error"]) for t in shown["turns"]] == [
        ("How do Latinos see their finances?", "error", "no answer within 240 s")]
    assert "deleted" in rag(tmp_path, "conversations", "delete", cid).stdout
    assert rag(tmp_path, "conversations").stdout.strip() == "no conversations yet"
    missing = rag(tmp_path, "conversations", "show", cid, check=False)
    assert missing.returncode == 1 and "no conversation" in missing.stderr


def test_set_takes_any_settings_type_from_text():
    """`--set SECTION.KEY=VALUE` as the CLI passes it: numbers, booleans and lists (as JSON) validated."""
    from pydantic import ValidationError

    from rag.settings import Settings

    settings = Settings.from_env()
    for path, text in [("agent.max_hops", "2"), ("retrieval.hybrid", "false"), ("reader.skills", "[]"),
                       ("reader.skills", '[]')]:
        settings.set(path, text)
    assert (settings.agent.max_hops, settings.retrieval.hybrid, settings.reader.skills) == (2, False, [])
    with pytest.raises(ValidationError):
        settings.set("agent.max_hops", "two")
    with pytest.raises(ValueError, match="unknown setting"):
        settings.set("reader.no_such_thing", "1")


def test_the_preset_follows_the_kind_of_model(monkeypatch):
    """One settings preset per kind of model: a server's model reads longer pages, more of them, in a larger
    time budget; a named preset wins."""
    from rag.settings import Settings

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    embedded = Settings.from_env()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    server = Settings.from_env()
    assert (embedded.preset, server.preset) == ("embedded", "server")
    assert server.reader.page_tokens > embedded.reader.page_tokens and server.reader.max_pages > embedded.reader.max_pages
    assert server.reader.budget_s > embedded.reader.budget_s, "a server's model gets a larger time budget"
    assert Settings.from_env("paper").preset == "paper" and Settings.from_env().for_trace()["preset"] == "server"
    with pytest.raises(ValueError, match="unknown preset"):
        Settings.from_env("fast")


def test_plan_prints_the_parts_code_writes_and_one_fact_for_the_rest(tmp_path):
    question = "What is the total number of visitors in June and July at the harbour museum?"
    plan = json.loads(rag(tmp_path, "plan", question, "--json").stdout)
    assert plan["composition"] == "sum" and plan["by"] == "code"
    assert [p["question"] for p in plan["parts"]] == ["What is the number of visitors in June at the harbour museum?",
                                                     "What is the number of visitors in July at the harbour museum?"]
    assert "one fact" in rag(tmp_path, "plan", "How many visitors came in June?").stdout


def test_glossary_says_what_an_analysts_word_names_and_lists_them_all(tmp_path):
    capex = json.loads(rag(tmp_path, "glossary", "capital spending", "--json").stdout)
    assert list(capex["rows"]) == ["capex"] and capex["rows"]["capex"]["statement"] == "cash flow statement"
    assert "ROCE" not in rag(tmp_path, "glossary", "roce").stdout and \
        "return on capital employed = operating income / (total assets - total current liabilities)" in \
        rag(tmp_path, "glossary", "roce").stdout
    every = rag(tmp_path, "glossary").stdout
    assert "sg&a (income statement): selling general and administrative expenses" in every and "net debt = " in every
    assert rag(tmp_path, "glossary", "number of employees", check=False).returncode == 1
