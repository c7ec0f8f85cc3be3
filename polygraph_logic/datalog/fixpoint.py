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
from polygraph_logic.datalog.joins.join_steps import key_of
from polygraph_logic.datalog.syntax import Atom, Constant, Rule
from polygraph_logic.provenance import Semiring


def fixpoint(stratum: frozenset[str], rules: list[Rule], store: Store, semiring: Semiring,
              budget: Budget, choice: Choice | None = None, subsumptions=(), unit: bool = False,
              guards: frozenset[str] = frozenset()) -> int:
    """Runs one stratum to its fixpoint; returns the number of rounds. With ``subsumptions``,
    the tuples they delete go after the facts are loaded and after every round. ``unit``:
    every label is one (nothing tracked), so a fact derived again changes nothing. ``guards``:
    relations whose facts have label one whatever their rules read (the magic-set rewriting's)."""
    plus, one = semiring.plus, semiring.one()
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

    def emit_guard(relation: str, tup: tuple, label: Any) -> None:
        if tup not in relations[relation]:
            pending[relation][tup] = one

    emit = emit_unit if unit else emit_sum
    guard = (guards, emit_guard) if guards and not unit else None
    first_pass(rules, store, semiring, emit, unit, guard)
    delta = merge_round(pending, store, plus, budget, rules, choice)
    if subsumptions:
        delta = prune(subsumptions, store, semiring, delta)
    plans = DeltaPlans(stratum, rules, store, semiring, emit, unit, guard)
    rounds = 1
    if unit and choice is None and not subsumptions:
        # every tuple emitted is new (emit_unit asks the store, which a round leaves as it is):
        # a round's derivations are its delta as they are, added at once
        max_facts = budget.max_facts
        while delta:
            pending = defaultdict(dict)
            plans.run(delta, budget)
            delta = pending
            for relation, bucket in pending.items():
                store.add_all(relation, bucket)
                if max_facts is not None and len(relations[relation]) > max_facts:
                    budget.check_size(relation, len(relations[relation]), rules)
            rounds += 1
        return rounds
    while delta:
        pending = defaultdict(dict)
        plans.run(delta, budget)
        delta = merge_round(pending, store, plus, budget, rules, choice)
        if subsumptions:
            delta = prune(subsumptions, store, semiring, delta)
        rounds += 1
    return rounds


def first_pass(rules: list[Rule], store: Store, semiring, emit, unit: bool = False, guard=None) -> None:
    """Runs every rule once over the facts known; a rule with a body atom over an empty
    relation derives nothing then, and its plan is not made (a program of a thousand rules,
    most of which have nothing to join, costs the rules that do). ``guard``: ``(relations,
    emit)``, the guard relations, whose rules run with unit labels and emit through that ``emit``."""
    relations = store.relations
    for rule in rules:
        if any(isinstance(lit, Atom) and not relations[lit.relation] for lit in rule.body):
            continue
        make_plan(rule, store, semiring, emit, unit, guard).evaluate()


def make_plan(rule: Rule, store: Store, semiring, emit, unit: bool, guard, delta_atom: int | None = None) -> Plan:
    """The plan of ``rule``; a guard relation's rule carries no labels and emits through the guard's emit."""
    if guard is not None and rule.head.relation in guard[0]:
        return Plan(rule, store, semiring, guard[1], delta_atom=delta_atom, unit=True)
    return Plan(rule, store, semiring, emit, delta_atom=delta_atom, unit=unit)


