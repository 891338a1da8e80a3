"""The app in a real browser: upload a PDF, watch hops arrive before the answer, open a citation and a trace.

Debian's chromium (apt-get install chromium) driven by Playwright, against `streamlit run` with a
temp store and the real local LLM. Screenshots of every step go to test-artifacts/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import BESTBUY, PEW, ROOT, free_port, pages_of, screenshot_of

from rag.bench.ui import CHROMIUM
from rag.bench.ui import browser as launch

pytestmark = pytest.mark.slow

ARTIFACTS = ROOT / "test-artifacts"
QUESTION = "What was the total sample size of Latinos in the survey?"  # a number the model reads off its page
LIVE_QUESTION = "How do Latinos rate their personal finances?"  # read by the model: its hops are seen live
ANSWER_TIMEOUT_MS = 300_000
# two facts on two pages of the cut (p. 4's methodology, p. 2's children), quoted so that code writes the parts
TWO_PARTS = 'What is the combined share of "respondents surveyed in Spanish" and "Latinos who expect their ' \
            'children to be better off financially"?'



@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`streamlit run` on a free port with a temp store and trace folder; yields (URL, folder)."""
    tmp = tmp_path_factory.mktemp("e2e")
    port = free_port()
    env = {**os.environ, "RAG_DATA_DIR": str(tmp / "data"), "RAG_LOG_DIR": str(tmp / "logs"),
           "RAG_EVAL_DIR": str(tmp / "eval"), "RAG_EMBED_PROVIDER": "local"}
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / "streamlit.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url, tmp
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a script run still waiting on the model
            proc.kill()
        log.close()


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "streamlit exited; see test-artifacts/streamlit.log"
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError("streamlit did not become healthy")


