"""Stratified semi-naive evaluation, generic over the semiring.

Each fact's label accumulates (``plus``) the product (``times``) of the labels
along every derivation until nothing changes.  A fact re-enters the delta with
its whole new label whenever the label grows; that recomputes some products
twice, which is harmless because every shipped semiring has an idempotent plus.
"""

from __future__ import annotations

import difflib
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence, TextIO

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.budget import Budget
from polygraph_logic.datalog.choice import Choice, refuse_order_dependent, refuse_recursive_autoinc
from polygraph_logic.datalog.joins.subsumption import prune, refuse_over_tracked
from polygraph_logic.errors import NotFound, PolygraphError
from polygraph_logic.datalog.joins.join_plan import Plan, Store
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.values.record_values import STRUCTURED, sort_key
from polygraph_logic.provenance import Semiring, make_semiring
from polygraph_logic.datalog.syntax import Atom, Rule, Value, format_value


@dataclass
class StratumStats:
    """What one stratum cost: its relations, rounds of the fixpoint and seconds."""

    relations: tuple[str, ...]
    rounds: int
    seconds: float
    facts: int


@dataclass
class Model:
    """The result of evaluating a program: every relation's facts with their labels."""

    program: Program
    semiring: Semiring
    store: Store = field(repr=False)
    stats: list[StratumStats] = field(default_factory=list, repr=False)

    def relations(self) -> list[str]:
        """Returns the names of every relation of the program, sorted."""
        return sorted(self.store.relations)

    def facts(self, relation: str) -> Mapping[tuple, Any]:
        """Returns the facts of a relation as a read-only ``tuple -> label`` mapping."""
        self._require(relation)
        return MappingProxyType(self.store.relations[relation])

    def label(self, relation: str, args: Iterable[Value]) -> Any | None:
        """Returns the label of ``relation(args)``, or None if the fact does not hold."""
        self._require(relation)
        return self.store.relations[relation].get(tuple(args))

    def __contains__(self, item: tuple[str, tuple]) -> bool:
        relation, args = item
        return tuple(args) in self.store.relations.get(relation, {})

    def boolean(self) -> dict[str, set[tuple]]:
        """Returns every relation as a set of tuples (labels dropped)."""
        return {name: set(rows) for name, rows in self.store.relations.items()}

    def restrict(self, deleted: Iterable[str]) -> dict[str, dict[tuple, Any]]:
        """Returns the facts still supported once the ``deleted`` assertions are false.

        Nothing is mutated; facts whose label becomes zero are left out.
        """
        return what_if(self, deleted).alive

    def to_json(self) -> dict[str, list]:
        """Returns the model in the CLI's ``--json`` shape (tuples sorted)."""
        out: dict[str, list] = {}
        for name in self.relations():
            rows = self.store.relations[name]
            if self.semiring.tracks_provenance:
                out[name] = [
                    {
                        "tuple": json_row(tup),
                        "provenance": self.semiring.to_json(rows[tup]),
                        "exact": rows[tup].exact,
                    }
                    for tup in sorted(rows, key=tuple_key)
                ]
            else:
                out[name] = [json_row(tup) for tup in sorted(rows, key=tuple_key)]
        return out

    def write_json(self, out: TextIO, names: Sequence[str] | None = None, chunk: int = 2000) -> None:
        """Writes ``{name: to_json()[name]}`` for ``names`` (default: every relation) to ``out``,
        the same text as ``json.dump(..., indent=2, ensure_ascii=False)``, a few thousand
        rows at a time: memory follows the facts, not the output's text."""
        names = self.relations() if names is None else list(names)
        tracks = self.semiring.tracks_provenance
        if not names:
            out.write("{}")
            return
        out.write("{\n")
        for n, name in enumerate(names):
            rows = self.store.relations[name]
            out.write(f'  {_json_string(name)}: ')
            if not rows:
                out.write("[]")
            else:
                out.write("[\n")
                ordered = sorted(rows, key=tuple_key)
                for start in range(0, len(ordered), chunk):
                    part = ordered[start:start + chunk]
                    if tracks:
                        texts = [_json_block({"tuple": json_row(tup), "provenance": self.semiring.to_json(rows[tup]),
                                              "exact": rows[tup].exact}) for tup in part]
                    else:
                        texts = [_json_row(tup) for tup in part]
                    out.write(",\n".join(texts))
                    out.write(",\n" if start + chunk < len(ordered) else "\n")
                out.write("  ]")
            out.write(",\n" if n + 1 < len(names) else "\n")
        out.write("}")

    def format_fact(self, relation: str, tup: tuple) -> str:
        """Returns ``relation("a", 3)`` as the rule language writes it."""
        return f"{relation}({', '.join(format_value(v) for v in tup)})"

    def _require(self, relation: str) -> None:
        if relation not in self.store.relations:
            known = ", ".join(self.relations()) or "none"
            raise NotFound("unknown_relation", f"no relation named {relation!r}; the program has: {known}")


