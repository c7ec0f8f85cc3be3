"""Symbolic re-derivation: settles dead verdicts that a capped label cannot settle.

A capped label keeps only its smallest support sets, so "no kept set survives" may
be wrong: a dropped set might have.  Re-derivation asks the rules instead, and only
about the facts in question: starting from every fact whose label still survives
(certainly alive), it revives an uncertain fact when some rule derives it in one
step from live facts, and repeats until nothing changes.  That is the least
fixpoint of the rules restricted to the uncertain facts, so the cost follows what
the deletion touched, not the size of the closure.

Facts are read from the graph file as the proofs need them (graph/fact_store.py),
and the rules come from the file as syntax trees; a rule is loaded and planned the
first time a proof needs its head (by relation and head constants).
"""

from __future__ import annotations

from typing import Any, Callable

from polygraph_logic.datalog.join_plan import Plan
from polygraph_logic.datalog.syntax import Aggregate, Arithmetic, Atom, Comparison, Constraint, Negation
from polygraph_logic.graph.store.fact_store import FactStore, ScopedFacts
from polygraph_logic.graph.store.graph_file import Graph

FactKey = tuple[str, tuple]


def as_graph(source) -> Graph:
    """Returns the Graph behind a Graph, a GraphIndex or a Session."""
    if isinstance(source, Graph):
        return source
    for attribute in ("graph", "index"):
        inner = getattr(source, attribute, None)
        if inner is not None:
            return as_graph(inner)
    raise TypeError(f"no graph in {type(source).__name__}")


class _Found(Exception):
    """Stops a proof search at its first derivation."""


class _Liveness:
    """Labels are live flags: a derivation is live when all its facts are."""

    name = "liveness"

    def one(self):
        return True

    def times(self, a, b):
        return a and b


class GoalPlans:
    """The graph's rules compiled as goal-directed plans over its stored facts.

    Only the rules whose head can produce a goal are loaded and planned, each once.
    """

    def __init__(self, graph: Graph, value: Callable[[str, tuple], Any], semiring, emit,
                 scoped: ScopedFacts | None = None):
        self.graph = graph
        self.store = FactStore(graph, value)
        self.scoped = scoped  # where rules that read positive premises only look facts up
        self.semiring, self.emit = semiring, emit
        self._plans: dict[int, tuple] = {}  # rule number -> (plan, text)

    def for_goal(self, relation: str, args: tuple) -> list:
        """Returns ``[(plan, rule text)]`` for the rules that may derive ``relation(args)``."""
        numbers = self.graph.rules_for(relation, args)
        missing = [n for n in numbers if n not in self._plans]
        if missing:
            for number, rule in self.graph.rules_numbered(missing).items():
                store = self.scoped if self.scoped is not None and positive(rule) else self.store
                self._plans[number] = (Plan(rule, store, self.semiring, self.emit, goal=True), str(rule))
        return [self._plans[n] for n in numbers]


def positive(rule) -> bool:
    """True when a rule's body reads facts only through positive atoms (no negation, no aggregate):
    its derivations then use only facts its premises' support makes available."""
    def plain(term) -> bool:
        if isinstance(term, Aggregate):
            return False
        if isinstance(term, Arithmetic):
            return plain(term.left) and plain(term.right)
        return all(plain(t) for t in getattr(term, "args", ()))

    for literal in rule.body:
        if isinstance(literal, Negation):
            return False
        if isinstance(literal, Comparison) and not (plain(literal.left) and plain(literal.right)):
            return False
        if isinstance(literal, (Atom, Constraint)) and not all(plain(t) for t in literal.args):
            return False
    return True


def stated_by(graph: Graph, fact: FactKey, among: dict | None = None) -> dict[int, str]:
    """Returns {number: id} of the assertions that state a fact (claims, negated triples and
    assertion facts): the graph's, or with ``among`` ({number: Assertion}) those of them."""
    relation, args = fact
    if relation in ("claim", "neg_edge") and len(args) == 3:
        negated = relation == "neg_edge"
        if among is None:
            return graph.stating(args, negated=negated)
        return {n: a.id for n, a in among.items() if (a.subject, a.predicate, a.object) == args
                and a.negated == negated}
    if relation == "assertion" and len(args) == 1:
        if among is None:
            return graph.numbers("id", [args[0]])
        return {n: a.id for n, a in among.items() if a.id == args[0]}
    return {}


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
