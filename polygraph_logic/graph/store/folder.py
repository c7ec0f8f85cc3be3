"""Reading a graph folder (folder_layout.py) in place: DuckDB asked the graph file's queries.

``FolderDB`` opens a folder as views with the graph file's table and column names, so that
``Graph`` asks a folder exactly what it asks a file: the same query texts, run by DuckDB
(``INDEXED BY`` dropped; labels read as JSON text; ``k0..k2`` the first three arguments as
text, which the lazy store re-checks on the decoded arguments).  DuckDB reads it under
READER_MEMORY, its cache of file blocks off, so that a whole-graph read (an export) stays
bounded.  A folder is read at its latest version, or at an earlier one
(``at``): folder_versions.py says how its versions are laid out and read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from polygraph_logic.graph.store.circuit_rows import folder_view
from polygraph_logic.graph.store.folder_layout import (BATCH, INDEXES, LITERAL_LIST, RANGE, READER_MEMORY,
                                                       bad_folder, duckdb_connection, folder_rule_rows, quoted,
                                                       read_meta, rules_text, table_path)
from polygraph_logic.graph.store.folder_versions import (VERSION_COLUMN, VersionedTables, check_version,
                                                         settle, version_record)
from polygraph_logic.graph.store.rows import bad_graph
from polygraph_logic.graph.store.stored_rules import load_rule

#: a graph file's index hint, which a folder's readers drop
INDEXED_BY = re.compile(r"\bINDEXED BY \w+\s*")
_LIST = "SELECT value FROM json_each(?)"
# a JSON array's text elements: SQLite's json_each gives text, DuckDB's JSON to be read as text
_MEMBER, _MEMBER_TEXT = "'$.members') WHERE value = ?", "'$.members') WHERE value->>'$' = ?"


def translate(sql: str, parameters=()) -> tuple[str, list]:
    """A graph file's query as DuckDB runs it on a folder's views: no ``INDEXED BY``; a list of
    values sent as JSON (``SELECT value FROM json_each(?)``) unnested with its values' type
    (DuckDB's json_each yields JSON, which compares with neither text nor numbers)."""
    sql = INDEXED_BY.sub("", sql).replace(_MEMBER, _MEMBER_TEXT)
    if _LIST not in sql:
        return sql, list(parameters)
    parts, out, kept = sql.split("?"), [], []
    for i, value in enumerate(parameters):
        if parts[i].endswith("(SELECT value FROM json_each(") and parts[i + 1].startswith("))"):
            values = json.loads(value)
            literals = _literals(values) if len(values) <= LITERAL_LIST else None
            if literals is not None:
                # values written into the text: DuckDB then prunes the row groups of a sorted file
                # by them (a list from a subquery it joins instead)
                out.append(parts[i][:-len("(SELECT value FROM json_each(")] + f"({literals or 'NULL'}")
                parts[i + 1] = parts[i + 1][1:]
                continue
            kind = "BIGINT" if all(type(v) is int for v in values) else "VARCHAR"
            parts[i] = parts[i][:-len("json_each(")] + "(SELECT unnest(from_json("
            # an empty list: no row, and NULL compares with a column of any type
            parts[i + 1] = (f", '[\"{kind}\"]')) AS value" if values else ", '[\"NULL\"]')) AS value") + parts[i + 1]
        out.append(parts[i] + "?")
        kept.append(value)
    out.append(parts[len(parameters)])
    return "".join(out), kept


def _literals(values: list) -> str | None:
    """A list of integers or of texts as SQL literals (a text's quotes doubled), or None for a
    list of another kind or with a character a literal should not carry (NUL)."""
    if all(type(v) is int for v in values):
        return ", ".join(map(str, values))
    if all(type(v) is str and "\0" not in v for v in values):
        return ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return None


class FolderDB:
    """A graph folder as a database with the graph file's tables: ``execute(sql, parameters)``
    returns a cursor to iterate, ``fetchone`` or ``fetchall`` (each query on a cursor of its
    own, so that a streamed read and the look-ups made while reading it do not disturb each
    other)."""

    def __init__(self, directory: Path, memory_limit: str = READER_MEMORY, at: int | None = None,
                 tagged: bool = False):
        """``at``: the version to read (the latest when None); ``tagged``: each versioned table
        gains the column ``version_``, the version that wrote the row (for writing a version)."""
        import duckdb  # an optional extra: only folders need it
        self.errors = (duckdb.Error,)
        self._read_meta(directory)
        self.version = check_version(directory, at)
        if self.version > 1:  # that version's statistics and record (versions.at_views does so for a file)
            self.meta["stats"] = json.dumps(version_record(directory, self.version)["stats"])
        self.con = duckdb_connection(memory_limit)
        self.memory_limit = memory_limit  # as given (DuckDB reports it rounded to MiB)
        try:
            self._views(directory, tagged)
        except duckdb.Error as error:
            self.con.close()
            raise bad_graph(directory, f"cannot be read as a graph folder ({str(error).splitlines()[0]})") from None

    def _read_meta(self, directory: Path) -> None:
        """``path``, ``meta`` (meta.json's text entries) and the rules text of folders written
        before rules.dl; a missing or foreign folder is a bad_tables error."""
        self.path = directory
        folder = read_meta(directory)
        settle(directory)  # a purge stopped before its rewritten files were all in place: finished first
        self.meta = {k: v for k, v in folder["meta"].items() if isinstance(v, str) and k != "rules"}
        self.build_meta = dict(self.meta)  # the build's (version 1's) statistics among them
        self._old_rules = folder["meta"].get("rules")  # folders written before rules.dl

    def _views(self, directory: Path, tagged: bool) -> None:
        con = self.con
        con.execute("SET enable_progress_bar = false")
        # each file's footer (row groups, min/max) read once, not by every query: a look-up at
        # x400 (630 row groups in facts.parquet) went from about 30 ms to a few
        con.execute("SET parquet_metadata_cache = true")
        # bounded memory: DuckDB's cache of the files' blocks grew with every row read (an export
        # of x400 passed 740 MB and rising; flat at about 165 MB at x10 without it), and the
        # largest query (top-sources' bounds over every mention) spills beyond READER_MEMORY
        con.execute("SET enable_external_file_cache = false")
        self._spill = Path(tempfile.gettempdir()) / f"polygraph-duckdb-{os.getpid()}-{id(self)}"
        con.execute(f"SET temp_directory = '{quoted(self._spill)}'")
        tables = VersionedTables(con, directory, self.version, tagged)
        tag = f", {VERSION_COLUMN}" if tagged else ""

        con.execute("CREATE TABLE meta(key VARCHAR, value VARCHAR)")
        con.executemany("INSERT INTO meta VALUES (?, ?)", sorted(self.meta.items()))
        con.execute(f"CREATE VIEW assertions AS SELECT * FROM {tables.table('assertions')}")
        keys = ", ".join(f"args->>'$[{i}]' AS k{i}" for i in range(3))
        con.execute(f"CREATE VIEW facts AS SELECT num, relation, args, {keys}, CAST(label AS VARCHAR) AS label, "
                    f"exact, sets{tag} FROM {tables.table('facts')}")
        con.execute(f"CREATE VIEW mentions AS SELECT assertion, fact, support_set{tag} FROM {tables.table('mentions')}")
        con.execute(f"CREATE VIEW artifacts AS SELECT num, id, layer, content, fact, summary{tag} "
                    f"FROM {tables.table('artifacts')}")
        circuit = folder_view(directory, self.version)
        self.circuit = circuit is not None  # every inexact fact's derivations stored (circuit_rows.py)
        if circuit is not None:
            con.execute(f"CREATE VIEW derivations AS {circuit}")
        self.indexes = {name for name in INDEXES if table_path(directory, name).is_file()}
        for name in self.indexes:
            keys = ", args->>'$[0]' AS k0, args->>'$[1]' AS k1" if name == "facts_by_k2" else ""
            con.execute(f"CREATE VIEW {name} AS SELECT *{keys} FROM {tables.index(name)}")
        rules = f"read_parquet('{quoted(table_path(directory, 'rules'))}')"
        rule_columns = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {rules}").fetchall()}
        if {"relation", "c0", "c1", "c2"} <= rule_columns:
            ground = "ground" if "ground" in rule_columns else "CAST(NULL AS VARCHAR) AS ground"
            con.execute(f"CREATE VIEW rules AS SELECT num, relation, c0, c1, c2, tree, {ground}{tag} "
                        f"FROM {tables.table('rules')}")
        elif tables.versions:
            raise bad_folder(directory, "its rules file predates rule heads, and versions were added to it")
        else:  # a folder written before rules carried their heads: read from the trees once, here
            self._rule_heads(rules)

    def _rule_heads(self, source: str) -> None:
        rules = [load_rule(tree, self) for (tree,) in self.con.execute(f"SELECT tree FROM {source} ORDER BY num").fetchall()]
        names = ("num", "tree", "relation", "c0", "c1", "c2")
        columns = dict(zip(names, zip(*folder_rule_rows(rules)))) if rules else {name: [] for name in names}
        self.con.execute("CREATE TABLE rules(num BIGINT, relation VARCHAR, c0 VARCHAR, c1 VARCHAR, c2 VARCHAR, "
                         "tree BLOB, ground VARCHAR)")
        self.con.register("rules_in", {name: list(values) for name, values in columns.items()})
        self.con.execute("INSERT INTO rules SELECT num, relation, c0, c1, c2, tree, NULL FROM rules_in")
        self.con.unregister("rules_in")

    def execute(self, sql: str, parameters=()) -> "FolderCursor":
        cursor = self.con.cursor()
        cursor.execute(*translate(sql, parameters))
        return FolderCursor(cursor)

    def rules_text(self) -> str:
        return rules_text(self.path, {"rules": self._old_rules})

    def in_ranges(self, sql: str, parameters, table: str, call, where: str = "TRUE") -> Iterator[tuple]:
        """The rows of ``sql`` (whose first two parameters bound ``num`` from below and above) for
        one range of ``table``'s numbers after another, between the least and the greatest
        number of its rows ``where`` (the rest of ``parameters``) holds: small ranges first (a
        listing that stops early reads little), then up to RANGE numbers at a time."""
        first, last = call(lambda: self.execute(f"SELECT min(num), max(num) FROM {table} WHERE {where}",
                                                parameters).fetchone())
        if first is None:
            return
        low, size = first - 1, 1_000
        while low < last:
            cursor = call(lambda: self.execute(sql, (low, low + size, *parameters)))
            while batch := call(cursor.fetchmany, BATCH // 10):  # a range's rows streamed, not held whole
                yield from batch
            low, size = low + size, min(size * 4, RANGE)

    def close(self) -> None:
        self.con.close()
        shutil.rmtree(self._spill, ignore_errors=True)


class FolderCursor:
    """A DuckDB result read as sqlite3's cursor is: iterated a batch at a time, or fetched."""

    def __init__(self, cursor):
        self._cursor = cursor
        self._batch: list = []
        self._at = 0
        self._done = False

    def __iter__(self) -> "FolderCursor":
        return self

    def __next__(self):
        if self._at == len(self._batch):
            if self._done:
                raise StopIteration
            self._batch, self._at = self._cursor.fetchmany(BATCH // 10), 0
            if not self._batch:
                self._done = True
                self._cursor.close()
                raise StopIteration
        self._at += 1
        return self._batch[self._at - 1]

    def fetchone(self):
        if self._at < len(self._batch):
            self._at += 1
            return self._batch[self._at - 1]
        return None if self._done else self._cursor.fetchone()

    def fetchmany(self, size: int) -> list:
        if self._at < len(self._batch):
            rows, self._at = self._batch[self._at:self._at + size], min(self._at + size, len(self._batch))
            return rows
        return [] if self._done else self._cursor.fetchmany(size)

    def fetchall(self) -> list:
        rest = self._batch[self._at:] + ([] if self._done else self._cursor.fetchall())
        self._batch, self._at = [], 0
        return rest