@dataclass
class WhatIf:
    """What a deletion does to a model: per relation, the facts alive (restricted labels) and dead."""

    deleted: frozenset[str]
    alive: dict[str, dict[tuple, Any]]
    dead: dict[str, list[tuple]]


def what_if(model: Model, deleted: Iterable[str]) -> WhatIf:
    """Restricts every label by a deletion of assertion ids, without touching the model.

    Raises PolygraphError(unknown_assertion) naming ids the program never tracked,
    with close matches, so a misspelled deletion evaluates nothing.
    """
    if not model.semiring.tracks_provenance:
        raise PolygraphError(
            "no_provenance",
            f"the {model.semiring.name} semiring tracks no assertions; use --semiring why or lineage",
        )
    deleted = frozenset(deleted)
    known = model.program.assertion_ids()
    unknown = sorted(deleted - set(known))
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=3)
            hints.append(f"{name} (did you mean {', '.join(close)}?)" if close else name)
        raise PolygraphError("unknown_assertion", f"no tracked fact is named {'; '.join(hints)}")
    alive, dead = {}, {}
    for name, rows in model.store.relations.items():
        kept, lost = {}, []
        for tup, label in rows.items():
            restricted = label.restrict(deleted)
            if restricted.is_zero():
                lost.append(tup)
            else:
                kept[tup] = restricted
        alive[name], dead[name] = kept, lost
    return WhatIf(deleted, alive, dead)


_json_string = json.encoder.encode_basestring  # ensure_ascii=False, as the CLI writes


def _json_value(value) -> str:
    if type(value) is str:
        return _json_string(value)
    if type(value) is int:
        return int.__repr__(value)
    if isinstance(value, STRUCTURED):
        return _json_string(str(value))  # a record or ADT value as Souffle writes it
    return json.dumps(value)


def json_row(tup: tuple) -> list:
    """Returns a tuple as a JSON list: a record or ADT value as the text Souffle writes for it."""
    return [str(v) if isinstance(v, STRUCTURED) else v for v in tup]


def _json_row(tup: tuple) -> str:
    """One tuple as json.dump(indent=2) writes it two levels deep."""
    if not tup:
        return "    []"
    return "    [\n" + ",\n".join("      " + _json_value(v) for v in tup) + "\n    ]"


def _json_block(value) -> str:
    """Any JSON value as json.dump(indent=2) writes it two levels deep."""
    return "    " + json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n    ")


def tuple_key(tup: tuple) -> tuple:
    """Sort key for tuples mixing integers and strings: integers first, then strings (then
    nil, records and ADT values, see ``records.sort_key``)."""
    return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, v) if isinstance(v, str) else sort_key(v)
                 for v in tup)


def evaluate(
    program: Program,
    semiring: str | Semiring = "why",
    cap: int | None = 8,
    progress: Callable[[StratumStats], None] | None = None,
    max_facts: int | None = None,
    timeout: float | None = None,
) -> Model:
    """Evaluates ``program`` to its fixpoint under a semiring and returns the Model.

    ``semiring`` is a name ("boolean", "why", "lineage") or a Semiring instance;
    ``cap`` bounds why-labels to that many support sets (None: uncapped).
    ``progress`` is called after each stratum with what it cost.
    ``max_facts`` (per relation) and ``timeout`` (seconds) stop a runaway evaluation
    with PolygraphError(limit_exceeded) naming the relation and its rule.
    Values are computed at ``program.domain_size`` (32 or 64 bits, datalog/values/domain.py).
    """
    with domain.using(program.domain_size):  # the program's width for every value computed
        return _evaluate(program, semiring, cap, progress, Budget(max_facts, timeout))


def _evaluate(program: Program, semiring, cap, progress, budget: Budget) -> Model:
    if isinstance(semiring, str):
        semiring = make_semiring(semiring, cap)
    refuse_recursive_autoinc(program)
    if semiring.tracks_provenance:
        program.check_provenance_negation()
        refuse_order_dependent(program)
        refuse_over_tracked(program.subsumptions, program.tracked)
    store = Store(program.arities)
    choice = Choice.of(program.declarations)
    _load_facts(program, semiring, store, choice)
    by_head: dict[str, list[Rule]] = defaultdict(list)
    for rule in program.rules:
        by_head[rule.head.relation].append(rule)
    model = Model(program, semiring, store)
    # every label is one when nothing is tracked: the plans then carry no labels (unit_steps.py)
    unit = semiring.name == "boolean" or not program.tracked
    for stratum in program.strata:
        rules = [rule for name in sorted(stratum) for rule in by_head.get(name, ())]
        subsumptions = [s for s in program.subsumptions if s.relation in stratum]
        if not rules and not subsumptions:
            continue
        started = time.perf_counter()
        rounds = _fixpoint(stratum, rules, store, semiring, budget, choice, subsumptions, unit)
        stats = StratumStats(
            tuple(sorted(stratum)),
            rounds,
            time.perf_counter() - started,
            sum(len(store.relations[name]) for name in stratum),
        )
        model.stats.append(stats)
        if progress is not None:
            progress(stats)
    store.forget_statistics()
    return model


