"""Load: eight questions at once from threads (as Streamlit sessions ask them) while a PDF is
ingested into the same store, with the real embedded model. Nothing lost, duplicated or torn."""

from __future__ import annotations

import pytest
from conftest import BESTBUY, PEW, local_settings, pages_of

from rag.bench import bench_load
from rag.records import MODALITIES
from rag.workspace import Workspace

QUESTIONS = ["How do Latinos see their personal finances?", "What share expect their children to be better off?",
             "How did views of the economy change since 2008?", "What was the sample size of the survey?"]


@pytest.mark.slow
def test_eight_questions_and_an_ingest_at_once(tmp_path, embed_model):
    settings = local_settings(tmp_path / "data")
    settings.agent.max_output_tokens = 120  # short answers: this measures concurrency, not prose
    settings.agent.timeout_s = 1200  # eight questions queue for one CPU model; none may time out
    ws = Workspace(settings, embed_model=embed_model)
    assert ws.ingest(pages_of(PEW, [3, 4, 5, 6]), "pew.pdf").outcome == "ingested"
    pdf = tmp_path / "bestbuy-statements.pdf"
    pdf.write_bytes(pages_of(BESTBUY, [39, 40, 41, 42]))

    result = bench_load(ws, QUESTIONS, pdf, users=8)
    print(result)
    assert result["errors"] == [] and result["incomplete_traces"] == []
    assert result["ingest"]["outcome"] == "ingested"
    assert result["fragments_added"] == result["fragments_expected"], "no fragment lost or duplicated"
    assert sorted(d.file for d in ws.store.documents()) == ["bestbuy-statements.pdf", "pew.pdf"]
    for doc in ws.store.documents():  # each document's fragments, exactly as its registry entry counts them
        for m in MODALITIES:
            assert len(ws.store.nodes(m, doc_ids=[doc.doc_id])) == doc.fragments[m]
    assert result["latency_s"]["p50"] <= result["latency_s"]["p95"] and result["questions_per_minute"] > 0