@pytest.fixture(scope="module")
def page(server):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (.ci/run does)")
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        tab.set_default_timeout(60_000)
        tab.goto(server[0])
        yield tab
        browser.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_upload_ask_watch_hops_open_citation_and_trace(page, tmp_path):
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)  # the first page load also loads the embedding model
    # Empty store: the chat sends the user to Upload.
    expect(page.get_by_text("No documents yet")).to_be_visible()
    shot(page, "01-empty-chat")

    # Upload a 4-page cut of a real report; its counts appear.
    pdf = tmp_path / "pew-4-pages.pdf"
    pdf.write_bytes(pages_of(PEW, [4, 5, 10, 19]))
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Upload", exact=True).click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(pdf))
    expect(page.locator('[data-testid="stProgress"]')).to_contain_text(re.compile(r"\d+ of \d+ (pages|texts)"))
    shot(page, "02a-upload-progress")
    report = page.locator('[data-testid="stAlert"]').filter(has_text="pew-4-pages.pdf")
    expect(report).to_contain_text("4 pages", timeout=120_000)
    expect(report).to_contain_text("table")
    expect(page.locator('[data-testid="stImage"]').first).to_be_visible()  # the library's thumbnail
    shot(page, "02-uploaded")

    # Ask: a hop with its fragments is on screen before the answer.
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Chat", exact=True).click()
    page.locator('[data-testid="stChatInputTextArea"]').fill(LIVE_QUESTION)
    t0 = time.monotonic()
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    messages = page.locator('[data-testid="stChatMessage"]')
    expect(messages).to_have_count(2)
    reply = messages.nth(1)
    expect(reply.get_by_text("score").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    first_hop_s = time.monotonic() - t0
    assert reply.get_by_text("answered in").count() == 0, "the evidence arrives before the answer"
    expect(reply.locator('[data-testid="stExpanderIconSpinner"]')).to_be_visible()  # the hop box is still working
    shot(page, "03-first-hop-live")
    expect(reply.get_by_text("answered in")).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    answer_s = time.monotonic() - t0
    run_s = float(re.search(r"answered in ([\d.]+) s", reply.inner_text()).group(1))
    model_failed = reply.get_by_text("Could not get an answer").count() > 0
    shot(page, "04-answer")
    assert not model_failed, "the local model must answer (see 04-answer.png)"

    # The finished turn is drawn again from the conversation (the Stop button goes): click after that.
    expect(reply.get_by_role("button", name="Stop")).to_have_count(0)
    # The hop box shows the pages the model read and what each said (an open question: page reading).
    expect(reply.get_by_text(re.compile(r"Read p\. \d+ of pew-4-pages\.pdf \(read_free\)")).first).to_be_attached()

    # Open the first citation: the page image with the evidence boxed.
    citation = reply.locator('[data-testid="stExpander"]').filter(has_text="Cited page").first
    citation.locator("summary").click()
    expect(citation.locator('[data-testid="stImage"]')).to_be_visible()
    expect(citation.get_by_text("The cited evidence is boxed in red.")).to_be_visible()
    screenshot_of(citation, ARTIFACTS / "05-citation-page.png")  # the page scrolls under the chat input

    # A count the outline answers: the program and its result are shown in the hop box.
    page.locator('[data-testid="stChatInputTextArea"]').fill("How many pages does the document have?")
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    counted = messages.nth(3)
    # An answer the outline gives comes at once, while the turn is still being redrawn (twice on screen).
    expect(counted.get_by_text("answered in").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(counted.get_by_role("button", name="Stop")).to_have_count(0)
    expect(counted.get_by_text("answered in")).to_have_count(1)
    counted.locator('[data-testid="stExpander"]').first.locator("summary").click()
    expect(counted.locator('[data-testid="stCode"]').first).to_contain_text("ans = pages")
    expect(counted.get_by_text("→ 4")).to_be_visible()
    shot(page, "05b-computation")

    # A number the model reads off its page (code checks it stands there), or, once the page's tables are read
    # in the background, code looks up in its table; the hop box says which.
    page.locator('[data-testid="stChatInputTextArea"]').fill(QUESTION)
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    looked_up = messages.nth(5)
    expect(looked_up.get_by_text("answered in").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(looked_up.get_by_role("button", name="Stop")).to_have_count(0)
    looked_up.locator('[data-testid="stExpander"]').first.locator("summary").click()
    expect(looked_up.get_by_text(re.compile(r"Read p\. \d+ of pew-4-pages\.pdf \((read_free|table)\): the answer: 1,500"))
           ).to_be_visible()

    # The run's trace: its row and its timeline.
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Traces", exact=True).click()
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()
    expect(page.locator(".js-plotly-plot .bars path").first).to_be_attached()
    shot(page, "06-trace-timeline")

    (ARTIFACTS / "timings.json").write_text(json.dumps(
        {"first_hop_on_screen_s": round(first_hop_s, 2), "answer_on_screen_s": round(answer_s, 2),
         "first_question_run_s": run_s, "first_question_beyond_run_s": round(answer_s - run_s, 2),
         "model_failed": model_failed}))
    # Issue 26's warm start: the first question after an upload waits for no start-up work (target ≤ 1 s
    # beyond the run's own time; a figure, not an assertion: it is a time on a shared machine).
    print(f"first hop on screen after {first_hop_s:.1f} s, answer after {answer_s:.1f} s (the run itself "
          f"{run_s:.1f} s: {answer_s - run_s:.1f} s beyond it), model failed: {model_failed}")


def test_a_two_part_question_shows_a_hop_per_part_live_then_the_composed_answer_and_its_plan(page):
    """On the 4-page cut uploaded above: each part's hop appears while the run goes on, the answer composes both
    values with their pages, and the trace holds the plan."""
    from playwright.sync_api import expect

    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Chat", exact=True).click()
    messages = page.locator('[data-testid="stChatMessage"]')
    expect(page.locator('[data-testid="stChatInputTextArea"]')).to_be_enabled()
    before = messages.count()
    page.locator('[data-testid="stChatInputTextArea"]').fill(TWO_PARTS)
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    expect(messages).to_have_count(before + 2)
    reply = messages.nth(before + 1)
    expect(reply.get_by_text("Plan: the sum of 2 parts")).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(reply.get_by_text(re.compile(r"Hop 1: .*\(part 1 of 2: sum\)"))).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(reply.get_by_text(re.compile(r"Hop 2: .*\(part 2 of 2: sum\)"))).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    assert reply.get_by_text("answered in").count() == 0, "the second part's hop is shown before the answer"
    shot(page, "07-two-parts-live")
    expect(reply.get_by_text("answered in")).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(reply.get_by_role("button", name="Stop")).to_have_count(0)
    answer = reply.get_by_text(re.compile(r"^\d+% = \d+% \[p\. \d\] \+ \d+% \[p\. \d\]$"))  # not the hop box's
    expect(answer).to_be_visible()
    first, second = re.search(r"\[p\. (\d)\] \+ \d+% \[p\. (\d)\]", answer.inner_text()).groups()
    assert first != second, "the two facts stand on two pages, each cited"
    expect(reply.locator('[data-testid="stExpander"]').filter(has_text="Cited page")).to_have_count(2)
    shot(page, "08-two-parts-answer")

    reply.get_by_role("link", name="Open the trace").click()
    expect(page.get_by_text("Plan: the sum of 2 parts").first).to_be_attached()
    shot(page, "09-two-parts-trace")


def test_evaluate_a_question_in_the_browser_then_open_its_trace(page, server, tmp_path):
    """After the first test's upload: a one-question eval from the Evaluate page, its charts,
    and the question's trace link opening the Traces page."""
    from playwright.sync_api import expect

    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps([{"doc_id": "pew-4-pages.pdf", "question": QUESTION, "answer": "1,500",
                               "answer_format": "Int", "evidence_pages_1based": [4], "evidence_sources": ["Table"]}]))
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Evaluate", exact=True).click()
    page.get_by_text("Run an evaluation on the documents in the store").click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(qa))
    page.get_by_role("button", name=re.compile(r"Run$")).click()
    expect(page.get_by_text("Done: results in")).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    page.reload()
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]')).to_be_visible()
    shot(page, "07-evaluate")
    [trace] = (server[1] / "eval").glob("app-qa-*/traces/*.jsonl")
    page.goto(f"{server[0]}/traces?trace={trace}")
    expect(page.get_by_text(QUESTION).first).to_be_visible()
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()
    shot(page, "08-trace-from-evaluate")


