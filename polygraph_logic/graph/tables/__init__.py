"""The tables folder: a graph's rows as Parquet files that DuckDB and Spark read natively.

``layout`` declares the folder and converts a graph file to and from it; ``duckdb_build``
and ``spark_build`` write the folder straight from an SQL evaluation (``engines``), with
``artifacts``, ``digests``, ``folder_rows``, ``native_inputs`` and ``native_receipts``;
``compare`` compares two folders row for row.  A folder is built through the one
``build_graph`` (graph/engine_build.py: ``engine="duckdb"`` or ``"spark"``, ``tables=True``);
its two writers here are that function's helpers, not entry points of their own.
"""

from polygraph_logic.graph.tables.layout import export_tables, import_tables

__all__ = ["export_tables", "import_tables"]
