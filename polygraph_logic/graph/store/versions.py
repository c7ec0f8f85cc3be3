"""A graph's history: numbered versions, rows valid from one version until another.

A graph file grows by versions (``build`` is version 1; each ``add`` and each applied
deletion appends one).  Nothing is overwritten:

- every row of ``assertions``, ``facts``, ``mentions``, ``artifacts`` and ``rules``
  carries ``since``, the version that wrote it; the main tables hold the rows of the
  latest version, so every reader of the latest version reads them as before;
- a row a later version replaces or removes (a fact whose label grew, a mention that
  absorption dropped, an artifact a deletion removed) moves to ``TABLE_history`` with
  ``until``, the version that superseded it: it is valid at versions ``since <= v < until``;
- ``versions`` holds one row per version: time, command line, what was added or
  deleted (file names, sha256 and record counts), rule-file hashes, cap, release,
  parent, and the version's statistics.

``at_views(db, v)`` shadows the main tables with TEMP VIEWs of the rows valid at ``v``
(SQLite resolves an unqualified name in the temp schema first, and pushes a query's
conditions into both arms of a UNION ALL view, so the main tables' indexes still
serve): every reader reads an old version through the same queries.  A file written
before histories existed reads as one version, and gains the columns on its first add.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.label_codec import decode_label

#: the tables whose rows are versioned
VERSIONED = ("assertions", "facts", "mentions", "artifacts", "rules")

VERSIONS_TABLE = """CREATE TABLE IF NOT EXISTS versions(num INTEGER PRIMARY KEY, time TEXT NOT NULL,
    command TEXT NOT NULL, action TEXT NOT NULL, record TEXT NOT NULL, parent INTEGER, stats TEXT NOT NULL)"""


def columns(db: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    """Returns the columns of a table, in order."""
    return [row[1] for row in db.execute(f"PRAGMA {schema}.table_info({table})")]


def has_ledger(db: sqlite3.Connection) -> bool:
    """True when the file records versions (a graph written before histories existed does not)."""
    return db.execute("SELECT 1 FROM main.sqlite_master WHERE name = 'versions'").fetchone() is not None


def ensure_ledger(db: sqlite3.Connection, first_record: dict | None = None, stats: str = "{}") -> None:
    """Adds what an older graph file lacks: ``since`` columns (every row is of version 1),
    the history tables, the assertions' ``evidence`` column and the versions table with version 1
    described by ``first_record``."""
    fresh = not has_ledger(db)
    for table in VERSIONED:
        if "since" not in columns(db, table):
            db.execute(f"ALTER TABLE {table} ADD COLUMN since INTEGER NOT NULL DEFAULT 1")
        history = f"{table}_history"
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (history,)).fetchone():
            db.execute(f"CREATE TABLE {history} AS SELECT * FROM {table} WHERE 0")
            db.execute(f"ALTER TABLE {history} ADD COLUMN until INTEGER NOT NULL DEFAULT 0")
            db.execute(f"CREATE INDEX {history}_by_until ON {history}(since, until)")
    if "evidence" not in columns(db, "assertions"):  # written before evidence metadata (graph/evidence.py)
        for table in ("assertions", "assertions_history"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN evidence TEXT")
    db.execute("CREATE INDEX IF NOT EXISTS facts_history_by_args ON facts_history(relation, args)")
    db.execute("CREATE INDEX IF NOT EXISTS facts_history_by_num ON facts_history(num)")
    db.execute(VERSIONS_TABLE)
    if fresh:
        record = first_record or {"action": "build", "inputs": [], "note": "built before versions were recorded"}
        db.execute("INSERT INTO versions VALUES (1, ?, ?, ?, ?, NULL, ?)",
                   (record.pop("time", None) or now(), record.pop("command", "polygraph build"),
                    record.get("action", "build"), json.dumps(record, sort_keys=True), stats))


def count_label(stats: dict, layer: str, blob: bytes, exact, sign: int) -> None:
    """Counts an artifact's label in (``sign`` +1) or out of (-1) a version's statistics:
    artifacts, inexact labels, label bytes and support sets per layer."""
    entry = stats["layers"].setdefault(layer, {"artifacts": 0, "inexact": 0, "label_bytes": 0, "support_sets": {}})
    entry["artifacts"] += sign
    entry["inexact"] += sign * (not exact)
    entry["label_bytes"] += sign * len(blob)
    sets = Counter({int(k): v for k, v in entry["support_sets"].items()})
    sets[len(decode_label(blob))] += sign
    entry["support_sets"] = {k: sets[k] for k in sorted(sets) if sets[k]}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def sha256(path: str | Path) -> str | None:
    """Returns a file's sha256 (hex), or None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def file_entry(path: str | Path, role: str, records: int) -> dict:
    """Returns how a version records an input file: absolute path, role, sha256, record count."""
    return {"file": str(Path(path).resolve()), "role": role, "sha256": sha256(path), "records": records}


def release() -> str:
    """Returns the polygraph_logic release that wrote a version."""
    try:
        from importlib.metadata import version
        return version("polygraph_logic")
    except Exception:  # noqa: BLE001  (an uninstalled checkout has no metadata)
        return "unknown"


