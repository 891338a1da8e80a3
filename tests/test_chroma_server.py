"""The same store code against a real Chroma server (`chroma run`) on loopback."""

from __future__ import annotations

import shutil
import subprocess
import time

import chromadb
import pytest
from conftest import PEW, free_port, local_settings, pages_of

from rag.workspace import Workspace


@pytest.fixture
def chroma_server(tmp_path):
    port = free_port()
    log = (tmp_path / "chroma.log").open("w")
    proc = subprocess.Popen([shutil.which("chroma"), "run", "--path", str(tmp_path / "db"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while True:
        try:
            chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
            break
        except Exception:
            assert proc.poll() is None and time.time() < deadline, (tmp_path / "chroma.log").read_text()
            time.sleep(0.3)
    yield port
    proc.terminate()
    proc.wait(timeout=30)


def test_chroma_host_sends_the_store_to_the_server(chroma_server, tmp_path, embed_model):
    settings = local_settings(tmp_path / "files").model_copy(
        update={"chroma_host": "127.0.0.1", "chroma_port": chroma_server})
    ws = Workspace(settings, embed_model=embed_model)
    report = ws.ingest(pages_of(PEW, [3, 4, 5, 6]), PEW)
    assert report.status == "ingested"
    server = chromadb.HttpClient(host="127.0.0.1", port=chroma_server)
    assert server.get_collection("text").count() == report.fragments["text"]
    assert not (tmp_path / "files" / "chroma").exists(), "nothing written to an embedded store"
    assert ws.search("upward mobility for their children").hits[0].fragment.file == PEW
    assert [d.file for d in Workspace(settings, embed_model=embed_model).store.documents()] == [PEW]