def _load_facts(program: Program, semiring: Semiring, store: Store, choice: Choice | None = None) -> None:
    plus, one = semiring.plus, semiring.one()
    for relation, table in program.fact_tables().items():
        rows = store.relations[relation]
        if table.variables is None or not semiring.tracks_provenance:
            if not rows:  # no index exists yet: one bulk insert, duplicates folded (plus(1, 1) = 1)
                kept = table.rows if choice is None else [t for t in table.rows if choice.admits(relation, t)]
                rows.update(dict.fromkeys(kept, one))
                continue
            variables = [None] * len(table.rows)
        else:
            variables = table.variables
        for tup, variable in zip(table.rows, variables):
            label = semiring.variable(variable) if variable else one
            old = rows.get(tup)
            if old is None:
                store.add(relation, tup, label)
            else:
                rows[tup] = plus(old, label)


def _fixpoint(stratum: frozenset[str], rules: list[Rule], store: Store, semiring: Semiring,
              budget: Budget, choice: Choice | None = None, subsumptions=(), unit: bool = False) -> int:
    """Runs one stratum to its fixpoint; returns the number of rounds. With ``subsumptions``,
    the tuples they delete go after the facts are loaded and after every round. ``unit``:
    every label is one (nothing tracked), so a fact derived again changes nothing."""
    plus = semiring.plus
    pending: dict[str, dict[tuple, Any]] = defaultdict(dict)
    relations = store.relations
    if subsumptions:
        prune(subsumptions, store, semiring)

    def emit_sum(relation: str, tup: tuple, label: Any) -> None:
        bucket = pending[relation]
        old = bucket.get(tup)
        bucket[tup] = label if old is None else plus(old, label)

    def emit_unit(relation: str, tup: tuple, label: Any) -> None:
        if tup not in relations[relation]:  # already known: its label is one already
            pending[relation][tup] = label

    emit = emit_unit if unit else emit_sum
    for rule in rules:
        Plan(rule, store, semiring, emit, unit=unit).evaluate()
    delta = merge_round(pending, store, plus, budget, rules, choice)
    if subsumptions:
        delta = prune(subsumptions, store, semiring, delta)

    def plan_variants():
        return [
            (Plan(rule, store, semiring, emit, delta_atom=j, unit=unit), atom.relation)
            for rule in rules
            for j, atom in enumerate(lit for lit in rule.body if isinstance(lit, Atom))
            if atom.relation in stratum
        ]

    # the plans order their joins by the sizes of the relations when they are made; the
    # stratum's own relations grow, so the plans are made again whenever one of them has
    # grown fourfold (a logarithmic number of times)
    sizes = {name: len(store.relations[name]) for name in stratum}
    variants = plan_variants()
    rounds = 1
    while delta:
        if any(len(store.relations[name]) > 4 * size + 1000 for name, size in sizes.items()):
            sizes = {name: len(store.relations[name]) for name in stratum}
            variants = plan_variants()
        pending = defaultdict(dict)
        indexes: dict[str, dict] = defaultdict(dict)  # this round's delta, indexed per relation
        for plan, relation in variants:
            changed = delta.get(relation)
            if changed:
                budget.check_time(plan.rule.head.relation, rules)
                plan.evaluate(changed, indexes[relation])
        delta = merge_round(pending, store, plus, budget, rules, choice)
        if subsumptions:
            delta = prune(subsumptions, store, semiring, delta)
        rounds += 1
    return rounds


def merge_round(pending, store: Store, plus, budget: Budget | None = None,
                rules: list[Rule] = (), choice: Choice | None = None) -> dict[str, dict[tuple, Any]]:
    """Adds a round's derivations to the store (``plus`` of a fact's old label and its new
    one); returns the facts whose label changed.  With a ``budget``, checks each relation's
    size; with a ``choice``, drops a new tuple whose choice-domain key is taken."""
    delta = {}
    for relation, bucket in pending.items():
        rows = store.relations[relation]
        changed = {}
        for tup, label in bucket.items():
            old = rows.get(tup)
            if old is None:
                if choice is not None and not choice.admits(relation, tup):
                    continue
                store.add(relation, tup, label)
                changed[tup] = label
            else:
                merged = plus(old, label)
                if merged != old:
                    rows[tup] = merged
                    changed[tup] = merged
        if changed:
            delta[relation] = changed
        if budget is not None:
            budget.check_size(relation, len(rows), rules)
    return delta


__all__ = ["Model", "StratumStats", "WhatIf", "evaluate", "tuple_key", "what_if"]
