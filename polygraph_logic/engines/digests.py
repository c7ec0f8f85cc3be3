"""Work beside the writing: artifact ids of claims and entailed edges digested, other work.

A claim's or an edge's id is a blake2b digest of its arguments (``graph.build.digest_id``);
DuckDB has no blake2b, so the arguments pass through Python, a batch at a time (at x40,
about a million of them).  ``Digests`` does that on a thread of its own with a
connection of its own, while the writer's connection goes on with the tables that do not
need the ids (mentions, facts): DuckDB releases the interpreter while it runs a
statement, so hashing and SQL use both cores instead of taking turns.

The thread reads the numbered facts (``fx``, which nobody changes while it runs) and
appends ``(fact, id)`` rows to the table ``digests`` it alone writes; ``wait`` joins it
and raises whatever stopped it.  ``Background`` runs other work so (tables_build.py: the
rules, made in Python while DuckDB writes the other files).
"""

from __future__ import annotations

import threading
from typing import Callable

from ..graph.build import digest_id

#: rows per batch of arguments digested
BATCH = 50_000


class Digests:
    """Digests the ids of ``(layer, where)`` selections of ``fx f`` into the table ``digests``."""

    def __init__(self, con, selections: list[tuple[str, str]]):
        self.con, self.selections = con, selections
        self.error: BaseException | None = None
        self.stop = threading.Event()
        con.execute("CREATE OR REPLACE TABLE digests(fact BIGINT, id VARCHAR)")
        self.thread = threading.Thread(target=self._run, name="polygraph-digests", daemon=True)

    def start(self) -> "Digests":
        self.thread.start()
        return self

    def wait(self) -> None:
        """Returns once every id is in ``digests``; raises what stopped the thread."""
        self.thread.join()
        if self.error is not None:
            raise self.error

    def cancel(self) -> None:
        """Stops the thread at its next batch and waits for it (the writer failed)."""
        self.stop.set()
        self.thread.join()

    def _run(self) -> None:
        import numpy as np
        cursor = self.con.cursor()  # a connection of its own: statements of both run at once
        try:
            for layer, where in self.selections:
                reader = cursor.cursor()
                reader.execute(f"SELECT f.num, f.args FROM fx f WHERE {where}")
                while not self.stop.is_set() and (batch := reader.fetchmany(BATCH)):
                    facts = np.fromiter((row[0] for row in batch), dtype=np.int64, count=len(batch))
                    ids = np.array([digest_id(layer, row[1]) for row in batch], dtype=object)
                    cursor.register("digested", {"fact": facts, "id": ids})
                    cursor.execute("INSERT INTO digests SELECT fact, id FROM digested")
                    cursor.unregister("digested")
                reader.close()
        except BaseException as error:  # handed to the writer's thread by wait()
            self.error = error
        finally:
            cursor.close()


class Background:
    """``work(cursor)`` on a thread of its own, with a cursor of ``con`` (statements of both run at
    once); ``wait`` joins it, closes the cursor and raises what stopped it."""

    def __init__(self, work: Callable, con):
        self.error: BaseException | None = None
        self.cursor = con.cursor()

        def run() -> None:
            try:
                work(self.cursor)
            except BaseException as error:  # handed to the writer's thread by wait()
                self.error = error
        self.thread = threading.Thread(target=run, name="polygraph-background", daemon=True)
        self.thread.start()

    def wait(self) -> None:
        self.thread.join()
        self.cursor.close()
        if self.error is not None:
            raise self.error
