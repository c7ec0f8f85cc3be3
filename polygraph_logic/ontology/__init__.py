"""OWL ontologies compiled into rules: object-property axioms (``owl``), SWRL rules and
``owl:hasSelf`` restrictions (``swrl``), the names of OWL terms (``terms``) and the
result of a compilation (``compiled``)."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "CompiledOntology": "compiled", "compile_ontology": "owl",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
