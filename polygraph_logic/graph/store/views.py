"""Reading a graph file lazily: a query's rows, and the assertions as a mapping read on demand.

Both belong to ``store.Graph`` (which re-exports them); they hold the graph, never its rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Iterator

from polygraph_logic.errors import NotFound
from polygraph_logic.graph.assertions import Assertion


class Assertions(Mapping):
    """The graph's assertions by id, read from disk on demand (iteration streams them in order)."""

    def __init__(self, graph):
        self._graph = graph
        self._count: int | None = None
        columns = graph.assertion_columns
        # a graph built before kinds existed reads every assertion as a source claim
        self._COLUMNS += ", kind" if "kind" in columns else ", 'source_claim'"
        # a graph built before negated assertions existed has none
        self.has_negated = "negated" in columns
        self._COLUMNS += ", negated" if self.has_negated else ", 0"
        # a graph built before evidence metadata existed has none (graph/evidence.py)
        self.has_evidence = "evidence" in columns
        self._COLUMNS += ", evidence" if self.has_evidence else ", NULL"

    _COLUMNS = "id, source, subject, predicate, object, text"

    def __getitem__(self, assertion_id: str) -> Assertion:
        row = self._graph.assertion_row(assertion_id, self._COLUMNS)
        if row is None:
            raise NotFound("unknown_assertion", f"no assertion named {assertion_id!r}")
        return self._graph.assertion(row)

    def numbered(self, numbers) -> dict[int, Assertion]:
        """Returns {number: assertion} of the given assertion numbers (one query)."""
        rows = self._graph.query(f"SELECT num, {self._COLUMNS} FROM assertions WHERE num IN "
                                 "(SELECT value FROM json_each(?))", (json.dumps(sorted(set(numbers))),))
        return {row[0]: self._graph.assertion(row[1:]) for row in rows}

    def named(self, assertion_ids) -> dict[str, tuple[int, Assertion]]:
        """Returns {id: (number, assertion)} of the given ids that name assertions (two queries)."""
        found = self.numbered(self._graph.numbers("id", assertion_ids))
        return {a.id: (num, a) for num, a in found.items()}

    def __contains__(self, assertion_id) -> bool:
        return self._graph.assertion_row(assertion_id, "1") is not None

    def __iter__(self) -> Iterator[str]:
        return (row[0] for row in self._graph.store.in_order("assertions", "id"))

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._graph.query("SELECT COUNT(*) FROM assertions").fetchone()[0]
        return self._count

    def values(self) -> Iterator[Assertion]:
        return (self._graph.assertion(row) for row in self._graph.store.in_order("assertions", self._COLUMNS))

    def items(self) -> Iterator[tuple[str, Assertion]]:
        return ((a.id, a) for a in self.values())


class Rows:
    """A query's rows (iterate, fetchone, fetchall), read with damage turned into bad_graph."""

    def __init__(self, cursor, call):
        """``cursor``: the driver's; ``call``: runs a read with damage turned into bad_graph (Store.call)."""
        self._cursor, self._call = cursor, call

    def __iter__(self) -> "Rows":
        return self

    def __next__(self):
        return self._call(next, self._cursor)

    def fetchone(self):
        return self._call(self._cursor.fetchone)

    def fetchall(self) -> list:
        return self._call(self._cursor.fetchall)

    def batches(self, size: int = 10_000) -> Iterator[list]:
        """The rows as lists of at most ``size``: one call per batch, not per row."""
        while True:
            batch = self._call(self._cursor.fetchmany, size)
            if not batch:
                return
            yield batch


__all__ = ["Assertions", "Rows"]
