"""The capped facts a deletion kills by their labels that the graph's circuit still derives, found in
bounded memory (for rests_on.py; whatif_verdicts._settled asks the same of a what-if's touched rows).

A capped label keeps only its smallest support sets, so when the deletion hits every one the fact is
*open*: it holds if an assertion of it survives or a stored derivation's body facts all hold
(provenance/circuit.py: the least fixpoint).  Here the derivations are read a chunk of open facts at
a time, and only those that can still fire are kept: a derivation with a body fact that is dead
(an exact label the deletion kills, or a fact the version lacks) never fires, one whose body
facts all hold fires at once, and the rest wait on their open body facts.  What is held is the
open facts and the waiting derivations, not the whole circuit they reach.
"""

from __future__ import annotations

import itertools
import json
from array import array
from collections.abc import Callable

from polygraph_logic.graph.goal_plans import stated_by
from polygraph_logic.query.rederive import Rederiver
from polygraph_logic.graph.store.circuit_rows import UNSTORED_RULE
from polygraph_logic.graph.store.settling import (Deleted, drop_settling, held_in_store, killed_facts, open_rows,
                                                  open_stated, unstored_open)

#: open facts whose derivations are read in one query
FACTS_AT_ONCE = 10_000
#: the relations whose facts an assertion states outright (goal_plans.stated_by)
STATED = ("claim", "neg_edge", "assertion")


def revived_facts(graph, killed: Callable[[bytes | str], bool], survives: Callable[[int], bool],
                  touched: list[int] | None = None) -> set[int]:
    """Returns the numbers of the capped facts that ``killed`` (a stored label: does the deletion hit
    every support set?) calls dead and that still hold by the circuit.  ``survives(n)``: assertion
    number ``n`` is not deleted; ``touched``: the deleted assertion numbers, when few (the capped
    facts are then found by the mentions index; None: every capped fact is read)."""
    open_facts, holding = set(), []
    for num, relation, args, blob in graph.capped_facts(touched):
        if killed(blob):
            open_facts.add(num)
            if relation in STATED and any(map(survives, stated_by(graph, (relation, graph.args(args))))):
                holding.append(num)  # a surviving assertion states it
    heads, missing = array("q"), array("q")  # per waiting derivation: its head, its open body facts not holding
    blocked_by, blocking = array("q"), array("q")  # (open body fact, waiting derivation) pairs
    ordered = sorted(open_facts)
    for start in range(0, len(ordered), FACTS_AT_ONCE):
        chunk = ordered[start:start + FACTS_AT_ONCE]
        unstored = graph.unstored(chunk)  # their derivations found again from the rules
        if unstored:
            from polygraph_logic.graph.circuit_build import found_again  # noqa: PLC0415  (the rules' reader loads the parser: only when a marked circuit is read)
        found = [(fact, json.loads(body)) for fact, body in graph.derivation_bodies(chunk) if fact not in unstored]
        found += [(fact, body) for fact, _, body in found_again(graph, unstored)] if unstored else []
        others = {b for _, body in found for b in body if b not in open_facts}
        alive = {num for num, blob in graph.fact_labels(others) if not killed(blob)}
        for head, body in found:
            if not all(b in open_facts or b in alive for b in body):
                continue  # a dead body fact: it never fires
            blockers = {b for b in body if b in open_facts}
            if not blockers:
                holding.append(head)
                continue
            for b in blockers:
                blocked_by.append(b)
                blocking.append(len(heads))
            heads.append(head)
            missing.append(len(blockers))
    return _least_fixpoint(holding, heads, missing, blocked_by, blocking)


