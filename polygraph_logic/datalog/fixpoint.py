"""One stratum's semi-naive fixpoint, generic over the semiring, and the merge of a round.

Each fact's label accumulates (``plus``) the product (``times``) of the labels
along every derivation until nothing changes.  A fact re-enters the delta with
its whole new label whenever the label grows; that recomputes some products
twice, which is harmless because every shipped semiring has an idempotent plus.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from polygraph_logic.datalog.budget import Budget
from polygraph_logic.datalog.choice import Choice
from polygraph_logic.datalog.joins.join_plan import Plan, Store
from polygraph_logic.datalog.joins.subsumption import prune
from polygraph_logic.datalog.syntax import Atom, Rule
from polygraph_logic.provenance import Semiring


def fixpoint(stratum: frozenset[str], rules: list[Rule], store: Store, semiring: Semiring,
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


__all__ = ["fixpoint", "merge_round"]
