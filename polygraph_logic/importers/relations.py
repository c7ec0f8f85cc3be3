"""The relation vocabulary of Gene Ontology data: GO relation labels and their CURIEs.

GPAD 1.x and GAF 2.2 name the relation of an annotation by a label (``part_of``,
``enables``); the graph stores every edge under a CURIE. The CURIEs below were checked
against the ``rdfs:label`` of each property in the RO release (data/ro/ro.owl).
"""

from __future__ import annotations

# GO annotation relation label -> RO (or BFO) CURIE
ANNOTATION_RELATIONS: dict[str, str] = {
    "part_of": "BFO:0000050",
    "enables": "RO:0002327",
    "involved_in": "RO:0002331",
    "contributes_to": "RO:0002326",
    "colocalizes_with": "RO:0002325",
    "is_active_in": "RO:0002432",
    "located_in": "RO:0001025",
    "acts_upstream_of": "RO:0002263",
    "acts_upstream_of_positive_effect": "RO:0004034",
    "acts_upstream_of_negative_effect": "RO:0004035",
    "acts_upstream_of_or_within": "RO:0002264",
    "acts_upstream_of_or_within_positive_effect": "RO:0004032",
    "acts_upstream_of_or_within_negative_effect": "RO:0004033",
}

# predicates of GO's own edges (obographs), for display
ONTOLOGY_RELATIONS: dict[str, str] = {
    "is_a": "rdfs:subClassOf",
    "regulates": "RO:0002211",
    "negatively_regulates": "RO:0002212",
    "positively_regulates": "RO:0002213",
    "has_part": "BFO:0000051",
    "occurs_in": "BFO:0000066",
}

_NAMES = {curie: label for label, curie in {**ONTOLOGY_RELATIONS, **ANNOTATION_RELATIONS}.items()}


def relation_curie(label: str) -> str | None:
    """Returns the CURIE of a GO annotation relation label, or None if it is not one."""
    return ANNOTATION_RELATIONS.get(label)


def relation_name(curie: str) -> str | None:
    """Returns the GO label of a relation CURIE (``BFO:0000050`` -> ``part_of``), if known."""
    return _NAMES.get(curie)
