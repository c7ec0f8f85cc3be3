"""Work beside the writing: artifact ids of claims and entailed edges digested, other work.

A claim's or an edge's id is a blake2b digest of its arguments (``graph.artifact_ids.digest_id``);
DuckDB has no blake2b, so the arguments pass through Python, a batch at a time (at x40,
about a million of them).  ``Digests`` does that on a thread of its own with a
connection of its own, while the writer's connection goes on with the tables that do not
need the ids (mentions, facts): DuckDB releases the interpreter while it runs a
statement, so hashing and SQL use both cores instead of taking turns.

The thread reads the numbered facts (``fx``, which nobody changes while it runs) and
appends each selection's ``(fact, id, n)`` rows to the table ``digests_<layer>`` it alone
writes, in fx's order, ``n`` counting the selection's rows from 1 (the artifact's place in
its layer: the artifacts file is numbered from it without a window over its rows): the
reading is a filtered scan of one table and each batch is inserted from one table, both of
which keep their order in DuckDB (duckdb_build.py pairs the rows with fx's by position and
checks that the facts and counts agree).  ``wait`` joins it and
raises whatever stopped it.  ``Background`` is that thread, for any work (duckdb_build.py
also makes the rules on one, in Python while DuckDB writes the other files).
"""

from __future__ import annotations

import threading
from typing import Callable

from polygraph_logic.graph.artifact_ids import digest_id

#: rows per batch of arguments digested: a batch's rows are Python objects while it is hashed
#: (x40 under 130MB: peak 285 MB with 50,000, 266 MB with 10,000, 266 MB with 2,000)
BATCH = 10_000


def table(layer: str) -> str:
    """The table the ids of ``layer`` are written to."""
    return f"digests_{layer}"


class Digests:
    """Digests the ids of ``(layer, where)`` selections of ``fx f`` into the tables
    ``digests_<layer>``: ``(fact, id, n)`` in fx's order, ``n`` from 1."""

    def __init__(self, con, selections: list[tuple[str, str]]):
        self.con, self.selections = con, selections
        self.stop = threading.Event()
        self.background: Background | None = None
        for layer, _ in selections:
            con.execute(f"CREATE OR REPLACE TABLE {table(layer)}(fact BIGINT, id VARCHAR, n BIGINT)")

    def start(self) -> "Digests":
        self.background = Background(self._run, self.con)
        return self

    def wait(self) -> None:
        """Returns once every id is in ``digests``; raises what stopped the thread."""
        self.background.wait()

    def cancel(self) -> None:
        """Stops the thread at its next batch and waits for it (the writer failed)."""
        self.stop.set()
        if self.background is not None:
            self.background.wait(raising=False)

    def _run(self, cursor) -> None:
        import numpy as np
        for layer, where in self.selections:
            reader = cursor.cursor()
            reader.execute(f"SELECT f.num, f.args FROM fx f WHERE {where}")
            done = 0
            while not self.stop.is_set() and (batch := reader.fetchmany(BATCH)):
                facts = np.fromiter((row[0] for row in batch), dtype=np.int64, count=len(batch))
                ids = np.array([digest_id(layer, row[1]) for row in batch], dtype=object)
                places = np.arange(done + 1, done + len(batch) + 1, dtype=np.int64)
                cursor.register("digested", {"fact": facts, "id": ids, "n": places})
                cursor.execute(f"INSERT INTO {table(layer)} SELECT fact, id, n FROM digested")
                cursor.unregister("digested")
                done += len(batch)
            reader.close()


class Background:
    """``work(cursor)`` on a thread of its own, with a cursor of ``con``: a connection of its own,
    so statements of both run at once.  Digests runs on one; duckdb_build.py runs the rules so,
    native_inputs.py the reading of the assertions (``wait`` returns what ``work`` returned)."""

    def __init__(self, work: Callable, con):
        self.error: BaseException | None = None
        self.result = None
        self.cursor = con.cursor()

        def run() -> None:
            try:
                self.result = work(self.cursor)
            except BaseException as error:  # handed to the writer's thread by wait()
                self.error = error
        self.thread = threading.Thread(target=run, name="polygraph-writer", daemon=True)
        self.thread.start()

    def wait(self, raising: bool = True):
        """Joins the thread (again, if called again), closes its cursor and returns the work's
        result; with ``raising``, raises what stopped the work."""
        self.thread.join()
        self.cursor.close()
        if raising and self.error is not None:
            raise self.error
        return self.result
