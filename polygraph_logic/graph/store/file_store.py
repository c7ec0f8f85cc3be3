"""The graph file backend: one SQLite file, opened read-only and queried in place (backend.py).

Its tables (format ``polygraph-graph/2``, table_schema.py): ``assertions`` indexed by id,
source, predicate and triple; ``facts`` with their coded labels (label_codec.py), keyed by
their first three arguments (``k0..k2``, indexed); ``mentions`` (assertion -> facts, the
what-if index); ``artifacts``; ``rules`` as syntax trees found by head; ``meta``.  A graph
grows by versions (versions.py): ``at`` reads an old one through views of its rows.  Writing
is writer.py's (a build), version_write.py's (a version) and circuit_rows.py's (a circuit).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Callable, Iterable, Iterator
from urllib.parse import quote

from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import replacing
from polygraph_logic.graph.store.chain import record_file
from polygraph_logic.graph.store.erase import compact_file
from polygraph_logic.graph.store.backend import ARTIFACT_LABELS, Store, check_parent, disk_error
from polygraph_logic.graph.store.circuit_rows import insert_file_circuit, write_file_circuit
from polygraph_logic.graph.store.label_codec import decode_label
from polygraph_logic.graph.store.rows import FORMAT, bad_graph, key_value
from polygraph_logic.graph.store.schema import cut_short, file_problem, schema_problem
from polygraph_logic.graph.store.version_write import VersionWriter
from polygraph_logic.graph.store.versions import at_views, compare_files, sha256, version_rows

#: how long a reader waits for a writer's commit, and a writer for another writer, in seconds
WAIT = 60.0

#: what SQLite says when the disk refuses a write (read-only, full, gone)
_DISK = re.compile(r"disk I/O error|readonly|read-only|disk is full|unable to open|no such file", re.I)

#: the index each look-up of assertions by a column reads (SQLite's statistics would scan)
_INDEX_OF = {"id": "sqlite_autoindex_assertions_1", "source": "assertions_by_source",
             "predicate": "assertions_by_predicate"}

_TOUCHED_ARTIFACTS = """
SELECT a.num, a.id, a.layer, a.fact, a.summary, f.args, f.label, f.exact
FROM artifacts a JOIN facts f ON f.num = a.fact
WHERE a.fact IN (SELECT DISTINCT fact FROM mentions WHERE assertion IN (SELECT value FROM json_each(?)))
"""


class FileStore(Store):
    """A graph file, read-only, at its latest version or an earlier one (``at``)."""

    form = "file"

    def __init__(self, path: Path, at: int | None = None, snapshot: bool = False):
        """``snapshot``: every read in one read transaction, so that a writer's commit waits for
        the reader to close rather than land between two of its reads (an add reads so)."""
        self.path = Path(path)
        if not self.path.is_file():
            raise PolygraphError("file_error", f"no graph file at {self.path}")
        try:
            if self.path.stat().st_size == 0:
                raise bad_graph(self.path, "the file is empty")
        except OSError as error:
            raise bad_graph(self.path, f"cannot be read ({error.strerror or error})") from None
        self.errors = (sqlite3.DatabaseError,)
        self._open(snapshot=snapshot)
        self._check_format()
        self.at = None
        if at is not None:  # an old version: the tables are shadowed by views of its rows (versions.py)
            stats = self.call(at_views, self._db, at, self.path)
            self.at = at
            if stats:
                self.meta["stats"] = json.dumps(stats)

    def _open(self, recovered: bool = False, snapshot: bool = False) -> None:
        """Opens the file read-only and reads ``meta``; a write that did not finish (a hot journal)
        is rolled back first, as SQLite does for a connection that may write."""
        # the path is escaped: '#', '?' and '%' in a file name must not change what is opened
        uri = "file:" + quote(str(self.path.resolve())) + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=WAIT)
            if snapshot:
                self._db.execute("BEGIN")  # deferred: the first read takes the shared lock, kept until close
            self.meta = dict(sorted(self._db.execute("SELECT key, value FROM meta WHERE key != 'rules'")))
            problem = cut_short(self.path, self._db)
        except sqlite3.DatabaseError as error:
            self._db.close()
            if getattr(error, "sqlite_errorname", "") == "SQLITE_READONLY_ROLLBACK" and not recovered:
                recover(self.path)
                return self._open(recovered=True, snapshot=snapshot)
            raise bad_graph(self.path, file_problem(self.path) or f"not a polygraph graph file ({error})") from None
        if problem:
            self._db.close()
            raise bad_graph(self.path, problem)

    def _check_format(self) -> None:
        found = self.meta.get("format")
        if found != FORMAT:
            self._db.close()
            if isinstance(found, str) and found.startswith("polygraph-graph/"):
                raise PolygraphError(
                    "old_graph", f"{self.path} has format {found!r}; this version reads {FORMAT!r}: rebuild it "
                                 f"with `polygraph build --assertions A.jsonl [--receipts R.jsonl] [--rules ...] "
                                 f"-o {self.path}` (or `polygraph import rdf EXPORT -o {self.path}`)")
            raise bad_graph(self.path, f"format {found!r}, expected {FORMAT!r}")
        problem = self.call(schema_problem, self._db)
        if problem:
            self._db.close()
            raise bad_graph(self.path, problem)

    def lookup(self, name: str) -> str | None:
        """``rule_atoms``, the one look-up table a file keeps, when it has it (written since)."""
        if name != "rule_atoms":
            return None
        if "_rule_atoms" not in self.__dict__:
            self._rule_atoms = self.call(lambda: self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rule_atoms'").fetchone() is not None)
        return name if self._rule_atoms else None

    @classmethod
    def recognizes(cls, path: Path) -> bool:
        return path.is_file()

    def execute(self, sql: str, parameters=()):
        return self._db.execute(sql, parameters)

    def close(self) -> None:
        self._db.close()

    # --- access paths ---------------------------------------------------------------------
    def assertions_by(self, column: str) -> str:
        # the index always (none at an old version: a view has no index)
        return "assertions" if self.at is not None else f"assertions INDEXED BY {_INDEX_OF[column]}"

    def key(self, value):
        return key_value(value)

    def head_key(self, value):
        return value

    def artifact_rows(self, where: str, parameters=(), ordered: bool = False) -> Iterator[tuple]:
        order = " ORDER BY a.num" if ordered else ""
        return self.query("SELECT a.id, a.layer, a.content, f.label, f.exact FROM artifacts a "
                          f"JOIN facts f ON f.num = a.fact WHERE {where}{order}", parameters)

    def touched_artifacts(self, deleted: list[int]) -> list[tuple]:
        # one query: SQLite joins through the mentions' key and the artifacts' unique fact index
        return self.query(_TOUCHED_ARTIFACTS, (json.dumps(deleted),)).fetchall()

    def artifact_labels(self, deleted: list[int] | None = None) -> Iterator[tuple]:
        # streamed by SQLite: artifacts in number order, each fact by its number (a B-tree look-up)
        if deleted is None:
            return self.query(ARTIFACT_LABELS)
        return self.query(_TOUCHED_ARTIFACTS, (json.dumps(deleted),))

    def fact_prefix(self, relation: str, prefix: str, limit: int) -> list[int]:
        return [row[0] for row in self.query(
            "SELECT num FROM facts WHERE relation = ? AND k0 >= ? AND k0 < ? ORDER BY k0, k1, k2 LIMIT ?",
            (relation, prefix, prefix + "\U0010ffff", limit))]

    def argument_names(self, relation: str, position: int, prefix: str, limit: int) -> list:
        column = f"k{int(position)}"
        return [row[0] for row in self.query(
            f"SELECT DISTINCT {column} FROM facts WHERE relation = ? AND {column} >= ? AND {column} < ? "
            f"ORDER BY {column} LIMIT ?", (relation, prefix, prefix + "\U0010ffff", limit))]

    def label_kills(self) -> dict[str, int]:
        # a file keeps no support-set numbers in its mentions: its labels are decoded here
        sources = dict(self.query("SELECT num, source FROM assertions"))
        counts: dict[str, int] = {}
        for (blob,) in self.query("SELECT f.label FROM artifacts a JOIN facts f ON f.num = a.fact"):
            killers = None
            try:
                groups = decode_label(blob)
            except (ValueError, TypeError, RecursionError):
                raise bad_graph(self.path, "a stored label is damaged") from None
            for group in groups:
                names = {sources[n] for n in group}
                killers = names if killers is None else killers & names
                if not killers:
                    break
            for source in killers or ():
                counts[source] = counts.get(source, 0) + 1
        return counts

    # --- what belongs to the form ------------------------------------------------------------
    def rules_text(self) -> str:
        row = self.query("SELECT value FROM meta WHERE key = 'rules'").fetchone()
        return row[0] if row and isinstance(row[0], str) else ""

    def size(self) -> int:
        return self.path.stat().st_size

    def _has_table(self, name: str) -> bool:
        return self.query("SELECT 1 FROM main.sqlite_master WHERE name = ?", (name,)).fetchone() is not None

    def version_read(self) -> int:
        if self.at is not None:
            return self.at
        row = self.query("SELECT max(num) FROM versions").fetchone() if self._has_table("versions") else None
        return row[0] if row and row[0] is not None else 1

    def version_rows(self) -> list[dict]:
        return self.call(version_rows, self._db)

    def has_circuit(self) -> bool:
        return self._has_table("circuit_versions") and self.query(
            "SELECT 1 FROM circuit_versions WHERE version = ?", (self.version_read(),)).fetchone() is not None

    # --- writing ------------------------------------------------------------------------------
    @classmethod
    def write_circuit(cls, path: Path, version: int, rows: Iterable[tuple]) -> None:
        write_file_circuit(path, version, rows)

    @classmethod
    def write_version(cls, path: Path, action: str, command: str, record: dict,
                      write: Callable[[VersionWriter], None], expected: int | None = None,
                      circuit: Callable | None = None) -> int:
        db = writing(path)
        try:
            writer = VersionWriter(db)
            check_parent(path, writer.parent, expected)
            write(writer)
            version = writer.finish(action, command, record)
            if circuit is not None:  # read on the writer's connection: the version as written, not yet seen
                rows = circuit(_Writing(path, db))
                if rows is not None:
                    insert_file_circuit(db, version, rows)
            record_file(db, version)  # the version's link of the hash chain (chain.py), committed with it
            db.commit()
        except sqlite3.OperationalError as error:
            if not _DISK.search(str(error)):
                raise
            raise disk_error(path, error) from None
        except OSError as error:  # a file beside it (an input, a spill) the disk refused
            raise disk_error(path, error) from None
        finally:
            db.close()  # uncommitted: rolled back, the file as it was
        return version

    @classmethod
    def compact(cls, path: Path) -> None:
        compact_file(path)

    @classmethod
    def copy(cls, source: Path, target: Path) -> None:
        # SQLite's online backup: a consistent copy whatever else reads the file
        db = sqlite3.connect(f"file:{Path(source).resolve()}?mode=ro", uri=True)
        try:
            with replacing(Path(target), ".partial") as temporary:
                copy = sqlite3.connect(temporary)
                db.backup(copy)
                copy.close()
        finally:
            db.close()

    @classmethod
    def digest(cls, path: Path) -> str | None:
        return sha256(path)

    @classmethod
    def compare(cls, first: Path, second: Path, limit: int = 10) -> list[str]:
        return compare_files(first, second, limit)


class _Writing(FileStore):
    """A graph file read on a writer's connection, inside its transaction: the version being
    written as it will be committed (``close`` leaves the connection to the writer)."""

    def __init__(self, path: Path, db: sqlite3.Connection):
        self.path, self._db, self.at = Path(path), db, None
        self.errors = (sqlite3.DatabaseError,)
        self.meta = dict(sorted(db.execute("SELECT key, value FROM meta WHERE key != 'rules'")))

    def close(self) -> None:
        pass


def recover(path: Path) -> None:
    """Rolls back a write that did not finish (its hot journal), by opening the file as a writer
    would: SQLite restores the pages the journal holds and deletes it."""
    try:
        db = sqlite3.connect(path, timeout=WAIT)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except sqlite3.Error as error:
        raise PolygraphError("unfinished_write", f"{path}: a write to it did not finish (its journal "
                                                 f"{path.name}-journal holds what it changed), and it cannot be "
                                                 f"rolled back here ({error}): run any command on it where the "
                                                 "file and its folder are writable") from None


def writing(path: Path) -> sqlite3.Connection:
    """A connection holding the file's write lock (a second writer waits for it up to WAIT
    seconds, then is refused by name): a version is computed and written under it."""
    db = sqlite3.connect(path, timeout=WAIT)
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        db.close()
        if "locked" in str(error) or "busy" in str(error):
            raise PolygraphError("busy", f"{path}: another command has been writing it for {WAIT:.0f} s; "
                                         "run this one again when it has finished") from None
        raise disk_error(path, error) from None
    return db


__all__ = ["FileStore", "recover", "writing"]
