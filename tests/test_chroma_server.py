"""The same store code against a real Chroma server (`chroma run`) on loopback, restarted midway."""

from __future__ import annotations

import shutil
import subprocess
import time

import chromadb
import pytest
from conftest import PEW, free_port, local_settings, pages_of

from rag.workspace import Workspace


class ChromaServer:
    """`chroma run` on 127.0.0.1 over a folder that outlives restarts."""

    def __init__(self, folder) -> None:
        self.folder, self.port, self.proc = folder, free_port(), None

    def start(self) -> None:
        log = (self.folder / "chroma.log").open("a")
        self.proc = subprocess.Popen([shutil.which("chroma"), "run", "--path", str(self.folder / "db"), "--host",
                                      "127.0.0.1", "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=self.port).heartbeat()
                return
            except Exception:
                assert self.proc.poll() is None and time.time() < deadline, (self.folder / "chroma.log").read_text()
                time.sleep(0.3)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture
def chroma_server(tmp_path):
    server = ChromaServer(tmp_path)
    server.start()
    yield server
    server.stop()


def test_chroma_host_sends_the_store_to_the_server_and_survives_a_restart(chroma_server, tmp_path, embed_model):
    settings = local_settings(tmp_path / "files", trace_dir=tmp_path / "logs").model_copy(
        update={"chroma_host": "127.0.0.1", "chroma_port": chroma_server.port})
    ws = Workspace(settings, embed_model=embed_model)
    report = ws.ingest(pages_of(PEW, [3, 4, 5, 6]), PEW)
    assert report.outcome == "ingested"
    server = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
    assert server.get_collection("text").count() == report.fragments["text"]
    assert not (tmp_path / "files" / "chroma").exists(), "nothing written to an embedded store"
    first = ws.search("upward mobility for their children").hits
    assert first[0].fragment.file == PEW

    chroma_server.stop()
    down = Workspace(settings, embed_model=embed_model)
    with pytest.raises(Exception):
        down.store.documents()
    chroma_server.start()

    again = Workspace(settings, embed_model=embed_model)
    assert [d.file for d in again.store.documents()] == [PEW]
    assert {m: again.store.count(m) for m in report.fragments} == report.fragments
    assert [h.fragment.id for h in again.search("upward mobility for their children").hits] == [h.fragment.id for h in first]
    assert ws.search("upward mobility for their children").hits, "a workspace opened before the restart reconnects"
    answer = again.ask("How do Latinos see the economic upward mobility of their children?")
    assert answer.error is None and answer.hops[0].fragments and answer.answer
