"""A graph's history as a hash chain: each version's digest covers its content and its parent's.

    chain(v) = sha256("polygraph-chain/1\\n" + chain(v - 1) + "\\n" + v + "\\n" + content(v))

where ``content(v)`` digests what version ``v`` wrote, as its form stores it:

- a graph file: the rows of ``assertions``, ``facts``, ``artifacts`` and ``rules`` that version
  wrote (those still current and those a later version superseded, in ``TABLE_history``),
  the keys of the rows it superseded, and its row of ``versions`` (time, command, record,
  statistics); mentions and the circuit are indexes derived from the labels, which ``check``
  compares with them;
- a graph folder: the bytes of the files version 1 wrote (its tables, ``meta.json`` and
  ``rules.dl``), or of every file of ``versions/V`` (its rows, what it retired, its record and
  circuit); look-up files are derived and left out.

Every writer records ``chain(v)`` as it commits the version (a file's ``chain`` table, a
folder's ``chain.json`` beside the version's files), so ``verify`` recomputes each from the
stored rows and names the first version whose digest does not match: a row changed, removed
or added afterwards, a record rewritten, or a version dropped from the middle.  A graph
written before chains reads as unchained up to the first version that has one.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import sqlite3
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.folder_layout import FILES, RULES_TEXT, table_path
from polygraph_logic.graph.store.folder_versions import later_versions, settle, version_folder, version_record

FORMAT = "polygraph-chain/1"
#: the tables whose rows a file's chain covers (mentions and derivations are derived from them)
CHAINED = ("assertions", "facts", "artifacts", "rules")
#: a folder version's file of its chain digest
CHAIN_FILE = "chain.json"
#: what no version before a chain had
UNCHAINED = ""


def link(parent: str, version: int, content: str) -> str:
    """The chain digest of ``version`` given its parent's and its content digest."""
    return hashlib.sha256(f"{FORMAT}\n{parent}\n{version}\n{content}".encode()).hexdigest()


def _update(digest, values) -> None:
    digest.update(json.dumps([v.hex() if isinstance(v, bytes) else v for v in values],
                             ensure_ascii=False, separators=(",", ":")).encode())
    digest.update(b"\n")


# --- a graph file ------------------------------------------------------------------------------
FILE_TABLE = "CREATE TABLE IF NOT EXISTS chain(version INTEGER PRIMARY KEY, content TEXT NOT NULL, digest TEXT NOT NULL)"


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA main.table_info({table})") if row[1] not in ("since", "until")]


def file_content(db: sqlite3.Connection, version: int) -> str:
    """The content digest of what ``version`` wrote to a graph file (see the module)."""
    digest = hashlib.sha256()
    for table in CHAINED:
        # each row as SQLite quotes its values (a BLOB as X'..'), joined in SQL; the rows still current
        # and those a later version superseded (TABLE_history), merged in the order of their numbers
        quoted = " || ',' || ".join(f"quote({name})" for name in _columns(db, table))
        has_history = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (f"{table}_history",)).fetchone()
        streams = [db.execute(f"SELECT num, {quoted} FROM main.{table} WHERE since = ? ORDER BY num", (version,))]
        if has_history:
            streams.append(db.execute(f"SELECT num, {quoted} FROM main.{table}_history WHERE since = ? ORDER BY num",
                                      (version,)))
        _update(digest, [table])
        batch = []
        for _, text in heapq.merge(*streams):
            batch.append(text)
            if len(batch) == 10_000:
                digest.update(("\n".join(batch) + "\n").encode())
                batch = []
        digest.update(("\n".join(batch) + "\n").encode() if batch else b"")
        if has_history:
            _update(digest, [f"{table} superseded"])
            for (num,) in db.execute(f"SELECT num FROM main.{table}_history WHERE until = ? ORDER BY num", (version,)):
                _update(digest, [num])
    row = db.execute("SELECT num, time, command, action, record, parent, stats FROM main.versions WHERE num = ?",
                     (version,)).fetchone()
    _update(digest, ["version", *(row or ())])
    return digest.hexdigest()


def record_file(db: sqlite3.Connection, version: int) -> str:
    """Records ``version``'s chain digest in a graph file (on the writer's connection, inside its
    transaction); returns it.  A file whose earlier versions have none chains from UNCHAINED."""
    db.execute(FILE_TABLE)
    found = db.execute("SELECT digest FROM chain WHERE version = ?", (version - 1,)).fetchone()
    content = file_content(db, version)
    digest = link(found[0] if found else UNCHAINED, version, content)
    db.execute("INSERT OR REPLACE INTO chain VALUES (?, ?, ?)", (version, content, digest))
    # a later version's rows found by an index, not a scan (x40: an add 0.70 -> 0.5 s); made after
    # the build's digest, which reads every row in order anyway
    for table in CHAINED:
        db.execute(f"CREATE INDEX IF NOT EXISTS {table}_by_since ON {table}(since)")
    return digest


def verify_file(path: Path) -> list[dict]:
    """Each version of a graph file: its recorded digest and the one recomputed (see ``verified``)."""
    db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        versions = [row[0] for row in db.execute("SELECT num FROM versions ORDER BY num")] \
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'versions'").fetchone() else [1]
        chained = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'chain'").fetchone()
        rows = list(db.execute("SELECT version, digest, content FROM chain")) if chained else []
        recorded = {v: d for v, d, _ in rows}
        records = {v: json.loads(r) for v, r in db.execute("SELECT num, record FROM versions WHERE action = 'purge'")} \
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'versions'").fetchone() else {}
        written = {v: c for v, _, c in rows}
        purged = {v: (written.get(v), after, by) for v, (after, by) in rewritten(records).items()}
        return verified(versions, recorded, lambda v: file_content(db, v), purged)
    finally:
        db.close()


