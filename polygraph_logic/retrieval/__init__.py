"""Retrieval consequences of cleanup: BM25 over a graph's artifacts, tainted@k and
recall@k per policy (``consequences``), and the query sets it runs (``query_sets``)."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "evaluate_retrieval": "consequences", "generate_queries": "query_sets", "load_queries": "query_sets",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
