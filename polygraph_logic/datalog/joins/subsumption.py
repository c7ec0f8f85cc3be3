"""Souffle's subsumption: ``r(x1) <= r(x2) :- body.`` deletes a tuple of ``r`` that another one dominates.

A subsumptive rule names a dominated and a dominating tuple of one relation and a body
over both; as Souffle translates it, it reads as the deletion rule
``r(x1) :- r(x1), r(x2), body`` with ``x1`` and ``x2`` different tuples. After the facts of
the relation's stratum are loaded and after every round of its fixpoint, the tuples the
deletion rules find are removed (``prune``), so a dominated tuple derives nothing further
and the relation ends with the tuples no other one dominates: Souffle's rejection of
dominated new tuples and deletion of dominated old ones, a round at a time. For an order
(``d2 <= d1`` on a cost) that is the best tuple per key, whatever order evaluation takes.

Deleting is not monotone: under the why and lineage semirings a subsumptive relation fed by
tracked facts is refused (``subsumption_over_tracked``); over background facts its tuples
have provenance 1.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from polygraph_logic.datalog.joins.join_plan import Plan, Store
from polygraph_logic.datalog.reading.souffle_syntax import Subsumption
from polygraph_logic.datalog.syntax import Atom, Rule
from polygraph_logic.errors import ProgramError


def refuse_over_tracked(subsumptions: list[Subsumption], tracked: frozenset[str]) -> None:
    """Raises ProgramError for a subsumption of a relation fed by tracked facts (under why or lineage)."""
    for item in subsumptions:
        if item.relation in tracked:
            raise ProgramError("subsumption_over_tracked", f"the subsumption of {item.relation} deletes tuples that "
                               "depend on tracked (provenance-annotated) facts; deleting is not monotone, so the "
                               "survivors have no why- or lineage-provenance. Evaluate with --semiring boolean, or "
                               "keep every tuple and select the best with an aggregate or a negation",
                               item.position)


def prune(subsumptions: list[Subsumption], store: Store, semiring,
          delta: dict[str, dict[tuple, Any]] | None = None) -> dict[str, dict[tuple, Any]] | None:
    """Removes from the store (and from ``delta``) every tuple another tuple dominates; returns ``delta``."""
    doomed: dict[str, set[tuple]] = defaultdict(set)
    for item in subsumptions:
        width = item.dominated.arity
        pair = Atom(item.relation, item.dominated.args + item.dominating.args, item.position)

        def emit(relation, tup, label, width=width):
            if tup[:width] != tup[width:]:  # a tuple does not dominate itself
                doomed[relation].add(tup[:width])

        Plan(Rule(pair, (item.dominated, item.dominating, *item.body), item.position), store, semiring,
             emit).evaluate()
    for relation, tuples in doomed.items():
        store.remove(relation, tuples)
        if delta is not None and relation in delta:
            kept = {t: label for t, label in delta[relation].items() if t not in tuples}
            if kept:
                delta[relation] = kept
            else:
                del delta[relation]
    return delta
