"""A content-addressed answer cache in one SQLite file, so a re-run costs nothing.

The key is the sha256 of (model, template name, template version, sha256 of the
rendered prompt, draw index): the same prompt asked again under the same draw gets
the same stored answer, and draw ``i`` of an audit is reproducible from the cache.
Only answers that passed every guard and the strict parse are stored (the client
decides that); no request header, and so no API key, ever reaches this file. Each
write is one transaction, so an interrupted run leaves whole rows or none.

Each answer row is also the agent record of the call that produced it, kept for
provenance: the model id the API reported, the template name and version, the prompt's
sha256, the message id and request id, how it was asked (``interactive`` or ``batch``),
when, and its token counts (cache writes and reads included). The ``batch_requests``
table holds the requests of submitted Message Batches not yet collected, so that an
interrupted batch run resumes polling its batch instead of submitting it again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from polygraph_logic.errors import PolygraphError

FORMAT = "polygraph-llm-cache/2"
_OLDER = "polygraph-llm-cache/1"  # the same answers without the agent columns: upgraded in place

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, template TEXT NOT NULL, version TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL, draw INTEGER NOT NULL, prompt TEXT NOT NULL, text TEXT NOT NULL,
    stop_reason TEXT, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS batch_requests (
    custom_id TEXT PRIMARY KEY, batch_id TEXT NOT NULL, key TEXT NOT NULL, submitted REAL NOT NULL);
"""
#: the agent columns format 2 adds to the answers of format 1
_AGENT_COLUMNS = (("cache_write_tokens", "INTEGER NOT NULL DEFAULT 0"), ("cache_read_tokens", "INTEGER NOT NULL "
                  "DEFAULT 0"), ("response_model", "TEXT"), ("message_id", "TEXT"), ("request_id", "TEXT"),
                  ("mode", "TEXT"))
_ROW = ("key, model, template, version, prompt_sha256, draw, prompt, text, stop_reason, input_tokens, "
        "output_tokens, created, " + ", ".join(name for name, _ in _AGENT_COLUMNS))


def prompt_sha256(prompt: str) -> str:
    """Returns the hex sha256 of a rendered prompt."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def cache_key(model: str, template: str, version: str, prompt: str, draw: int) -> str:
    """Returns the content address of one (model, template@version, prompt, draw) question."""
    fields = [model, template, version, prompt_sha256(prompt), draw]
    return hashlib.sha256(json.dumps(fields, separators=(",", ":")).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer with the usage it cost when it was first asked."""

    text: str
    stop_reason: str | None
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    response_model: str | None = None  # the agent: who answered, which message, which request
    message_id: str | None = None
    request_id: str | None = None
    mode: str | None = None  # interactive or batch
    created: float | None = None  # when it was first answered (seconds since the epoch; None: not recorded)


