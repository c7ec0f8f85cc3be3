"""Symbolic re-derivation: settles dead verdicts that a capped label cannot settle.

A capped label keeps only its smallest support sets, so "no kept set survives" may
be wrong: a dropped set might have.  Re-derivation asks the rules instead, and only
about the facts in question: starting from every fact whose label still survives
(certainly alive), it revives an uncertain fact when some rule derives it in one
step from live facts, and repeats until nothing changes.  That is the least
fixpoint of the rules restricted to the uncertain facts, so the cost follows what
the deletion touched, not the size of the closure.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

from .graph.index import FactKey, GraphIndex
from .plan import Plan, Store
from .program import parse_program


class _Found(Exception):
    """Stops a proof search at its first derivation."""


class _Liveness:
    """Labels are live flags: a derivation is live when all its facts are."""

    name = "liveness"

    def one(self):
        return True

    def times(self, a, b):
        return a and b


def goal_plans(index: GraphIndex, value: Callable[[FactKey], Any], semiring, emit):
    """Returns every fact of the graph in a Store (valued by ``value``) and the graph's rules
    compiled as goal-directed plans (see Plan.prove), as ``{head relation: [(plan, rule text)]}``."""
    program = parse_program(index.graph.rules_text(), f"{index.graph.path} (rules)")
    arities = dict(program.arities)
    for relation, args in index.labels:
        arities.setdefault(relation, len(args))
    store = Store(arities)
    for key in index.labels:
        store.relations[key[0]][key[1]] = value(key)
    plans: dict[str, list[tuple[Plan, str]]] = defaultdict(list)
    for rule in program.rules:
        plans[rule.head.relation].append((Plan(rule, store, semiring, emit, goal=True), str(rule)))
    return store, plans


def stated_facts(index: GraphIndex) -> dict[FactKey, list[str]]:
    """Returns the facts that assertions state (not derived by rules), with the stating ids."""
    stated: dict[FactKey, list[str]] = {("claim", triple): ids for triple, ids in index.stating.items()}
    stated.update((("assertion", (a,)), [a]) for a in index.assertion_ids)
    return stated


class Rederiver:
    """Holds the graph's facts and rules, compiled once, for repeated re-derivations."""

    def __init__(self, index: GraphIndex):
        self.index = index
        self.store, self.plans = goal_plans(index, lambda key: True, _Liveness(), self._emit)
        # stated facts are alive while a stating assertion survives
        self.stated = {fact: index.mask(ids) for fact, ids in stated_facts(index).items()}
        self._target: tuple | None = None

    def _emit(self, relation: str, tup: tuple, live: bool) -> None:
        if live and tup == self._target:
            raise _Found

    def derivable(self, fact: FactKey, deleted_mask: int = 0) -> bool:
        """Returns True when a surviving assertion states the fact, or some rule derives it
        in one step from live facts."""
        if self.stated.get(fact, 0) & ~deleted_mask:
            return True
        relation, args = fact
        self._target = args
        try:
            for plan, _ in self.plans.get(relation, ()):
                plan.prove(args)
        except _Found:
            return True
        finally:
            self._target = None
        return False

    def revive(self, uncertain: set[FactKey], dead: set[FactKey], deleted_mask: int) -> set[FactKey]:
        """Returns the uncertain facts that the rules still derive once ``dead`` facts are gone.

        ``dead`` are the facts whose labels lost every support set (``uncertain`` among
        them); the store is restored afterwards, so calls are independent.
        """
        rows = self.store.relations
        for relation, args in dead:
            rows[relation][args] = False
        revived: set[FactKey] = set()
        try:
            pending = set(uncertain)
            changed = True
            while changed and pending:
                changed = False
                for fact in sorted(pending, key=repr):
                    if self.derivable(fact, deleted_mask):
                        rows[fact[0]][fact[1]] = True
                        revived.add(fact)
                        pending.discard(fact)
                        changed = True
        finally:
            for relation, args in dead:
                rows[relation][args] = True
        return revived