def revived_in_store(graph, deleted: Deleted) -> tuple[set[int], int]:
    """``revived_facts`` asked of a store that answers in SQL (a folder): ``deleted`` (settling.by_kinds
    or by_numbers) names the deleted assertions; the store finds the capped facts they kill and those
    of their derivations that can fire, and takes the least fixpoint itself, round by round
    (settling.held_in_store), the open facts a surviving assertion states among those that hold
    outright, so that only the facts that hold reach Python (x40 with 40 hubs, 100 sources: 5.3 M
    waiting derivations read into Python took most of 31 s).  Returns the facts revived and the
    number of open facts.

    Open facts the stored derivations do not revive and whose circuit is not all stored
    (sql_witness's marks) are settled by the rules: a few by re-derivation (rederive.Rederiver:
    the least fixpoint of the rules over them, every fact the deletion kills and the settling
    does not hold counted dead), the facts it revives held in a settling again, until it revives
    none; many by the Boolean closure without the deleted assertions (closure_settle.py)."""
    tables = f"pg_settle_{next(_SETTLINGS)}"  # one settling's tables, apart from any other on the connection
    sql, parameters = deleted

    def settle():  # repeatable: from the start again if the bounded memory runs out
        revived: set[int] = set()
        gone = frozenset(row[0] for row in graph.query(sql, parameters).fetchall())  # the deleted numbers
        rederiver = None  # its rules planned once, whatever the rounds
        try:
            while True:
                opened, holding = open_stated(graph, deleted, tables)
                held = held_in_store(graph, tables, [*holding, *sorted(revived)])
                pending = unstored_open(graph, tables, held, UNSTORED_RULE)
                if not pending:
                    return held, opened
                dead = killed_facts(graph, deleted, held, DEAD_AT_MOST) if len(pending) <= REDERIVED_AT_MOST else None
                if dead is None:  # many: every open fact by the closure
                    batches = ([(num, relation, graph.args(args)) for num, relation, args in batch]
                               for batch in open_rows(graph, tables).batches(100_000))
                    # the closure reads the program (the parser, the compiler) only when asked
                    from polygraph_logic.query.closure_settle import held_by_closure  # noqa: PLC0415
                    return held_by_closure(graph, gone, batches), opened
                keys = {num: (relation, graph.args(args)) for num, relation, args in dead}
                rederiver = rederiver or Rederiver(graph)
                found = rederiver.revive({keys[num] for num in pending}, set(keys.values()), gone)
                if not found:
                    return held, opened
                revived |= {num for num, key in keys.items() if key in found}
                drop_settling(graph, tables)
        finally:
            drop_settling(graph, tables)

    return graph.store.within_bounds(settle, SETTLING_MEMORY)


#: open facts with a marked circuit settled by re-derivation (beyond: the closure), and the most
#: dead facts it is given.  x40 with 40 hubs shared on both sides: one source, 29 such facts of 87
#: open, re-derived in about 4 s; 10 sources, 8,710 of 51,565: the closure 18.5 s, re-derivation
#: not done in 10 minutes
REDERIVED_AT_MOST = 100
DEAD_AT_MOST = 200_000


_SETTLINGS = itertools.count(1)
#: DuckDB's memory while the store settles (Store.within_bounds: once more under the reader's own
#: limit if it runs out). x40 with 40 hubs, 100 sources: 160 MB, 22.3 s and a 674 MB peak, spilling
#: the tables of each round; the reader's 1 GB, 14.9 s and 1.35 GB; 400 MB, 14.6 s and 887 MB
SETTLING_MEMORY = "400MB"


def _least_fixpoint(holding: list[int], heads: array, missing: array, blocked_by: array, blocking: array) -> set[int]:
    """The facts that hold: ``holding`` and, by counting, the head of every derivation whose open
    body facts all come to hold (provenance/circuit.settle's loop; the waiting derivations kept
    as arrays sorted by body fact, 16 bytes a pair, not a dict of lists)."""
    import numpy  # noqa: PLC0415  (a core dependency, loaded when a circuit is settled)

    bodies = numpy.frombuffer(blocked_by, dtype=numpy.int64) if blocked_by else numpy.zeros(0, numpy.int64)
    order = numpy.argsort(bodies, kind="stable")
    bodies, waiting = bodies[order], (numpy.frombuffer(blocking, dtype=numpy.int64)[order] if blocking
                                      else numpy.zeros(0, numpy.int64))
    held: set[int] = set()
    while holding:
        fact = holding.pop()
        if fact in held:
            continue
        held.add(fact)
        low, high = numpy.searchsorted(bodies, [fact, fact + 1])
        for d in waiting[low:high].tolist():
            missing[d] -= 1
            if missing[d] == 0 and heads[d] not in held:
                holding.append(heads[d])
    return held


__all__ = ["revived_facts", "revived_in_store"]
