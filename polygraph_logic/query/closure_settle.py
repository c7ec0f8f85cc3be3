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

from collections import defaultdict
from collections.abc import Iterable

from polygraph_logic.allocation import collector_paused
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.syntax import Atom, Constant, Fact
from polygraph_logic.graph.compile import compile_inputs

def program_without(graph, deleted: Iterable[int]) -> Program:
    """The graph's program with the assertions numbered ``deleted`` left out: its stored rules, the
    facts the other assertions state, and the stored facts of background knowledge (label one)."""
    deleted = set(deleted)
    numbers = [row[0] for row in graph.query("SELECT num FROM assertions").fetchall() if row[0] not in deleted]
    surviving = graph.assertions.numbered(numbers).values()
    clauses: list = list(compile_inputs(surviving, []).assertions)
    clauses += [Fact(Atom(relation, tuple(Constant(v) for v in args)), None)
                for relation, args in graph.background_facts()]
    return Program.from_clauses([*clauses, *graph.rules()])


def held_by_closure(graph, deleted: Iterable[int], facts: Iterable[tuple[int, str, tuple]],
                    memory_limit: str | None = None) -> set[int]:
    """The numbers of ``facts`` (``(num, relation, args)``) that the Boolean closure of the graph's
    program without the ``deleted`` assertions holds."""
    from polygraph_logic.engines.duckdb_eval import boolean_closure  # noqa: PLC0415  (DuckDB when asked)

    wanted: dict[str, list[tuple[int, tuple]]] = defaultdict(list)
    for num, relation, args in facts:
        wanted[relation].append((num, args))
    with collector_paused():
        program = program_without(graph, deleted)
    held: set[int] = set()
    with boolean_closure(program, memory_limit) as tables:
        plan, con = tables.plan, tables.con
        for relation, rows in sorted(wanted.items()):
            if relation not in plan.relations:
                continue
            arity = plan.arity(relation)
            keys = plan.keys(relation)
            known = []
            for num, args in rows:
                ids = [plan.values.get(v) for v in args] if arity else [0]
                if None not in ids:  # a value the program never holds: no fact of it does
                    known.append((num, ids))
            if not known:
                continue
            columns = ", ".join(f"unnest(${i + 2}) AS {k}" for i, k in enumerate(keys))
            con.execute(f"CREATE OR REPLACE TEMP TABLE asked AS SELECT unnest($1) AS num, {columns}",
                        [[num for num, _ in known], *([ids[i] for _, ids in known] for i in range(len(keys)))])
            held.update(row[0] for row in con.execute(
                f"SELECT num FROM asked SEMI JOIN {plan.table(relation)} USING ({', '.join(keys)})").fetchall())
    return held


__all__ = ["held_by_closure", "program_without"]
