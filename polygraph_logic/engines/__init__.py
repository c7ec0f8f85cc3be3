"""Evaluation engines beside the Python reference: the why-provenance closure in SQL.

- ``plan``: a program as SQL statements (rules as data, labels as lists of monomials);
- ``pairs``: two-atom rules driven by a delta, many rule shapes per join;
- ``labels``: the why-semiring's product, sum, absorption and cap in SQL;
- ``dialect``: the list functions and lambdas each SQL engine spells its own way;
- ``duckdb_run``: the plan run on DuckDB (memory limit, spilling, per-round statistics);
- ``build``: ``build_graph(..., engine="duckdb")``, the graph file written as always.
"""

from .build import ENGINES, build_graph
from .duckdb_run import RoundStats, evaluate_duckdb
from .plan import make_plan

__all__ = ["ENGINES", "RoundStats", "build_graph", "evaluate_duckdb", "make_plan"]
