"""RDF export of a graph with its provenance (nanopublications, PROV-O), in four formats."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "DEFAULT_BASE": "iris", "EXTENSIONS": "rdf_writers", "ExportModel": "model", "ExportReport": "exporter",
    "FORMATS": "rdf_writers", "Literal": "model", "Minter": "iris", "NAMED_GRAPHS": "rdf_writers",
    "PG": "namespaces", "PREFIXES": "namespaces", "Status": "model", "TripleTerm": "model",
    "contract": "iris", "decode_segment": "iris", "encode_segment": "iris", "expand_curie": "iris",
    "export_graph": "exporter", "shapes_path": "namespaces", "vocabulary_path": "namespaces",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
