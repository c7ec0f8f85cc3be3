"""The tables folder: a graph's rows as Parquet files that DuckDB and Spark read natively.

``layout`` declares the folder and converts a graph file to and from it; ``duckdb_build``
and ``spark_build`` write the folder straight from an SQL evaluation (``engines``), with
``artifacts``, ``digests``, ``folder_rows``, ``native_inputs`` and ``native_receipts``;
``compare`` compares two folders row for row; ``sql_whatif`` answers a what-if by SQL.
"""

from polygraph_logic.graph.tables.duckdb_build import TablesBuild, build_tables
from polygraph_logic.graph.tables.layout import export_tables, import_tables
from polygraph_logic.graph.tables.spark_build import build_spark_tables

__all__ = ["TablesBuild", "build_spark_tables", "build_tables", "export_tables", "import_tables"]
