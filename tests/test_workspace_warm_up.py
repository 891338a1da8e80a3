"""The app's warm start: the store opens at once, the indexes and the language model load in the
background, and a question asked meanwhile waits for that same model instead of loading a second.

The model factory here is a stand-in that counts its calls (control flow only); the browser tests
start the real app and its real model."""

from __future__ import annotations

import threading
import time

from conftest import PEW, local_settings, pdf_bytes

import rag.models.llm
from rag.workspace import Workspace


def test_warm_up_loads_the_model_once_in_the_background_and_a_question_shares_it(tmp_path, embed_model,
                                                                                monkeypatch):
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    assert ws.ingest(pdf_bytes(PEW), PEW).outcome == "ingested"
    loads, release = [], threading.Event()

    def slow_model(settings, progress=None):
        loads.append(threading.current_thread().name)
        release.wait(10)
        return object()

    monkeypatch.setattr(rag.models.llm, "make_llm", slow_model)
    warm = Workspace(ws.settings, embed_model=embed_model)
    started = time.monotonic()
    thread = warm.warm_up()
    assert time.monotonic() - started < 5 and "store" in warm.__dict__, "the store opens before warm_up returns"
    while not loads and thread.is_alive():  # the indexes first, then the model starts loading
        time.sleep(0.05)
    got = []
    asking = threading.Thread(target=lambda: got.append(warm.llm))  # a question arrives while it loads
    asking.start()
    time.sleep(0.5)
    release.set()
    thread.join(10), asking.join(10)
    assert loads == ["warm-up"] and got == [warm.llm], "one load, in the warm-up thread, shared"
    loaded = [name for name, index in warm.retriever.sparse.items() if index._key is not None]
    assert loaded, "the search indexes were loaded in the background too"


def test_a_model_set_while_the_warm_up_loads_is_kept(tmp_path, embed_model, monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(rag.models.llm, "make_llm", lambda settings, progress=None: release.wait(10) and "loaded")
    ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
    thread = ws.warm_up()
    ws.llm = "chosen"
    release.set()
    thread.join(10)
    assert ws.llm == "chosen"


def test_warm_up_asks_the_local_model_for_one_token_and_never_calls_a_remote_one(tmp_path, embed_model, monkeypatch):
    """The local model's first call reads its weights into memory: the warm-up makes it, not the first question;
    then it times a page's worth of text, the speed the first page read is sized by. The models are stand-ins that
    record their calls (control flow only)."""
    from rag import reader

    calls = []
    monkeypatch.setattr(reader, "SPEED", reader.Speed())

    class Local(rag.models.llm.LocalLlamaCpp):
        def complete(self, prompt, formatted=False, **kwargs):
            calls.append(kwargs)
            time.sleep(0.05)

        def count_tokens(self, text):
            return len(text.split())

    class Remote:
        def complete(self, prompt, **kwargs):
            calls.append("remote")

    for model, expected in ((Local.model_construct(), [{"max_tokens": 1}] * 2), (Remote(), [])):
        calls.clear()
        monkeypatch.setattr(rag.models.llm, "make_llm", lambda settings, progress=None, m=model: m)
        ws = Workspace(local_settings(tmp_path), embed_model=embed_model)
        ws.warm_up().join(30)
        assert calls == expected
    assert 0 < reader.SPEED.rate < 1e4, "the page's worth of text timed once, as the first read's speed"


def test_warm_up_makes_no_model_call_once_a_question_has(tmp_path, embed_model, monkeypatch):
    """On a large store the indexes load first; a question asked meanwhile has the model by the time the warm-up
    would call it, or between its two calls, and must not then wait behind the warm-up's timed text. Stand-in
    model (control flow only): a question "arrives" as a count of calls the queue gave the model."""
    calls, asked = [], {"meanwhile": 0}

    class Local(rag.models.llm.LocalLlamaCpp):
        def complete(self, prompt, formatted=False, **kwargs):
            calls.append(prompt)
            self.queue.served += 1 + asked["meanwhile"]

        def count_tokens(self, text):
            return len(text.split())

    queue = rag.models.llm.ModelQueue()
    with queue.turn():
        pass
    assert queue.served == 1, "a call given the model is counted"
    for before, meanwhile, expected in ((0, 0, 2), (1, 0, 0), (0, 1, 1)):
        calls.clear()
        model = Local.model_construct()
        model.queue.served, asked["meanwhile"] = before, meanwhile
        monkeypatch.setattr(rag.models.llm, "make_llm", lambda settings, progress=None, m=model: m)
        Workspace(local_settings(tmp_path), embed_model=embed_model).warm_up().join(30)
        assert len(calls) == expected, (before, meanwhile)
