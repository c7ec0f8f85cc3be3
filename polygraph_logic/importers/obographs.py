"""obographs importer: GO's own edges as background facts, and the labels of its nodes.

    edges, labels, report = read_obographs("go.json")
    text = edges_to_datalog(edges)   # edge("GO:1", "rdfs:subClassOf", "GO:2"). ...

Every edge of every graph becomes ``(subject, predicate, object)`` with CURIEs: OBO
PURLs ``http://purl.obolibrary.org/obo/GO_0005634`` -> ``GO:0005634`` (likewise
``BFO_0000050`` -> ``BFO:0000050``), ``is_a`` -> ``rdfs:subClassOf``; other IRIs are
kept whole. Background facts carry no provenance variable (provenance 1): ontology
edges are not assertions a deletion can remove. An edge lacking ``sub``, ``pred`` or
``obj`` is reported as malformed (by graph and edge index, JSON has no useful lines).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.datalog.syntax import format_value
from polygraph_logic.files import read_utf8, write_text_atomically
from polygraph_logic.importers.import_report import ImportReport

OBO_PREFIX = "http://purl.obolibrary.org/obo/"
PREDICATES = {
    "is_a": "rdfs:subClassOf",
    "subPropertyOf": "rdfs:subPropertyOf",
    "inverseOf": "owl:inverseOf",
    "type": "rdf:type",
}
_OBO_LOCAL = re.compile(r"^([A-Za-z][A-Za-z0-9.]*)_(\S+)$")

Edge = tuple[str, str, str]


def curie(iri: str) -> str:
    """Returns ``GO:0005634`` for ``http://purl.obolibrary.org/obo/GO_0005634``; other IRIs unchanged."""
    if iri.startswith(OBO_PREFIX):
        match = _OBO_LOCAL.match(iri[len(OBO_PREFIX):])
        if match:
            return f"{match.group(1)}:{match.group(2)}"
    return iri


def read_obographs(path: str | Path) -> tuple[list[Edge], dict[str, str], ImportReport]:
    """Returns the edges of an obographs JSON file, its node labels (CURIE -> label) and the report."""
    document = _load(str(path))
    report = ImportReport(path=str(path), format="obographs JSON", unit="edges")
    graphs = document.get("graphs") if isinstance(document, dict) else None
    if not isinstance(graphs, list):
        raise PolygraphError(
            "malformed_file", f"{path} has no 'graphs' list: is it obographs JSON?", Position(str(path), 1, 1)
        )
    edges: list[Edge] = []
    labels: dict[str, str] = {}
    for g, graph in enumerate(graphs):
        nodes, found = (graph.get("nodes", []), graph.get("edges", [])) if isinstance(graph, dict) else (None, None)
        if not isinstance(nodes, list) or not isinstance(found, list):
            raise PolygraphError("malformed_file", f"{path}: graph {g} is not an object with 'nodes' and 'edges' "
                                                   "lists: is it obographs JSON?", Position(str(path), 1, 1))
        for node in nodes:
            if isinstance(node, dict) and isinstance(node.get("id"), str) and isinstance(node.get("lbl"), str):
                labels[curie(node["id"])] = node["lbl"]
        for e, edge in enumerate(found):
            report.read += 1
            missing = [key for key in ("sub", "pred", "obj")
                       if not (isinstance(edge, dict) and isinstance(edge.get(key), str) and edge[key])]
            if missing:
                report.malformed.append((None, f"graph {g} edge {e}: no {', '.join(missing)}"))
                continue
            predicate = PREDICATES.get(edge["pred"]) or curie(edge["pred"])
            edges.append((curie(edge["sub"]), predicate, curie(edge["obj"])))
            report.imported += 1
            report.relations[predicate] += 1
    return edges, labels, report


def _load(path: str):
    text = read_utf8(path)  # bytes that are not UTF-8: encoding_error at their line and column
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise PolygraphError("malformed_json", error.msg, Position(path, error.lineno, error.colno)) from None


def edges_to_datalog(edges: Iterable[Edge], source: str | None = None) -> str:
    """Returns background facts ``edge("GO:1", "rdfs:subClassOf", "GO:2").``, one a line, under a header comment."""
    facts = [f"edge({', '.join(format_value(value) for value in edge)})." for edge in edges]
    origin = f" from {source}" if source else ""
    header = [
        f"// {len(facts)} background edges{origin} (obographs), written by polygraph import obographs.",
        "// No provenance variable: ontology edges hold with provenance 1.",
    ]
    return "\n".join(header + facts) + "\n"


def write_background(path: str | Path, edges: Iterable[Edge], source: str | None = None) -> int:
    """Writes ``edges_to_datalog(edges, source)`` to ``path`` atomically; returns the number of facts."""
    edges = list(edges)
    write_text_atomically(path, edges_to_datalog(edges, source))
    return len(edges)
