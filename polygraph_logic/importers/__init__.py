"""Importers for Gene Ontology data: GPAD and GAF annotations, obographs ontology edges."""

from polygraph_logic.importers.gaf import read_gaf
from polygraph_logic.importers.gpad import read_gpad
from polygraph_logic.importers.obographs import edges_to_datalog, read_obographs, write_background
from polygraph_logic.importers.output import write_assertions
from polygraph_logic.importers.rdf import RdfImport, import_rdf, read_rdf
from polygraph_logic.importers.import_report import ImportReport

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
