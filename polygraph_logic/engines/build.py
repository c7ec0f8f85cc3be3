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
from ..graph.records import Receipt
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
    prepared = python_build.prepare_build(assertions, receipts, rules, cap)  # as the Python engine's build
    started = time.perf_counter()
    model, stats = evaluate_duckdb(prepared.program, cap, memory_limit, progress, rounds)
    prepared.seconds["evaluate"] = time.perf_counter() - started
    build = prepared.build(model)
    build.rounds = stats  # per semi-naive round: delta facts, monomials, seconds
    return build
