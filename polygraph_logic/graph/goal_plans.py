"""Goal-directed plans over a stored graph: the rules that may derive one fact, run with its
head bound (datalog/joins/join_plan.Plan.prove), over the facts the graph holds (store/fact_store.py).

Re-derivation (query/rederive.py), explanations (query/explain.py) and the circuit of a graph's
capped labels (graph/circuit_build.py) all ask the rules this way: a rule is loaded and
planned the first time a goal needs its head (by relation and head constants).
"""

from __future__ import annotations

from typing import Any, Callable

from polygraph_logic.datalog.joins.join_plan import Plan
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
        return [planned for _, planned in self.numbered(relation, args)]

    def numbered(self, relation: str, args: tuple) -> list:
        """Returns ``[(rule number, (plan, rule text))]`` for the rules that may derive ``relation(args)``."""
        numbers = self.graph.rules_for(relation, args)
        missing = [n for n in numbers if n not in self._plans]
        if missing:
            for number, rule in self.graph.rules_numbered(missing).items():
                store = self.scoped if self.scoped is not None and positive(rule) else self.store
                self._plans[number] = (Plan(rule, store, self.semiring, self.emit, goal=True), str(rule))
        return [(n, self._plans[n]) for n in numbers]


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
