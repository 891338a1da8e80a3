"""LLM faults against a real OpenAI-compatible HTTP server on loopback that misbehaves on cue.

The server speaks the chat-completions API and answers each request from a script: a
normal ReAct reply, 429s, 5xx, a hang past the client's timeout, a context-length error,
output that is not ReAct, an error body that echoes the API key. The app talks to it the
way it talks to vLLM or OpenAI (OPENAI_BASE_URL + make_llm), so the openai client's own
retries, backoff and timeouts are what is tested. No mocks.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from conftest import PEW, local_settings, pages_of
from test_app import app, open_workspace

from app_pages.common import workspace
from rag.agent.run import run_question
from rag.bench.faults import FaultServer, Reply, completion, error
from rag.models.llm import make_llm
from rag.trace import load_trace
from rag.workspace import Workspace

API_KEY = "sk-test-FAULTS0123456789abcdefXYZ"
QUESTION = "How do Latinos see their personal finances?"
ANSWER = "Thought: I can answer now.\nAnswer: Most Latinos rate their finances as good or excellent [p. 1]."


BROKEN = "Thought: I will search again\nAction: TextSearch\nAction Input: {query: unterminated"
FALLBACK = "Latinos are more upbeat about their personal finances than in 2008 [p. 2]."
KEY_ECHO = "Incorrect API key provided: {key}. You can find your API key at https://platform.openai.com/api-keys."
TOO_LONG = "This model's maximum context length is 4096 tokens. However, your messages resulted in 9120 tokens."
CONTEXT_OVERFLOW = {  # OpenAI's body, and the flat one older vLLM servers send
    "openai": error(400, TOO_LONG + " Please reduce the length of the messages.", "context_length_exceeded"),
    "vllm": Reply(400, {"object": "error", "message": TOO_LONG, "type": "BadRequestError", "param": None,
                        "code": 400}),
}


@pytest.fixture(scope="module")
def server():
    with FaultServer() as s:
        yield s


@pytest.fixture(scope="module")
def store(tmp_path_factory, embed_model) -> Workspace:
    """Two real pages of the Pew report in a real store, shared by the tests (they only read it)."""
    ws = Workspace(local_settings(tmp_path_factory.mktemp("faults")), embed_model=embed_model)
    assert ws.ingest(pages_of(PEW, [3, 4]), "pew-p3-4.pdf").outcome == "ingested"
    ws.settings.agent.low_score = -1.0  # no paraphrase calls: each test counts the model's requests
    ws.settings.reader.max_pages = 1  # one page read: a reply that does not answer does not bring another
    return ws


@pytest.fixture
def llm_env(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.delenv("OPENAI_MODEL", raising=False)


@pytest.fixture
def run(store, server, llm_env, tmp_path):
    """Play a script on the server, then ask through make_llm's real OpenAI-compatible client."""

    def go(*replies: Reply, question: str = QUESTION, timeout_s: float = 1.0, retries: int = 2):
        server.play(*replies)
        settings = store.settings.model_copy(deep=True)
        settings.llm.request_timeout_s, settings.llm.max_retries = timeout_s, retries
        return run_question(store, make_llm(settings), question, trace_dir=tmp_path)

    return go


def reading(request: dict) -> str:
    """The page reader's reply as a model would give it: found, the first words of the page's longest line."""
    prompt = request["messages"][-1]["content"]
    line = max(prompt.split("<page>")[1].split("</page>")[0].splitlines(), key=len)
    return json.dumps({"found": True, "answer": " ".join(line.split()[:3])})


READ = completion(reading)


@pytest.fixture
def react(store):
    """The ReAct step runs after the first hop (the coverage check would end the search there)."""
    before = store.settings.agent.sufficiency_check
    store.settings.agent.sufficiency_check = "react"
    yield
    store.settings.agent.sufficiency_check = before


def error_spans(result) -> list[dict]:
    return [s for s in load_trace(result.trace) if s["kind"] == "error"]


# --- retries and backoff -------------------------------------------------------------------


def test_rate_limited_twice_then_the_answer_arrives_after_backoff(run, server):
    result = run(error(429, "Rate limit reached", "rate_limit_exceeded", **{"Retry-After": "0"}),
                 error(429, "Rate limit reached", "rate_limit_exceeded", **{"Retry-After": "0"}), READ)
    assert result.error is None and result.stop_reason == "sufficient", result.answer
    assert result.citations and result.tokens == {"prompt": 321, "completion": 21}, "one page read"
    assert len(server.requests) == 3
    first, second = server.gaps()
    assert 0.3 < first < second, "exponential backoff between the retries, not a hammering loop"


