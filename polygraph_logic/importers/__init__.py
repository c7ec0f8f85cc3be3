"""Importers for Gene Ontology data: GPAD and GAF annotations, obographs ontology edges."""

from .gaf import read_gaf
from .gpad import read_gpad
from .obographs import edges_to_datalog, read_obographs, write_background
from .output import write_assertions
from .rdf import RdfImport, import_rdf, read_rdf
from .report import ImportReport

__all__ = [
    "ImportReport",
    "RdfImport",
    "edges_to_datalog",
    "import_rdf",
    "read_gaf",
    "read_gpad",
    "read_obographs",
    "read_rdf",
    "write_assertions",
    "write_background",
]
