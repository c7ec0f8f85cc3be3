"""Importers for Gene Ontology data: GPAD and GAF annotations, obographs ontology edges."""

from .gaf import read_gaf
from .gpad import read_gpad
from .obographs import edges_to_datalog, read_obographs, write_background
from .output import write_assertions
from .report import ImportReport

__all__ = [
    "ImportReport",
    "edges_to_datalog",
    "read_gaf",
    "read_gpad",
    "read_obographs",
    "write_assertions",
    "write_background",
]