class DeltaPlans:
    """The plans of a stratum's rounds, one per rule and body atom over the stratum (its delta
    drives the plan), each made the first time its relation has a delta and none of the
    rule's other atoms is over an empty relation.

    A plan orders its joins by the sizes of the relations when it is made; the stratum's own
    relations grow, so the plans are made again whenever one of them has grown fourfold (a
    logarithmic number of times)."""

    def __init__(self, stratum: frozenset[str], rules: list[Rule], store: Store, semiring, emit, unit: bool = False,
                 guard=None):
        self.stratum, self.rules, self.store = stratum, rules, store
        self.make = lambda rule, j: make_plan(rule, store, semiring, emit, unit, guard, j)
        self.variants = []  # (rule, j, the driving relation, the relations of its other atoms)
        for rule in rules:
            atoms = [lit for lit in rule.body if isinstance(lit, Atom)]
            names = [atom.relation for atom in atoms]
            self.variants += [(rule, j, atom.relation, tuple(set(names[:j] + names[j + 1:])), _constants(atom))
                              for j, atom in enumerate(atoms) if atom.relation in stratum]
        self.of_relation: dict[str, list[int]] = {}  # relation -> the variants it drives, in order
        for k, variant in enumerate(self.variants):
            self.of_relation.setdefault(variant[2], []).append(k)
        self._reset()

    def _reset(self) -> None:
        self.limits = {name: 4 * len(self.store.relations[name]) + 1000 for name in self.stratum}
        self.plans: list[Plan | None] = [None] * len(self.variants)
        self.joinable = [False] * len(self.variants)  # the other atoms' relations are none empty
        self.generation = self.store.generation

    def run(self, delta: dict[str, dict], budget: Budget) -> None:
        """Runs, in the rules' order, every plan whose driving relation has a delta.

        A round of a long recursion may derive one fact: what a round costs besides its
        joins is kept small (only the relations with a delta can have grown; a relation
        once not empty stays so while nothing is removed, ``Store.generation``)."""
        store = self.store
        relations, limits = store.relations, self.limits
        for name in delta:
            if len(relations[name]) > limits[name]:
                self._reset()
                break
        if store.generation != self.generation:
            self.joinable = [False] * len(self.variants)
            self.generation = store.generation
        indexes: dict[str, dict] = {}  # this round's delta, indexed per relation
        plans, joinable, variants, timeout = self.plans, self.joinable, self.variants, budget.timeout
        of_relation = self.of_relation
        if len(delta) == 1:
            chosen = of_relation.get(next(iter(delta)), ())
        else:
            chosen = sorted(k for name in delta for k in of_relation.get(name, ()))
        for k in chosen:
            plan = plans[k]
            if plan is not None and joinable[k] and timeout is None and plan.over_delta is not None:
                plan.over_delta(delta[variants[k][2]])  # no delta index to share: its driver has no constant
                continue
            rule, j, relation, others, (positions, values) = variants[k]
            changed = delta[relation]
            if plan is not None and joinable[k] and timeout is None:
                plan.evaluate(changed, indexes.setdefault(relation, {}))
                continue
            if not changed:
                continue
            if not joinable[k]:
                if not all(relations[other] for other in others):  # an empty one: nothing joins
                    continue
                joinable[k] = True
            plan = plans[k]
            if plan is None and positions:  # made only if some delta fact has the driver's constants
                by_key = indexes.setdefault(relation, {}).get(positions)
                if by_key is None:
                    key = key_of(positions)
                    by_key = indexes[relation][positions] = {}
                    for tup in changed:
                        by_key.setdefault(key(tup), []).append(tup)
                if values not in by_key:
                    continue
            if plan is None:
                plan = plans[k] = self.make(rule, j)
            if timeout is not None:
                budget.check_time(rule.head.relation, self.rules)
            plan.evaluate(changed, indexes.setdefault(relation, {}))


def _constants(atom: Atom) -> tuple[tuple[int, ...], tuple]:
    """The positions of an atom's constant arguments and their values (a delta plan looks its
    delta up by them: join_plan.Plan.driver_key)."""
    pairs = [(pos, arg.value) for pos, arg in enumerate(atom.args) if isinstance(arg, Constant)]
    return tuple(p for p, _ in pairs), tuple(v for _, v in pairs)


def merge_round(pending, store: Store, plus, budget: Budget | None = None,
                rules: list[Rule] = (), choice: Choice | None = None) -> dict[str, dict[tuple, Any]]:
    """Adds a round's derivations to the store (``plus`` of a fact's old label and its new
    one); returns the facts whose label changed.  With a ``budget``, checks each relation's
    size; with a ``choice``, drops a new tuple whose choice-domain key is taken."""
    delta = {}
    max_facts = budget.max_facts if budget is not None else None
    for relation, bucket in pending.items():
        rows = store.relations[relation]
        if choice is None and type(rows) is dict and rows.keys().isdisjoint(bucket):
            store.add_all(relation, bucket)  # every tuple new (always so for unit labels): at once
            delta[relation] = bucket
            if max_facts is not None and len(rows) > max_facts:
                budget.check_size(relation, len(rows), rules)
            continue
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


__all__ = ["DeltaPlans", "first_pass", "fixpoint", "make_plan", "merge_round"]