def test_a_retry_after_header_is_honoured(run, server):
    result = run(error(429, "Rate limit reached", **{"Retry-After": "1.2"}), completion(ANSWER))
    assert result.error is None and len(server.requests) == 2
    assert server.gaps()[0] >= 1.2


@pytest.mark.parametrize("status", [500, 503])
def test_a_server_error_that_persists_is_retried_max_retries_times_then_explained(run, server, status):
    result = run(error(status, "The server had an error while processing your request."), retries=2)
    assert len(server.requests) == 3, "max_retries=2: one request and two retries, in one retry loop"
    assert min(server.gaps()) > 0.3
    assert f"Error code: {status}" in result.error and result.stop_reason == "error"
    assert result.answer.startswith("The language model failed") and f"Error code: {status}" in result.answer
    assert "[p. " in result.answer, "the fragments found before the failure are still shown"
    [span] = error_spans(result)
    assert f"Error code: {status}" in span["event"]["message"]


def test_a_server_slower_than_the_request_timeout_is_a_timeout_error(run, server):
    result = run(Reply(delay=60, body=completion(ANSWER).body), timeout_s=0.5, retries=1)
    assert len(server.requests) == 2
    assert "timed out" in result.error.lower() and "timed out" in result.answer.lower(), result.error
    assert "[p. " in result.answer and error_spans(result)


def test_bench_faults_times_each_fault_on_its_own_server(store):
    """`python -m rag bench faults`: the seconds each fault takes to reach the user are its figures;
    here only what happened is checked (timings depend on the machine)."""
    from rag.bench import bench_faults

    before = os.environ.get("OPENAI_BASE_URL")
    result = bench_faults(store, QUESTION)
    print(result)
    outcome = {r["fault"]: (r["requests"], r["answered"]) for r in result["faults"]}
    assert outcome == {"no fault: an answer": (1, True), "429 twice, then an answer": (3, True),
                       "503 that persists": (3, False), "slower than the request timeout": (2, False),
                       "context length exceeded (400)": (1, False), "question over the length limit": (0, False)}
    assert all(r["seconds"] > 0 for r in result["faults"]) and os.environ.get("OPENAI_BASE_URL") == before


# --- prompts too long for the model ----------------------------------------------------------


@pytest.mark.parametrize("server_kind", CONTEXT_OVERFLOW)
def test_a_context_length_error_is_not_retried_and_the_answer_says_so(run, server, server_kind):
    result = run(CONTEXT_OVERFLOW[server_kind], retries=2)
    assert len(server.requests) == 1, "a 400 will not succeed on a retry"
    assert "maximum context length is 4096 tokens" in result.error
    assert "maximum context length" in result.answer and "[p. " in result.answer
    assert error_spans(result)


def test_a_huge_question_is_refused_before_any_search_or_model_call(run, server):
    result = run(completion(ANSWER), question="Tell me about incomes. " * 2200)
    assert server.requests == [] and result.hops == []
    assert result.answer.startswith("Not answered: the question is too long (50,600 characters")
    assert "too long" in result.error and error_spans(result)


def test_a_long_question_within_the_limit_is_answered(run, server, store):
    question = ("Context: I am comparing reports. " * 55) + QUESTION
    assert len(question) <= store.settings.agent.max_question_chars
    result = run(READ, question=question)
    assert result.error is None and result.citations


# --- output the agent cannot use ---------------------------------------------------------------


def test_unparseable_output_is_retried_once_then_the_reader_answers(run, server, react):
    result = run(completion(BROKEN), completion(BROKEN), READ)
    assert result.error is None and result.stop_reason == "unparseable" and result.citations
    assert len(server.requests) == 3, "two ReAct replies, then the page read"
    retry = [m["content"] for m in server.requests[1]["body"]["messages"]]
    assert BROKEN in retry and any("did not follow the format" in m for m in retry)
    assert "response_format" in server.requests[2]["body"], "the reader's replies are held to a JSON schema"
    stops = [s["event"]["reason"] for s in load_trace(result.trace) if s["kind"] == "stop"]
    assert stops == ["unparseable"]


def test_prose_without_the_react_format_ends_the_search_and_the_reader_answers(run, server, react):
    result = run(completion("Four in ten Latinos say their finances are in excellent or good shape."), READ)
    assert result.error is None and len(server.requests) == 2 and result.citations


