"""Evaluation engines beside the Python reference: the why-provenance closure in SQL.

- ``sql_plan``: a program as SQL statements (rules as data, labels as lists of monomials);
- ``pairs``: two-atom rules driven by a delta, many rule shapes per join;
- ``sql_labels``: the why-semiring's product, sum, absorption and cap in SQL;
- ``dialect``: the list functions and lambdas each SQL engine spells its own way;
- ``driver``: the semi-naive loop over a plan's tables, the same for every engine;
- ``duckdb_run``: the plan run on DuckDB (memory limit, spilling, per-round statistics);
- ``spark_run`` and ``spark``: the plan run on Spark SQL (local[N] or a cluster), and its session.

Engines sit below the graph: a build chooses one (graph/engine_build.py), and the folder
writers (graph/tables/) write what it evaluates.
"""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

#: the engines a graph is built with (graph/engine_build.py): the Python reference, DuckDB, Spark
ENGINES = ("python", "duckdb", "spark")

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "RoundStats": "driver", "evaluate_duckdb": "duckdb_run", "evaluate_spark": "spark_run",
    "make_plan": "sql_plan",
}

__all__ = [*_EXPORTS]  # ENGINES, a constant of the package itself, is imported by name
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
