"""The app as a team uses it: several browsers asking at once (`python -m rag bench ui`).

Each user is its own Chromium context (its own Streamlit session) on one server. They press Enter
together; for each, the bench records how long until the page shows the question's place in the
model's queue, the first hop's evidence, and the answer, which run answered it (the answer's trace
link) and any error. Debian's chromium driven by Playwright, as the browser tests do.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
QUEUE_TEXT = re.compile(r"Waiting for the model — (\d+) questions? ahead|The model is reading your question")
# The page notes the moment the reply first shows the queue line and a hop's scores (epoch ms), so
# the figures do not depend on how often the bench polls four pages.
_FIRST_SEEN = """
window.__firstSeen = {};
new MutationObserver(() => {
  const reply = document.querySelectorAll('[data-testid="stChatMessage"]')[1];
  if (!reply) return;
  const text = reply.textContent, seen = window.__firstSeen;
  if (!seen.queue && /Waiting for the model|The model is reading your question/.test(text)) seen.queue = Date.now();
  if (!seen.hop && text.includes('score ')) seen.hop = Date.now();
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


class AppServer:
    """`streamlit run streamlit_app.py` on a loopback port, with its own data, log and eval folders
    under `folder`. `restart()` keeps the port and the folders, as a redeploy would."""

    def __init__(self, folder: Path, log: Path | None = None, env: dict | None = None) -> None:
        self.folder = Path(folder)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or self.folder / "streamlit.log"
        self.env = {**os.environ, "RAG_DATA_DIR": str(self.folder / "data"), "RAG_LOG_DIR": str(self.folder / "logs"),
                    "RAG_EVAL_DIR": str(self.folder / "eval"), "RAG_EMBED_PROVIDER": "local", **(env or {})}
        self.proc: subprocess.Popen | None = None

    @property
    def trace_dir(self) -> Path:
        return self.folder / "logs"

    def ingest(self, *pdfs: Path) -> None:
        """Index PDFs into the server's store from the command line (before the server opens it)."""
        # read to complete here: a background worker writing the embedded store beside the server is two writers
        subprocess.run([sys.executable, "-m", "rag", "ingest", *map(str, pdfs), "--wait", "complete", "--json"],
                       cwd=ROOT, env=self.env,
                       check=True, capture_output=True, timeout=1200)

    def start(self, timeout: float = 120) -> AppServer:
        with Path(self.log).open("a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
                 "--server.port", str(self.port), "--server.address", "127.0.0.1"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited; see {self.log}")
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).status == 200:
                    return self
            except OSError:
                time.sleep(0.3)
        raise TimeoutError("streamlit did not become healthy")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # a script run still waiting on the model
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser(playwright):
    if not Path(CHROMIUM).exists():
        raise RuntimeError("Debian's chromium is needed: apt-get install chromium")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def open_chat(context, url: str, script: str = ""):
    """A new tab on the chat, ready for a question (`script` runs in it before the app's own)."""
    if script:
        context.add_init_script(script)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}/chat")
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    return page


def bench_ui(url: str, questions: list[str], users: int = 4, timeout_s: float = 900,
             screenshots: Path | None = None, warm_up: bool = True, chromium=None) -> dict:
    """`users` browser contexts ask at the same moment; per user: seconds from Enter until the queue
    line, the first hop's evidence and the answer are on screen, the run that answered, any error.
    A warm server is measured: first one question is asked and answered alone (model and indexes load).
    `chromium`: a browser already launched (one Playwright per thread), else one is launched here."""
    if chromium is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            chromium = browser(pw)
            try:
                return bench_ui(url, questions, users, timeout_s, screenshots, warm_up, chromium)
            finally:
                chromium.close()
    asked = [questions[i % len(questions)] for i in range(users)]
    first = _first_question(chromium, url, questions[0], timeout_s) if warm_up else None
    pages = [open_chat(chromium.new_context(viewport={"width": 1300, "height": 900}), url, _FIRST_SEEN) for _ in asked]
    starts = []
    for page, question in zip(pages, asked):
        page.locator('[data-testid="stChatInputTextArea"]').fill(question)
    for page in pages:
        page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
        starts.append(time.monotonic())
    users_seen = [{"question": q, "queue_s": None, "ahead": [], "first_hop_s": None, "answer_s": None,
                   "run_id": None, "error": None, "asked_at": time.time() - (time.monotonic() - t)}
                  for q, t in zip(asked, starts)]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(u["answer_s"] is None and not u["error"] for u in users_seen):
        for n, (page, seen) in enumerate(zip(pages, users_seen)):
            if seen["answer_s"] is None and not seen["error"]:
                _look(page, seen, time.monotonic() - starts[n], screenshots, n)
        time.sleep(0.1)
    for n, (page, seen) in enumerate(zip(pages, users_seen)):
        if seen["answer_s"] is None and not seen["error"]:
            seen["error"] = f"no answer within {timeout_s:.0f} s"
        shown = page.evaluate("window.__firstSeen")
        for key, name in (("queue", "queue_s"), ("hop", "first_hop_s")):
            if shown.get(key):  # the page's own clock; the poll's time is the fallback
                seen[name] = round(shown[key] / 1000 - seen["asked_at"], 2)
        if screenshots:
            page.screenshot(path=str(screenshots / f"user{n + 1}-answer.png"), full_page=True)
        page.context.close()
    return {"users": users, "first_question": first, "per_user": users_seen, **_summary(users_seen)}


def _first_question(chromium, url: str, question: str, timeout_s: float) -> dict:
    """One question asked alone as soon as the chat is open: seconds until its answer is on screen, the
    run's own seconds, and the difference (what start-up work the user waited for: issue 26's warm start)."""
    context = chromium.new_context()
    page = open_chat(context, url)
    page.locator('[data-testid="stChatInputTextArea"]').fill(question)
    start = time.monotonic()
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    reply = page.locator('[data-testid="stChatMessage"]').nth(1)
    reply.get_by_text(re.compile("answered in|Could not get an answer")).first.wait_for(timeout=timeout_s * 1000)
    on_screen = time.monotonic() - start
    run = re.search(r"answered in ([\d.]+) s", reply.inner_text())
    context.close()
    run_s = float(run.group(1)) if run else None
    return {"answer_s": round(on_screen, 2), "run_s": run_s,
            "beyond_run_s": round(on_screen - run_s, 2) if run_s is not None else None}


def _look(page, seen: dict, elapsed: float, screenshots: Path | None, n: int) -> None:
    """Note what this user's page shows now."""
    reply = page.locator('[data-testid="stChatMessage"]').nth(1)
    if not reply.count():
        return
    text = reply.inner_text()
    for match in QUEUE_TEXT.finditer(text):
        ahead = int(match.group(1) or 0)
        if seen["queue_s"] is None:
            seen["queue_s"] = round(elapsed, 2)
            if screenshots:  # the status box's title says it
                reply.locator('[data-testid="stExpander"] summary').first.scroll_into_view_if_needed()
                page.screenshot(path=str(screenshots / f"user{n + 1}-queue.png"))
        if not seen["ahead"] or seen["ahead"][-1] != ahead:
            seen["ahead"].append(ahead)
    if seen["first_hop_s"] is None and "score " in text:
        seen["first_hop_s"] = round(elapsed, 2)
    if "Could not get an answer" in text or page.locator('[data-testid="stException"]').count():
        seen["error"] = text[-300:]
    link = reply.locator('a[href*="run="]')
    if "answered in" in text and link.count():
        seen["answer_s"] = round(elapsed, 2)
        seen["run_id"] = link.first.get_attribute("href").split("run=")[1]


def _summary(users: list[dict]) -> dict:
    def worst(key: str) -> float | None:
        values = [u[key] for u in users if u[key] is not None]
        return max(values) if len(values) == len(users) else None

    return {"max_queue_s": worst("queue_s"), "max_first_hop_s": worst("first_hop_s"), "max_answer_s": worst("answer_s"),
            "errors": [u["error"] for u in users if u["error"]]}


def bench_ui_on_pdf(pdf: Path, questions: list[str], users: int = 4) -> dict:
    """The whole bench from nothing: a server on a fresh store holding `pdf`, then `bench_ui`."""
    with tempfile.TemporaryDirectory() as tmp:
        server = AppServer(Path(tmp))
        server.ingest(pdf)
        with server:
            result = bench_ui(server.url, questions, users)
        result["answered_own_question"] = answered_own_question(server.trace_dir, result["per_user"])
        server_times(server.trace_dir, result["per_user"])
    return result


def server_times(trace_dir: Path, users: list[dict]) -> None:
    """Where a user's first-hop wait went, from the server's trace: seconds from Enter until its run
    started (the page's rerun) and until the run's first hop ended (search), with the search's own
    milliseconds (embedding, each collection, total), and until it asked for the model (the queue line);
    the rest is drawing."""
    from rag.trace import load_trace

    for u in users:
        path = trace_dir / f"{u['run_id']}.jsonl"
        if not u["run_id"] or not path.exists():
            continue
        first = {}  # kind → its first event, from one read of the trace
        for span in load_trace(path):
            first.setdefault(span["event"]["kind"], span["event"])
        start, hop, waiting = first.get("run_start"), first.get("hop_end", {}), first.get("waiting")
        u["run_start_s"] = round(start["t_start"] - u["asked_at"], 2) if start else None
        u["hop_end_s"] = round(hop["t_end"] - u["asked_at"], 2) if hop.get("t_end") else None
        u["search_ms"] = {k: round(v) for k, v in hop.get("timings_ms", {}).items()}
        u["queue_event_s"] = round(waiting["t_start"] - u["asked_at"], 2) if waiting else None


def answered_own_question(trace_dir: Path, users: list[dict]) -> bool:
    """Each user's answer came from a run of the question that user asked."""
    from rag.trace import summarize

    return all(u["run_id"] and summarize(trace_dir / f"{u['run_id']}.jsonl").question == u["question"] for u in users)
