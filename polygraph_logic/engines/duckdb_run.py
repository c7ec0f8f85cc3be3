"""Running a plan (plan.py) on DuckDB: embedded, with a memory limit and spilling to disk.

This is the engine-specific part: the connection and its settings, loading the facts
(through CSV files DuckDB reads natively), the semi-naive loop, and reading the model
back.  The statements themselves come from the plan in the DuckDB dialect.
"""

from __future__ import annotations

import csv
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import PolygraphError
from ..evaluate import Model, StratumStats
from ..plan import Store
from ..program import Program
from ..provenance.variables import natural_key
from ..provenance.why import Polynomial, WhySemiring
from . import labels
from .dialect import DUCKDB
from .plan import Plan, make_plan


@dataclass
class RoundStats:
    """One semi-naive round: the facts whose label changed and their monomials."""

    stratum: int
    round: int
    delta_facts: int
    monomials: int
    seconds: float


def connect(memory_limit: str | None = None, temp_directory: str | None = None, threads: int | None = None,
            database: str = ":memory:"):
    """Returns a DuckDB connection set up for a build (memory limit, spilling, threads).

    ``database`` is ":memory:" or a file: under a memory limit a build's database is a
    file in its temporary directory, so that its tables, not only intermediate results,
    can leave memory (at the price of writing them)."""
    duckdb = require_duckdb()
    con = duckdb.connect(database)
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
                    threads: int | None = None) -> tuple[Model, list[RoundStats]]:
    """Evaluates ``program`` under why-provenance capped at ``cap`` on DuckDB; returns the
    Model (the same labels as ``evaluate(program, "why", cap)``) and per-round statistics."""
    duckdb = require_duckdb()
    program.check_provenance_negation()
    plan = make_plan(program, cap)
    with tempfile.TemporaryDirectory(prefix="polygraph-duckdb-") as work:
        database = str(Path(work) / "build.duckdb") if memory_limit else ":memory:"
        con = connect(memory_limit, str(Path(work) / "spill"), threads, database)
        try:
            runner = _Runner(con, plan, Path(work), rounds)
            runner.load()
            runner.run(progress)
            return runner.model(), runner.stats
        except duckdb.OutOfMemoryException as error:
            first = str(error).splitlines()[0]
            raise PolygraphError("out_of_memory", f"DuckDB ran out of memory ({first}); raise --memory-limit") from None
        finally:
            con.close()


