"""The result of compiling an ontology: rules by kind, counts, what was skipped and why.

``class_level`` turns it into the profile for graphs of classes read existentially
(``C SubClassOf P some D``), such as Gene Ontology annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.files import write_text_atomically

RO_IRI = "http://purl.obolibrary.org/obo/ro.owl"
RO_ATTRIBUTION = (
    "OBO Foundry, Relations Ontology, https://purl.obolibrary.org/obo/ro.owl, "
    "CC BY 4.0 https://creativecommons.org/licenses/by/4.0/"
)
# RO releases whose upstream commit is recorded in the project's data/SOURCES.md.
RO_RELEASES = {
    "http://purl.obolibrary.org/obo/ro/releases/2025-12-17/ro.owl":
        "oborel/obo-relations commit 2b8fb441970162c83dccae78f733a31b96f156bf (2026-08-21)",
}

# Compiled kinds, in the order their rules are written; value: what the header says.
KINDS = {
    "transitive": "owl:TransitiveProperty",
    "symmetric": "owl:SymmetricProperty",
    "inverse_of": "owl:inverseOf (two rules each)",
    "equivalent_property": "owl:equivalentProperty (two rules each)",
    "sub_property_of": "rdfs:subPropertyOf between object properties",
    "chain_2": "owl:propertyChainAxiom of length 2",
    "chain_3": "owl:propertyChainAxiom of length 3",
    "swrl_edge": "SWRL rules over object properties (edge/3 only)",
    "swrl_class": "SWRL rules with class atoms (class C(x) read as type(x, C))",
    "has_self": "owl:hasSelf restrictions on named classes (type(x, C) gives edge(x, P, x))",
    "type": "type/2 read from the graph's edges (no axiom; what class atoms need)",
    "contradiction": "SWRL rules concluding owl:Nothing -> contradiction(x, y, reason)",
    "property_disjoint_with": "owl:propertyDisjointWith -> contradiction(x, y, \"P vs Q: ...\")",
}
# Kinds whose class-level soundness is decided when they are compiled (swrl.py), not by _forward.
DECIDED_KINDS = ("swrl_edge", "swrl_class", "has_self", "contradiction", "property_disjoint_with")

INSTANCE_TYPE_RULES = [
    'type(x, c) :- edge(x, "rdf:type", c).  // an individual is a member of its asserted class',
    'type(x, d) :- type(x, c), edge(c, "rdfs:subClassOf", d).  // and of every superclass',
]
CLASS_TYPE_RULES = [
    'type(c, c) :- edge(c, "rdfs:subClassOf", _).  // class level: type(C, D) reads C SubClassOf D',
    'type(d, d) :- edge(_, "rdfs:subClassOf", d).  // class level: every class is a subclass of itself',
    'type(x, d) :- type(x, c), edge(c, "rdfs:subClassOf", d).  // and of every superclass',
]


def rule_text(line: str) -> str:
    """Returns a rule line without its trailing label comment."""
    return line.split("  // ", 1)[0]


@dataclass
class CompiledOntology:
    """Datalog rules compiled from one ontology, with what was compiled and what was skipped.

    ``sections`` maps each compiled kind (see KINDS) to its rules, sorted; ``counts``
    maps it to the number of axioms (or SWRL rules); ``skipped`` maps a kind to
    (axioms, reason) and ``skipped_items`` to a description of each one.
    ``class_omitted`` maps the text of a SWRL or hasSelf rule that is not sound between
    classes to the reason, and ``swrl_verdicts`` says so for each SWRL rule.
    """

    source: str
    iri: str | None
    version_iri: str | None
    version_info: str | None
    license: str | None
    sections: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, tuple[int, str]] = field(default_factory=dict)
    skipped_items: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    class_omitted: dict[str, str] = field(default_factory=dict)
    swrl_verdicts: list[tuple[str, str | None]] = field(default_factory=list)

    @property
    def rules(self) -> list[str]:
        """Returns every rule (with its trailing label comment), kinds in KINDS order."""
        return [rule for rules in self.sections.values() for rule in rules]

    @property
    def rule_counts(self) -> dict[str, int]:
        """Returns the number of distinct rules of each compiled kind."""
        return {kind: len(rules) for kind, rules in self.sections.items()}

    @property
    def version(self) -> str | None:
        """Returns the owl:versionIRI, else the owl:versionInfo, else None."""
        return self.version_iri or self.version_info

    def to_text(self, header: bool = True) -> str:
        """Returns the rule file: a header comment (optional), then one rule a line."""
        lines = self._header() if header else []
        for kind, rules in self.sections.items():
            if header:
                lines += ["", f"// --- {KINDS[kind]} ---"]
            lines += rules
        return "\n".join(lines) + "\n"

    def report(self) -> str:
        """Returns a human summary: compiled axioms and rules per kind, then every skipped
        axiom and SWRL rule, one a line, under its kind and reason."""
        lines = self._summary()
        if self.skipped_items:
            lines.append("skipped, one a line:")
        for kind, items in sorted(self.skipped_items.items()):
            lines += [f"  {kind}: {item}" for item in sorted(items)]
        return "\n".join(lines)

    def write(self, path: str | Path) -> None:
        """Writes ``to_text()`` to ``path`` atomically (a temporary file, then os.replace)."""
        write_text_atomically(path, self.to_text())

    def _summary(self) -> list[str]:
        lines = [f"{self.source}: {sum(self.counts.values())} axioms and SWRL rules compiled to "
                 f"{len(self.rules)} rules"]
        rules = {kind: len(self.sections.get(kind, ())) for kind in self.counts}
        lines += [f"  compiled {self.counts[k]:4d} {text} -> {rules[k]} rule{'s' * (rules[k] != 1)}"
                  for k, text in KINDS.items() if self.counts.get(k)]
        if self.sections.get("type"):
            lines.append(f"  added    {len(self.sections['type']):4d} rules for {KINDS['type']}")
        lines += [f"  skipped  {n:4d} {kind}: {reason}" for kind, (n, reason) in sorted(self.skipped.items())]
        return lines + [f"  note: {note}" for note in self.notes]

    def _header(self) -> list[str]:
        out = [
            "// Datalog rules compiled from the object-property axioms, SWRL rules and hasSelf",
            f"// restrictions of {self.source} by polygraph_logic.ontology.compile_ontology.",
            "// Do not edit; regenerate with",
            f"//   polygraph compile-ontology {self.source} -o FILE.dl"
            + (" --profile class" if any(n.startswith("class-level") for n in self.notes) else ""),
            "//",
            f"// Ontology: {self.iri or 'no owl:Ontology IRI'}",
        ]
        if self.version_iri or self.version_info:
            out.append(f"// Version: {self.version_iri or '-'} (owl:versionInfo {self.version_info or '-'})")
        if self.iri == RO_IRI:
            out.append(f"// Source: {RO_ATTRIBUTION}")
            if self.version_iri in RO_RELEASES:
                out.append(f"// Release: {RO_RELEASES[self.version_iri]}")
        if self.license:
            out.append(f"// The file declares dcterms:license {self.license}")
        out += ["//", "// Every edge is edge(subject, predicate, object), the predicate a CURIE constant;",
                "// each rule ends with the rdfs:labels of its properties (o: composition).", "//"]
        return out + [f"// {line}" for line in self._summary()]


def _forward(line: str) -> bool:
    """Returns True when a rule walks edges forward: head x -> last, body x -> y -> ... -> last."""
    (rule,) = parse_clauses(rule_text(line))
    at = rule.head.args[0]
    for atom in rule.body:
        if atom.args[0] != at:
            return False
        at = atom.args[2]
    return at == rule.head.args[2]


def class_level(compiled: CompiledOntology) -> CompiledOntology:
    """Returns the rules that are sound between classes read existentially (C P some D).

    Transitivity, sub-properties, equivalences and chains walk edges forward and stay
    sound for "every C is P-related to some D".  Inverse and symmetric rules, and chains
    through an inverse, turn an edge around, which is sound for individuals only: that
    every nucleus is part of some cell does not make every cell have a nucleus part.
    A SWRL rule is kept when its edges form a tree growing out of the head's subject
    (each other variable reached by exactly one edge), which is how a chain reads
    between classes; ``type(C, D)`` then reads C SubClassOf D (reflexive), from the
    graph's subClassOf edges. Contradictions and the hasSelf direction from a self edge
    to a class are dropped. Class-level graphs such as Gene Ontology annotations use this
    profile (with rules/existential.dl); instance-level graphs use every rule.
    """
    kept: dict[str, list[str]] = {}
    dropped = 0
    for kind, rules in compiled.sections.items():
        if kind == "type":
            forward = list(CLASS_TYPE_RULES)
        elif kind in DECIDED_KINDS:
            forward = [r for r in rules if rule_text(r) not in compiled.class_omitted]
        else:
            forward = [r for r in rules if _forward(r)]
        dropped += max(0, len(rules) - len(forward))
        if forward:
            kept[kind] = forward
    sound = sum(reason is None for _, reason in compiled.swrl_verdicts)
    notes = compiled.notes + [
        f"class-level profile: {dropped} rules that turn an edge around (inverse, symmetric, chains "
        "through an inverse) or need one individual where classes give several witnesses are omitted; "
        "they are sound between individuals, not between classes read existentially (C P some D)",
        f"class-level SWRL: {sound} of {len(compiled.swrl_verdicts)} rules are sound between classes",
    ] + [f"class-level SWRL {'kept' if reason is None else 'omitted'}: {text}"
         + ("" if reason is None else f" ({reason})") for text, reason in compiled.swrl_verdicts]
    return replace(compiled, sections=kept, notes=notes)


__all__ = ["CLASS_TYPE_RULES", "CompiledOntology", "INSTANCE_TYPE_RULES", "KINDS", "RO_ATTRIBUTION",
           "class_level", "rule_text"]
