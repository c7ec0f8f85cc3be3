"""From-scratch Boolean recomputation: the facts an evaluation derives from the assertions that
survive a deletion, the independent answer what-if tests compare verdicts with."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from polygraph_logic import evaluate
from polygraph_logic.datalog.program import load_program
from polygraph_logic.graph.compile import compile_inputs

RO = Path(__file__).resolve().parent.parent / "rules" / "ro.dl"


@lru_cache(maxsize=None)
def rule_program(rules: tuple) -> object:
    """The rule files parsed once per process (evaluations only read a program: never modify it)."""
    return load_program(*rules)


def truth(assertions, receipts, deleted, rules=(RO,)) -> set:
    """The facts a from-scratch Boolean evaluation derives from the assertions not in ``deleted``."""
    surviving = [a for a in assertions if a.id not in deleted]
    program = compile_inputs(surviving, receipts).program(rule_program(tuple(rules)))
    model = evaluate(program, "boolean")
    return {(name, tup) for name, rows in model.boolean().items() for tup in rows}