class _Runner:
    """One evaluation: tables r<n> (a relation), d<n> (its last round's delta), c<n> (its
    derivations this round), p<n> (a shape's parameters), all in one connection."""

    def __init__(self, con, plan: Plan, work: Path, on_round):
        self.con, self.plan, self.work, self.on_round = con, plan, work, on_round
        self.stats: list[RoundStats] = []
        # assertion numbers are ranks in natural order: the cap's order is the numbers' order
        names = sorted(plan.program.assertion_ids(), key=natural_key)
        self.numbers = {name: i for i, name in enumerate(names)}
        self.names = names

    def _csv(self, name: str, rows) -> str:
        path = self.work / f"{name}.csv"
        with open(path, "w", newline="") as out:
            csv.writer(out).writerows(rows)
        return str(path)

    def load(self) -> None:
        plan, d, con = self.plan, DUCKDB, self.con
        for relation in plan.relations:
            keys = plan.keys(relation)
            columns = ", ".join(f"{k} INTEGER" for k in keys)
            for prefix in ("r", "d"):
                con.execute(f"CREATE TABLE {prefix}{plan.relations[relation]} "
                            f"({columns}, label INTEGER[][], exact BOOLEAN)")
        intern = plan.intern
        for relation, table in plan.program.fact_tables().items():
            if not table.rows:
                continue
            variables = table.variables or [None] * len(table.rows)
            arity = plan.arity(relation)
            numbers = self.numbers
            rows = ([*(map(intern, tup) if arity else [0]), numbers[var] if var else -1]
                    for tup, var in zip(table.rows, variables))  # -1: background (label 1)
            path = self._csv(f"facts{plan.relations[relation]}", rows)
            keys = plan.keys(relation)
            names = ", ".join(f"'{k}': 'INTEGER'" for k in keys)
            source = f"read_csv('{path}', header = false, columns = {{{names}, 'v': 'INTEGER'}})"
            raw = (f"SELECT {', '.join(keys)}, list_distinct(list(CASE WHEN v < 0 THEN []::INTEGER[] "
                   f"ELSE [v] END)) AS p, TRUE AS e FROM {source} GROUP BY {', '.join(keys)}")
            con.execute(f"INSERT INTO {plan.table(relation)} {labels.normalize(d, raw, keys, plan.cap)}")
        for shape in plan.shapes():
            if not shape.params or not shape.width:
                continue
            columns = ", ".join(f"c{i} INTEGER" for i in range(shape.width))
            path = self._csv(f"params{shape.number}", shape.params)
            names = ", ".join(f"'c{i}': 'INTEGER'" for i in range(shape.width))
            con.execute(f"CREATE TABLE {shape.table} ({columns})")
            con.execute(f"INSERT INTO {shape.table} SELECT DISTINCT * FROM "
                        f"read_csv('{path}', header = false, columns = {{{names}}})")

    def run(self, progress) -> None:
        plan = self.plan
        for number, (stratum, shapes) in enumerate(plan.strata):
            started = time.perf_counter()
            heads = sorted({shape.head[0] for shape in shapes})
            deltas = self._round(shapes, heads, None, number, 1)
            round_ = 1
            while deltas:
                round_ += 1
                deltas = self._round(shapes, heads, deltas & stratum, number, round_)
            if progress is not None:
                facts = sum(self._count(plan.table(name)) for name in stratum)
                progress(StratumStats(tuple(sorted(stratum)), round_, time.perf_counter() - started, facts))

    def _round(self, shapes, heads, deltas, stratum: int, round_: int) -> set[str]:
        """One round: every head's contributions, then each merged; returns the relations changed."""
        plan, con, d = self.plan, self.con, DUCKDB
        started = time.perf_counter()
        if deltas is not None and not deltas:
            return set()
        contributed = []
        for relation in heads:
            sql = plan.contributions(d, shapes, relation, deltas)
            if sql is not None:
                con.execute(f"CREATE OR REPLACE TEMP TABLE c{plan.relations[relation]} AS {sql}")
                contributed.append(relation)
        changed, facts, monomials = set(), 0, 0
        for relation in heads:
            delta = plan.table(relation, delta=True)
            if relation not in contributed:
                con.execute(f"DELETE FROM {delta}")
                continue
            number = plan.relations[relation]
            con.execute(f"DELETE FROM {delta}")
            con.execute(f"INSERT INTO {delta} {plan.merge(d, relation, f'SELECT * FROM c{number}')}")
            count, size = con.execute(f"SELECT count(*), coalesce(sum(len(label)), 0) FROM {delta}").fetchone()
            con.execute(f"DROP TABLE c{number}")
            if not count:
                continue
            keys = plan.keys(relation)
            table = plan.table(relation)
            on = " AND ".join(f"{table}.{k} = {delta}.{k}" for k in keys)
            con.execute(f"DELETE FROM {table} USING {delta} WHERE {on}")
            con.execute(f"INSERT INTO {table} SELECT * FROM {delta}")
            changed.add(relation)
            facts += count
            monomials += size
        stats = RoundStats(stratum, round_, facts, monomials, time.perf_counter() - started)
        self.stats.append(stats)
        if self.on_round is not None:
            self.on_round(stats)
        return changed

    def _count(self, table: str) -> int:
        return self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def model(self) -> Model:
        """Reads every relation back into a Model of WhySemiring labels."""
        plan = self.plan
        semiring = WhySemiring(plan.cap)
        for name in self.names:
            semiring.table.intern(name)  # variable number = rank, as in the tables
        one = semiring.one()
        decode = list(plan.values)
        made: dict[tuple, Polynomial] = {}
        store = Store(plan.program.arities)
        # labels come back as text ("3,5;7"): DuckDB hands nested lists to Python one
        # object at a time, several times slower than one string per fact
        text = ("array_to_string(list_transform(label, lambda m: array_to_string(m, ',')), ';')")
        for relation in plan.relations:
            rows = store.relations[relation]
            arity = plan.arity(relation)
            keys = ", ".join(plan.keys(relation)[:arity])
            cursor = self.con.execute(f"SELECT {keys}{', ' if keys else ''}{text}, exact FROM {plan.table(relation)}")
            while batch := cursor.fetchmany(100_000):
                for row in batch:
                    key = row[-2:]  # facts share labels: one (immutable) Polynomial per distinct label
                    label = made.get(key)
                    if label is None:
                        label = made[key] = _polynomial(key[0], key[1], semiring, one)
                    rows[tuple(map(decode.__getitem__, row[:arity]))] = label
        return Model(plan.program, semiring, store)


def _polynomial(text: str, exact: bool, semiring: WhySemiring, one: Polynomial) -> Polynomial:
    """The label written as text by ``model`` ("3,5;7": monomials split by ';')."""
    if not text:
        return one
    return Polynomial(frozenset(frozenset(map(int, m.split(","))) if m else frozenset()
                                for m in text.split(";")), exact, semiring.table)
