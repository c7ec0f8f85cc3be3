"""Retrieval consequences of cleanup: BM25 over a graph's artifacts, tainted@k and
recall@k per policy (``consequences``), and the query sets it runs (``query_sets``)."""

from polygraph_logic.retrieval.consequences import evaluate_retrieval
from polygraph_logic.retrieval.query_sets import generate_queries, load_queries

__all__ = ["evaluate_retrieval", "generate_queries", "load_queries"]
