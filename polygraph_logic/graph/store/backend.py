"""The storage interface: one protocol, each form of a built graph a backend behind it.

``Graph`` (graph_file.py) asks every question of a ``Store``: the SQL texts of the questions
are shared (questions.py, artifact_reads.py, circuit_rows.py, search.py), and a store says how
its form answers them: where a column is indexed or a sorted look-up file stands in for an
index (``lookup``, ``assertions_by``), how it keys arguments (``key``, ``head_key``), how it
joins artifacts with their facts (``artifact_rows``), and what it reads only of itself (its
rules text, size, versions, circuit).  Writing goes through the same classes (``write_circuit``,
``version_writer``, ``copy``, ``digest``, ``compare``), so nothing above the store asks which
form a graph has.

Backends register by name, as rdflib's stores do, and are imported only when used:

- ``file``: the SQLite graph file (file_store.py), indexed, read in place;
- ``folder``: the graph folder of Parquet files read by DuckDB (folder.py);
- ``spark``: the same folder read by Spark SQL (spark_store.py), never chosen by itself.

``store_class(path)`` finds the backend that recognizes a path; ``open_store`` opens one.
"""

from __future__ import annotations

import importlib
import itertools
import json
from abc import ABC, abstractmethod
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, ClassVar, Iterable, Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.rows import bad_graph
from polygraph_logic.graph.store.views import Rows


#: how many artifacts ``artifact_labels`` reads in one query of a store
ARTIFACTS_AT_ONCE = 20_000
ARTIFACT_LABELS = ("SELECT a.num, a.id, a.layer, a.fact, a.summary, f.args, f.label, f.exact "
                    "FROM artifacts a JOIN facts f ON f.num = a.fact")


