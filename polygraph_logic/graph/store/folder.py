"""A graph as a folder of Parquet files: its layout, and DuckDB reading it with the graph file's queries.

The folder (format ``polygraph-tables/1``) holds the graph file's tables as columns:

- ``assertions.parquet``: ``num, id, source, subject, predicate, object, text`` and, as the
  graph has them, ``kind, negated, since``;
- ``facts.parquet``: ``num, relation, args`` (the graph file's JSON key), ``label`` as
  ``list<list<int32>>`` (support sets of assertion numbers, ascending, in stored order),
  ``exact`` and ``sets`` (the number of support sets);
- ``mentions.parquet``: ``assertion, fact, support_set``, one row per assertion of each support
  set, sorted by assertion (the what-if index: row groups are skipped by their min/max);
- ``artifacts.parquet``: ``num, id, layer, content, fact, summary``;
- ``rules.parquet``: ``num, tree`` and, written since graphs are read in place, ``relation, c0,
  c1, c2`` (the head relation and its first three head constants as JSON, for goal lookups);
- ``meta.json``: the format and the graph file's ``meta`` rows (cap, build record, statistics);
  ``rules.dl`` the rules as text (in meta.json in folders written before);
- look-up files derived from the tables by ``write_indexes``, the last step of every writer:
  ``assertions_by_id.parquet`` and ``assertions_by_source.parquet`` (assertion numbers by id
  and by source), ``artifacts_by_id.parquet`` (ids sorted), ``rules_by_head.parquet`` (the rules
  by head relation and constants, in small row groups), ``facts_by_k2.parquet`` (facts sorted by their
  third argument) and ``background_facts.parquet`` (the facts of background knowledge alone,
  label one: what an explanation may use besides the facts its support set mentions).  A
  folder without them is read by scans.

``FolderDB`` opens a folder as views with the graph file's table and column names, so that
``Graph`` asks a folder exactly what it asks a file: the same query texts, run by DuckDB
(``INDEXED BY`` dropped; labels read as JSON text; ``k0..k2`` the first three arguments as
text, which the lazy store re-checks on the decoded arguments).  DuckDB reads it under
READER_MEMORY, its cache of file blocks off, so that a whole-graph read (an export) stays
bounded.  A folder is read-only: one version, the build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.rows import bad_graph
from polygraph_logic.graph.store.stored_rules import load_rule, rule_rows

FOLDER_FORMAT = "polygraph-tables/1"
FILES = ("assertions", "facts", "mentions", "artifacts", "rules")
#: the Parquet columns of every table but ``assertions`` (whose columns follow the graph's)
PARQUET_SCHEMA = {
    "facts": "num BIGINT, relation VARCHAR, args VARCHAR, label INTEGER[][], exact BOOLEAN, sets INTEGER",
    "mentions": "assertion INTEGER, fact BIGINT, support_set INTEGER",
    "artifacts": "num BIGINT, id VARCHAR, layer VARCHAR, content VARCHAR, fact BIGINT, summary BIGINT",
    "rules": "num BIGINT, tree BLOB, relation VARCHAR, c0 VARCHAR, c1 VARCHAR, c2 VARCHAR",
}
#: the order each file is written in (mentions by assertion: row groups then skip by min/max)
ORDER = {"assertions": "num", "facts": "num", "mentions": "assertion, fact, support_set", "artifacts": "num",
         "rules": "num"}
#: look-up files derived from the tables (write_indexes): sorted copies of a column or two, so
#: that a look-up by artifact id, or by a fact's third argument, reads a row group or two
INDEXES = {
    "assertions_by_id": "SELECT id, num FROM {assertions} ORDER BY id",
    "assertions_by_source": "SELECT source, num, id FROM {assertions} ORDER BY source",
    "artifacts_by_id": "SELECT id, num FROM {artifacts} ORDER BY id",
    "facts_by_k2": "SELECT relation, args->>'$[2]' AS k2, args, num FROM {facts} "
                   "WHERE json_array_length(args) >= 3 ORDER BY relation, k2",
    "rules_by_head": "SELECT relation, c0, c1, c2, num, tree FROM {rules} ORDER BY relation, c0, num",
    "background_facts": "SELECT num, relation, args FROM {facts} WHERE len(label) = 1 AND len(label[1]) = 0 "
                        "ORDER BY num",
}
#: look-up files written in small row groups: a look-up reads (and decodes) one or two of them
SMALL_ROW_GROUPS = {"rules_by_head": 2048}
#: the most numbers a streamed read of a folder's table asks for at once (FolderDB.in_ranges)
RANGE = 100_000
#: the rules as rule-language text, beside meta.json (at x400, 31 MB that opening need not parse)
RULES_TEXT = "rules.dl"
#: DuckDB's memory when reading a folder (beyond it, a query spills to a temporary folder)
READER_MEMORY = "1GB"
#: lists of numbers up to this long are written into a query's text (translate)
LITERAL_LIST = 10_000
#: how many rows a streamed read fetches at a time
BATCH = 100_000


def is_folder(path: str | Path) -> bool:
    """True when ``path`` is a directory (a graph folder, or something refused as one)."""
    return Path(path).is_dir()


def table_path(directory: str | Path, name: str) -> Path:
    """Returns the Parquet file of one table in a graph folder."""
    return Path(directory) / f"{name}.parquet"


def quoted(path) -> str:
    """A path (or any text) inside a single-quoted SQL literal."""
    return str(path).replace("'", "''")


def duckdb_connection(memory_limit: str | None = None, spill: Path | None = None):
    """Returns an in-memory DuckDB connection (an import error names the package to install)."""
    try:
        import duckdb  # an optional extra: only folders and the SQL engines need it
    except ImportError:
        raise PolygraphError("missing_dependency", 'DuckDB is not installed: pip install "polygraph_logic[duckdb]"') \
            from None
    con = duckdb.connect()
    if memory_limit:
        con.execute(f"SET memory_limit = '{memory_limit}'")
    if spill is not None:
        con.execute(f"SET temp_directory = '{quoted(spill)}'")
    return con


def bad_folder(directory, what: str) -> PolygraphError:
    return PolygraphError("bad_tables", f"{directory}: {what}; write it again with "
                                        f"`polygraph export-tables GRAPH -o {directory}`")


def read_meta(directory: str | Path) -> dict:
    """Returns a graph folder's meta.json; a missing or foreign folder is a bad_tables error."""
    directory = Path(directory)
    if not directory.is_dir():
        raise PolygraphError("file_error", f"no tables folder at {directory}")
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise bad_folder(directory, f"meta.json cannot be read ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FOLDER_FORMAT or not isinstance(meta.get("meta"), dict):
        raise bad_folder(directory, f"meta.json does not declare format {FOLDER_FORMAT!r}")
    missing = [name for name in FILES if not table_path(directory, name).is_file()]
    if missing:
        raise bad_folder(directory, f"{', '.join(f'{m}.parquet' for m in missing)} missing")
    return meta


def folder_rule_rows(rules, start: int = 1):
    """Yields ``(num, tree, relation, c0, c1, c2)``: the rules table of a folder, numbered from ``start``."""
    for num, (relation, c0, c1, c2, tree) in enumerate(rule_rows(rules), start):
        yield (num, tree, relation, *(None if c is None else json.dumps(c, ensure_ascii=False) for c in (c0, c1, c2)))


def head_value(text):
    """The head constant a folder stores as JSON text (None stays None)."""
    if text is None:
        return None
    if text[:1] == '"' and "\\" not in text:  # a plain string, the common case: no parse
        return text[1:-1]
    return json.loads(text)


def write_indexes(directory: Path, memory_limit: str = "2GB") -> None:
    """Writes the folder's look-up files (INDEXES) from its tables, sorting under ``memory_limit``
    (DuckDB spills beyond it)."""
    spill = directory / ".index-spill"
    con = duckdb_connection(memory_limit, spill)
    con.execute("SET enable_progress_bar = false")
    try:
        names = {name: f"read_parquet('{quoted(table_path(directory, name))}')" for name in FILES}
        for index, sql in INDEXES.items():
            groups = f", ROW_GROUP_SIZE {SMALL_ROW_GROUPS[index]}" if index in SMALL_ROW_GROUPS else ""
            con.execute(f"COPY ({sql.format(**names)}) TO '{quoted(table_path(directory, index))}' "
                        f"(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1{groups})")
    finally:
        con.close()
        if spill.exists():
            for leftover in spill.iterdir():
                leftover.unlink()
            spill.rmdir()


def rules_text(directory: Path, meta: dict) -> str:
    """A folder's rules as text: its rules.dl, or (written before rules.dl) meta.json's ``rules``."""
    path = Path(directory) / RULES_TEXT
    if path.is_file():
        return path.read_text(encoding="utf-8")
    text = meta.get("rules")
    return text if isinstance(text, str) else ""


def refuse_folder(path: str | Path, what: str) -> None:
    """Raises ``read_only`` when ``path`` is a graph folder: folders are read in place, one
    version, never written to (a graph file takes versions)."""
    if is_folder(path):
        raise PolygraphError("read_only", f"{path} is a graph folder, read in place but never {what}: convert it "
                                          f"with `polygraph import-tables {path} -o FILE.graph` and use the file")


def folder_bytes(directory: Path) -> int:
    """The bytes of a graph folder's files."""
    return sum(p.stat().st_size for p in Path(directory).iterdir() if p.is_file())


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

    def __init__(self, directory: Path, memory_limit: str = READER_MEMORY):
        import duckdb  # an optional extra: only folders need it
        self.errors = (duckdb.Error,)
        self._read_meta(directory)
        self.con = duckdb_connection(memory_limit)
        try:
            self._views(directory)
        except duckdb.Error as error:
            self.con.close()
            raise bad_graph(directory, f"cannot be read as a graph folder ({str(error).splitlines()[0]})") from None

    def _read_meta(self, directory: Path) -> None:
        """``path``, ``meta`` (meta.json's text entries) and the rules text of folders written
        before rules.dl; a missing or foreign folder is a bad_tables error."""
        self.path = directory
        folder = read_meta(directory)
        self.meta = {k: v for k, v in folder["meta"].items() if isinstance(v, str) and k != "rules"}
        self._old_rules = folder["meta"].get("rules")  # folders written before rules.dl

    def _views(self, directory: Path) -> None:
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

        def parquet(name: str) -> str:
            return f"read_parquet('{quoted(table_path(directory, name))}')"

        con.execute("CREATE TABLE meta(key VARCHAR, value VARCHAR)")
        con.executemany("INSERT INTO meta VALUES (?, ?)", sorted(self.meta.items()))
        con.execute(f"CREATE VIEW assertions AS SELECT * FROM {parquet('assertions')}")
        keys = ", ".join(f"args->>'$[{i}]' AS k{i}" for i in range(3))
        con.execute(f"CREATE VIEW facts AS SELECT num, relation, args, {keys}, CAST(label AS VARCHAR) AS label, "
                    f"exact, sets FROM {parquet('facts')}")
        con.execute(f"CREATE VIEW mentions AS SELECT assertion, fact, support_set FROM {parquet('mentions')}")
        con.execute(f"CREATE VIEW artifacts AS SELECT num, id, layer, content, fact, summary FROM {parquet('artifacts')}")
        self.indexes = {name for name in INDEXES if table_path(directory, name).is_file()}
        for name in self.indexes:
            keys = ", args->>'$[0]' AS k0, args->>'$[1]' AS k1" if name == "facts_by_k2" else ""
            con.execute(f"CREATE VIEW {name} AS SELECT *{keys} FROM {parquet(name)}")
        rule_columns = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {parquet('rules')}").fetchall()}
        if {"relation", "c0", "c1", "c2"} <= rule_columns:
            con.execute(f"CREATE VIEW rules AS SELECT num, relation, c0, c1, c2, tree FROM {parquet('rules')}")
        else:  # a folder written before rules carried their heads: read from the trees once, here
            self._rule_heads(parquet("rules"))

    def _rule_heads(self, source: str) -> None:
        rules = [load_rule(tree, self) for (tree,) in self.con.execute(f"SELECT tree FROM {source} ORDER BY num").fetchall()]
        columns = dict(zip(("num", "tree", "relation", "c0", "c1", "c2"), zip(*folder_rule_rows(rules)))) \
            if rules else {name: [] for name in ("num", "tree", "relation", "c0", "c1", "c2")}
        self.con.execute("CREATE TABLE rules(num BIGINT, relation VARCHAR, c0 VARCHAR, c1 VARCHAR, c2 VARCHAR, "
                         "tree BLOB)")
        self.con.register("rules_in", {name: list(values) for name, values in columns.items()})
        self.con.execute("INSERT INTO rules SELECT num, relation, c0, c1, c2, tree FROM rules_in")
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
            yield from call(lambda: self.execute(sql, (low, low + size, *parameters)).fetchall())
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

    def fetchall(self) -> list:
        rest = self._batch[self._at:] + ([] if self._done else self._cursor.fetchall())
        self._batch, self._at = [], 0
        return rest