# --- a graph folder ----------------------------------------------------------------------------
def _files(base: Path, version: int) -> list[Path]:
    """The files of ``version`` in ``base`` (the folder, for version 1; the version's own folder after)."""
    if version == 1:
        return [*(table_path(base, name) for name in FILES), base / "meta.json", base / RULES_TEXT]
    return sorted(p for p in base.iterdir() if p.is_file() and p.name != CHAIN_FILE)


def _base(directory: Path, version: int) -> Path:
    return directory if version == 1 else version_folder(directory, version)


def folder_content(base: Path, version: int, replaced: dict[str, Path] | None = None) -> str:
    """The content digest of the files ``version`` wrote (``base``: see ``_files``); ``replaced``:
    {file name: the file that will replace it} (a purge's rewritten files, before they are in place)."""
    digest = hashlib.sha256()
    for path in _files(base, version):
        if not path.is_file():
            continue
        digest.update(f"{path.name}\n".encode())
        with (replaced or {}).get(path.name, path).open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        digest.update(b"\n")
    return digest.hexdigest()


def recorded_folder(directory: Path, version: int) -> str | None:
    """The chain digest a folder's version recorded (None: none, or unreadable)."""
    try:
        return json.loads((_base(Path(directory), version) / CHAIN_FILE).read_text(encoding="utf-8"))["digest"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_folder(directory: Path, version: int, written: Path | None = None) -> str:
    """Writes ``version``'s chain digest beside its files (``written``: the hidden folder that holds
    them until it is renamed into place; by default their place in ``directory``); returns it."""
    directory = Path(directory)
    base = written or _base(directory, version)
    parent = recorded_folder(directory, version - 1) if version > 1 else None
    content = folder_content(base, version)
    digest = link(parent or UNCHAINED, version, content)
    (base / CHAIN_FILE).write_text(json.dumps({"format": FORMAT, "version": version, "content": content,
                                               "digest": digest}), encoding="utf-8")
    return digest


def verify_folder(directory: Path) -> list[dict]:
    """Each version of a graph folder: its recorded digest and the one recomputed."""
    directory = Path(directory)
    settle(directory)  # a purge stopped before its files were all in place: finished first
    versions = [1, *later_versions(directory)]
    recorded = {v: d for v in versions if (d := recorded_folder(directory, v)) is not None}
    records = {v: _purge_record(directory, v) for v in versions if v > 1}
    purged = {v: (_recorded_content(directory, v), after, by) for v, (after, by) in rewritten(records).items()}
    return verified(versions, recorded, lambda v: folder_content(_base(directory, v), v), purged)


def _purge_record(directory: Path, version: int) -> dict:
    try:  # an unreadable record shows as its version's mismatch, not here
        return version_record(directory, version).get("record") or {}
    except PolygraphError:
        return {}


def _recorded_content(directory: Path, version: int) -> str | None:
    try:
        return json.loads((_base(directory, version) / CHAIN_FILE).read_text(encoding="utf-8"))["content"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- both ---------------------------------------------------------------------------------------
def verified(versions: list[int], recorded: dict[int, str], content, purged: dict[int, tuple] | None = None) -> list[dict]:
    """``[{"version", "status", "digest"}]``: ``ok`` when the recorded digest is the one recomputed
    from the stored content and the parent's recorded digest, ``mismatch`` when not, ``unchained``
    for a version written before chains (or whose record of its digest is gone).  ``purged``:
    {version: (content digest recorded when written, content digest a later purge recorded)} of the
    versions a purge rewrote: their link is checked with the first, their rows with the second
    (``"purged_by"`` names the purge)."""
    out, parent, purged = [], UNCHAINED, purged or {}
    for version in versions:
        found = recorded.get(version)
        if found is None:
            out.append({"version": version, "status": "unchained", "digest": None})
            parent = UNCHAINED
            continue
        entry = {"version": version, "digest": found}
        if version in purged:
            written, after, by = purged[version]
            good = written is not None and link(parent, version, written) == found and content(version) == after
            entry["purged_by"] = by
        else:
            good = link(parent, version, content(version)) == found
        out.append({**entry, "status": "ok" if good else "mismatch"})
        parent = found
    return out


def rewritten(records: dict[int, dict]) -> dict[int, tuple[str, int]]:
    """{version: (its content digest now, the purge that recorded it)} from the versions' records
    (a purge's ``rewritten``; a later purge's digest replaces an earlier one's)."""
    out: dict[int, tuple[str, int]] = {}
    for version in sorted(records):
        for name, digest in (records[version].get("rewritten") or {}).items():
            out[int(name)] = (digest, version)
    return out




def verify(path: str | Path) -> list[dict]:
    """Each version of the graph at ``path`` (a file or a folder), verified (see ``verified``)."""
    path = Path(path)
    return verify_folder(path) if path.is_dir() else verify_file(path)


def recorded_digest(path: str | Path, version: int) -> str | None:
    """The chain digest ``version`` of the graph at ``path`` recorded (None: written before chains)."""
    path = Path(path)
    if path.is_dir():
        return recorded_folder(path, version)
    db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'chain'").fetchone():
            return None
        row = db.execute("SELECT digest FROM chain WHERE version = ?", (version,)).fetchone()
        return row[0] if row else None
    finally:
        db.close()


__all__ = ["CHAINED", "CHAIN_FILE", "FILE_TABLE", "FORMAT", "file_content", "folder_content", "link",
           "record_file", "record_folder", "recorded_digest", "rewritten", "verified", "verify", "verify_file",
           "verify_folder"]
