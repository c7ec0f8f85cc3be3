"""Names of OWL terms as the rule files write them: CURIEs, property expressions, labels."""

from __future__ import annotations

import re
from typing import NamedTuple

import rdflib
from rdflib import OWL, RDF, RDFS, URIRef

from polygraph_logic.datalog.syntax import format_value

OBO = "http://purl.obolibrary.org/obo/"

# Namespaces written as CURIEs; OBO PURLs (PREFIX_LOCAL) are handled by _OBO_ID.
PREFIXES = {
    "rdf": str(RDF), "rdfs": str(RDFS), "owl": str(OWL), "xsd": "http://www.w3.org/2001/XMLSchema#",
    "oboInOwl": "http://www.geneontology.org/formats/oboInOwl#", "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/", "skos": "http://www.w3.org/2004/02/skos/core#",
    "foaf": "http://xmlns.com/foaf/0.1/",
}
# OBO ID spaces start with a capital letter (RO, BFO, GO, NCBITaxon); a lower-case
# OBO PURL such as obo/valid_for_go_ontology is not a PREFIX_ID and stays a full IRI.
_OBO_ID = re.compile(r"([A-Z][A-Za-z0-9]*)_([A-Za-z0-9]+)\Z")


def curie(iri: str) -> str:
    """Returns the CURIE of an IRI (``.../obo/RO_0002211`` -> ``RO:0002211``), or the IRI itself."""
    iri = str(iri)
    if iri.startswith(OBO):
        match = _OBO_ID.match(iri[len(OBO):])
        if match:
            return f"{match.group(1)}:{match.group(2)}"
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace):]}"
    return iri


class Step(NamedTuple):
    """One object property expression: a named property, or the inverse of one."""

    iri: URIRef
    inverse: bool = False

    def inverted(self) -> "Step":
        """Returns the inverse of this expression."""
        return Step(self.iri, not self.inverse)

    def atom(self, subject: str, obj: str) -> str:
        """Returns the ``edge`` atom saying ``subject`` relates to ``obj`` by this expression."""
        if self.inverse:
            subject, obj = obj, subject
        return f"edge({subject}, {format_value(curie(self.iri))}, {obj})"


def label(graph: rdflib.Graph, node) -> str:
    """Returns the rdfs:label(s) of a term (English or untagged ones if any), else its CURIE."""
    found = list(graph.objects(node, RDFS.label))
    english = [lit for lit in found if getattr(lit, "language", None) in (None, "en")]
    labels = sorted({" ".join(str(lit).split()) for lit in english or found})
    return " / ".join(labels) if labels else curie(node)


def step_label(graph: rdflib.Graph, step: Step) -> str:
    """Returns the label of a property expression, ``inverse(...)`` around an inverse."""
    name = label(graph, step.iri)
    return f"inverse({name})" if step.inverse else name


def expression(graph: rdflib.Graph, node) -> Step | None:
    """Returns the Step a property node denotes: a named IRI or [owl:inverseOf named]."""
    if isinstance(node, URIRef):
        return Step(node)
    inner = graph.value(node, OWL.inverseOf)
    if isinstance(node, rdflib.BNode) and inner is not None:
        step = expression(graph, inner)
        return step.inverted() if step is not None else None
    return None


__all__ = ["OBO", "PREFIXES", "Step", "curie", "expression", "label", "step_label"]
