"""The circuit of a graph's capped labels, stored: each inexact fact's derivations (provenance/circuit.py).

A row of ``derivations`` is one derivation of one fact: ``fact`` (its number), ``rule`` (the
rule's number) and ``body`` (the numbers of the body facts whose provenance is not 1, as JSON
text), written by version ``since``.  Rows are only ever added: a later version adds the
derivations it made possible, and a derivation whose rule or body fact a version no longer
holds does not fire there (a missing fact is false).

A fact may say that its derivations are not all stored: a row of rule ``UNSTORED_RULE`` and
body ``[]`` (a DuckDB witness build keeps the derivations of the round that made each fact, and
marks those derived again later so). Such a row never fires (no rule has its number); a reader
finds that fact's derivations again from the rules when it needs them
(graph/circuit_build.completed).

A version's derivations are complete when every fact with an inexact label at that version
has all of its derivations stored (graph/circuit_build.py writes them); a graph file lists
those versions in ``circuit_versions``, a folder has ``derivations.parquet`` beside the
build's files (version 1) and in each later version's folder.  A version without them (a
graph written before circuits, or a version whose writing stopped midway) reads as having
no circuit, and capped verdicts are then re-derived from the rules as before.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from pathlib import Path
from typing import Iterable

from polygraph_logic.graph.store.folder_layout import PARQUET, duckdb_connection, quoted, table_path
from polygraph_logic.graph.store.folder_versions import later_versions, version_folder
from polygraph_logic.graph.store.label_codec import ONE_LABELS
from polygraph_logic.graph.store.rows import fact_key

TABLE = "derivations"
#: the rule number of a row saying its fact's derivations are not all stored (engines/sql_witness.py)
UNSTORED_RULE = -1
_FILE_TABLES = """
CREATE TABLE IF NOT EXISTS derivations(fact INTEGER NOT NULL, rule INTEGER NOT NULL, body TEXT NOT NULL,
                                       since INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS derivations_by_fact ON derivations(fact);
CREATE TABLE IF NOT EXISTS circuit_versions(version INTEGER PRIMARY KEY);
"""

Row = tuple[int, int, tuple[int, ...]]  # fact, rule, body


def folder_files(directory: str | Path, at: int) -> list[tuple[int, Path]] | None:
    """``[(version, file)]`` of a folder's derivations up to version ``at``, or None when one is missing."""
    files = [(1, table_path(directory, TABLE))]
    files += [(v, table_path(version_folder(directory, v), TABLE)) for v in later_versions(directory) if v <= at]
    return files if all(path.is_file() for _, path in files) else None


def folder_view(directory: str | Path, at: int) -> str | None:
    """The SELECT of a folder's ``derivations`` view at version ``at`` (None: no circuit there)."""
    files = folder_files(directory, at)
    if files is None:
        return None
    return " UNION ALL ".join(f"SELECT fact, rule, body, {v} AS since FROM read_parquet('{quoted(path)}')"
                              for v, path in files)


_DERIVATIONS = ("SELECT fact, rule, body FROM derivations WHERE since <= ? AND fact IN "
                "(SELECT value FROM json_each(?)) AND rule IN (SELECT num FROM rules)")


class CircuitReads:
    """The stored circuit's rows by meaning (mixed into ``Graph``)."""

    def has_circuit(self) -> bool:
        """True when the version read has every inexact fact's derivations stored."""
        if "_has_circuit" not in self.__dict__:
            self.__dict__["_has_circuit"] = self.store.has_circuit()
        return self.__dict__["_has_circuit"]

    def version_read(self) -> int:
        """The number of the version this graph reads (the latest unless opened ``at`` one)."""
        return self.store.version_read()

    def derivations(self, facts: Iterable[int]) -> dict[int, list[tuple[int, tuple[int, ...]]]]:
        """``{fact: [(rule, body)]}`` of the stored derivations of ``facts`` whose rule the version
        read holds (a graph with no circuit: none)."""
        facts = sorted(set(facts))
        found: dict[int, dict] = {}
        if not facts or not self.has_circuit():
            return {}
        rows = self.query(_DERIVATIONS + " ORDER BY fact, rule, body", (self.version_read(), json.dumps(facts)))
        for fact, rule, body in rows:  # a derivation stored again by a later version is read once
            found.setdefault(fact, {})[(rule, tuple(json.loads(body)))] = None
        return {fact: list(entries) for fact, entries in found.items()}

    def unstored(self, facts: Iterable[int]) -> set[int]:
        """The facts among ``facts`` whose derivations are not all stored at the version read."""
        facts = sorted(set(facts))
        if not facts or not self.has_circuit():
            return set()
        return {row[0] for row in self.query(
            f"SELECT DISTINCT fact FROM derivations WHERE since <= ? AND rule = {UNSTORED_RULE} AND fact IN "
            "(SELECT value FROM json_each(?))", (self.version_read(), json.dumps(facts)))}

    def derivation_bodies(self, facts: Iterable[int]) -> Iterable[tuple[int, str]]:
        """``(fact, body)`` of the stored derivations of ``facts`` whose rule the version read holds,
        streamed in no set order (``body``: its fact numbers as JSON text; a derivation a later
        version stored again comes twice).  A graph with no circuit: none."""
        if not self.has_circuit():
            return iter(())
        return self.query(_DERIVATIONS.replace("rule, body", "body", 1),
                          (self.version_read(), json.dumps(sorted(set(facts)))))

    def inexact_facts(self, among: Iterable[tuple[str, tuple]] | None = None) -> list[tuple[int, str, tuple]]:
        """``(num, relation, args)`` of every fact whose stored label is capped, in number order;
        ``among``: only of these ``(relation, args)`` facts (looked up by key, one query a relation)."""
        if among is None:
            rows = self.query("SELECT num, relation, args FROM facts WHERE NOT exact ORDER BY num")
        else:
            keys: dict[str, list[str]] = {}
            for relation, args in among:
                keys.setdefault(relation, []).append(fact_key(args))
            rows = sorted(row for relation in sorted(keys) for row in self.query(
                "SELECT num, relation, args FROM facts WHERE NOT exact AND relation = ? AND args IN "
                "(SELECT value FROM json_each(?))", (relation, json.dumps(sorted(keys[relation])))))
        return [(num, relation, self.args(args)) for num, relation, args in rows]

    def relation_facts(self, relations: Iterable[str], only: dict[str, tuple | list[tuple]] | None = None
                       ) -> Iterable[tuple[str, tuple, int, bool]]:
        """``(relation, args, num, background)`` of every stored fact of ``relations`` (one scan;
        ``background``: its label is 1); ``only``: for some of them, an argument and the values
        it must hold (``{"edge": (1, ["BFO:0000050"])}``), or a list of such, one of which it must
        meet (``{"edge": [(0, ["GO:1"]), (2, ["GO:2"])]}``)."""
        only = only or {}
        listed = {relation: filters for relation, filters in only.items() if isinstance(filters, list)}
        whole = sorted(set(relations) - set(only))
        where, parameters = ["relation IN (SELECT value FROM json_each(?))"], [json.dumps(whole)]
        for relation, (k, values) in sorted((r, f) for r, f in only.items() if r not in listed):
            where.append(f"(relation = ? AND args->>'$[{int(k)}]' IN (SELECT value FROM json_each(?)))")
            parameters += [relation, json.dumps(sorted(values, key=str))]
        columns = "num, relation, args, label, json_valid(args)"
        queries = [self.query(f"SELECT {columns} FROM facts WHERE {' OR '.join(where)}", tuple(parameters))]
        # by the store's look-ups (ranges of sorted arguments, the third argument's file), each
        # position's values in one query; a fact two of them admit is read twice, yielded once
        # (their columns as plain names: validity not asked, a damaged text fails the parse of all)
        queries += [self.bound_facts_among(relation, (k,), [(v,) for v in values],
                                           "num, relation, args, label, args IS NOT NULL")
                    for relation, filters in sorted(listed.items()) for k, values in filters]
        seen: set[int] = set()
        for rows in queries:
            for batch in rows.batches():  # a call per batch, not per row
                for (num, relation, _, label, _), args in zip(batch, self.args_many(batch)):
                    if relation in listed:
                        if num in seen or not any(len(args) > k and args[k] in values for k, values in listed[relation]):
                            continue  # the look-ups may read more: their values checked
                        seen.add(num)
                    yield relation, args, num, label in ONE_LABELS

    def background_facts(self) -> list[tuple[str, tuple]]:
        """``(relation, args)`` of every stored fact of background knowledge (label one)."""
        table = self.store.lookup("background_facts")
        if table is not None:
            rows = self.query(f"SELECT relation, args FROM {table}").fetchall()
        else:
            rows = self.query("SELECT relation, args FROM facts WHERE label IN (?, ?)", ONE_LABELS).fetchall()
        return [(relation, self.args(args)) for relation, args in rows]

    def args_many(self, batch: list[tuple]) -> list[tuple]:
        """The arguments of a batch of rows ``(..., args, label, valid)``, decoded as one JSON
        array of them all (half the time of a parse per row) when the store found each text
        one valid JSON value and each is framed by brackets (so each is one array, and the
        whole holds one per row); else one by one, a damaged text a bad_graph error."""
        texts = [row[2] for row in batch]
        if all(row[4] for row in batch) and all(text[:1] == "[" and text[-1:] == "]" for text in texts):
            try:
                decoded = json.loads("[" + ",".join(texts) + "]")
            except (ValueError, RecursionError):
                decoded = None
            if decoded is not None and len(decoded) == len(texts):
                return [tuple(args) for args in decoded]
        return [self.args(text) for text in texts]

    def fact_numbers(self, relation: str, args_keys: list[str]) -> dict[str, tuple[int, str | bytes]]:
        """``{args key: (num, label)}`` of the stored facts of ``relation`` among ``args_keys``."""
        return {args: (num, label) for args, num, label in self.query(
            "SELECT args, num, label FROM facts WHERE relation = ? AND args IN (SELECT value FROM json_each(?))",
            (relation, json.dumps(args_keys)))}

    def facts_numbered(self, numbers: Iterable[int]) -> list[tuple[int, str, tuple, str | bytes, bool]]:
        """``(num, relation, args, label, exact)`` of the stored facts numbered ``numbers``."""
        return [(num, relation, self.args(args), label, bool(exact)) for num, relation, args, label, exact in self.query(
            "SELECT num, relation, args, label, exact FROM facts WHERE num IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(numbers))),))]

    def facts_present(self, numbers: Iterable[int]) -> set[int]:
        """The fact numbers among ``numbers`` that the version read holds."""
        return {row[0] for row in self.query("SELECT num FROM facts WHERE num IN (SELECT value FROM json_each(?))",
                                             (json.dumps(sorted(set(numbers))),))}


def body_text(body: Iterable[int]) -> str:
    """A derivation's body as stored: its fact numbers as JSON text, as ``json.dumps`` writes a
    list of integers (joined directly: a build writes millions)."""
    return f"[{', '.join(map(str, body))}]"


def write_file_circuit(path: str | Path, version: int, rows: Iterable[Row]) -> None:
    """Adds version ``version``'s derivations to a graph file and marks that version's circuit complete."""
    db = sqlite3.connect(path)
    try:
        insert_file_circuit(db, version, rows)
        db.commit()
    finally:
        db.close()


def insert_file_circuit(db: sqlite3.Connection, version: int, rows: Iterable[Row]) -> None:
    """Adds version ``version``'s derivations on ``db`` and marks its circuit complete, in the
    transaction open there (a version and its circuit are committed together)."""
    for statement in _FILE_TABLES.strip().split(";"):  # not executescript: it would commit first
        if statement.strip():
            db.execute(statement)
    db.executemany("INSERT INTO derivations VALUES (?, ?, ?, ?)",
                   ((fact, rule, body_text(body), version) for fact, rule, body in rows))
    db.execute("INSERT OR IGNORE INTO circuit_versions VALUES (?)", (version,))


def write_folder_circuit(directory: str | Path, version: int, rows: Iterable[Row], folder: Path | None = None) -> None:
    """Writes version ``version``'s derivations into a graph folder (beside the build's files for
    version 1, else in the version's folder; ``folder``: the version's folder being written), as a
    hidden file renamed into place when whole."""
    folder = folder or (Path(directory) if version == 1 else version_folder(directory, version))
    target = table_path(folder, TABLE)
    partial, text = folder / f".{TABLE}.partial.parquet", folder / f".{TABLE}.partial.csv"
    try:
        # the rows as text first, read by DuckDB in one scan (inserting them row by row took a
        # second per few thousand)
        written = 0
        with text.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            for fact, rule, body in rows:
                writer.writerow((fact, rule, body_text(body)))
                written += 1
        con = duckdb_connection()
        try:
            source = (f"read_csv('{quoted(text)}', header = false, quote = '\"', auto_detect = false, "
                      "columns = {'fact': 'BIGINT', 'rule': 'BIGINT', 'body': 'VARCHAR'})") if written else \
                "(SELECT NULL::BIGINT AS fact, NULL::BIGINT AS rule, NULL::VARCHAR AS body WHERE false)"
            con.execute(f"COPY (SELECT * FROM {source} ORDER BY fact, rule, body) TO '{quoted(partial)}' ({PARQUET})")
        finally:
            con.close()
        os.replace(partial, target)
    finally:
        text.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)


__all__ = ["CircuitReads", "TABLE", "body_text", "folder_files", "folder_view", "insert_file_circuit", "write_file_circuit",
           "write_folder_circuit"]
