"""A misbehaving OpenAI-compatible server on loopback, for the fault tests and `python -m rag bench faults`.

It speaks the chat-completions API and answers each request from a script: a normal reply, 429s,
5xx, a hang past the client's timeout, a context-length error, text that is not JSON, an error body
that echoes the API key. The app talks to it as it talks to vLLM or OpenAI (OPENAI_BASE_URL), so
the openai client's own retries, backoff and timeouts are what is exercised.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


@dataclass
class Reply:
    """One scripted response: a status, a JSON body (or raw text), headers, and a delay first."""

    status: int = 200
    body: dict | str | Callable[[dict], dict] = ""
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


def completion(text: str | Callable[[dict], str]) -> Reply:
    """A chat completion; `text` may be a function of the request's body, for replies that depend on the prompt."""
    if callable(text):
        return Reply(body=lambda request: completion(text(request)).body)
    return Reply(body={
        "id": "chatcmpl-fault", "object": "chat.completion", "created": int(time.time()), "model": "fault-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 21, "total_tokens": 342},
    })


def error(status: int, message: str, code: str | None = None, **headers) -> Reply:
    """An error body in OpenAI's envelope, which llama.cpp's server and recent vLLM copy."""
    return Reply(status, {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                    "code": code}}, headers)


class FaultServer:
    """POST /v1/chat/completions answers from `script` (its last reply repeats); GET /v1/models lists one
    model. Every chat request is recorded with its arrival time, so tests can count retries and backoff."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict] = []
        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())  # port 0: the OS picks a free one
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def play(self, *replies: Reply) -> None:
        self.script, self.requests = list(replies), []

    def gaps(self) -> list[float]:
        times = [r["t"] for r in self.requests]
        return [b - a for a, b in itertools.pairwise(times)]

    def _next(self, request: dict) -> Reply:
        self.requests.append(request)
        return self.script[min(len(self.requests), len(self.script)) - 1]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(Reply(body={"object": "list", "data": [{"id": "fault-model", "object": "model"}]}))
                else:
                    self._send(error(404, f"no route {self.path}"))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    return self._send(error(404, f"no route {self.path}"))
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                reply = server._next({"t": time.monotonic(), "body": body, "key": key})
                if server.stopping.wait(reply.delay):
                    return
                if callable(reply.body):
                    reply = Reply(reply.status, reply.body(body), reply.headers)
                if isinstance(reply.body, dict):  # an error body may quote the key, as OpenAI's 401 does
                    reply = Reply(reply.status, json.loads(json.dumps(reply.body).replace("{key}", key)),
                                  reply.headers)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                data = (json.dumps(reply.body) if isinstance(reply.body, dict) else reply.body).encode()
                try:
                    self.send_response(reply.status)
                    kind = "application/json" if isinstance(reply.body, dict) else "text/plain"
                    for name, value in {"Content-Type": kind, **reply.headers}.items():
                        self.send_header(name, str(value))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                    pass

        return Handler

    def __enter__(self) -> Self:
        threading.Thread(target=self.httpd.serve_forever, name="fault-server", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
