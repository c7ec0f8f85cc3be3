"""Stratified evaluation of a program to its model, under a semiring or as a provenance circuit.

Under "why", a program whose tracked relations the circuit can record is evaluated as a
circuit (circuit_eval.py): the Boolean closure, one gate per derivation, labels read off on
demand. Otherwise each stratum runs a semi-naive fixpoint over labels (fixpoint.py).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable

from polygraph_logic.datalog.budget import Budget
from polygraph_logic.datalog.choice import Choice, refuse_order_dependent, refuse_recursive_autoinc
from polygraph_logic.datalog.circuit_eval import Bodies, CircuitModel, circuit_fixpoint, load_facts
from polygraph_logic.datalog.fixpoint import fixpoint, merge_round
from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.datalog.joins.subsumption import refuse_over_tracked
from polygraph_logic.datalog.model import Model, StratumStats, WhatIf, json_row, tuple_key, what_if
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.syntax import Rule
from polygraph_logic.datalog.values import domain
from polygraph_logic.provenance import Semiring, WhySemiring, make_semiring
from polygraph_logic.provenance.gates import Circuit


def evaluate(
    program: Program,
    semiring: str | Semiring = "why",
    cap: int | None = 8,
    progress: Callable[[StratumStats], None] | None = None,
    max_facts: int | None = None,
    timeout: float | None = None,
    circuit: bool | None = None,
    gate_rules: bool = False,
) -> Model:
    """Evaluates ``program`` to its fixpoint under a semiring and returns the Model.

    ``semiring`` is a name ("boolean", "why", "lineage") or a Semiring instance;
    ``cap`` bounds why-labels to that many support sets (None: uncapped).
    ``progress`` is called after each stratum with what it cost.
    ``max_facts`` (per relation) and ``timeout`` (seconds) stop a runaway evaluation
    with PolygraphError(limit_exceeded) naming the relation and its rule.
    Values are computed at ``program.domain_size`` (32 or 64 bits, datalog/values/domain.py).
    ``circuit`` (default: under "why"): evaluate the Boolean closure and record one gate per
    derivation (circuit_eval.py), the cap then only bounding the labels shown; False: a
    semi-naive fixpoint over capped labels.  ``gate_rules``: each gate of the circuit also records
    the number of the rule it instantiates (``circuit.rules``; a graph's stored circuit names them).
    """
    with domain.using(program.domain_size):  # the program's width for every value computed
        return _evaluate(program, semiring, cap, progress, Budget(max_facts, timeout), circuit, gate_rules)


def _evaluate(program: Program, semiring, cap, progress, budget: Budget, circuit: bool | None = None,
              gate_rules: bool = False) -> Model:
    if isinstance(semiring, str):
        semiring = make_semiring(semiring, cap)
    if circuit is None:
        circuit = isinstance(semiring, WhySemiring)
    if circuit and not isinstance(semiring, WhySemiring):
        raise ValueError(f"a circuit records why-provenance; the {semiring.name} semiring is evaluated by labels")
    refuse_recursive_autoinc(program)
    if semiring.tracks_provenance:
        program.check_provenance_negation()
        refuse_order_dependent(program)
        refuse_over_tracked(program.subsumptions, program.tracked)
    store = Store(program.arities)
    choice = Choice.of(program.declarations)
    if circuit:
        gates = Circuit(semiring.table)
        load_facts(program, store, gates, choice)
        model = CircuitModel(program, semiring, store, gates)
        semiring = Bodies()  # what the plans multiply: bodies of derivations (untracked facts: unit plans)
    else:
        _load_facts(program, semiring, store, choice)
        model = Model(program, semiring, store)
    by_head: dict[str, list[Rule]] = defaultdict(list)
    for rule in program.rules:
        by_head[rule.head.relation].append(rule)
    # every label is one when nothing is tracked: the plans then carry no labels (unit_steps.py)
    unit = semiring.name == "boolean" or not program.tracked
    numbers = {id(rule): n for n, rule in enumerate(program.rules, 1)} if circuit and gate_rules else None
    for stratum in program.strata:
        rules = [rule for name in sorted(stratum) for rule in by_head.get(name, ())]
        subsumptions = [s for s in program.subsumptions if s.relation in stratum]
        if not rules and not subsumptions:
            continue
        started = time.perf_counter()
        store.deriving = stratum  # not sorted for range steps while it grows (Store.sorted_index)
        if circuit and stratum & program.tracked:
            rounds = circuit_fixpoint(stratum, rules, store, gates, budget, numbers, program.guards)
        else:
            rounds = fixpoint(stratum, rules, store, semiring, budget, choice, subsumptions, unit or circuit,
                              program.guards)
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
    store.deriving = frozenset()
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


__all__ = ["CircuitModel", "Model", "StratumStats", "WhatIf", "evaluate", "json_row", "merge_round", "tuple_key",
           "what_if"]