def test_statement_values_in_the_chat(page, tmp_path):
    """Two Best Buy lookups asked in the chat: the value looked up in its statement with the scale the statement
    states, the statement's page cited (pages 2 and 1 of the uploaded cut); then a ratio computed by a program, its
    inputs and their pages shown. Seconds from the question to the
    answer on screen go to test-artifacts/statement-timings.json (issue 39's figure: ≤ 15 s)."""
    from playwright.sync_api import expect

    pdf = tmp_path / "bestbuy-statements.pdf"
    pdf.write_bytes(pages_of(BESTBUY, [39, 40, 41, 42]))
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Upload", exact=True).click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(pdf))
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="bestbuy-statements.pdf")).to_contain_text(
        "4 pages", timeout=120_000)
    # asked once its tables are read (the first test's report is complete too); test_e2e_stages asks before
    expect(page.get_by_text("complete", exact=True)).to_have_count(2, timeout=180_000)
    page.get_by_role("link", name="New conversation").click()
    messages = page.locator('[data-testid="stChatMessage"]')
    expect(messages).to_have_count(0)
    seconds = {}
    for n, (question, value, cited) in enumerate([("What was Best Buy's gross profit in fiscal 2023?", "9,912", 2),
                                                  ("What were Best Buy's total current liabilities at the end of "
                                                   "fiscal 2023?", "8,979", 1)]):
        page.locator('[data-testid="stChatInputTextArea"]').fill(question)
        asked = time.monotonic()
        page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
        reply = messages.nth(2 * n + 1)
        expect(reply.get_by_text("answered in").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
        seconds[question] = round(time.monotonic() - asked, 2)
        expect(reply.get_by_role("button", name="Stop")).to_have_count(0)
        number = re.escape(value).replace(",", ",?")
        expect(reply.get_by_text(re.compile(rf"^\$?{number} million\b.*\[p\. {cited}\]")).first).to_be_visible()
        expect(reply.get_by_text(f"Cited page {cited} · bestbuy-statements.pdf").first).to_be_attached()
    shot(page, "09-statement-values")

    # A ratio: the model writes the program, code looks up its inputs; the hop box shows the program and a table
    # of its inputs with their pages, and each input's page is cited (a click opens it).
    page.locator('[data-testid="stChatInputTextArea"]').fill(
        "What is Best Buy's FY2023 current ratio? It is defined as total current assets divided by total current "
        "liabilities. Round your answer to two decimal places.")
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    reply = messages.nth(5)
    expect(reply.get_by_text("answered in").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(reply.get_by_role("button", name="Stop")).to_have_count(0)
    expect(reply.get_by_text(re.compile(r"^0\.98 = .*8,802 \[p\. 1\].*8,979 \[p\. 1\]")).first).to_be_visible()
    reply.locator('[data-testid="stExpander"]').first.locator("summary").click()
    expect(reply.locator('[data-testid="stCode"]').first).to_contain_text("/")
    inputs = reply.locator('[data-testid="stTable"]').filter(has_text="printed").first
    expect(inputs).to_contain_text("8,802")
    expect(inputs).to_contain_text("p. 1")
    citation = reply.locator('[data-testid="stExpander"]').filter(has_text="Cited page 1 · bestbuy-statements.pdf")
    citation.first.locator("summary").click()
    expect(citation.first.locator('[data-testid="stImage"]')).to_be_visible()
    shot(page, "09b-statement-ratio")

    # A margin's change between two years: code writes the program from the definition, no model call.
    page.locator('[data-testid="stChatInputTextArea"]').fill(
        "How did Best Buy's operating margin change from FY2022 to FY2023, in percentage points?")
    page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
    reply = messages.nth(7)
    expect(reply.get_by_text("answered in").first).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(reply.get_by_text(re.compile(r"^-1\.99% = .*1,795 \[p\. 2\].*3,039 \[p\. 2\]")).first).to_be_visible()
    shot(page, "09c-statement-margin-change")
    (ARTIFACTS / "statement-timings.json").write_text(json.dumps(seconds, indent=2))
    print("seconds from question to answer on screen:", seconds)
