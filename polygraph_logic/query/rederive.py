"""Symbolic re-derivation: settles dead verdicts that a capped label cannot settle.

A capped label keeps only its smallest support sets, so "no kept set survives" may
be wrong: a dropped set might have.  Re-derivation asks the rules instead, and only
about the facts in question: starting from every fact whose label still survives
(certainly alive), it revives an uncertain fact when some rule derives it in one
step from live facts, and repeats until nothing changes.  That is the least
fixpoint of the rules restricted to the uncertain facts, so the cost follows what
the deletion touched, not the size of the closure.

Facts are read from the graph file as the proofs need them (graph/store/fact_store.py),
and the rules come from the file as syntax trees; a rule is loaded and planned the
first time a proof needs its head (by relation and head constants).
"""

from __future__ import annotations

from polygraph_logic.graph.goal_plans import FactKey, GoalPlans, as_graph, stated_by  # noqa: F401  (re-exported)


class _Found(Exception):
    """Stops a proof search at its first derivation."""


class _Liveness:
    """Labels are live flags: a derivation is live when all its facts are."""

    name = "liveness"

    def one(self):
        return True

    def times(self, a, b):
        return a and b


class Rederiver:
    """Holds the graph's rules, planned once each, for repeated re-derivations."""

    def __init__(self, graph):
        self.graph = as_graph(graph)
        self._dead: set[FactKey] = set()
        self._live: set[FactKey] = set()
        self.plans = GoalPlans(self.graph, self._value, _Liveness(), self._emit)
        self._target: tuple | None = None

    def _value(self, relation: str, args: tuple) -> bool:
        key = (relation, args)
        return key in self._live or key not in self._dead

    def _emit(self, relation: str, tup: tuple, live: bool) -> None:
        if live and tup == self._target:
            raise _Found

    def derivable(self, fact: FactKey, deleted: frozenset[int] = frozenset()) -> bool:
        """Returns True when a surviving assertion states the fact, or some rule derives it
        in one step from live facts."""
        if set(stated_by(self.graph, fact)) - deleted:
            return True
        relation, args = fact
        self._target = args
        try:
            for plan, _ in self.plans.for_goal(relation, args):
                plan.prove(args)
        except _Found:
            return True
        finally:
            self._target = None
        return False

    def revive(self, uncertain: set[FactKey], dead: set[FactKey], deleted: frozenset[int]) -> set[FactKey]:
        """Returns the uncertain facts that the rules still derive once ``dead`` facts are gone.

        ``dead`` are the facts whose labels lost every support set (``uncertain`` among
        them) and ``deleted`` the deleted assertion numbers; calls are independent.
        """
        self._dead, self._live = set(dead), set()
        try:
            pending = set(uncertain)
            changed = True
            while changed and pending:
                changed = False
                for fact in sorted(pending, key=repr):
                    if self.derivable(fact, deleted):
                        self._live.add(fact)
                        pending.discard(fact)
                        changed = True
            return set(self._live)
        finally:
            self._dead, self._live = set(), set()
