"""Open facts settled by the Boolean closure under a deletion, when the circuit's stored rows cannot.

A DuckDB witness build stores the derivations of the round that made each fact and marks a fact
derived again later (engines/sql_witness.py).  A what-if settles open facts by the stored
derivations first (revival.py); an open fact that they do not revive and whose circuit is
marked needs its other derivations.  A few are settled by re-derivation from the rules, fact by
fact (query/rederive.py); many are cheaper to settle at once by the program's Boolean
closure with the deleted assertions left out, set at a time on DuckDB
(engines/duckdb_eval.boolean_closure): the stored rules over the surviving assertions' facts and
the facts of background knowledge.  An open fact holds exactly when the closure has it: the
closure is the least model of the program without the deleted assertions, so this is the same
verdict as a from-scratch recomputation, cycles included.
"""

from __future__ import annotations

from collections.abc import Iterable

from polygraph_logic.allocation import collector_paused
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.syntax import Atom, Constant, Fact
from polygraph_logic.graph.compile import compile_inputs


def program_without(graph, deleted: Iterable[int]) -> Program:
    """The graph's program with the assertions numbered ``deleted`` left out: its stored rules, the
    facts the other assertions state, and the stored facts of background knowledge (label one)."""
    deleted = set(deleted)
    numbers = [num for num in graph.assertion_numbers().values() if num not in deleted]
    surviving = graph.assertions.numbered(numbers).values()
    clauses: list = list(compile_inputs(surviving, []).assertions)
    clauses += [Fact(Atom(relation, tuple(Constant(v) for v in args)), None)
                for relation, args in graph.background_facts()]
    return Program.from_clauses([*clauses, *graph.rules()])


def held_by_closure(graph, deleted: Iterable[int], facts: Iterable[list[tuple[int, str, tuple]]],
                    memory_limit: str | None = None) -> set[int]:
    """The numbers of ``facts`` (batches of ``(num, relation, args)``, read once the closure is made,
    a batch at a time: at x40 with hubs a deletion of every retracted source asks of 3.9 M) that
    the Boolean closure of the graph's program without the ``deleted`` assertions holds."""
    from polygraph_logic.engines.duckdb_eval import boolean_closure  # noqa: PLC0415  (DuckDB when asked)

    with collector_paused():
        program = program_without(graph, deleted)
    with boolean_closure(program, memory_limit) as tables:
        return tables.holding(facts)


__all__ = ["held_by_closure", "program_without"]
