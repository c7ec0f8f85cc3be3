"""Running a plan (sql_plan.py) on DuckDB: embedded, with a memory limit and spilling to disk.

This is the engine-specific part: the connection and its settings, loading the facts
(through CSV files DuckDB reads natively), and the table operations the semi-naive loop
(driver.py, shared with Spark) calls.  The statements come from the plan in the DuckDB dialect.
"""

from __future__ import annotations

import csv
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Callable, Iterator

from polygraph_logic.allocation import collector_paused
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import Model, StratumStats
from polygraph_logic.datalog.program import Program
from polygraph_logic.engines import sql_labels as labels, sql_witness as witnesses
from polygraph_logic.engines.dialect import DUCKDB
from polygraph_logic.engines.driver import RoundStats, Runner
from polygraph_logic.engines.sql_plan import Plan, make_plan

__all__ = ["DuckDBRunner", "RoundStats", "connect", "evaluate_duckdb", "evaluation", "require_duckdb"]


def connect(memory_limit: str | None = None, temp_directory: str | None = None, threads: int | None = None):
    """Returns a DuckDB connection set up for a build (memory limit, spilling, threads).

    The database is in memory, under a limit too: DuckDB moves the blocks of its tables, not
    only intermediate results, to ``temp_directory`` when the limit is reached.  (A database
    file in the build's folder did the same, but wrote every table: at x40 under 400MB,
    20.0 s against 16.8 s in memory, the same peak; docs/bench/notebook.md.)"""
    duckdb = require_duckdb()
    con = duckdb.connect(":memory:")
    try:
        if memory_limit:
            con.execute(f"SET memory_limit = '{_size(memory_limit)}'")
        if temp_directory:
            con.execute(f"SET temp_directory = '{temp_directory}'")
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        con.execute("SET preserve_insertion_order = false")
    except duckdb.Error as error:
        con.close()
        raise PolygraphError("engine_error", f"DuckDB refused a setting: {error}") from None
    return con


_UNITS = {"bytes": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40, "PiB": 2 ** 50}


def memory_limit_bytes(con) -> int:
    """The connection's memory limit in bytes (DuckDB says it as "143.0 MiB"); 0 if unread."""
    said = str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]).split()
    try:
        return int(float(said[0]) * _UNITS[said[1]])
    except (IndexError, KeyError, ValueError):
        return 0


def require_duckdb():
    """Returns the duckdb module, or raises PolygraphError(missing_dependency) saying how to get it."""
    try:
        import duckdb
    except ImportError:
        raise PolygraphError("missing_dependency",
                             'the DuckDB engine needs duckdb: pip install "polygraph_logic[duckdb]"') from None
    return duckdb


def _size(text: str) -> str:
    value = str(text).strip()
    if not value or not (value[0].isdigit()) or any(c in value for c in "';"):
        raise PolygraphError("bad_argument", f"--memory-limit takes a size such as 4GB or 512MB, not {text!r}")
    return value


def evaluate_duckdb(program: Program, cap: int | None = 8, memory_limit: str | None = None,
                    progress: Callable[[StratumStats], None] | None = None,
                    rounds: Callable[[RoundStats], None] | None = None,
                    threads: int | None = None, witness: bool = False) -> tuple[Model, list[RoundStats]]:
    """Evaluates ``program`` under why-provenance capped at ``cap`` on DuckDB; returns the
    Model (the same labels as ``evaluate(program, "why", cap)``) and per-round statistics.
    ``witness``: each fact's witness label instead (sql_witness.py; the same as the Python
    engine's, provenance/witness.py), ``cap`` unused."""
    with evaluation(program, cap, memory_limit, progress, rounds, threads, witness=witness) as runner:
        return runner.model(), runner.stats


