"""The one store: a built graph read in place and written atomically, in one of two forms.

``backend`` is the storage interface (``Store``) and its registry of backends: ``file_store``
(a SQLite file), ``folder_store`` (Parquet files read by DuckDB, through ``folder``) and
``spark_store`` (the same folder read by Spark SQL); every write of a graph at a path goes
through it too (a version, a circuit, a copy).  ``graph_file.Graph`` asks the questions by
meaning (``questions``, ``artifact_reads``, ``circuit_rows``, ``search``), each of its store;
``writer`` writes a file's build (graph/tables/ writes a folder's), ``version_write`` and
``folder_version_write`` a version (``folder_version_reads``: what the latter reads of the one
before); ``schema`` and ``check`` check a graph; ``versions`` and ``folder_versions`` read
histories; ``views``, ``fact_store`` and ``lazy_store`` read rows on demand; ``label_codec``
codes support labels; ``stored_rules`` keeps rules as syntax trees;
``sql_whatif`` answers a what-if as one SQL query over a folder.
"""

from polygraph_logic.graph.store.graph_file import Graph

from polygraph_logic.graph.store.rows import LAYERS, Artifact, StoredFact

__all__ = ["LAYERS", "Artifact", "Graph", "StoredFact"]
