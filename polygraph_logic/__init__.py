"""polygraph_logic: Datalog with why-provenance for knowledge graphs built by language models.

    >>> from polygraph_logic import parse_program, evaluate
    >>> model = evaluate(parse_program('a1 :: e("x", "y"). p(x) :- e(x, _).'))
    >>> str(model.label("p", ("x",)))
    'a1'

The public API, one name per concept; each is read from its package on first use, so
that ``import polygraph_logic`` (and ``polygraph --version``) loads none of the engine:

- the Datalog engine (``datalog``): ``parse_program``, ``load_program``, ``Program``,
  ``evaluate``, ``Model``; semirings (``provenance``): ``make_semiring``;
- graphs (``graph``): ``build_graph`` (any engine, a graph file, a folder or in memory), ``Graph``
  (a graph file or folder, read in place), ``add``; the input records ``Assertion``, ``Receipt``;
- questions (``query``): ``Deletion``, ``what_if``, ``Session``, ``why``, ``whynot``,
  ``robustness``, ``top_sources``, ``contradictions``, ``ask``; evidence (``query.evidence``):
  ``EvidenceView``, ``Requirement``;
- ontologies (``ontology``): ``compile_ontology``; RDF (``export``): ``export_graph``;
- errors: ``PolygraphError`` and its kinds, each with a code, a message and a position.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> module that defines it
_API = {
    "EvaluationError": "errors", "ParseError": "errors", "PolygraphError": "errors", "Position": "errors",
    "ProgramError": "errors",
    "Model": "datalog.evaluate", "evaluate": "datalog.evaluate",
    "Program": "datalog.program", "load_program": "datalog.program", "parse_program": "datalog.program",
    "make_semiring": "provenance",
    "Graph": "graph.store.graph_file", "build_graph": "graph.engine_build", "add": "graph.ledger",
    "Assertion": "graph.assertions", "Receipt": "graph.records",
    "Deletion": "query.whatif", "what_if": "query.whatif", "Session": "query.session",
    "why": "query.explain", "whynot": "query.explain", "robustness": "query.explain", "top_sources": "query.explain",
    "contradictions": "query.contradictions", "ask": "query.lazy_facts",
    "EvidenceView": "query.evidence", "Requirement": "query.evidence",
    "compile_ontology": "ontology.owl", "export_graph": "export.exporter",
}

__all__ = ["__version__", *sorted(_API)]


def __getattr__(name: str):
    # lazy (PEP 562): the package root must not pay for lark, rdflib or DuckDB at import
    if name in _API:
        value = getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