def latest(db: sqlite3.Connection) -> int:
    """Returns the latest version number (1 for a file without a versions table)."""
    if not has_ledger(db):
        return 1
    return db.execute("SELECT MAX(num) FROM versions").fetchone()[0] or 1


def version_rows(db: sqlite3.Connection) -> list[dict]:
    """Returns every version as a dict (number, time, command, action, record, parent, stats)."""
    if not has_ledger(db):
        return [{"version": 1, "time": None, "command": "polygraph build", "action": "build", "parent": None,
                 "record": {"note": "built before versions were recorded"}, "stats": None}]
    out = []
    for num, time_, command, action, record, parent, stats in db.execute(
            "SELECT num, time, command, action, record, parent, stats FROM versions ORDER BY num"):
        out.append({"version": num, "time": time_, "command": command, "action": action, "parent": parent,
                    "record": json.loads(record), "stats": json.loads(stats)})
    return out


def at_views(db: sqlite3.Connection, version: int, path) -> dict | None:
    """Shadows the versioned tables with TEMP VIEWs of their rows valid at ``version``;
    returns that version's row (its statistics replace meta.stats), or raises no_version."""
    newest = latest(db)
    if not isinstance(version, int) or not 1 <= version <= newest:
        raise PolygraphError("no_version", f"{path} has versions 1 to {newest}; there is no version {version!r} "
                                           f"(see `polygraph log {path}`)")
    if not has_ledger(db):
        return None
    for table in VERSIONED:
        names = ", ".join(c for c in columns(db, table) if c != "since")
        db.execute(f"CREATE TEMP VIEW {table} AS "
                   f"SELECT {names}, since FROM main.{table} WHERE since <= {version} UNION ALL "
                   f"SELECT {names}, since FROM main.{table}_history WHERE since <= {version} AND until > {version}")
    row = db.execute("SELECT stats FROM main.versions WHERE num = ?", (version,)).fetchone()
    return json.loads(row[0]) if row else None


__all__ = ["VERSIONED", "at_views", "ensure_ledger", "file_entry", "has_ledger", "latest", "release", "sha256",
           "version_rows"]


def command_line() -> str:
    """Returns the running command as a user typed it (``polygraph add ...``)."""
    import shlex
    import sys
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program in ("__main__.py", "-m", "-c"):
        program = "polygraph"
    return shlex.join([program, *sys.argv[1:]])


def first_version(meta: dict, version: dict | None) -> dict:
    """Returns the record of version 1: the given one, with cap, rule-file hashes and release filled in."""
    record = dict(version or {"action": "build", "inputs": []})
    record.setdefault("action", "build")
    record.setdefault("command", command_line())
    record.setdefault("cap", meta.get("cap", "none"))
    if "labels" in meta:  # witness labels (graph/build.py's LABELS): a replay builds them again
        record.setdefault("labels", meta["labels"])
    if "rules" not in record:
        try:
            files = json.loads(meta.get("rule_files") or "[]")
        except ValueError:
            files = []
        record["rules"] = [{"file": str(Path(f).resolve()), "sha256": sha256(f)} for f in files]
    record.setdefault("release", release())
    return record


_LABEL_TABLES = (("facts", "num, relation, args, label, exact, since"),
                 ("facts_history", "num, relation, args, label, exact, since, until"))


def compare_files(first: str | Path, second: str | Path, limit: int = 10) -> list[str]:
    """Returns the differences between the label tables of two graph files (row by row, byte for
    byte): their facts and histories."""
    out = []
    dbs = [sqlite3.connect(f"file:{Path(p).resolve()}?mode=ro", uri=True) for p in (first, second)]
    try:
        for table, columns in _LABEL_TABLES:
            a, b = (db.execute(f"SELECT {columns} FROM {table} ORDER BY num, since") for db in dbs)
            _differences(table, a, b, out, limit)
            count = [db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for db in dbs]
            if count[0] != count[1]:
                out.append(f"{table}: {count[0]} rows against {count[1]}")
    finally:
        for db in dbs:
            db.close()
    return out


def _differences(table: str, a, b, out: list[str], limit: int) -> None:
    for n, (x, y) in enumerate(zip(a, b)):
        if x != y and len(out) < limit:
            out.append(f"{table} row {n + 1}: {x[:3]} differs")


def folder_version(meta: dict, record_text: str | None) -> dict:
    """The one version of a graph folder: its build, as the writer recorded it (``record_text``:
    meta.json's ``version``, the record a graph file keeps for version 1; older folders lack it)."""
    try:
        record = json.loads(record_text) if record_text is not None else {
            "action": "build", "inputs": [], "note": "written before folders recorded their build"}
        stats = json.loads(meta["stats"]) if "stats" in meta else None
    except (ValueError, TypeError):
        record, stats = {"note": "the folder's build record is damaged"}, None
    if not isinstance(record, dict):
        record = {"note": "the folder's build record is damaged"}
    return {"version": 1, "time": record.pop("time", None) or meta.get("built"),
            "command": record.pop("command", "polygraph build"), "action": record.get("action", "build"),
            "parent": None, "record": record, "stats": stats}
