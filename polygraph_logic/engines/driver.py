"""The semi-naive loop over a plan (sql_plan.py), the same for every SQL engine.

A runner holds one evaluation's tables: r<n> (a relation), d<n> (its last round's
delta), c<n> (its derivations this round), p<n> (a shape's parameters).  This module
drives them stratum by stratum and round by round, counts each round and reads the
model back; an engine (duckdb_run.py, spark_run.py) says how a table is made, replaced
and read: the statements themselves come from the plan in the engine's dialect.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import Model, StratumStats
from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.provenance.variables import natural_key
from polygraph_logic.provenance.why import Polynomial, WhySemiring
from polygraph_logic.engines.dialect import Dialect
from polygraph_logic.engines.sql_plan import Plan


@dataclass
class RoundStats:
    """One semi-naive round: the facts whose label changed and their monomials."""

    stratum: int
    round: int
    delta_facts: int
    monomials: int
    seconds: float


class Runner(ABC):
    """One evaluation of ``plan`` on one engine; subclasses implement the table operations."""

    dialect: Dialect
    #: at most this many joins in one statement (Plan.contributions), None: no bound
    joins: int | None = None
    #: a round whose deltas hold at most ``small_delta`` facts in all unites ``small_joins``
    #: joins a statement, not ``joins``: each join's hash table is built on a delta (or on what a
    #: delta joined), so they are small, and every statement scans the whole relations again
    small_delta: int = 0
    small_joins: int | None = None
    #: a delta column holding more distinct values than this is not looked into (``present``)
    present_limit: int = 1000

    def __init__(self, plan: Plan, on_round: Callable[[RoundStats], None] | None):
        self.plan, self.on_round = plan, on_round
        self.stats: list[RoundStats] = []
        self.delta_facts: dict[str, int] = {}  # each relation's facts in its delta
        self.seen: dict[tuple[str, int], frozenset | None] = {}  # ``present``'s answers this round
        # assertion numbers are ranks in natural order: the cap's order is the numbers' order
        self.names = sorted(plan.program.assertion_ids(), key=natural_key)
        self.numbers = {name: i for i, name in enumerate(self.names)}

    # -- what every engine loads: (keys..., assertion number or -1) per fact, parameters per shape

    def fact_rows(self) -> Iterator[tuple[str, Iterable[list[int]]]]:
        """Each relation with facts and its rows: the interned arguments (0 for arity 0), then the
        assertion number (-1: background knowledge, label 1)."""
        plan, numbers = self.plan, self.numbers
        for relation, table in plan.program.fact_tables().items():
            if not table.rows:
                continue
            variables = table.variables or [None] * len(table.rows)
            arity = plan.arity(relation)
            yield relation, ([*(map(plan.intern, tup) if arity else [0]), numbers[var] if var else -1]
                             for tup, var in zip(table.rows, variables))

    def parameter_shapes(self):
        """The shapes that join a parameter table (rules with constants)."""
        return [shape for shape in self.plan.shapes() if shape.params and shape.width]

    # -- the loop

    def run(self, progress: Callable[[StratumStats], None] | None) -> None:
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
                facts = sum(self.count(name) for name in stratum)
                progress(StratumStats(tuple(sorted(stratum)), round_, time.perf_counter() - started, facts))

    def _round(self, shapes, heads, deltas, stratum: int, round_: int) -> set[str]:
        """One round: every head's contributions (all read the state before the round), then
        each head's delta merged into its relation; returns the relations changed."""
        plan, d = self.plan, self.dialect
        started = time.perf_counter()
        if deltas is not None and not deltas:
            return set()
        contributed = []
        self.seen.clear()  # the deltas changed since
        self.start_round()
        joins = self.joins
        if deltas is not None and sum(self.delta_facts.get(name, 0) for name in deltas) <= self.small_delta:
            joins = self.small_joins
        for relation in heads:
            if self.derive_round(relation, shapes, deltas, joins):
                contributed.append(relation)
        changed, facts, monomials = set(), 0, 0
        for relation in heads:
            if relation not in contributed:
                self.clear_delta(relation)
                self.delta_facts[relation] = 0
                continue
            merge = plan.merge(d, relation, f"SELECT * FROM c{plan.relations[relation]}")
            count, size = self.replace_delta(relation, merge)
            self.delta_facts[relation] = count
            if not count:
                continue
            self.apply_delta(relation)
            changed.add(relation)
            facts += count
            monomials += size
        stats = RoundStats(stratum, round_, facts, monomials, time.perf_counter() - started)
        self.stats.append(stats)
        if self.on_round is not None:
            self.on_round(stats)
        return changed

    def start_round(self) -> None:
        """Called before a round's first derivation (an engine may note what the round starts from)."""

    def derive_round(self, relation: str, shapes, deltas: set[str] | None, joins: int | None) -> bool:
        """Makes c<n> this round's derivations of ``relation`` (``derive``); False when no rule can
        derive it this round (no c<n> made)."""
        parts = self.plan.contributions(self.dialect, shapes, relation, deltas, joins, self.present)
        if parts:
            self.derive(relation, parts)
        return bool(parts)

    def present(self, relation: str, column: int) -> frozenset | None:
        """The values column ``column`` of ``relation``'s delta holds this round, if at most
        ``present_limit`` (else None); asked of the engine once a round (``distinct``)."""
        key = (relation, column)
        if key not in self.seen:
            values = self.distinct(relation, column, self.present_limit + 1)
            self.seen[key] = None if values is None or len(values) > self.present_limit else frozenset(values)
        return self.seen[key]

    def distinct(self, relation: str, column: int, limit: int) -> list[int] | None:
        """At most ``limit`` distinct values of column ``column`` of ``relation``'s delta; None:
        this engine does not say (a query of its own costs more than the joins it spares: Spark)."""
        return None

    @abstractmethod
    def derive(self, relation: str, parts: list[str]) -> None:
        """Makes c<n> the rows of the union of ``parts`` (this round's derivations of ``relation``)."""

    @abstractmethod
    def replace_delta(self, relation: str, sql: str) -> tuple[int, int]:
        """Makes d<n> the rows of ``sql`` (it reads c<n>, which may go); returns its facts and monomials."""

    @abstractmethod
    def clear_delta(self, relation: str) -> None:
        """Makes d<n> empty."""

    @abstractmethod
    def apply_delta(self, relation: str) -> None:
        """Replaces in r<n> every fact of d<n> by d<n>'s row (new facts are added)."""

    @abstractmethod
    def count(self, relation: str) -> int:
        """The number of facts of ``relation``."""

    @abstractmethod
    def label_rows(self, relation: str) -> Iterator[list[tuple]]:
        """Batches of rows (the relation's arguments..., label as text "3,5;7", exact)."""

    # -- the model

    def model(self) -> Model:
        """Reads every relation back into a Model of WhySemiring labels."""
        plan = self.plan
        if plan.held:
            raise PolygraphError("engine_error", "this evaluation's values are held by the engine: "
                                                 "read its tables, not a Model")
        semiring = WhySemiring(plan.cap)
        for name in self.names:
            semiring.table.intern(name)  # variable number = rank, as in the tables
        one = semiring.one()
        decode = list(plan.values)
        made: dict[tuple, Polynomial] = {}
        store = Store(plan.program.arities)
        for relation in plan.relations:
            rows = store.relations[relation]
            arity = plan.arity(relation)
            for batch in self.label_rows(relation):
                for row in batch:
                    key = tuple(row[-2:])  # facts share labels: one (immutable) Polynomial per distinct label
                    label = made.get(key)
                    if label is None:
                        label = made[key] = _polynomial(key[0], key[1], semiring, one)
                    rows[tuple(map(decode.__getitem__, row[:arity]))] = label
        return Model(plan.program, semiring, store)


def _polynomial(text: str, exact: bool, semiring: WhySemiring, one: Polynomial) -> Polynomial:
    """A label written as text ("3,5;7": monomials split by ';', "" the label 1)."""
    if not text:
        return one
    return Polynomial(frozenset(frozenset(map(int, m.split(","))) if m else frozenset()
                                for m in text.split(";")), exact, semiring.table)
