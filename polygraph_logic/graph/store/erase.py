"""Erasure in a graph file: the content of purged assertions, and of the facts and artifacts that
rested only on them, overwritten in every version, inside the purging version's transaction.

Rows keep their numbers, ids, labels and versions; what goes is text: an assertion's subject,
predicate, object and evidence span, a fact's arguments (and its keys ``k0..k2``), an artifact's
content.  ``secure_delete`` makes SQLite zero the bytes it frees (old cells, index entries), and
``compact`` (after the commit) rewrites the file without free pages, so the text is in no page of
the file.  Each earlier version whose rows changed gets its new content digest (chain.py), which
the purging version records: ``verify`` checks the version's link with the digest it recorded
when written, and its rows against the one the purge recorded.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from polygraph_logic.graph.store.chain import file_content
from polygraph_logic.graph.store.rows import fact_key

#: what an erased text reads as
PURGED = "[purged]"
#: what an erased artifact's content is
ERASED_CONTENT = json.dumps({"purged": True})


def purged_args(num: int, arity: int) -> str:
    """An erased fact's arguments: as many as it had, the first naming its number (facts stay
    distinct by relation and arguments)."""
    return json.dumps([f"{PURGED} {num}"] + [PURGED] * max(arity - 1, 0))


def erase_file(db: sqlite3.Connection, version: int, assertions: list[int],
               facts: list[tuple[str, tuple]]) -> tuple[dict[int, str], int, int]:
    """Erases, in every version of the file open on ``db`` (in its write transaction), the content
    of the assertions numbered ``assertions`` and of the facts ``(relation, args)`` (each of its
    rows) with their artifacts; returns ({earlier version: its content digest now}, facts erased,
    artifacts erased)."""
    db.execute("PRAGMA secure_delete = ON")
    nums = []
    for relation, args in facts:
        row = db.execute("SELECT num FROM facts WHERE relation = ? AND args = ?", (relation, fact_key(args))).fetchone()
        if row is not None:
            nums.append((row[0], len(args)))
    db.execute("CREATE TEMP TABLE IF NOT EXISTS purging(num INTEGER PRIMARY KEY, what TEXT, arity INTEGER)")
    db.execute("DELETE FROM temp.purging")
    db.executemany("INSERT INTO temp.purging VALUES (?, 'assertion', 0)", ((n,) for n in assertions))
    facts_table = [(n, arity) for n, arity in nums]
    db.execute("CREATE TEMP TABLE IF NOT EXISTS purging_facts(num INTEGER PRIMARY KEY, arity INTEGER)")
    db.execute("DELETE FROM temp.purging_facts")
    db.executemany("INSERT INTO temp.purging_facts VALUES (?, ?)", facts_table)
    touched: set[int] = set()
    artifacts = 0
    for table in _with_history(db, "assertions"):
        where = f"num IN (SELECT num FROM temp.purging) AND subject != '{PURGED}'"
        touched.update(v for (v,) in db.execute(f"SELECT DISTINCT since FROM {table} WHERE {where}"))
        db.execute(f"UPDATE {table} SET subject = ?, predicate = ?, object = ?, text = NULL WHERE {where}",
                   (PURGED, PURGED, PURGED))
    for table in _with_history(db, "facts"):
        touched.update(v for (v,) in db.execute(
            f"SELECT DISTINCT since FROM {table} WHERE num IN (SELECT num FROM temp.purging_facts)"))
        columns = {row[1] for row in db.execute(f"PRAGMA main.table_info({table})")}
        keys = "".join(f", {k} = NULL" for k in ("k0", "k1", "k2") if k in columns)  # history rows keep them too
        for num, arity in facts_table:
            db.execute(f"UPDATE {table} SET args = ?{keys} WHERE num = ?", (purged_args(num, arity), num))
    for table in _with_history(db, "artifacts"):
        where = "fact IN (SELECT num FROM temp.purging_facts)"
        touched.update(v for (v,) in db.execute(f"SELECT DISTINCT since FROM {table} WHERE {where}"))
        artifacts += db.execute(f"UPDATE {table} SET content = ? WHERE {where}", (ERASED_CONTENT,)).rowcount
    return {v: file_content(db, v) for v in sorted(touched) if v < version}, len(nums), artifacts


def _with_history(db: sqlite3.Connection, table: str) -> list[str]:
    history = f"{table}_history"
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (history,)).fetchone()
    return [table, history] if found else [table]


def compact_file(path: Path) -> None:
    """Rewrites the graph file without free pages (VACUUM), after the purge committed: the erased
    text is then in no page, free or used.  A kill during it leaves the purged file (SQLite's
    journal rolls the VACUUM back)."""
    db = sqlite3.connect(path, timeout=60)
    try:
        db.execute("PRAGMA secure_delete = ON")
        db.execute("VACUUM")
    finally:
        db.close()


__all__ = ["ERASED_CONTENT", "PURGED", "compact_file", "erase_file", "purged_args"]
