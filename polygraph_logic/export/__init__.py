"""RDF export of a graph with its provenance (nanopublications, PROV-O), in four formats."""

from .exporter import ExportReport, export_graph
from .iris import DEFAULT_BASE, Minter, contract, decode_segment, encode_segment, expand_curie
from .model import ExportModel, Literal, Status, TripleTerm
from .namespaces import PG, PREFIXES, vocabulary_path
from .writer import EXTENSIONS, FORMATS, NAMED_GRAPHS

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