def test_a_reader_reply_that_is_not_json_is_refused_not_shown(run, server):
    result = run(completion("Most Latinos are doing fine, I think."))
    assert result.error is None and result.answer.lower().startswith("not in the documents")


def test_a_model_failing_in_the_reader_is_recorded_as_an_error(run, server, react):
    result = run(completion(BROKEN), completion(BROKEN), error(503, "overloaded"), retries=1)
    assert len(server.requests) == 4 and "Error code: 503" in result.error
    assert result.answer.startswith("The language model failed") and "[p. " in result.answer
    assert error_spans(result)


def test_a_reply_that_is_not_json_is_an_error_not_a_crash(run, server):
    result = run(Reply(200, "<html><body>502 Bad Gateway</body></html>"))
    assert result.error and result.answer.startswith("The language model failed") and "[p. " in result.answer
    assert error_spans(result)


# --- secrets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("status, key", [(401, API_KEY), (503, "vllm-token-0123456789abcdefghij")])
def test_an_error_body_quoting_the_api_key_is_redacted_everywhere(run, server, monkeypatch, caplog, status, key):
    """OpenAI's 401 quotes the key it was given; a proxy's 5xx may too. Not a "sk-" shape: still scrubbed."""
    monkeypatch.setenv("OPENAI_API_KEY", key)
    caplog.set_level(logging.DEBUG)
    result = run(error(status, KEY_ECHO, "invalid_api_key"), retries=1)
    assert server.requests[0]["key"] == key, "the server saw the key, so its error body quoted it"
    assert "Incorrect API key provided: [redacted]" in result.error
    shown = [result.answer, result.error, Path(result.trace).read_text(), caplog.text]
    assert all(key not in text for text in shown)


# --- the app -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app_store(tmp_path_factory, embed_model):
    """The app's own cached workspace, on a temp store holding the two Pew pages."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        ws = open_workspace(tmp_path_factory.mktemp("app-faults"), monkeypatch, embed_model)
        assert ws.ingest(pages_of(PEW, [3, 4]), "pew-p3-4.pdf").outcome == "ingested"
        ws.settings.agent.low_score = 0.0
        ws.settings.llm.request_timeout_s, ws.settings.llm.max_retries = 2.0, 1
        yield ws
    workspace.clear()


def chat(ws, server, *replies: Reply):
    """Ask the Chat page one question, its workspace's LLM being the real client pointed at the server."""
    server.play(*replies)
    ws.llm = make_llm(ws.settings)
    at = app()
    at.chat_input[0].set_value(QUESTION).run(timeout=60)
    return at


def everything_shown(at) -> str:
    """Every element on the page, main area and sidebar, as protobuf text."""

    def walk(node):
        yield str(getattr(node, "proto", "") or "")
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    return "\n".join(walk(at._tree))


def test_the_chat_shows_a_server_error_as_a_message_not_a_traceback(app_store, server, llm_env):
    at = chat(app_store, server, error(503, "The server is overloaded."))
    assert not at.exception, at.exception
    [message] = at.chat_message[1].error
    assert "Error code: 503" in message.value and "overloaded" in message.value
    assert "Error code: 503" in at.chat_message[1].status[0].warning[0].value, "the error in the hop log too"
    assert at.chat_message[1].markdown[-1].value.startswith("The language model failed")
    assert "Traceback" not in everything_shown(at)


def test_the_chat_and_the_sidebar_never_show_the_api_key(app_store, server, llm_env):
    at = chat(app_store, server, error(401, KEY_ECHO, "invalid_api_key"))
    assert not at.exception, at.exception
    assert server.requests[0]["key"] == API_KEY
    assert "Incorrect API key provided: [redacted]" in at.chat_message[1].error[0].value
    assert f"OpenAI-compatible local-model at {server.url}" in at.sidebar.markdown[0].value
    shown = everything_shown(at)
    assert "Incorrect API key provided: [redacted]" in shown and API_KEY not in shown
    traces = list(app_store.settings.trace_dir.glob("*.jsonl"))
    assert traces and all(API_KEY not in t.read_text() for t in traces)


def test_the_server_address_is_shown_without_credentials(monkeypatch):
    from rag.models.llm import describe

    monkeypatch.setenv("OPENAI_BASE_URL", "http://alice:hunter2secret@10.0.0.5:8080/v1?api_key=sk-in-the-url-0123456789")
    shown = describe(local_settings(None))
    assert shown.endswith("at http://10.0.0.5:8080/v1") and "hunter2" not in shown and "sk-in" not in shown
