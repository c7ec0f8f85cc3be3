"""Evaluation engines beside the Python reference: the why-provenance closure in SQL.

- ``plan``: a program as SQL statements (rules as data, labels as lists of monomials);
- ``pairs``: two-atom rules driven by a delta, many rule shapes per join;
- ``labels``: the why-semiring's product, sum, absorption and cap in SQL;
- ``dialect``: the list functions and lambdas each SQL engine spells its own way;
- ``driver``: the semi-naive loop over a plan's tables, the same for every engine;
- ``duckdb_run``: the plan run on DuckDB (memory limit, spilling, per-round statistics);
- ``spark_run``: the plan run on Spark SQL (local[N] or a cluster);
- ``build``: ``build_graph(..., engine="duckdb" or "spark")``, the graph file written as always;
- ``tables``, ``tables_build``: label tables as Parquet (from a graph file, or written by DuckDB
  straight from its evaluation: ``build_tables``); ``tables_compare``: two folders row for row;
- ``spark_tables``: the same folder written by Spark from its evaluation (``build_spark_tables``);
- ``native_inputs``, ``native_receipts``: a tables build's assertions read by DuckDB and its
  receipts' rules kept as DuckDB rows, so the Python side does not grow with the graph;
- ``sql_whatif``: a what-if as one SQL query over the tables, on DuckDB or Spark.
"""

from polygraph_logic.engines.graph_build import ENGINES, build_graph
from polygraph_logic.engines.driver import RoundStats
from polygraph_logic.engines.duckdb_run import evaluate_duckdb
from polygraph_logic.engines.sql_plan import make_plan
from polygraph_logic.engines.spark_run import evaluate_spark

__all__ = ["ENGINES", "RoundStats", "build_graph", "evaluate_duckdb", "evaluate_spark", "make_plan"]