class AnswerCache:
    """The SQLite answer cache at ``path`` (created on first use)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.executescript(_SCHEMA)
            stored = self._db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if stored is None or stored[0] == _OLDER:
                self._upgrade(stored is not None)
            elif stored[0] != FORMAT:
                raise PolygraphError("cache_error", f"{self.path} is a {stored[0]} file, not {FORMAT}")
        except sqlite3.DatabaseError as error:
            raise PolygraphError("cache_error", f"cannot use {self.path} as an answer cache: {error}") from None

    def _upgrade(self, older: bool) -> None:
        """Adds the agent columns (to a new file, or to a format-1 file's answers) and records format 2."""
        with self._db:
            present = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
            for name, kind in _AGENT_COLUMNS:
                if name not in present:
                    self._db.execute(f"ALTER TABLE answers ADD COLUMN {name} {kind}")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (FORMAT,))

    def get(self, key: str) -> CachedAnswer | None:
        """Returns the answer stored under ``key``, or None."""
        row = self._db.execute(
            "SELECT text, stop_reason, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, "
            "response_model, message_id, request_id, mode, created FROM answers WHERE key = ?", (key,)).fetchone()
        return CachedAnswer(*row) if row else None

    def put(self, key: str, *, model: str, template: str, version: str, prompt: str, draw: int,
            answer: CachedAnswer) -> None:
        """Stores one answer and its agent record under ``key`` in a transaction of its own."""
        with self._db:
            self._db.execute(
                f"INSERT OR REPLACE INTO answers ({_ROW}) VALUES ({', '.join('?' * 18)})",
                (key, model, template, version, prompt_sha256(prompt), draw, prompt, answer.text,
                 answer.stop_reason, answer.input_tokens, answer.output_tokens, answer.created or time.time(),
                 answer.cache_write_tokens, answer.cache_read_tokens, answer.response_model, answer.message_id,
                 answer.request_id, answer.mode))
            self._db.execute("DELETE FROM batch_requests WHERE key = ?", (key,))

    def agent_records(self) -> list[dict]:
        """Returns the agent record of every stored answer, oldest first (for provenance)."""
        names = ("model", "template", "version", "prompt_sha256", "draw", "response_model", "message_id",
                 "request_id", "mode", "created", "input_tokens", "output_tokens", "cache_write_tokens",
                 "cache_read_tokens")
        rows = self._db.execute(f"SELECT {', '.join(names)} FROM answers ORDER BY created, key").fetchall()
        return [dict(zip(names, row)) for row in rows]

    def submitted(self, keys: list[str]) -> dict[str, tuple[str, str]]:
        """Returns key -> (batch id, custom id) for the keys a submitted, uncollected batch asks."""
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            found.update((key, (batch, custom)) for custom, batch, key in self._db.execute(
                f"SELECT custom_id, batch_id, key FROM batch_requests WHERE key IN ({', '.join('?' * len(part))})",
                part))
        return found

    def record_batch(self, batch_id: str, requests: dict[str, str]) -> None:
        """Records a submitted batch: custom id -> cache key of each of its requests, in one transaction."""
        now = time.time()
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO batch_requests VALUES (?, ?, ?, ?)",
                                 [(custom, batch_id, key, now) for custom, key in requests.items()])

    def forget_batch_requests(self, custom_ids: list[str]) -> None:
        """Removes collected requests that left no answer (errored, expired, rejected)."""
        with self._db:
            self._db.executemany("DELETE FROM batch_requests WHERE custom_id = ?", [(c,) for c in custom_ids])

    def discard(self, key: str) -> None:
        """Removes the answer under ``key`` (a row that no longer passes the guards)."""
        with self._db:
            self._db.execute("DELETE FROM answers WHERE key = ?", (key,))

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Closes the database connection."""
        self._db.close()


#: the format of a recorded answer file (``construct --replay``): JSON Lines, a header line
#: ``{"format": RECORDED_FORMAT, "fixture": "how it was recorded"}``, then one answer a line
RECORDED_FORMAT = "polygraph-recorded-answers/1"
_RECORDED_FIELDS = ("model", "template", "version", "prompt_sha256", "draw", "text")


class RecordedAnswers:
    """Answers read from a recorded file, for a run that must not reach the API.

    Used as a ModelClient's cache: ``get`` answers what was recorded and nothing else
    (ModelClient raises ``replay_missing`` for any other question); nothing is written.
    Each line after the header holds ``model``, ``template``, ``version``,
    ``prompt_sha256``, ``draw`` and ``text`` (optionally ``prompt``, ``stop_reason`` and
    token counts); ``model`` is the model the answers were recorded under.
    """

    replay = True

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise PolygraphError("file_error", f"cannot read recorded answers {self.path}: "
                                               f"{getattr(error, 'strerror', None) or error}") from None
        self.answers: dict[str, CachedAnswer] = {}
        self.models: set[str] = set()
        self.note = ""
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PolygraphError("invalid_replay", f"{self.path}:{number}: not valid JSON: {error.msg}") from None
            if number == 1:
                if not isinstance(record, dict) or record.get("format") != RECORDED_FORMAT:
                    raise PolygraphError("invalid_replay", f"{self.path} is not a {RECORDED_FORMAT} file (its first "
                                                           f"line must be {{\"format\": \"{RECORDED_FORMAT}\"}})")
                self.note = str(record.get("fixture", ""))
                continue
            if not isinstance(record, dict) or any(f not in record for f in _RECORDED_FIELDS) \
                    or not isinstance(record["draw"], int) or not isinstance(record["text"], str):
                raise PolygraphError("invalid_replay", f"{self.path}:{number}: expected an object with "
                                                       f"{', '.join(_RECORDED_FIELDS)}")
            key = hashlib.sha256(json.dumps([record["model"], record["template"], record["version"],
                                             record["prompt_sha256"], record["draw"]],
                                            separators=(",", ":")).encode("utf-8")).hexdigest()
            self.answers[key] = CachedAnswer(record["text"], record.get("stop_reason"),
                                             int(record.get("input_tokens", 0)), int(record.get("output_tokens", 0)))
            self.models.add(record["model"])

    @property
    def model(self) -> str | None:
        """The model the answers were recorded under, when there is exactly one."""
        return next(iter(self.models)) if len(self.models) == 1 else None

    def get(self, key: str) -> CachedAnswer | None:
        return self.answers.get(key)

    def put(self, key: str, **fields) -> None:
        raise PolygraphError("replay_write", "recorded answers are read-only")

    def discard(self, key: str) -> None:
        self.answers.pop(key, None)

    def __len__(self) -> int:
        return len(self.answers)

    def close(self) -> None:
        pass
