"""The graph folder backend: Parquet files read in place by DuckDB (backend.py, folder.py).

A folder holds the graph file's tables as Parquet files sorted by number, beside look-up files
sorted by what is looked up (``artifacts_by_id``, ``assertions_by_source``, ``rules_by_head``,
``facts_by_k2``, ``background_facts``: folder_layout.py), which stand in for a file's indexes;
its facts are also sorted by their arguments' text, so leading bound arguments are a range.  A
single row costs a row group or two, so artifacts are joined with their facts by number a chunk
at a time rather than by a join, which would read every row group of the facts file.  Its later
versions live in folders of their own (folder_versions.py), written by folder_version_write.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import contextmanager
from itertools import islice, zip_longest
from pathlib import Path
from typing import Callable, Iterable, Iterator

from polygraph_logic.graph.store.backend import Store, check_parent, disk_error
from polygraph_logic.graph.store.circuit_rows import write_folder_circuit
from polygraph_logic.graph.store.folder import FolderDB
from polygraph_logic.graph.store.folder_layout import RANGE, folder_bytes, head_value, writing_folder
from polygraph_logic.graph.store.folder_version_write import FolderVersionWriter
from polygraph_logic.graph.store.folder_versions import (RECORD, later_versions, latest_version, reading_pending,
                                                         settle, version_folder, version_record)
from polygraph_logic.graph.store.label_kills import kills_path, kills_sql, read_kills
from polygraph_logic.graph.store.versions import folder_version


def _complete(path: Path, folder: Path, version: int, circuit: Callable) -> None:
    """Writes into ``folder`` (version ``version``, not yet in place) the derivations ``circuit``
    finds, read from the folder as that version will be."""
    with reading_pending(path, version, folder):
        store = FolderStore(path)
        try:
            rows = circuit(store)
        finally:
            store.close()
    if rows is not None:
        write_folder_circuit(path, version, rows, folder)


def _prefix(prefix: str) -> tuple[str, str]:
    """The range of the sorted ``args`` texts whose first argument starts with ``prefix``."""
    text = json.dumps([prefix], ensure_ascii=False)[:-2]  # '["prefix' : the text up to the prefix's end
    return text, text + "\U0010ffff"


class FolderStore(Store):
    """A graph folder read by DuckDB (``db``: the folder opened already by another reader with
    FolderDB's interface, as spark_store.py does)."""

    form = "folder"
    sorted_args = True
    point_reads = False
    typed = True
    checks_in_sql = True
    fixed = True

    def __init__(self, path: Path, at: int | None = None, db=None, snapshot: bool = False):
        # ``snapshot``: always so (a folder's version is fixed when opened, its files never changed in place)
        self.path = Path(path)
        self.db = db if db is not None else FolderDB(self.path, at=at)
        self.errors = self.db.errors
        self.meta = {k: v for k, v in self.db.meta.items() if k not in ("rules", "version")}
        self.build_record = self.db.meta.get("version")  # version 1's record (versions.folder_version)
        self.at = at

    @classmethod
    def recognizes(cls, path: Path) -> bool:
        return path.is_dir()

    def execute(self, sql: str, parameters=()):
        return self.db.execute(sql, parameters)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def bounded(self, memory: str = "160MB") -> Iterator[None]:
        # x400, rests-on's counts over 23.8 M mentions: 11.9 s and 1,106 MB under the reader's 1 GB,
        # 23.8 s and 271 MB under 150 MB
        con = self.db.con
        con.execute(f"SET memory_limit = '{memory}'")
        try:
            yield
        finally:
            kept = self.db.memory_limit
            con.execute(f"SET memory_limit = '{kept}'" if kept else "RESET memory_limit")

    # --- access paths ---------------------------------------------------------------------
    def lookup(self, name: str) -> str | None:
        return name if name in self.db.indexes else None

    def assertions_by(self, column: str) -> str:
        return self.lookup(f"assertions_by_{column}") or "assertions"

    def key(self, value):
        return value if isinstance(value, str) else json.dumps(value)

    def head_key(self, value):
        return json.dumps(value, ensure_ascii=False)

    def head_value(self, stored):
        return head_value(stored)

    _COLUMNS = "SELECT a.id, a.layer, a.content, a.fact FROM artifacts a"

    def artifact_rows(self, where: str, parameters=(), ordered: bool = False) -> Iterator[tuple]:
        if not ordered:
            return self._with_facts(self.query(f"{self._COLUMNS} WHERE {where}", parameters))
        # a range of numbers at a time (the files are in number order: each range reads a few row
        # groups), so that memory stays bounded whatever the graph's size
        return self._with_facts(self.db.in_ranges(
            f"{self._COLUMNS} WHERE a.num > ? AND a.num <= ? AND {where} ORDER BY a.num",
            parameters, "artifacts a", self.call, where))

    def first_artifact_rows(self, layers: list[str], limit: int) -> list[tuple]:
        # a top-N query a layer (DuckDB reads the numbers, then the few rows it keeps: x400's edge
        # layer 26 ms, where its least and greatest number alone took 95-120 ms), then the facts
        # of every layer's rows in one look-up
        firsts = (row for layer in layers for row in self.query(
            f"{self._COLUMNS} WHERE a.layer = ? ORDER BY a.num LIMIT {int(limit)}", (layer,)))
        return list(self._with_facts(firsts, first=max(1, limit) * len(layers)))

    def _with_facts(self, rows, first: int = 100) -> Iterator[tuple]:
        """Artifact rows ``(id, layer, content, fact)`` as ``(id, layer, content, label, exact)``:
        their facts read by number, a chunk of rows at a time (small first: a listing that stops
        early reads little).  A join would scan every row group of the facts file (x400: 0.25 s
        a query)."""
        rows, size = iter(rows), first
        while chunk := list(islice(rows, size)):
            facts = {num: (label, exact) for num, label, exact in self.query(
                "SELECT num, label, exact FROM facts WHERE num IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted({row[3] for row in chunk})),))}
            for id_, layer, content, fact in chunk:
                if fact in facts:  # as the file's join: an artifact without its fact is not read
                    yield (id_, layer, content, *facts[fact])
            size = min(size * 4, max(size, 10_000))

    def in_order(self, table: str, columns: str) -> Iterator[tuple]:
        # a range of numbers at a time, each streamed: one ORDER BY over the table sorts every row
        # it returns (an export reads the assertions three times in order)
        first, last = self.query(f"SELECT min(num), max(num) FROM {table}").fetchone()
        low = (first or 1) - 1
        while last is not None and low < last:
            yield from self.query(f"SELECT {columns} FROM {table} WHERE num > ? AND num <= ? ORDER BY num",
                                  (low, low + RANGE))
            low += RANGE

    def fact_rows(self, carried: bool = True) -> Iterator[tuple]:
        # a range of numbers at a time, each ordered and (uncarried) anti-joined with the artifacts
        # of that range of facts: one query over every fact held the artifacts' facts and sorted
        # every row it returned (x40: 108 MB more; x400 reached READER_MEMORY)
        first, last = self.query("SELECT min(num), max(num) FROM facts").fetchone()
        low, size = (first or 1) - 1, 1_000
        where = "" if carried else " AND num NOT IN (SELECT fact FROM artifacts WHERE fact > ? AND fact <= ?)"
        while last is not None and low < last:
            high = low + size
            yield from self.query(f"SELECT relation, args, label, exact FROM facts WHERE num > ? AND num <= ?{where} "
                                  "ORDER BY num", (low, high) if carried else (low, high, low, high))
            low, size = high, min(size * 4, RANGE)

    def fact_prefix(self, relation: str, prefix: str, limit: int) -> list[int]:
        return [row[0] for row in self.query(
            "SELECT num FROM facts WHERE relation = ? AND args >= ? AND args < ? ORDER BY args LIMIT ?",
            (relation, *_prefix(prefix), limit))]

    def argument_names(self, relation: str, position: int, prefix: str, limit: int) -> list:
        if position == 0:  # first arguments: a range of the args text
            sql, bounds = ("SELECT DISTINCT args->>'$[0]' AS k FROM facts WHERE relation = ? AND args >= ? "
                           "AND args < ? ORDER BY k LIMIT ?", _prefix(prefix))
        else:  # third: the look-up file sorted by it
            table = self.lookup("facts_by_k2") or "facts"
            sql, bounds = (f"SELECT DISTINCT k2 FROM {table} WHERE relation = ? AND k2 >= ? AND k2 < ? "
                           "ORDER BY k2 LIMIT ?", (prefix, prefix + "\U0010ffff"))
        return [row[0] for row in self.query(sql, (relation, *bounds, limit))]

    def label_kills(self, anew: bool = False) -> dict[str, int]:
        # the counts its writer kept for this version (label_kills.py), else (or ``anew``) DuckDB
        # counts them over the mentions, which keep each assertion's support set
        kept = None if anew else self.kept_kills()
        return kept if kept is not None else dict(self.query(self._kills_sql()).fetchall())

    def kept_kills(self) -> dict[str, int] | None:
        kept = kills_path(self.path, self.version_read())
        return self.call(lambda: read_kills(kept)) if kept.is_file() else None

    def _kills_sql(self) -> str:
        return kills_sql(lambda sql: self.query(sql).fetchone())

    # --- what belongs to the form ------------------------------------------------------------
    def rules_text(self) -> str:
        return self.call(self.db.rules_text)

    def size(self) -> int:
        return folder_bytes(self.path)

    def version_read(self) -> int:
        return self.db.version

    def version_rows(self) -> list[dict]:
        # its build, as meta.json records it, then its later versions' records
        return [folder_version(self.db.build_meta, self.build_record),
                *(version_record(self.path, v) for v in later_versions(self.path))]

    def has_circuit(self) -> bool:
        return getattr(self.db, "circuit", False)

    # --- writing ------------------------------------------------------------------------------
    @classmethod
    def write_circuit(cls, path: Path, version: int, rows: Iterable[tuple]) -> None:
        write_folder_circuit(path, version, rows)

    @classmethod
    def write_version(cls, path: Path, action: str, command: str, record: dict,
                      write: Callable[[FolderVersionWriter], None], expected: int | None = None,
                      circuit: Callable | None = None) -> int:
        # optimistic: a version computed against an earlier one is refused here, and two
        # writers finishing the same version number collide on its folder's name (finish)
        import duckdb  # an optional extra: only folders need it
        writer = FolderVersionWriter(path)
        try:
            check_parent(path, writer.parent, expected)
            write(writer)
            return writer.finish(action, command, record, None if circuit is None else
                                 lambda folder, version: _complete(path, folder, version, circuit))
        except (OSError, duckdb.IOException) as error:  # nothing is in place before the version's rename
            raise disk_error(path, error) from None
        finally:
            writer.close()

    @classmethod
    def compact(cls, path: Path) -> None:
        settle(path)  # a purge's rewritten files in place (its writer moved them, unless stopped)

    @classmethod
    def copy(cls, source: Path, target: Path) -> None:
        # file by file, hard links where the file system allows: no file of a folder is changed in place
        # (a purge replaces whole files, so a copy keeps what it copied)
        def link(src, dst):
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)

        with writing_folder(Path(target)) as partial:
            shutil.copytree(source, partial, copy_function=link, ignore=shutil.ignore_patterns(".*"),
                            dirs_exist_ok=True)

    @classmethod
    def digest(cls, path: Path) -> str | None:
        # meta.json and the version records: its other files are written once and never changed,
        # and each version's record carries its statistics
        root, digest = Path(path), hashlib.sha256()
        try:
            for part in [root / "meta.json", *(version_folder(root, v) / RECORD for v in later_versions(root))]:
                digest.update(str(part.relative_to(root)).encode() + b"\0" + part.read_bytes())
        except OSError:
            return None
        return digest.hexdigest()

    @classmethod
    def compare(cls, first: Path, second: Path, limit: int = 10) -> list[str]:
        # their facts at each version
        newest = [latest_version(p) for p in (first, second)]
        if newest[0] != newest[1]:
            return [f"versions: {newest[0]} against {newest[1]}"]
        out: list[str] = []
        for version in range(1, newest[0] + 1):
            dbs = [FolderDB(Path(p), at=version) for p in (first, second)]
            try:
                a, b = (db.execute("SELECT num, relation, args, label, exact FROM facts ORDER BY num") for db in dbs)
                for n, (x, y) in enumerate(zip_longest(a, b), 1):
                    if x is None or y is None:
                        out.append(f"facts at version {version}: {'the first' if x is None else 'the second'} "
                                   f"ends at row {n}")
                        break
                    if x != y and len(out) < limit:
                        out.append(f"facts at version {version} row {n}: {x[:3]} differs")
            finally:
                for db in dbs:
                    db.close()
        return out


__all__ = ["FolderStore"]
