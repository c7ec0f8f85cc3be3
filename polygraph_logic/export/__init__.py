"""RDF export of a graph with its provenance (nanopublications, PROV-O), in four formats."""

from polygraph_logic.export.exporter import ExportReport, export_graph
from polygraph_logic.export.iris import (
    DEFAULT_BASE,
    Minter,
    contract,
    decode_segment,
    encode_segment,
    expand_curie,
)
from polygraph_logic.export.model import ExportModel, Literal, Status, TripleTerm
from polygraph_logic.export.namespaces import PG, PREFIXES, vocabulary_path
from polygraph_logic.export.rdf_writers import EXTENSIONS, FORMATS, NAMED_GRAPHS

__all__ = [
    "DEFAULT_BASE",
    "EXTENSIONS",
    "ExportModel",
    "ExportReport",
    "FORMATS",
    "Literal",
    "Minter",
    "NAMED_GRAPHS",
    "PG",
    "PREFIXES",
    "Status",
    "TripleTerm",
    "contract",
    "decode_segment",
    "encode_segment",
    "expand_curie",
    "export_graph",
    "vocabulary_path",
]
