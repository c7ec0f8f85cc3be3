"""Importers for Gene Ontology data: GPAD and GAF annotations, obographs ontology edges."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "ImportReport": "import_report", "RdfImport": "rdf", "edges_to_datalog": "obographs", "import_rdf": "rdf",
    "read_gaf": "gaf", "read_gpad": "gpad", "read_obographs": "obographs", "read_rdf": "rdf",
    "write_assertions": "output", "write_background": "obographs",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