class Store(ABC):
    """One form of a built graph, opened for reading (``execute``); its classmethods write it."""

    #: the name the backend is registered under
    form: ClassVar[str] = ""
    #: facts are kept sorted by their arguments' text, so leading bound arguments are a range of it
    sorted_args: ClassVar[bool] = False
    #: one row is found by an index at little cost (a file's B-trees; a folder reads row groups)
    point_reads: ClassVar[bool] = True
    #: the format types its columns and checks its bytes (a check need not read them for damage)
    typed: ClassVar[bool] = False
    #: its engine reads lists and JSON in SQL (DuckDB): ``check`` asks it queries instead of reading every row
    checks_in_sql: ClassVar[bool] = False
    #: the rows never change while the store is open: look-ups may be kept
    fixed: ClassVar[bool] = False

    path: Path
    meta: dict[str, str]  # the meta table's entries, without the rules' text
    at: int | None  # the version asked for (None: the latest)
    errors: tuple[type[BaseException], ...]  # what its driver raises when the bytes are damaged

    # --- reading ------------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def recognizes(cls, path: Path) -> bool:
        """True when ``path`` is of this backend's form (chosen in registration order)."""

    @abstractmethod
    def execute(self, sql: str, parameters=()):
        """Runs one of the store's query texts; returns a cursor (iterate, fetchone, fetchmany, fetchall)."""

    @abstractmethod
    def close(self) -> None: ...

    def call(self, function: Callable, *args):
        """Calls ``function``; the driver's damage errors become a bad_graph error naming the graph."""
        try:
            return function(*args)
        except self.errors as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            if "Out of Memory" in first:  # the reader's memory, not the graph: nothing to rebuild
                raise PolygraphError("out_of_memory", f"{self.path}: reading it ran out of memory ({first}); "
                                                      "free memory or ask for less") from None
            raise bad_graph(self.path, f"cannot be read ({error})") from None

    def query(self, sql: str, parameters=()) -> Rows:
        """Runs a read query; damage met when it starts or while its rows are read is a bad_graph error."""
        return Rows(self.call(self.execute, sql, parameters), self.call)

    @contextmanager
    def bounded(self, memory: str = "160MB") -> Iterator[None]:
        """Within it, the queries that scan the whole graph work in at most ``memory`` where the
        store can bound it (a folder: DuckDB spills past it), so that a listing's peak does not
        grow with the graph."""
        yield

    def within_bounds(self, run: Callable[[], object], memory: str = "160MB"):
        """``run()`` (which must be repeatable) under ``bounded(memory)``, and once more under the
        reader's own limit if that runs out of memory (a deletion of thousands of sources on a graph
        with hubs: x40 with 40 hubs, 2,440 sources, out of memory at 160 MB)."""
        try:
            with self.bounded(memory):
                return run()
        except PolygraphError as error:
            if error.code != "out_of_memory":
                raise
        return run()

    # --- access paths ---------------------------------------------------------------------
    def lookup(self, name: str) -> str | None:
        """The table to read for a sorted look-up (``artifacts_by_id``, ``assertions_by_source``,
        ``rules_by_head``, ``facts_by_k2``, ``background_facts``) when this store keeps one, else None."""
        return None

    @abstractmethod
    def assertions_by(self, column: str) -> str:
        """What to read assertions from when finding them by ``column`` (id, source, predicate)."""

    @abstractmethod
    def key(self, value):
        """The value a fact's ``k0..k2`` column holds for an argument."""

    @abstractmethod
    def head_key(self, value):
        """The value a rule's ``c0..c2`` column holds for a head constant (``key_value`` of it)."""

    def head_value(self, stored):
        """A rule's ``c0..c2`` column as read, as the constant matched against goals."""
        return stored

    @abstractmethod
    def artifact_rows(self, where: str, parameters=(), ordered: bool = False) -> Iterator[tuple]:
        """``(id, layer, content, label, exact)`` of the artifacts ``where`` holds (on
        ``artifacts a``), streamed, in number order when ``ordered``."""

    def first_artifact_rows(self, layers: list[str], limit: int) -> list[tuple]:
        """``(id, layer, content, label, exact)`` of the first ``limit`` artifacts (by number) of
        each of ``layers``, layer after layer."""
        return [row for layer in layers
                for row in itertools.islice(self.artifact_rows("a.layer = ?", (layer,), ordered=True), limit)]

    @abstractmethod
    def fact_prefix(self, relation: str, prefix: str, limit: int) -> list[int]:
        """The numbers of up to ``limit`` facts of ``relation`` whose first argument starts with
        ``prefix``, in argument order."""

    @abstractmethod
    def argument_names(self, relation: str, position: int, prefix: str, limit: int) -> list:
        """Up to ``limit`` distinct values of argument ``position`` (0 or 2) of ``relation``'s facts
        starting with ``prefix`` (the caller keeps the texts)."""

    def touched_facts(self, deleted: list[int]) -> list[tuple]:
        """``(num, relation, args, label, exact)`` of every fact whose label mentions one of the
        assertion numbers ``deleted``, in fact order: two short reads, each through an index or
        a sorted file."""
        numbers = [row[0] for row in self.query("SELECT DISTINCT fact FROM mentions WHERE assertion IN "
                                                "(SELECT value FROM json_each(?)) ORDER BY fact",
                                                (json.dumps(deleted),)).fetchall()]
        return self.query("SELECT num, relation, args, label, exact FROM facts WHERE num IN "
                          "(SELECT value FROM json_each(?)) ORDER BY num", (json.dumps(numbers),)).fetchall()

    def touched_artifacts(self, deleted: list[int]) -> list[tuple]:
        """``(num, id, layer, fact, summary, args, label, exact)`` of every artifact whose label
        mentions one of the assertion numbers ``deleted``: the facts touched, then their artifacts."""
        facts = {row[0]: row[2:] for row in self.touched_facts(deleted)}
        rows = self.query("SELECT num, id, layer, fact, summary FROM artifacts WHERE fact IN "
                          "(SELECT value FROM json_each(?))", (json.dumps(sorted(facts)),)).fetchall()
        return [(*row, *facts[row[3]]) for row in rows]

    def artifact_labels(self, deleted: list[int] | None = None) -> Iterator[tuple]:
        """``(num, id, layer, fact, summary, args, label, exact)`` of every artifact (``deleted``:
        of those whose label mentions one of these assertion numbers), streamed in no set order:
        a range of artifact numbers at a time, each joined with its facts (a join of every
        artifact would hash one side whole), or the touched facts a chunk at a time."""
        if deleted is not None:
            facts = [row[0] for row in self.query("SELECT DISTINCT fact FROM mentions WHERE assertion IN "
                                                  "(SELECT value FROM json_each(?)) ORDER BY fact",
                                                  (json.dumps(deleted),)).fetchall()]
            for start in range(0, len(facts), ARTIFACTS_AT_ONCE):
                chunk = json.dumps(facts[start:start + ARTIFACTS_AT_ONCE])
                labels = {row[0]: row[1:] for row in self.query(
                    "SELECT num, args, label, exact FROM facts WHERE num IN (SELECT value FROM json_each(?))",
                    (chunk,))}
                for row in self.query("SELECT num, id, layer, fact, summary FROM artifacts WHERE fact IN "
                                      "(SELECT value FROM json_each(?))", (chunk,)).fetchall():
                    if row[3] in labels:
                        yield (*row, *labels[row[3]])
            return
        first, last = self.query("SELECT min(num), max(num) FROM artifacts").fetchone()
        low = (first or 1) - 1
        while last is not None and low < last:
            yield from self.query(ARTIFACT_LABELS + " WHERE a.num > ? AND a.num <= ?",
                                  (low, low + ARTIFACTS_AT_ONCE)).fetchall()
            low += ARTIFACTS_AT_ONCE

    def in_order(self, table: str, columns: str) -> Iterator[tuple]:
        """``columns`` of every row of ``table`` (one with a ``num`` column) in number order, streamed."""
        return self.query(f"SELECT {columns} FROM {table} ORDER BY num")

    def fact_rows(self, carried: bool = True) -> Iterator[tuple]:
        """``(relation, args, label, exact)`` of every fact (``carried`` False: of those no artifact
        carries), in number order, streamed."""
        where = "" if carried else " WHERE num NOT IN (SELECT fact FROM artifacts)"
        return self.query(f"SELECT relation, args, label, exact FROM facts{where} ORDER BY num")

    @abstractmethod
    def label_kills(self) -> dict[str, int]:
        """``{source: artifacts with an assertion of it in every support set}`` (Questions.label_kills)."""

    def kept_kills(self) -> dict[str, int] | None:
        """label_kills as the graph's writers kept them for the version read (label_kills.py), or
        None where the form keeps none (``check`` compares them with a count made anew)."""
        return None

    # --- what belongs to the form ------------------------------------------------------------
    @abstractmethod
    def rules_text(self) -> str: ...

    @abstractmethod
    def size(self) -> int:
        """The bytes the graph takes on disk."""

    @abstractmethod
    def version_read(self) -> int:
        """The number of the version read."""

    @abstractmethod
    def version_rows(self) -> list[dict]:
        """Every version (number, time, command, action, record, parent, stats)."""

    @abstractmethod
    def has_circuit(self) -> bool:
        """True when the version read has every inexact fact's derivations stored (circuit_rows.py)."""

    # --- writing (on a path: no reader is open) ----------------------------------------------
    @classmethod
    @abstractmethod
    def write_circuit(cls, path: Path, version: int, rows: Iterable[tuple]) -> None:
        """Stores version ``version``'s derivations and marks its circuit complete."""

    @classmethod
    @abstractmethod
    def write_version(cls, path: Path, action: str, command: str, record: dict, write: Callable,
                      expected: int | None = None, circuit: Callable | None = None) -> int:
        """Appends one version: ``write`` adds and retires rows through the form's version
        writer, then the version is recorded; returns its number.  ``expected``: the version the
        changes were computed against; another found latest is a concurrent_write error
        (``check_parent``), never a lost update.  ``circuit(store)``: the version's derivations
        (None: it has no circuit), asked of a store that reads the version before anyone else
        can; they are committed with it, so no reader ever sees the version without them."""

    @classmethod
    def compact(cls, path: Path) -> None:
        """Removes what a committed erasure left on disk (free pages, replaced files); by default nothing."""

    @classmethod
    @abstractmethod
    def copy(cls, source: Path, target: Path) -> None:
        """Copies a graph, history and all, into place once complete."""

    @classmethod
    @abstractmethod
    def digest(cls, path: Path) -> str | None:
        """A sha256 that changes whenever the graph does (None: it cannot be read)."""

    @classmethod
    @abstractmethod
    def compare(cls, first: Path, second: Path, limit: int = 10) -> list[str]:
        """The differences between two graphs' label tables, at every version."""


