"""A built graph, queried in place: ``Graph`` asks every question of its storage backend.

A graph is a SQLite file or a folder of Parquet files (backend.py: the ``Store`` interface and
its registry; file_store.py, folder_store.py, spark_store.py).  Both hold the same tables
(table_schema.py): ``assertions``, ``facts`` with their support labels (label_codec.py),
``mentions`` (assertion -> facts: the what-if index), ``artifacts``, ``rules`` as syntax trees
(stored_rules.py) and ``meta``.  Opening a graph reads ``meta`` only; every question reads the
rows it needs (questions.py, artifact_reads.py, circuit_rows.py).  A graph grows by versions
(versions.py); ``Graph(path, at=V)`` reads version V through the same queries.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from itertools import islice
from typing import Iterable, Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.provenance import Polynomial, WhySemiring
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.evidence import Evidence
from polygraph_logic.graph.store.label_codec import decode_label
from polygraph_logic.graph.store.artifact_reads import ArtifactReads
from polygraph_logic.graph.store.circuit_rows import CircuitReads
from polygraph_logic.graph.store.questions import Questions
from polygraph_logic.graph.store.backend import Store, open_store
from polygraph_logic.graph.store.rows import Artifact, StoredFact, bad_graph, fact_key, layer_order
from polygraph_logic.graph.store.chain import recorded_digest
from polygraph_logic.graph.store.stored_rules import load_rule
from polygraph_logic.graph.store.views import Assertions, Rows

#: the most keys one look-up of ground rules sends
_KEYS = 5_000

class Graph(Questions, ArtifactReads, CircuitReads):
    """A built graph, opened read-only; questions read only the rows they need."""

    def __init__(self, path: str | Path, at: int | None = None, store: Store | str | None = None, **options):
        """Opens the graph file or folder at ``path`` (``at``: an old version) with the backend
        that recognizes it, or with ``store``: a backend's name (``"spark"``, with its
        ``options``: ``master``) or a Store already open.  ``snapshot=True``: every read of one
        version, whatever another command writes meanwhile (a file reads in one transaction)."""
        self.path = Path(path)
        self.store = store if isinstance(store, Store) else open_store(self.path, at, store, **options)
        self.meta = self.store.meta
        self.at = at
        try:
            cap = self.meta.get("cap", "none")
            self.semiring = WhySemiring(cap=None if cap == "none" else int(cap))
        except (ValueError, TypeError):
            self.store.close()
            raise bad_graph(self.path, f"meta.cap is {self.meta.get('cap')!r}, not a number") from None
        self.assertions = Assertions(self)
        self._rules = None

    def _call(self, function, *args):
        return self.store.call(function, *args)

    @cached_property
    def assertion_columns(self) -> frozenset[str]:
        """The columns of the assertions table (older graphs lack ``kind`` and ``negated``)."""
        return frozenset(row[0] for row in self.query("SELECT name FROM pragma_table_info('assertions')"))

    def query(self, sql: str, parameters=()) -> "Rows":
        """Runs a read query; a damaged file becomes a bad_graph error naming the file, whether
        SQLite meets the damage when the query starts or while its rows are read."""
        return self.store.query(sql, parameters)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- assertions ------------------------------------------------------------------
    def assertion(self, row: tuple) -> Assertion:
        """Returns an assertion from its row; a value that is not text is a bad_graph error."""
        if (not all(isinstance(v, str) for v in row[:5]) or not isinstance(row[5], (str, type(None)))
                or not all(isinstance(v, str) for v in row[6:7])):
            raise bad_graph(self.path, f"assertion {row[0]!r} has a value that is not text")
        if row[7:] and row[7] not in (0, 1):
            raise bad_graph(self.path, f"assertion {row[0]!r} has negated = {row[7]!r}, not 0 or 1")
        evidence = None
        if row[8:] and row[8] is not None:
            try:
                evidence = Evidence.loads(row[8])
            except (ValueError, TypeError, AttributeError, PolygraphError):
                raise bad_graph(self.path, f"assertion {row[0]!r} has evidence that cannot be read") from None
        return Assertion(*row[:7], negated=bool(row[7:] and row[7]), evidence=evidence)

    def names(self, numbers: Iterable[int]) -> dict[int, str]:
        """Returns the ids of assertion numbers."""
        names = dict(self.query("SELECT num, id FROM assertions WHERE num IN (SELECT value FROM json_each(?))",
                                (json.dumps(sorted(set(numbers))),)))
        if not all(isinstance(name, str) for name in names.values()):
            raise bad_graph(self.path, "an assertion id is not text")
        return names

    def numbers(self, column: str, values: Iterable[str]) -> dict[int, str]:
        """Returns {number: id} of the assertions whose ``column`` (id, source, predicate) is one of ``values``."""
        assert column in ("id", "source", "predicate")
        values = sorted(set(values))
        if not values:
            return {}
        # the index always: with few distinct predicates SQLite's statistics favour a full scan
        return dict(self.query(f"SELECT num, id FROM {self._assertions_by(column)} "
                               f"WHERE {column} IN (SELECT value FROM json_each(?))", (json.dumps(values),)))

    def has(self, column: str, value: str) -> bool:
        """Returns True when some assertion's ``column`` (id, source, predicate) is ``value`` (indexed)."""
        assert column in ("id", "source", "predicate")
        return self.query(f"SELECT 1 FROM {self._assertions_by(column)} WHERE {column} = ? LIMIT 1",
                          (value,)).fetchone() is not None

    def assertion_row(self, assertion_id: str, columns: str) -> tuple | None:
        """Returns ``columns`` of the assertion named ``assertion_id``, or None: its number found by
        id (an index, or a folder's look-up file sorted by id), then its row by number."""
        found = self.numbers("id", [assertion_id])
        return self.query(f"SELECT {columns} FROM assertions WHERE num = ?", (next(iter(found)),)).fetchone() \
            if found else None

    def _assertions_by(self, column: str) -> str:
        """Where assertions are found by ``column`` (Store.assertions_by)."""
        return self.store.assertions_by(column)

    def key(self, value):
        """The value a fact's ``k0..k2`` column holds for an argument (lookups re-check the
        decoded arguments)."""
        return self.store.key(value)

    def distinct(self, column: str) -> list[str]:
        """Returns the distinct sources or predicates (an index scan; for completion and hints)."""
        assert column in ("source", "predicate")
        return [row[0] for row in self.query(f"SELECT DISTINCT {column} FROM assertions ORDER BY {column}")]

    def complete(self, column: str, prefix: str, limit: int = 200) -> list[str]:
        """Returns the distinct sources, predicates or assertion ids starting with ``prefix`` (indexed)."""
        assert column in ("id", "source", "predicate")
        return [row[0] for row in self.query(
            f"SELECT DISTINCT {column} FROM assertions WHERE {column} >= ? AND {column} < ? ORDER BY {column} LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit))]

    def stating(self, triple: tuple, negated: bool = False) -> dict[int, str]:
        """Returns {number: id} of the assertions stating a triple (with ``negated``: denying it)."""
        flag = "negated" if self.assertions.has_negated else "0"
        return dict(self.query("SELECT num, id FROM assertions WHERE subject = ? AND predicate = ? AND object = ? "
                               f"AND {flag} = ?", (*triple, int(negated))))

    # --- labels and artifacts --------------------------------------------------------
    def decode(self, blob: bytes | str) -> list[list[int]]:
        """Decodes a stored label (a file's varints, a folder's JSON text); a damaged one is a bad_graph error."""
        try:
            return json.loads(blob) if isinstance(blob, str) else decode_label(blob)
        except (ValueError, TypeError, RecursionError):
            raise bad_graph(self.path, "a stored label is damaged") from None

    def args(self, text: str) -> tuple:
        """Decodes a stored fact's arguments; damaged ones are a bad_graph error."""
        try:
            args = json.loads(text)
        except (ValueError, TypeError, RecursionError):
            args = None
        if not isinstance(args, list):
            raise bad_graph(self.path, f"a stored fact's arguments are damaged ({str(text)[:40]!r})")
        return tuple(args)

    def support(self, blob: bytes, names: dict[int, str] | None = None) -> tuple[tuple[str, ...], ...]:
        """Returns a stored label as support sets of assertion ids (``names``: the ids of its
        numbers, read already; else one query)."""
        groups = self.decode(blob)
        if names is None:
            names = self.names(n for g in groups for n in g)
        try:
            return tuple(tuple(names[n] for n in group) for group in groups)
        except KeyError as missing:
            raise bad_graph(self.path, f"a label cites assertion number {missing}, which the file lacks") from None

    def _named(self, rows, label_at: int) -> Iterator[tuple[tuple, dict[int, str]]]:
        """Yields each row with the ids of the assertions its label (at ``label_at``) cites, read
        for a batch of rows at a time (one query per batch, not per row)."""
        rows, size = iter(rows), 100  # small first (a listing that stops early reads little), then larger
        while chunk := list(islice(rows, size)):
            names = self.names(n for row in chunk for group in self.decode(row[label_at]) for n in group)
            for row in chunk:
                yield row, names
            size = min(size * 4, 2_000)

    def label(self, artifact: Artifact | str) -> Polynomial:
        """Returns an artifact's support label as a why-polynomial."""
        if isinstance(artifact, str):
            artifact = self.artifact(artifact)
        return self.semiring.polynomial(artifact.support, exact=artifact.exact)

    def mentioning(self, assertion_ids: Iterable[str]) -> list[str]:
        """Returns the ids of artifacts whose labels mention any of the assertions (the index)."""
        numbers = self.numbers("id", assertion_ids)
        rows = self.query("SELECT DISTINCT a.id, a.num FROM mentions m JOIN artifacts a ON a.fact = m.fact "
                          "WHERE m.assertion IN (SELECT value FROM json_each(?)) ORDER BY a.num",
                          (json.dumps(sorted(numbers)),))
        return [r[0] for r in rows]

    # --- facts and rules -------------------------------------------------------------
    def facts(self, carried: bool = True) -> Iterator[StoredFact]:
        """Yields every fact of the evaluated program with its support sets, streamed (with
        ``carried=False``, only the facts no artifact carries)."""
        for (relation, args, blob, exact), names in self._named(self.store.fact_rows(carried), 2):
            yield StoredFact(relation, self.args(args), self.support(blob, names), bool(exact))

    def fact(self, relation: str, args: tuple) -> StoredFact | None:
        """Returns one stored fact, or None."""
        row = self.query("SELECT label, exact FROM facts WHERE relation = ? AND args = ?",
                         (relation, fact_key(args))).fetchone()
        return None if row is None else StoredFact(relation, tuple(args), self.support(row[0]), bool(row[1]))

    def rules_text(self) -> str:
        """Returns the rules of the program the graph was built from, as rule-language text."""
        return self.store.rules_text()

    def rules(self) -> list:
        """Returns every rule of the program as a syntax tree (stored ready to use, never re-parsed)."""
        if self._rules is None:
            self._rules = [load_rule(row[0], self) for row in self.query("SELECT tree FROM rules ORDER BY num")]
        return self._rules

    def rule_heads(self, relation: str, limit: int | None = None) -> list[tuple[int, tuple]]:
        """Returns ``[(number, (c0, c1, c2))]`` of the rules with head ``relation`` (the first
        ``limit``): the constants of the first three head arguments (None for a variable), for
        matching goals.  Their trees are read along (from a look-up file sorted by head, when
        the store has one) and kept for ``rules_numbered``."""
        sql = f"SELECT num, c0, c1, c2, tree FROM {self._rules_by_head()} WHERE relation = ? ORDER BY num"
        rows = self.query(sql if limit is None else f"{sql} LIMIT {int(limit)}", (relation,)).fetchall()
        self.__dict__.setdefault("_rule_trees", {}).update((row[0], row[4]) for row in rows)
        head = self.store.head_value
        return [(row[0], tuple(head(c) for c in row[1:4])) for row in rows]

    def _rules_by_head(self) -> str:
        """Where rules are found by head: a look-up file sorted by head when the store has one."""
        return self.store.lookup("rules_by_head") or "rules"

    def rules_numbered(self, numbers) -> dict[int, object]:
        """Returns ``{number: rule}`` for stored rule numbers."""
        held = self.__dict__.get("_rule_trees", {})
        trees = {n: held[n] for n in numbers if n in held}
        missing = sorted(n for n in numbers if n not in held)
        if missing:
            trees.update(self.query("SELECT num, tree FROM rules WHERE num IN (SELECT value FROM json_each(?))",
                                    (json.dumps(missing),)))
        return {num: load_rule(tree, self) for num, tree in trees.items()}

    # --- ground rules, read by the atoms they hold (stored_rules.ground_atoms) ------------
    def ground_rules_indexed(self) -> bool:
        """True when the store keeps its ground rules' atoms (a graph written before does not:
        its rules are read whole)."""
        return self.store.lookup("rule_atoms") is not None

    def general_rules_numbered(self) -> dict[int, object]:
        """Returns ``{number: rule}`` of the rules that are not ground (variables, negations...), in order."""
        return {num: load_rule(tree, self) for num, tree in
                self.query("SELECT num, tree FROM rules WHERE ground IS NULL ORDER BY num")}

    def ground_rules(self, atoms: dict[str, Iterable[tuple]], body: bool) -> dict[int, object]:
        """Returns ``{number: rule}`` of the ground rules with one of ``atoms`` (``{relation:
        tuples}``) in their body (``body``) or as their head."""
        numbers: set[int] = set()
        for relation, tuples in atoms.items():
            keys = sorted({fact_key(tup) for tup in tuples})
            for start in range(0, len(keys), _KEYS):
                numbers.update(row[0] for row in self.query(
                    "SELECT DISTINCT num FROM rule_atoms WHERE relation = ? AND args IN (SELECT value FROM "
                    "json_each(?)) AND body = ?", (relation, json.dumps(keys[start:start + _KEYS]), body)))
        return self.rules_numbered(sorted(numbers)) if numbers else {}

    def ground_dependencies(self) -> list[tuple[str, str | None, int]]:
        """Returns ``(head relation, body relation, arity of the atom)`` for every distinct kind of
        atom of the ground rules (the head's own: body relation None), for stratification."""
        return [(head, relation if body else None, arity) for head, relation, body, arity in self.query(
            "SELECT DISTINCT head, relation, body, json_array_length(args) FROM rule_atoms")]

    def history_digest(self) -> tuple[int, str] | None:
        """``(version, digest)``: the hash-chain digest of the version read (chain.py), None for a
        graph written before chains."""
        version = self.at or self.version_read()
        digest = recorded_digest(self.path, version)
        return None if digest is None else (version, digest)

    # --- statistics ------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Returns the number of artifacts per layer (stored at build time)."""
        return {layer: entry["artifacts"] for layer, entry in self.info()["layers"].items()}

    def info(self) -> dict:
        """Returns counts per layer, label-size distribution, truncations and label bytes (from meta)."""
        try:
            stats = json.loads(self.meta["stats"])
            layers = {k: {**v, "support_sets": {int(n): c for n, c in v["support_sets"].items()}}
                      for k, v in stats["layers"].items()}
            assertions, sources = int(stats["assertions"]), int(stats["sources"])
        except (KeyError, ValueError, TypeError, AttributeError):
            raise bad_graph(self.path, "its statistics (meta.stats) are missing or damaged") from None
        total = sum(e["artifacts"] for e in layers.values())
        label_bytes = sum(e["label_bytes"] for e in layers.values())
        return {
            "file": str(self.path),
            "file_bytes": self.store.size(),
            "assertions": assertions,
            "sources": sources,
            "artifacts": total,
            "layers": {k: layers[k] for k in sorted(layers, key=layer_order)},
            "label_bytes_per_artifact": label_bytes / total if total else 0.0,
            "meta": {k: v for k, v in sorted(self.meta.items()) if k not in ("format", "rules", "stats")},
        }

