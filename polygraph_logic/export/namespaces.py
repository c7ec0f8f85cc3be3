"""The vocabularies an export uses, as IRI prefixes, and the project's own terms.

The project's namespace is ``https://w3id.org/polygraph#`` (prefix ``pg``); its terms,
each with a label and a comment, are published in ``polygraph.ttl`` beside this module.
Everything else comes from established vocabularies: PROV-O for provenance, the
nanopublication schema for the head/assertion/provenance/pubinfo graphs, Dublin Core
terms, VoID, RDF(S), OWL and XSD.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PG = "https://w3id.org/polygraph#"
PROV = "http://www.w3.org/ns/prov#"
NP = "http://www.nanopub.org/nschema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
OWL = "http://www.w3.org/2002/07/owl#"
DCTERMS = "http://purl.org/dc/terms/"
VOID = "http://rdfs.org/ns/void#"

PREFIXES = {"pg": PG, "prov": PROV, "np": NP, "rdf": RDF, "rdfs": RDFS, "xsd": XSD, "owl": OWL,
            "dcterms": DCTERMS, "void": VOID, "obo": "http://purl.obolibrary.org/obo/"}

RDF_TYPE = RDF + "type"
RDF_JSON = RDF + "JSON"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DATETIME = XSD + "dateTime"

# the class of each layer; the layer of an imported artifact is read back from it
LAYER_CLASSES = {"claim": PG + "Claim", "merge": PG + "Merge", "edge": PG + "Edge",
                 "summary": PG + "Summary", "sentence": PG + "Sentence", "contradiction": PG + "Contradiction"}
CLASS_LAYERS = {iri: layer for layer, iri in LAYER_CLASSES.items()}
# the class of each assertion kind (kinds.py), a subclass of pg:Assertion; read back on import
KIND_CLASSES = {"verification": PG + "Verification", "source_claim": PG + "SourceClaim",
                "tool_observation": PG + "ToolObservation", "policy_decision": PG + "PolicyDecision",
                "user_assertion": PG + "UserAssertion",
                "graph_derived": PG + "GraphDerived", "model_hypothesis": PG + "ModelHypothesis"}
CLASS_KINDS = {iri: kind for kind, iri in KIND_CLASSES.items()}

FORMAT = "polygraph-rdf/1"


def vocabulary_path() -> Path:
    """Returns the path of ``polygraph.ttl``, the published vocabulary (package data)."""
    return Path(str(resources.files(__package__) / "polygraph.ttl"))


def shapes_path() -> Path:
    """Returns the path of ``shapes.ttl``, the SHACL shapes an export conforms to (package data)."""
    return Path(str(resources.files(__package__) / "shapes.ttl"))