@contextmanager
def session(memory_limit: str | None = None, threads: int | None = None) -> Iterator[tuple[object, Path]]:
    """A build's connection and its working folder (spill files), both gone after; DuckDB
    running out of memory in it is one error."""
    duckdb = require_duckdb()
    with tempfile.TemporaryDirectory(prefix="polygraph-duckdb-") as work:
        con = connect(memory_limit, str(Path(work) / "spill"), threads)
        try:
            yield con, Path(work)
        except duckdb.OutOfMemoryException as error:
            first = str(error).splitlines()[0]
            raise PolygraphError("out_of_memory", f"DuckDB ran out of memory ({first}); raise --memory-limit") from None
        finally:
            con.close()


#: the joins a statement unites under a memory limit (x40 with no limit, evaluation: 5.9 s
#: uniting all of a body length, 7.0 s two at a time; measured in docs/bench/notebook.md)
JOINS_UNDER_LIMIT = 2
#: ... unless the round's deltas hold at most this many facts (Runner.small_delta): then one
#: join for each JOIN_MEMORY bytes of the limit, as a join takes memory however small its
#: data (x1, the most a statement united under a limit that built: 2 joins at 48MB, 4 at
#: 64MB, all at 96MB; 4 failed at 48MB, 8 at 64MB).  x40 under 150MB: 8 joins, rounds 8-12
#: of the edge stratum 0.21-0.32 s -> 0.10-0.23 s.
SMALL_DELTA = 70_000
JOIN_MEMORY = 16 * 2 ** 20


@contextmanager
def evaluation(program: Program, cap: int | None = 8, memory_limit: str | None = None,
               progress: Callable[[StratumStats], None] | None = None,
               rounds: Callable[[RoundStats], None] | None = None,
               threads: int | None = None, opened: tuple | None = None, inputs=None,
               witness: bool = False) -> Iterator["DuckDBRunner"]:
    """Evaluates ``program`` on DuckDB and yields the runner while its connection is open: its
    ``r<n>`` tables hold every relation's labels (read them with ``runner.con``;
    graph/tables/duckdb_build.py writes them as Parquet without a round trip through Python).
    Out of memory is one error.

    ``opened``: a ``session()`` already open (the caller closes it; ``memory_limit`` is then the
    limit it was opened with); ``inputs``: facts the connection holds already
    (graph/tables/native_inputs.py), loaded by ``inputs.load(runner)``.  Under a limit a statement
    unites at most JOINS_UNDER_LIMIT joins (Plan.contributions): each holds a hash table while it
    runs, so that a union of many needs memory whatever the data (x1: 100MB failed, 48MB builds;
    docs/bench/notebook.md).

    ``witness``: witness labels (sql_witness.py): the Boolean closure, each fact labelled by one
    support set, every derivation kept in ``gates`` and the inexact facts in ``inexact``."""
    program.check_provenance_negation()
    with collector_paused():  # planning and loading make objects that all live on (allocation.py)
        plan = make_plan(program, cap, witness)
    with nullcontext(opened) if opened else session(memory_limit, threads) as (con, work):
        with collector_paused():
            runner = DuckDBRunner(con, plan, work, rounds, JOINS_UNDER_LIMIT if memory_limit else None)
            runner.load()
            if inputs is not None:
                inputs.load(runner)
        runner.run(progress)
        if witness:
            runner.inexact = witnesses.settle(con, plan, runner.stated)
        yield runner


