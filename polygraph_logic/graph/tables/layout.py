"""Converting between the two forms of a graph: the SQLite file and the folder of Parquet files.

The folder's layout (format ``polygraph-tables/1``: assertions, facts, mentions, artifacts,
rules and meta.json) is declared once, in graph/store/folder_layout.py (graph/store/folder.py
reads a folder in place); this module writes folders and converts them.

Conversion goes both ways: ``export_tables`` reads the graph file in row order and
hands DuckDB batches of numpy columns (labels as Python lists of lists) to write with
``COPY ... TO``.  No pyarrow: measured against it (a comparison since retired), within 25%
of each other with DuckDB's files a third smaller, and DuckDB is needed anyway.
``import_tables`` reads the Parquet files with DuckDB and writes a graph file through
``write_graph`` (numbers, labels and rows come out identical; rule trees equal, re-pickled),
from a folder of one version (a grown folder keeps its versions: folder_versions.py).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator

from polygraph_logic.graph.circuit_build import store_circuit
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import FORMAT, Artifact, StoredFact
from polygraph_logic.graph.store.writer import write_graph
from polygraph_logic.graph.store.chain import record_folder
from polygraph_logic.graph.store.stored_rules import ground_atoms, load_rule
from polygraph_logic.graph.store.folder_versions import refuse_versions
from polygraph_logic.graph.store.table_schema import PARQUET_SCHEMA
from polygraph_logic.graph.store.label_kills import write_build_kills
from polygraph_logic.graph.store.folder_layout import (BATCH, FILES, FOLDER_FORMAT, ORDER, RULES_TEXT,
                                                       bad_folder, check_target, duckdb_connection, quoted, read_meta,
                                                       parquet_options, table_path, write_indexes, writing_folder)

TABLES_FORMAT = FOLDER_FORMAT
_SCHEMA, _ORDER, _quoted, _bad = PARQUET_SCHEMA, ORDER, quoted, bad_folder
_TYPES = {"INTEGER": "BIGINT", "TEXT": "VARCHAR", "BLOB": "BLOB", "REAL": "DOUBLE"}


# --- graph file -> Parquet ---------------------------------------------------------------

def export_tables(graph: str | Path | Graph, directory: str | Path,
                  progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Writes a graph file's rows as a tables folder (replacing one written before);
    returns the number of rows per table.  The folder appears only once complete."""
    target = Path(directory)
    check_target(target)
    opened = graph if isinstance(graph, Graph) else Graph(graph)
    try:
        with writing_folder(target) as partial:
            counts = _write_parquet(opened, partial, progress or (lambda stage, rows: None))
            write_meta(partial, _graph_meta(opened), counts)
            store_circuit(partial)
    finally:
        if opened is not graph:
            opened.close()
    return counts


