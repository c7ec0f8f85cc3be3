"""Every minimal support set of a fact whose label the cap truncated, expanded from the graph's circuit.

A capped label shows at most ``cap`` support sets; the circuit (graph/circuit_build.py) keeps
every derivation of such a fact, so its full label (the uncapped why-provenance) is the least
fixpoint of those derivations, expanded on demand (provenance/circuit.expand) over the facts
its circuit reaches: facts with an exact label contribute their stored support sets, facts
with a capped one their derivations and the assertions stating them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from polygraph_logic.graph.goal_plans import FactKey, stated_by
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import fact_key
from polygraph_logic.provenance.circuit import Expansion, expand_many

#: the most support sets an expansion keeps per fact (beyond: the smallest, marked incomplete)
BUDGET = 10_000


class FactRows:
    """Stored facts by number (label, exactness, relation and arguments), read in batches (one
    instance may serve many expansions: ``ask`` reads every answer's row at once)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.rows: dict[int, tuple] = {}

    def load(self, numbers) -> None:
        missing = sorted(set(numbers) - set(self.rows))
        if missing:
            for num, relation, args, label, exact in self.graph.facts_numbered(missing):
                self.rows[num] = (relation, args, label, exact)

    def label(self, num: int):
        """The fact's support sets when its label is exact, else None (an absent fact: no set)."""
        self.load([num])
        row = self.rows.get(num)
        if row is None:
            return []
        return [frozenset(group) for group in self.graph.decode(row[2])] if row[3] else None

    def key(self, num: int) -> FactKey:
        relation, args = self.rows[num][:2]
        return relation, args


def expanded(graph: Graph, fact: FactKey, budget: int = BUDGET) -> Expansion | None:
    """The minimal support sets of ``fact`` (assertion numbers), expanded from the circuit; None when
    the graph has no circuit or does not hold the fact."""
    if not graph.has_circuit():
        return None
    relation, args = fact
    found = graph.fact_numbers(relation, [fact_key(args)])
    if not found:
        return None
    return expand_node(graph, next(iter(found.values()))[0], budget=budget)


def expand_node(graph: Graph, root: int, lazy: Mapping[int, Collection[frozenset]] | None = None,
                budget: int = BUDGET, facts: FactRows | None = None) -> Expansion:
    """The minimal support sets of the stored fact or lazy node ``root`` (``expand_nodes`` of one)."""
    return expand_nodes(graph, [root], lazy, budget, facts)[root]


def expand_nodes(graph: Graph, roots: Collection[int], lazy: Mapping[int, Collection[frozenset]] | None = None,
                 budget: int = BUDGET, facts: FactRows | None = None) -> dict[int, Expansion]:
    """``{root: its minimal support sets}`` of stored facts or lazy nodes, their circuits read
    together (one look-up of derivations a level of the cone, whatever the number of roots):
    ``lazy`` holds the derivation bodies of lazy facts (negative numbers; datalog/lazy/on_demand.py).
    A capped stored fact of a graph without a circuit counts with its capped sets, and an
    expansion reaching it says it is incomplete.  ``facts``: the stored rows read so far."""
    facts = facts if facts is not None else FactRows(graph)
    lazy = lazy or {}
    circuit_held = graph.has_circuit()

    def label(num: int):
        if num < 0:
            return None
        found = facts.label(num)
        if found is None and not circuit_held:
            return Expansion([frozenset(group) for group in graph.decode(facts.rows[num][2])], False)
        return found

    def circuit(asked):
        stored = [num for num in asked if num > 0]
        from polygraph_logic.graph.circuit_build import completed  # noqa: PLC0415  (the rules' reader loads the parser: only when a marked circuit is read)
        derivations = completed(graph, stored) if stored else {}
        facts.load([*stored, *(b for found in derivations.values() for _, body in found for b in body if b > 0)])
        gates = {num: ([frozenset((n,)) for n in stated_by(graph, facts.key(num))],
                       [body for _, body in derivations.get(num, ())]) for num in stored}
        gates.update((num, ((), [tuple(sorted(body)) for body in lazy.get(num, ())])) for num in asked if num < 0)
        return gates

    facts.load(num for num in roots if num > 0)
    return expand_many(roots, label, circuit, budget)


__all__ = ["BUDGET", "FactRows", "expand_node", "expand_nodes", "expanded"]