#: backend name -> "module:Class", imported on first use (registration order is recognition order)
_BACKENDS: dict[str, str] = {
    "file": "polygraph_logic.graph.store.file_store:FileStore",
    "folder": "polygraph_logic.graph.store.folder_store:FolderStore",
    "spark": "polygraph_logic.graph.store.spark_store:SparkStore",
}
#: backends chosen only when asked for by name (they read a form another backend recognizes)
_BY_NAME_ONLY = {"spark"}


def register(name: str, where: str, by_name_only: bool = False) -> None:
    """Registers a backend: ``where`` is ``"module:Class"`` of a ``Store`` subclass."""
    _BACKENDS[name] = where
    if by_name_only:
        _BY_NAME_ONLY.add(name)


def backend(name: str) -> type[Store]:
    """The Store class registered as ``name``."""
    if name not in _BACKENDS:
        raise PolygraphError("bad_argument", f"no storage backend named {name!r}; "
                                             f"there are {', '.join(sorted(_BACKENDS))}")
    module, _, cls = _BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def store_class(path: str | Path) -> type[Store]:
    """The backend of the graph at ``path``: the first registered one that recognizes it."""
    for name in _BACKENDS:
        if name not in _BY_NAME_ONLY and backend(name).recognizes(Path(path)):
            return backend(name)
    raise PolygraphError("file_error", f"no graph file at {path}")


