"""The one store: a built graph in a SQLite file, read in place and written atomically.

``graph_file`` opens a graph and answers questions by meaning (every SQL text of the
project lives in this package); ``writer`` and ``version_write`` write it; ``schema``
checks it on open; ``versions`` reads its history; ``views``, ``fact_store`` and
``lazy_store`` read rows on demand; ``label_codec`` codes support labels;
``stored_rules`` keeps the program's rules as syntax trees.
"""

from polygraph_logic.graph.store.graph_file import Graph

from polygraph_logic.graph.store.rows import LAYERS, Artifact, StoredFact

__all__ = ["LAYERS", "Artifact", "Graph", "StoredFact"]
