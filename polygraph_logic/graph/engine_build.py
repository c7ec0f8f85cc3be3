"""``build_graph`` with a choice of engine: the Python reference, DuckDB or Spark.

Both return a ``graph.build.Build`` whose model holds the same labels, so the graph file
is written by the same writer and read by every reader unchanged.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import StratumStats
from polygraph_logic.graph import build as python_build
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.records import Receipt
from polygraph_logic.engines.driver import RoundStats
from polygraph_logic.engines.duckdb_run import evaluate_duckdb
from polygraph_logic.engines.spark_run import evaluate_spark

ENGINES = ("python", "duckdb", "spark")


def build_graph(
    assertions: str | Path | list[Assertion],
    receipts: str | Path | list[Receipt] | None = None,
    rules: Iterable[str | Path] = (),
    cap: int | None = 8,
    progress: Callable[[StratumStats], None] | None = None,
    engine: str = "python",
    memory_limit: str | None = None,
    rounds: Callable[[RoundStats], None] | None = None,
    master: str | None = None,
) -> python_build.Build:
    """As ``graph.build.build_graph``, evaluated by ``engine`` ("python", "duckdb" or "spark").

    ``memory_limit`` (DuckDB: "4GB") bounds the engine's memory; beyond it DuckDB spills
    to a temporary directory.  ``master`` (Spark: "local[2]", the default, or
    "spark://HOST:PORT") is where Spark runs.  ``rounds`` receives each semi-naive round's
    statistics (DuckDB and Spark); the returned Build's ``rounds`` lists them too.
    """
    if engine not in ENGINES:
        raise PolygraphError("bad_argument", f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if memory_limit is not None and engine != "duckdb":
        raise PolygraphError("bad_argument", "--memory-limit applies to --engine duckdb only")
    if master is not None and engine != "spark":
        raise PolygraphError("bad_argument", "--master applies to --engine spark only")
    if engine == "python":
        return python_build.build_graph(assertions, receipts, rules, cap=cap, progress=progress)
    prepared = python_build.prepare_build(assertions, receipts, rules, cap)  # as the Python engine's build
    started = time.perf_counter()
    if engine == "duckdb":
        model, stats = evaluate_duckdb(prepared.program, cap, memory_limit, progress, rounds)
    else:
        model, stats = evaluate_spark(prepared.program, cap, master or "local[2]", progress, rounds)
    prepared.seconds["evaluate"] = time.perf_counter() - started
    build = prepared.build(model)
    build.rounds = stats  # per semi-naive round: delta facts, monomials, seconds
    return build