def open_store(path: str | Path, at: int | None = None, form: str | None = None, **options) -> Store:
    """Opens the graph at ``path`` (version ``at``) with its backend, or the one named ``form``."""
    cls = store_class(path) if form is None else backend(form)
    return cls(Path(path), at=at, **options)


# --- writing a graph at a path, whatever its form -------------------------------------------
def check_parent(path: Path, parent: int, expected: int | None) -> None:
    """Refuses a version computed against an earlier one than the latest (another writer wrote
    meanwhile): its changes would overwrite that writer's."""
    if expected is not None and parent != expected:
        raise PolygraphError("concurrent_write", f"{path}: version {parent} was written by another command "
                                                 f"while this one read version {expected}; run this one again")


def disk_error(path: Path, error: Exception) -> PolygraphError:
    """A write the disk refused (read-only, full, a path through a file), said by name."""
    said = str(error).splitlines()[0] if str(error) else type(error).__name__
    return PolygraphError("io_error", f"{path}: cannot be written ({said}); nothing of this command was kept")


def write_version(path: str | Path, action: str, command: str, record: dict, write: Callable,
                  expected: int | None = None, circuit: Callable | None = None) -> int:
    """Appends one version to the graph at ``path`` (Store.write_version); returns its number."""
    return store_class(path).write_version(Path(path), action, command, record, write, expected, circuit)


def write_circuit(path: str | Path, version: int, rows: Iterable[tuple]) -> None:
    """Stores version ``version``'s derivations in the graph at ``path`` (Store.write_circuit)."""
    store_class(path).write_circuit(Path(path), version, rows)


def compact_graph(path: str | Path) -> None:
    """Removes what a committed erasure left on disk in the graph at ``path`` (Store.compact)."""
    store_class(path).compact(Path(path))


def copy_graph(source: str | Path, target: str | Path) -> None:
    """Copies the graph at ``source``, history and all, to ``target`` once complete."""
    store_class(source).copy(Path(source), Path(target))


def graph_digest(path: str | Path) -> str | None:
    """The sha256 of the graph at ``path`` that changes whenever it does (None: unreadable)."""
    return store_class(path).digest(Path(path))


def compare_labels(first: str | Path, second: str | Path, limit: int = 10) -> list[str]:
    """The differences between the label tables of two graphs of one form, at every version."""
    return store_class(first).compare(Path(first), Path(second), limit)


__all__ = ["Store", "backend", "check_parent", "compact_graph", "compare_labels", "disk_error", "copy_graph", "graph_digest", "open_store", "register",
           "store_class", "write_circuit", "write_version"]