def write_meta(folder: Path, graph_meta: dict[str, str], counts: dict[str, int]) -> None:
    """Writes a tables folder's look-up files (folder.write_indexes) and its meta.json: the
    format, the graph file's meta rows, rows per table (the last step of every writer), and the
    counts of what each source kills (label_kills.py)."""
    write_indexes(folder)
    write_build_kills(folder)
    graph_meta = dict(graph_meta)
    (folder / RULES_TEXT).write_text(graph_meta.pop("rules", ""), encoding="utf-8")
    meta = {"format": TABLES_FORMAT, "graph_format": FORMAT, "meta": graph_meta, "rows": counts}
    (folder / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    record_folder(folder, 1)  # the first link of the hash chain (graph/store/chain.py)


def _graph_meta(graph: Graph) -> dict[str, str]:
    return {key: value for key, value in graph.query("SELECT key, value FROM meta ORDER BY key")}


def _write_parquet(graph: Graph, directory: Path, progress) -> dict[str, int]:
    columns = _assertion_columns(graph)
    # the assertions with the columns the graph file has (older files lack some)
    schema = {**_SCHEMA, "assertions": ", ".join(f"{name} {kind}" for name, kind in columns)}
    con = duckdb_connection(spill=directory / "spill")
    try:
        for name, definition in schema.items():
            con.execute(f"CREATE TABLE {name} ({definition})")
        for name, batches in (("assertions", _row_batches(graph, "assertions", [c for c, _ in columns])),
                              ("facts", _fact_batches(graph)),
                              ("artifacts", _row_batches(graph, "artifacts", _ARTIFACT_COLUMNS)),
                              ("rules", _rule_batches(graph))):
            rows = 0
            for batch in batches:
                if name == "facts":
                    batch, mentions = batch
                    con.register("mention_batch", mentions)
                    con.execute("INSERT INTO mentions SELECT * FROM mention_batch")
                con.register("batch", batch)
                selected = "* REPLACE (CAST(label AS INTEGER[][]) AS label)" if name == "facts" else "*"
                con.execute(f"INSERT INTO {name} SELECT {selected} FROM batch")
                rows += len(batch["num"])
                progress(name, rows)
        counts = copy_out(con, directory)
    finally:
        con.close()
        shutil.rmtree(directory / "spill", ignore_errors=True)
    return counts


def copy_out(con, directory: Path, names=FILES, ordered=frozenset()) -> dict[str, int]:
    """Writes the tables ``names`` (of FILES), each a table of ``con``, as the folder's Parquet
    files (sorted as readers expect: mentions by assertion); returns their numbers of rows.

    ``ordered``: tables (or views) stored in their file's order already (``num``, made in that
    order with insertion order kept), written as they are scanned; the file's numbers are then
    read back, and a file that is not in order is written again sorted."""
    counts = {}
    for name in names:
        path = f"'{_quoted(table_path(directory, name))}'"
        # counted in the file written (its metadata): a view's rows are made once, by the copy
        if name not in ordered or not _copied_in_order(con, name, path):
            con.execute(f"COPY (SELECT * FROM {name} ORDER BY {_ORDER[name]}) TO {path} "
                        f"({parquet_options(name)})")
        counts[name] = con.execute(f"SELECT count(*) FROM read_parquet({path})").fetchone()[0]
    return counts


def _copied_in_order(con, name: str, path: str) -> bool:
    """Writes ``name`` to ``path`` as scanned; whether the file came out in its order."""
    con.execute(f"COPY (SELECT * FROM {name}) TO {path} ({parquet_options(name)})")
    return _in_order(con, path)


def _in_order(con, path: str) -> bool:
    """Whether the ``num`` column of the Parquet file ``path`` rises from row to row (a scan
    of one file keeps its order, and so does a window over nothing)."""
    return con.execute(f"SELECT count(*) FROM (SELECT num - lag(num) OVER () AS step FROM read_parquet({path})) "
                       "WHERE step <= 0").fetchone()[0] == 0


_ARTIFACT_COLUMNS = ("num", "id", "layer", "content", "fact", "summary")


def _assertion_columns(graph: Graph) -> list[tuple[str, str]]:
    """Returns the graph's assertion columns with DuckDB types (whatever columns its version has)."""
    rows = graph.query("SELECT name, type FROM pragma_table_info('assertions') ORDER BY cid").fetchall()
    return [(name, _TYPES.get(str(kind).upper(), "VARCHAR")) for name, kind in rows]


def _columns(rows: list[tuple], names) -> dict:
    """Returns rows as numpy columns: ``num`` as 64-bit integers, the rest as objects (text, bytes, None)."""
    import numpy as np
    return {name: np.array([row[i] for row in rows], dtype=np.int64 if name == "num" else object)
            for i, name in enumerate(names)}


def _batches(graph: Graph, sql: str) -> Iterator[list[tuple]]:
    rows = graph.query(sql)
    while chunk := list(islice(rows, BATCH)):
        yield chunk


def _row_batches(graph: Graph, table: str, names) -> Iterator[dict]:
    for rows in _batches(graph, f"SELECT {', '.join(names)} FROM {table} ORDER BY num"):
        yield _columns(rows, names)


def _rule_batches(graph: Graph) -> Iterator[dict]:
    """The rules with their heads as a folder stores them (the constants as JSON text), and each
    ground rule's atoms (read from its tree: a file written before kept no such column)."""
    names = ("num", "tree", "relation", "c0", "c1", "c2")
    for rows in _batches(graph, f"SELECT {', '.join(names)} FROM rules ORDER BY num"):
        yield _columns([(*row[:3], *(None if c is None else json.dumps(c, ensure_ascii=False) for c in row[3:]),
                         ground_atoms(load_rule(row[1], graph))) for row in rows], (*names, "ground"))


def _fact_batches(graph: Graph) -> Iterator[tuple[dict, dict]]:
    import numpy as np
    for rows in _batches(graph, "SELECT num, relation, args, label, exact FROM facts ORDER BY num"):
        labels, sets, assertion, fact, position = [], [], [], [], []
        for num, _, _, blob, _ in rows:
            groups = graph.decode(blob)
            labels.append(groups)
            sets.append(len(groups))
            for i, group in enumerate(groups):
                assertion.extend(group)
                fact.extend([num] * len(group))
                position.extend([i] * len(group))
        batch = _columns(rows, ("num", "relation", "args"))
        # one list of lists per row (np.array would make a 3-D array of equal-sized labels)
        batch["label"] = np.fromiter(labels, dtype=object, count=len(labels))
        batch["exact"] = np.array([bool(r[4]) for r in rows], dtype=bool)
        batch["sets"] = np.array(sets, dtype=np.int64)
        batch = {key: batch[key] for key in ("num", "relation", "args", "label", "exact", "sets")}
        yield batch, {"assertion": np.array(assertion, dtype=np.int64), "fact": np.array(fact, dtype=np.int64),
                      "support_set": np.array(position, dtype=np.int64)}


# --- Parquet -> graph file ---------------------------------------------------------------

def import_tables(directory: str | Path, path: str | Path,
                  progress: Callable[[str, int], None] | None = None) -> None:
    """Writes the graph file of a tables folder through ``write_graph`` (atomically)."""
    directory = Path(directory)
    graph_meta = dict(read_meta(directory)["meta"])
    refuse_versions(directory, "import-tables converts a folder of one version (its build), and a graph file "
                               "written from it would lose the later ones",
                    "keep the folder: every command reads it and grows it by versions")
    graph_meta.pop("rules", None)  # write_graph writes the rules' text from the stored trees
    con = duckdb_connection()
    try:
        names = [None] + [row[0] for row in _read(con, directory, "assertions", "id")]

        def support(label) -> tuple[tuple[str, ...], ...]:
            return tuple(tuple(names[n] for n in group) for group in label)

        def assertions() -> Iterator[Assertion]:
            present = {row[0] for row in _fetch(con, f"DESCRIBE SELECT * FROM {_parquet(directory, 'assertions')}",
                                                directory)}
            fields = [f for f in dataclasses.fields(Assertion) if f.name in present]
            booleans = {f.name for f in fields if isinstance(f.default, bool)}
            for row in _read(con, directory, "assertions", ", ".join(f.name for f in fields)):
                values = {f.name: bool(v) if f.name in booleans else v for f, v in zip(fields, row)}
                yield Assertion(**values)

        def facts() -> Iterator[StoredFact]:
            for relation, args, label, exact in _read(con, directory, "facts", "relation, args, label, exact"):
                yield StoredFact(relation, tuple(json.loads(args)), support(label), bool(exact))

        def artifacts() -> Iterator[Artifact]:
            sql = (f"SELECT a.id, a.layer, a.content, f.label, f.exact FROM {_parquet(directory, 'artifacts')} a "
                   f"JOIN {_parquet(directory, 'facts')} f ON f.num = a.fact ORDER BY a.num")
            for id_, layer, content, label, exact in _fetch(con, sql, directory):
                yield Artifact(id_, layer, json.loads(content), support(label), bool(exact))

        rules = [load_rule(tree, _Source(directory)) for (tree,) in _read(con, directory, "rules", "tree")]
        write_graph(path, assertions(), artifacts(), graph_meta, facts(), rules, progress=progress,
                    finish=store_circuit)
    except (IndexError, TypeError, ValueError) as error:
        raise _bad(directory, f"a row is damaged ({type(error).__name__}: {error})") from None
    finally:
        con.close()


@dataclasses.dataclass
class _Source:
    path: Path  # what load_rule names in a bad_graph error


def _parquet(directory: Path, table: str) -> str:
    return f"read_parquet('{_quoted(table_path(directory, table))}')"


def _read(con, directory: Path, table: str, columns: str) -> Iterator[tuple]:
    return _fetch(con, f"SELECT {columns} FROM {_parquet(directory, table)} ORDER BY num", directory)


def _fetch(con, sql: str, directory: Path) -> Iterator[tuple]:
    import duckdb
    try:
        cursor = con.cursor()
        cursor.execute(sql)
        while True:
            rows = cursor.fetchmany(BATCH)
            if not rows:
                return
            yield from rows
    except duckdb.Error as error:
        raise _bad(directory, f"cannot be read ({str(error).splitlines()[0]})") from None
