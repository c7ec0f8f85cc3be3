"""What a graph file must be before any question is asked of it: checked on open.

Opening checks what is cheap and catches the common damage: the pages SQLite counts fit in
the file's length (a copy cut short is refused), and every table and column a reader uses is
there; a file SQLite refuses is diagnosed from its header.  ``polygraph check`` (check.py)
reads every row as well.

The checks never open the file themselves while SQLite may hold it: closing any descriptor of
a file drops every POSIX lock the process holds on it, SQLite's included, so a header read
made while this process writes the graph would let a second writer in.  ``cut_short`` asks
SQLite and ``stat``; ``file_problem`` reads the header only once SQLite has refused the file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from polygraph_logic.graph.store.table_schema import READ_COLUMNS

#: the tables of format polygraph-graph/2 and the columns readers use (table_schema.py declares them)
COLUMNS = READ_COLUMNS

_MAGIC = b"SQLite format 3\x00"


def file_problem(path: Path) -> str | None:
    """Returns what is wrong with the file as an SQLite database (header, length), or None.

    The header records the page size and, when its change counters agree, the number of
    pages: a file whose length is not that product was cut short or grown by accident.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if size == 0:
        return "the file is empty"
    if len(header) < 100 or not header.startswith(_MAGIC):
        return "not a polygraph graph file (not an SQLite database)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"the SQLite header is damaged (page size {page_size})"
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96]:
        expected = pages * page_size
        if size != expected:
            return f"the file has {size:,} bytes but its header says {expected:,}: it was cut short or damaged"
    elif size % page_size:
        return f"the file has {size:,} bytes, not a whole number of {page_size}-byte pages: it was cut short"
    return None


def cut_short(path: Path, db: sqlite3.Connection) -> str | None:
    """Returns a problem when the file holds fewer bytes than the pages SQLite counts, or None
    (more bytes is a write under way: another process's pages not yet committed)."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    size = path.stat().st_size
    if size < pages * page_size:
        return f"the file has {size:,} bytes but its header says {pages * page_size:,}: it was cut short or damaged"
    return None


def schema_problem(db: sqlite3.Connection) -> str | None:
    """Returns the first missing table or column of the graph format, or None."""
    rows = db.execute("SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
                      "WHERE m.type = 'table'").fetchall()
    present: dict[str, set] = {}
    for table, column in rows:
        present.setdefault(table, set()).add(column)
    for table, columns in COLUMNS.items():
        if table not in present:
            return f"the table {table!r} is missing"
        missing = [c for c in columns if c not in present[table]]
        if missing:
            return f"the table {table!r} lacks the column(s) {', '.join(missing)}"
    return None
