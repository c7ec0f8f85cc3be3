"""OWL ontologies compiled into rules: object-property axioms (``owl``), SWRL rules and
``owl:hasSelf`` restrictions (``swrl``), the names of OWL terms (``terms``) and the
result of a compilation (``compiled``)."""

from polygraph_logic.ontology.compiled import CompiledOntology
from polygraph_logic.ontology.owl import compile_ontology

__all__ = ["CompiledOntology", "compile_ontology"]
