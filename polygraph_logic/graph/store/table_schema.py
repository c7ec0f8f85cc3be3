"""The graph's tables, declared once: each column with its declaration in a graph file (SQLite) and
its type in a graph folder (Parquet, as DuckDB names types).

Both forms hold the same tables (rows.py says what each row means).  A few columns belong to one
form: a file keys its facts by their first three arguments (``k0..k2``, indexed) and a folder
computes those when read; a folder keeps each fact's number of support sets (``sets``) and, per
mention, which support set it is in (``support_set``).  Every version-aware table gains
``since`` (versions.py adds it to a file; a folder's build writes it for assertions only, its
later versions living in files of their own: folder_versions.py).

writer.py creates a file's tables from FILE_TABLES; folder_layout.py declares a folder's Parquet
columns from PARQUET_SCHEMA; schema.py checks, on opening a file, that READ_COLUMNS are there.
"""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):  # a named tuple, not a dataclass: made at every start, at less cost
    name: str
    file: str | None  # its SQLite declaration in a graph file (None: a folder's only)
    folder: str | None  # its Parquet type in a graph folder (None: a file's only)
    read: bool = True  # readers ask for it (a file written before it existed lacks it: False)


def _columns(*rows: tuple) -> tuple[Column, ...]:
    return tuple(Column(*row) for row in rows)


TABLES: dict[str, tuple[Column, ...]] = {
    "meta": _columns(("key", "TEXT PRIMARY KEY", None), ("value", "NOT NULL", None)),
    "assertions": _columns(
        ("num", "INTEGER PRIMARY KEY", "BIGINT"), ("id", "TEXT NOT NULL UNIQUE", "VARCHAR"),
        ("source", "TEXT NOT NULL", "VARCHAR"), ("subject", "TEXT NOT NULL", "VARCHAR"),
        ("predicate", "TEXT NOT NULL", "VARCHAR"), ("object", "TEXT NOT NULL", "VARCHAR"),
        ("text", "TEXT", "VARCHAR"), ("kind", "TEXT NOT NULL DEFAULT 'source_claim'", "VARCHAR", False),
        ("negated", "INTEGER NOT NULL DEFAULT 0", "BIGINT", False), ("evidence", "TEXT", "VARCHAR", False),
        ("since", None, "BIGINT", False)),
    "facts": _columns(
        ("num", "INTEGER PRIMARY KEY", "BIGINT"), ("relation", "TEXT NOT NULL", "VARCHAR"),
        ("args", "TEXT NOT NULL", "VARCHAR"), ("k0", "", None), ("k1", "", None), ("k2", "", None),
        ("label", "BLOB NOT NULL", "INTEGER[][]"), ("exact", "INTEGER NOT NULL", "BOOLEAN"),
        ("sets", None, "INTEGER")),
    "mentions": _columns(("assertion", "INTEGER NOT NULL", "INTEGER"), ("fact", "INTEGER NOT NULL", "BIGINT"),
                         ("support_set", None, "INTEGER")),
    "artifacts": _columns(
        ("num", "INTEGER PRIMARY KEY", "BIGINT"), ("id", "TEXT NOT NULL UNIQUE", "VARCHAR"),
        ("layer", "TEXT NOT NULL", "VARCHAR"), ("content", "TEXT NOT NULL", "VARCHAR"),
        ("fact", "INTEGER NOT NULL UNIQUE", "BIGINT"), ("summary", "INTEGER", "BIGINT")),
    "rules": _columns(
        ("num", "INTEGER PRIMARY KEY", "BIGINT"), ("relation", "TEXT NOT NULL", "VARCHAR"), ("c0", "", "VARCHAR"),
        ("c1", "", "VARCHAR"), ("c2", "", "VARCHAR"), ("tree", "BLOB NOT NULL", "BLOB"),
        ("ground", "TEXT", "VARCHAR", False)),
}

#: a file's table constraints beyond its columns'
_FILE_AFTER = {"mentions": ", PRIMARY KEY(assertion, fact)) WITHOUT ROWID"}
#: a folder's column order where it differs from the file's (the rules' trees first, as written since)
_FOLDER_ORDER = {"rules": ("num", "tree", "relation", "c0", "c1", "c2", "ground")}

#: a graph file's CREATE TABLE statements
FILE_TABLES = "\n".join(
    f"CREATE TABLE {table}(" + ", ".join(f"{c.name} {c.file}".rstrip() for c in columns if c.file is not None)
    + _FILE_AFTER.get(table, ")") + ";" for table, columns in TABLES.items())


def _folder_columns(table: str) -> str:
    by_name = {c.name: c for c in TABLES[table] if c.folder is not None}
    return ", ".join(f"{name} {by_name[name].folder}" for name in _FOLDER_ORDER.get(table, by_name))


#: a graph folder's Parquet columns, per table (assertions: those of a build; an export keeps the file's)
PARQUET_SCHEMA = {table: _folder_columns(table) for table in TABLES if table != "meta"}
#: the columns readers of a graph file use, per table (checked on opening: schema.py)
READ_COLUMNS = {table: tuple(c.name for c in columns if c.read and c.file is not None)
                for table, columns in TABLES.items()}
