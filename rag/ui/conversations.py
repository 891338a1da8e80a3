"""Conversations that outlast a reload and a restart: one SQLite file in the data folder.

A conversation is a list of turns; a turn is a question, the hop events of the run that answered it,
its answer (or error) and its run id, which leads to the run's trace. Every call opens its own
connection, so the chat's worker threads and the pages can all read and write.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from rag.agent.events import HopEvent, from_records
from rag.agent.run import AgentAnswer
from rag.settings import Settings
from rag.trace import redact

TurnStatus = Literal["running", "done", "stopped", "error"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
    conversation_id TEXT NOT NULL, n INTEGER NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (conversation_id, n));
"""


class Turn(BaseModel):
    conversation_id: str
    n: int
    question: str
    asked_at: float = Field(default_factory=time.time)
    status: TurnStatus = "running"
    run_id: str | None = None
    events: list[dict] = Field(default_factory=list)  # hop events as the trace records them
    answer: AgentAnswer | None = None
    error: str | None = None

    def hop_events(self) -> list[HopEvent]:
        return from_records(self.events)


class ConversationInfo(BaseModel):
    id: str
    title: str
    created: float
    updated: float
    turns: int


class Conversations:
    @classmethod
    def of(cls, settings: Settings) -> Conversations:
        """The conversations of a data folder (data/conversations.sqlite)."""
        return cls(settings.data_dir / "conversations.sqlite")

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.executescript(_SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as db, db:  # commits on success
            db.execute("PRAGMA journal_mode=WAL")
            yield db

    def create(self, title: str) -> str:
        cid, now = uuid.uuid4().hex[:12], time.time()
        title = " ".join(title.split())
        with self._db() as db:
            db.execute("INSERT INTO conversations VALUES (?, ?, ?, ?)",
                       (cid, title[:80] + ("…" if len(title) > 80 else ""), now, now))
        return cid

    def list(self, limit: int = 50) -> list[ConversationInfo]:
        """The most recently active conversations first."""
        with self._db() as db:
            rows = db.execute(f"{_INFO} ORDER BY c.updated DESC LIMIT ?", (limit,)).fetchall()
        return [_info(r) for r in rows]

    def get(self, cid: str) -> ConversationInfo | None:
        with self._db() as db:
            row = db.execute(f"{_INFO} HAVING c.id = ?", (cid,)).fetchone()
        return _info(row) if row else None

    def turns(self, cid: str) -> list[Turn]:
        with self._db() as db:
            rows = db.execute("SELECT data FROM turns WHERE conversation_id = ? ORDER BY n", (cid,)).fetchall()
        return [Turn.model_validate_json(r[0]) for r in rows]

    def start_turn(self, cid: str, question: str) -> Turn:
        """A new turn, "running" until its run saves it with `save`."""
        with self._db() as db:
            n = db.execute("SELECT COALESCE(MAX(n), 0) + 1 FROM turns WHERE conversation_id = ?", (cid,)).fetchone()[0]
            turn = Turn(conversation_id=cid, n=n, question=question)
            db.execute("INSERT INTO turns VALUES (?, ?, ?, ?)", (cid, n, turn.status, _json(turn)))
            db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (turn.asked_at, cid))
        return turn

    def save(self, turn: Turn) -> None:
        with self._db() as db:
            db.execute("UPDATE turns SET status = ?, data = ? WHERE conversation_id = ? AND n = ?",
                       (turn.status, _json(turn), turn.conversation_id, turn.n))
            db.execute("UPDATE conversations SET updated = ? WHERE id = ?", (time.time(), turn.conversation_id))

    def delete(self, cid: str) -> None:
        with self._db() as db:
            db.execute("DELETE FROM turns WHERE conversation_id = ?", (cid,))
            db.execute("DELETE FROM conversations WHERE id = ?", (cid,))


_INFO = ("SELECT c.id, c.title, c.created, c.updated, COUNT(t.n) FROM conversations c "
         "LEFT JOIN turns t ON t.conversation_id = c.id GROUP BY c.id")


def _info(row: tuple) -> ConversationInfo:
    return ConversationInfo(id=row[0], title=row[1], created=row[2], updated=row[3], turns=row[4])


def _json(turn: Turn) -> str:
    return redact(json.dumps(turn.model_dump(mode="json"), ensure_ascii=False))