class DuckDBRunner(Runner):
    """One evaluation on one DuckDB connection: r<n>, d<n> tables, c<n> temporary tables."""

    dialect = DUCKDB

    def __init__(self, con, plan: Plan, work: Path, on_round, joins: int | None = None):
        super().__init__(plan, on_round)
        self.con, self.work, self.joins = con, work, joins
        self.stated = 0  # witness labels: the last id of a stated fact (the facts loaded)
        self.inexact = 0  # witness labels: the facts ``settle`` found inexact
        self.restricted: dict[str, bool] = {}  # witness labels: this round's c<n> holds new facts only
        self.round_ids: int | None = None  # witness labels: the first fact id this round may give
        if joins:
            self.small_delta = SMALL_DELTA
            self.small_joins = max(joins, memory_limit_bytes(con) // JOIN_MEMORY)

    def _csv(self, name: str, rows) -> str:
        path = self.work / f"{name}.csv"
        with open(path, "w", newline="") as out:
            csv.writer(out).writerows(rows)
        return str(path)

    def load(self) -> None:
        plan, con = self.plan, self.con
        if plan.witness:
            witnesses.create(con, plan)
        for relation in plan.relations:
            for delta in (False, True):
                self._create(relation, delta)
        if plan.witness:
            witnesses.create_view(con, plan)
        for relation, rows in self.fact_rows():
            path = self._csv(f"facts{plan.relations[relation]}", rows)
            names = ", ".join(f"'{k}': 'INTEGER'" for k in plan.keys(relation))
            self.insert_facts(relation, f"read_csv('{path}', header = false, columns = {{{names}, 'v': 'INTEGER'}})")
        for shape in self.parameter_shapes():
            width = shape.width + plan.witness  # witness labels: each row's rule number too (rn)
            columns = ", ".join(f"c{i} INTEGER" for i in range(shape.width)) + (", rn INTEGER" if plan.witness else "")
            rows = [(*row, number) for row, number in zip(shape.params, shape.numbers)] if plan.witness else shape.params
            path = self._csv(f"params{shape.number}", rows)
            names = ", ".join(f"'c{i}': 'INTEGER'" for i in range(width))
            con.execute(f"CREATE TABLE {shape.table} ({columns})")
            con.execute(f"INSERT INTO {shape.table} SELECT DISTINCT * FROM "
                        f"read_csv('{path}', header = false, columns = {{{names}}})")

    def _create(self, relation: str, delta: bool) -> None:
        if self.plan.boolean:
            columns = ", ".join(f"{k} INTEGER" for k in self.plan.keys(relation))
            self.con.execute(f"CREATE TABLE {self.plan.table(relation, delta)} ({columns})")
            return
        if self.plan.witness:
            self.con.execute(f"CREATE TABLE {self.plan.table(relation, delta)} "
                             f"({witnesses.relation_columns(self.plan, relation)})")
            return
        columns = ", ".join(f"{k} INTEGER" for k in self.plan.keys(relation))
        self.con.execute(f"CREATE TABLE {self.plan.table(relation, delta)} "
                         f"({columns}, label INTEGER[][], exact BOOLEAN)")

    def _empty_delta(self, relation: str) -> None:
        """Makes d<n> a new empty table.  Not ``DELETE FROM``: DuckDB keeps a deleted row's
        storage in an in-memory table, and every round's scans of the delta read it again (x40:
        the edge delta held 872,099 rows in round 6, 110,763 of them live; evaluation 6.2 -> 5.0 s,
        7.1 s instead of 9.3 s under 150MB)."""
        self.con.execute(f"DROP TABLE {self.plan.table(relation, delta=True)}")
        self._create(relation, True)

    def insert_facts(self, relation: str, source: str) -> None:
        """Adds to ``relation`` the facts of ``source`` (a table expression of the key columns and
        ``v``: the assertion number, -1 for background knowledge), one label per fact; under witness
        labels the least of them (exact when it is the only one) and the fact's id."""
        plan, keys = self.plan, self.plan.keys(relation)
        if plan.boolean:
            self.con.execute(f"INSERT INTO {plan.table(relation)} SELECT DISTINCT {', '.join(keys)} FROM {source}")
            return
        raw = (f"SELECT {', '.join(keys)}, list_distinct(list(CASE WHEN v < 0 THEN []::INTEGER[] "
               f"ELSE [v] END)) AS p, TRUE AS e FROM {source} GROUP BY {', '.join(keys)}")
        if plan.witness:
            self.con.execute(f"INSERT INTO {plan.table(relation)} "
                             f"{witnesses.with_ids(labels.normalize(DUCKDB, raw, keys, 1))}")
            last = self.con.execute(f"SELECT max(id) FROM {plan.table(relation)}").fetchall()[0][0]
            self.stated = max(self.stated, last or 0)
            return
        self.con.execute(f"INSERT INTO {plan.table(relation)} {labels.normalize(DUCKDB, raw, keys, plan.cap)}")

    def distinct(self, relation: str, column: int, limit: int) -> list[int]:
        table = self.plan.table(relation, delta=True)
        return [row[0] for row in self.con.execute(f"SELECT DISTINCT k{column} FROM {table} LIMIT {limit}").fetchall()]

    def start_round(self) -> None:
        """Under witness labels, the facts of the last round are those of ids from the first the
        last round could give (Plan.fresh: ids are given in order, the round's new facts only)."""
        if self.plan.witness:
            self.plan.fresh = self.round_ids
            self.round_ids = witnesses.next_id(self.con)

    def derive_round(self, relation: str, shapes, deltas: set[str] | None, joins: int | None) -> bool:
        """Under witness labels, the round's heads first, keys alone (sql_witness.heads), then the
        derivations of its new facts only."""
        if not self.plan.witness:
            return super().derive_round(relation, shapes, deltas, joins)
        plan, d = self.plan, self.dialect
        found = plan.key_contributions(d, shapes, relation, deltas, joins, self.present)
        if not found:
            return False
        new = witnesses.heads(self.con, plan, relation, found)
        self.restricted[relation] = new is not None
        self.derive(relation, plan.contributions(d, shapes, relation, deltas, joins, self.present, restrict=new))
        return True

    def derive(self, relation: str, parts: list[str]) -> None:
        table = f"c{self.plan.relations[relation]}"
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {parts[0]}")
        for part in parts[1:]:
            self.con.execute(f"INSERT INTO {table} {part}")

    def replace_delta(self, relation: str, sql: str) -> tuple[int, int]:
        delta = self.plan.table(relation, delta=True)
        self._empty_delta(relation)
        if self.plan.witness:  # the round's new facts, then its derivations by the ids of their facts
            restricted = self.restricted.pop(relation, False)
            self.con.execute(f"INSERT INTO {delta} {witnesses.new_facts(self.plan, relation, restricted)}")
            witnesses.record(self.con, self.plan, relation, restricted)
            if restricted:
                self.con.execute(f"DROP TABLE {witnesses.new_heads(self.plan, relation)}")
        else:
            self.con.execute(f"INSERT INTO {delta} {sql}")
        size = "0" if self.plan.boolean else "coalesce(sum(len(label)), 0)"
        count, size = self.con.execute(f"SELECT count(*), {size} FROM {delta}").fetchall()[0]
        self.con.execute(f"DROP TABLE c{self.plan.relations[relation]}")
        return count, size

    def clear_delta(self, relation: str) -> None:
        self._empty_delta(relation)

    def apply_delta(self, relation: str) -> None:
        plan = self.plan
        table, delta = plan.table(relation), plan.table(relation, delta=True)
        if plan.witness or plan.boolean:  # a delta holds new facts only
            self.con.execute(f"INSERT INTO {table} SELECT * FROM {delta}")
            return
        on = " AND ".join(f"{table}.{k} = {delta}.{k}" for k in plan.keys(relation))
        self.con.execute(f"DELETE FROM {table} USING {delta} WHERE {on}")
        self.con.execute(f"INSERT INTO {table} SELECT * FROM {delta}")

    def count(self, relation: str) -> int:
        return self.con.execute(f"SELECT count(*) FROM {self.plan.table(relation)}").fetchall()[0][0]

    def label_rows(self, relation: str):
        # labels come back as text ("3,5;7"): DuckDB hands nested lists to Python one
        # object at a time, several times slower than one string per fact
        text = "array_to_string(list_transform(label, lambda m: array_to_string(m, ',')), ';')"
        keys = ", ".join(self.plan.keys(relation)[:self.plan.arity(relation)])
        cursor = self.con.execute(f"SELECT {keys}{', ' if keys else ''}{text}, exact FROM {self.plan.table(relation)}")
        while batch := cursor.fetchmany(100_000):
            yield batch
