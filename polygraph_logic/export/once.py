"""What an export writes once (an entity's label, a source's description), remembered in bounded memory.

An export streams a graph of any size, artifact by artifact, and writes an entity's ``rdfs:label``
the first time the entity appears.  ``Once`` remembers the values seen: in a set up to ``HELD`` of
them, then in a table of a temporary SQLite file, whose page cache is bounded, with the values
asked about lately in a small set in front (an edge's entities repeat in the next edges).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import weakref
from pathlib import Path

#: values held in memory before they move to a temporary file (about 15 MB of IRIs)
HELD = 100_000
#: values asked about lately, answered without the file
RECENT = 20_000


class Once:
    """``first(value)``: True the first time a value is asked about, False every time after."""

    def __init__(self, held: int | None = None):
        self._limit = held or HELD
        self._held: set[str] = set()
        self._db: sqlite3.Connection | None = None

    def first(self, value: str) -> bool:
        held = self._held
        if value in held:
            return False
        if self._db is None:
            held.add(value)
            if len(held) > self._limit:
                self._spill()
            return True
        if len(held) >= RECENT:
            held.clear()
        held.add(value)
        return self._db.execute("INSERT OR IGNORE INTO seen VALUES (?)", (value,)).rowcount == 1

    def _spill(self) -> None:
        """Moves the values held into a table of a temporary file; from now on the set holds the
        values asked about lately."""
        folder = Path(tempfile.mkdtemp(prefix="polygraph-once-"))
        self._db = sqlite3.connect(folder / "seen.db")
        weakref.finalize(self, _remove, self._db, folder)
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE seen(value TEXT PRIMARY KEY) WITHOUT ROWID")
        self._db.executemany("INSERT INTO seen VALUES (?)", ((value,) for value in sorted(self._held)))
        self._held = set()


def _remove(db: sqlite3.Connection, folder: Path) -> None:
    db.close()
    shutil.rmtree(folder, ignore_errors=True)


__all__ = ["Once"]
