"""``build_graph`` with a choice of engine: the Python reference or DuckDB.

Both return a ``graph.build.Build`` whose model holds the same labels, so the graph file
is written by the same writer and read by every reader unchanged.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from ..errors import PolygraphError
from ..evaluate import StratumStats
from ..graph import build as python_build
from ..graph.assertions import Assertion
from ..graph.records import Receipt, load_assertions, load_receipts
from ..program import load_program
from ..graph.compile import compile_inputs
from .duckdb_run import RoundStats, evaluate_duckdb

ENGINES = ("python", "duckdb")


def build_graph(
    assertions: str | Path | list[Assertion],
    receipts: str | Path | list[Receipt] | None = None,
    rules: Iterable[str | Path] = (),
    cap: int | None = 8,
    progress: Callable[[StratumStats], None] | None = None,
    engine: str = "python",
    memory_limit: str | None = None,
    rounds: Callable[[RoundStats], None] | None = None,
) -> python_build.Build:
    """As ``graph.build.build_graph``, evaluated by ``engine`` ("python" or "duckdb").

    ``memory_limit`` (DuckDB: "4GB") bounds the engine's memory; beyond it DuckDB spills
    to a temporary directory.  ``rounds`` receives each semi-naive round's statistics
    (DuckDB only); the returned Build's ``rounds`` lists them too.
    """
    if engine == "python":
        if memory_limit is not None:
            raise PolygraphError("bad_argument", "--memory-limit applies to --engine duckdb only")
        return python_build.build_graph(assertions, receipts, rules, cap=cap, progress=progress)
    if engine != "duckdb":
        raise PolygraphError("bad_argument", f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    # the same steps as graph.build.build_graph, the evaluation by DuckDB
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    if not isinstance(assertions, list):
        assertions = load_assertions(assertions)
    if receipts is None:
        receipts = []
    elif not isinstance(receipts, list):
        receipts = load_receipts(receipts, {a.id for a in assertions})
    rule_files = [str(r) for r in rules]
    seconds["load"] = time.perf_counter() - started

    started = time.perf_counter()
    compiled = compile_inputs(assertions, receipts, cap)
    extra = [load_program(*rule_files)] if rule_files else []
    for fact in extra[0].facts if extra else ():
        if fact.variable:
            raise PolygraphError(
                "tracked_fact_in_rules", f"rule files may hold background facts only; '{fact}' is tracked: "
                "state it as an assertion (assertions.jsonl) so that it has a source", fact.position)
    program = compiled.program(*extra)
    seconds["compile"] = time.perf_counter() - started

    started = time.perf_counter()
    model, stats = evaluate_duckdb(program, cap, memory_limit, progress, rounds)
    seconds["evaluate"] = time.perf_counter() - started
    build = python_build.Build(assertions, receipts, cap, rule_files, compiled.over_cap, model, seconds)
    build.rounds = stats  # per semi-naive round: delta facts, monomials, seconds
    return build
