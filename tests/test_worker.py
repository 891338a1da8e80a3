"""Background workers as a user runs them: `rag ingest` returns at searchable, `rag worker` reads the rest.
A worker killed with SIGKILL mid-document resumes where it stopped and ends with the same fragments as an
uninterrupted ingest. The team's path: a real Redis broker, a real Chroma server, two workers."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BESTBUY, PDFS, PEW, ROOT, free_port, pages_of
from test_chroma_server import ChromaServer
from test_cli import rag

pytestmark = pytest.mark.slow
READING = re.compile(r"reading \S+: (\d+) of \d+ pages left")

DUMP = """
import json, sys
from rag.settings import Settings
from rag.workspace import Workspace
ws = Workspace(Settings.from_env())
out = {}
for d in ws.store.documents(include_indexing=True):
    out[d.file] = {"stage": d.stage, "fragments": d.fragments, "records": {
        name: {n.node_id: n.get_content() for n in ws.store.nodes(name, doc_ids=[d.doc_id])}
        for name in ("text", "table", "image_caption", "pages")}}
print(json.dumps(out))
"""


def dump(store: Path, env: dict | None = None) -> dict:
    """Every record of every document, read by a fresh process (as a restarted server sees the store)."""
    proc = subprocess.run([sys.executable, "-c", DUMP], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "RAG_DATA_DIR": str(store), "RAG_EMBED_PROVIDER": "local",
                               "PYTHONPATH": str(ROOT), **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def worker(store: Path, *args: str, env: dict | None = None, log: Path | None = None) -> subprocess.Popen:
    out = (log or store.parent / "worker.log").open("a")
    return subprocess.Popen([sys.executable, "-m", "rag", "--store", str(store), "worker", *args], cwd=ROOT,
                            env={**os.environ, "RAG_EMBED_PROVIDER": "local", "PYTHONPATH": str(ROOT), **(env or {})},
                            stdout=out, stderr=subprocess.STDOUT)


def registry(store: Path) -> dict:
    from conftest import local_settings

    from rag.store import make_client

    got = make_client(local_settings(store)).get_collection("documents").get(include=["metadatas"])
    return dict(zip(got["ids"], got["metadatas"]))


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_ingest_returns_at_searchable_and_a_worker_killed_midway_resumes_to_the_same_fragments(tmp_path):
    pdf = tmp_path / "bestbuy-10k.pdf"
    shutil.copy(PDFS / BESTBUY, pdf)
    whole = tmp_path / "whole"
    out = json.loads(rag(whole, "ingest", str(pdf), "--wait", "complete", "--json").stdout)["documents"][0]
    assert out["stage"] == "complete"

    store = tmp_path / "staged"
    out = json.loads(rag(store, "ingest", str(pdf), "--json", env={"RAG_WORKER": "off"}).stdout)["documents"][0]
    assert out["outcome"] == "ingested" and out["stage"] == "searchable" and out["fragments"]["table"] == 0
    docs = json.loads(rag(store, "docs", "--json").stdout)["documents"]
    assert docs[0]["stage"] == "searchable" and docs[0]["pages_done"] == 0
    assert "searchable, 0/75 pages read" in rag(store, "docs").stdout

    first = worker(store)
    deadline = time.time() + 300
    while "c" not in (states := registry(store)[out["doc_id"]]["page_states"]) or states.count("c") < 8:
        assert first.poll() is None and time.time() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
        time.sleep(0.2)
    pool = children(first.pid)
    first.send_signal(signal.SIGKILL)  # mid-document: some pages read whole, most not
    first.wait()
    killed_at = states.count("c")
    assert 0 < killed_at < 75, states
    end = time.time() + 30
    while any(alive(pid) for pid in pool):
        assert time.time() < end, "the killed worker's parsing processes linger"
        time.sleep(0.2)

    again = worker(store, "--exit-when-idle", "2", log=tmp_path / "restarted.log")
    assert again.wait(timeout=600) == 0, (tmp_path / "restarted.log").read_text()[-3000:]
    [left] = [int(n) for n in READING.findall((tmp_path / "restarted.log").read_text())]
    assert left <= 75 - killed_at, "it resumed where it stopped"

    staged, uninterrupted = dump(store)["bestbuy-10k.pdf"], dump(whole)["bestbuy-10k.pdf"]
    assert staged["stage"] == "complete"
    assert staged["records"] == uninterrupted["records"], "the same fragments, by id and text"
    assert staged["fragments"] == uninterrupted["fragments"] == {
        m: len(staged["records"][m]) for m in ("text", "table", "image_caption")}
    assert not list((store / "pending").iterdir())


@pytest.fixture
def redis_url(tmp_path):
    """A real Redis server on loopback (.ci/run installs Debian's redis-server)."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's redis-server (.ci/run does)")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    import redis

    client = redis.Redis(port=port)
    deadline = time.time() + 30
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            assert proc.poll() is None and time.time() < deadline
            time.sleep(0.1)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


def test_a_team_queues_through_redis_and_two_workers_share_the_documents(tmp_path, redis_url):
    """A Chroma server, a Redis broker and two workers, as on two machines sharing the data folder: two
    uploads queue up in Redis, and each is read whole by one worker."""
    from rag.pipeline import worker as queue_worker
    from rag.settings import Settings

    chroma = ChromaServer(tmp_path)
    chroma.start()
    try:
        team = {"RAG_QUEUE_URL": redis_url, "RAG_WORKER": "off", "CHROMA_HOST": "127.0.0.1",
                "CHROMA_PORT": str(chroma.port)}
        store = tmp_path / "shared"
        files = []
        for name, pages in (("pew.pdf", [3, 4, 5, 6, 9, 10, 11, 12, 13]), ("statements.pdf", list(range(37, 47)))):
            files.append(tmp_path / name)
            files[-1].write_bytes(pages_of(PEW if name == "pew.pdf" else BESTBUY, pages))
        env = {**os.environ, "RAG_EMBED_PROVIDER": "local", "PYTHONPATH": str(ROOT), **team}
        proc = subprocess.run([sys.executable, "-m", "rag", "--store", str(store), "ingest", *map(str, files), "--json"],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert {d["stage"] for d in json.loads(proc.stdout)["documents"]} == {"searchable"}
        settings = Settings.from_env(data_dir=store, queue_url=redis_url, chroma_host="127.0.0.1", chroma_port=chroma.port)
        huey, _ = queue_worker._queue(settings)
        assert huey.pending_count() == 2, "both uploads wait in Redis"

        logs = [tmp_path / f"worker-{n}.log" for n in (1, 2)]
        workers = [worker(store, "--exit-when-idle", "3", env=team, log=log) for log in logs]
        for w, log in zip(workers, logs):
            assert w.wait(timeout=600) == 0, log.read_text()[-3000:]
        read = [m.group(1) for log in logs for m in re.finditer(r"reading (\S+):", log.read_text())]
        assert sorted(read) == ["pew.pdf", "statements.pdf"], "each read once, by one of the two"
        out = dump(store, {k: v for k, v in team.items() if k.startswith("CHROMA")})
        assert {f: d["stage"] for f, d in out.items()} == {"pew.pdf": "complete", "statements.pdf": "complete"}
        assert out["statements.pdf"]["fragments"]["table"] > 0 and out["pew.pdf"]["fragments"]["image_caption"] > 0
        assert huey.pending_count() == 0
    finally:
        chroma.stop()
