"""Compiles the object-property axioms of an OWL ontology into Datalog rules over ``edge/3``.

The graph keeps every edge in ``edge(subject, predicate, object)``, the predicate a CURIE
constant (``"RO:0002211"``); an axiom about properties becomes a rule over that relation:

    TransitiveProperty P      edge(x, "P", z) :- edge(x, "P", y), edge(y, "P", z).
    SymmetricProperty P       edge(y, "P", x) :- edge(x, "P", y).
    P inverseOf Q             edge(y, "Q", x) :- edge(x, "P", y).   (and Q to P)
    P equivalentProperty Q    edge(x, "Q", y) :- edge(x, "P", y).   (and Q to P)
    P subPropertyOf Q         edge(x, "Q", y) :- edge(x, "P", y).
    P1 o P2 -> Q (chain)      edge(x, "Q", z) :- edge(x, "P1", y), edge(y, "P2", z).

An anonymous inverse ``[owl:inverseOf P]`` inside a chain or a subPropertyOf axiom is
compiled by swapping the arguments of that step. Axioms that constrain rather than
derive (functional, disjoint, domain, ...) have no rule and are counted in ``skipped``
with the reason.

    compiled = compile_ontology("ro.owl"); compiled.write("rules/ro.dl"); print(compiled.report())
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import rdflib
from rdflib import OWL, RDF, RDFS, BNode, URIRef
from rdflib.collection import Collection

from .errors import PolygraphError
from .files import write_text_atomically
from .syntax import format_value

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

# Compiled axiom kinds, in the order their rules are written; value: what the header says.
KINDS = {
    "transitive": "owl:TransitiveProperty",
    "symmetric": "owl:SymmetricProperty",
    "inverse_of": "owl:inverseOf (two rules each)",
    "equivalent_property": "owl:equivalentProperty (two rules each)",
    "sub_property_of": "rdfs:subPropertyOf between object properties",
    "chain_2": "owl:propertyChainAxiom of length 2",
    "chain_3": "owl:propertyChainAxiom of length 3",
}

_NO_EDGES = "a constraint: it can only make the ontology inconsistent, it derives no edge"
_TYPING = "types {} (rdf:type), which edge/3 between classes does not record; OBO tools use it as a check"
_SAME_AS = "entails equality of {} (owl:sameAs), which edge/3 does not model"
# Axioms with no rule, as (predicate, object or None) triple patterns -> (kind, reason).
_NO_RULE = {
    (RDF.type, OWL.FunctionalProperty): ("functional", _SAME_AS.format("objects")),
    (RDF.type, OWL.InverseFunctionalProperty): ("inverse_functional", _SAME_AS.format("subjects")),
    (RDF.type, OWL.ReflexiveProperty): ("reflexive", "entails edge(x, P, x) for all x: an unsafe rule"),
    (RDF.type, OWL.IrreflexiveProperty): ("irreflexive", _NO_EDGES),
    (RDF.type, OWL.AsymmetricProperty): ("asymmetric", _NO_EDGES),
    (OWL.propertyDisjointWith, None): ("property_disjoint_with", _NO_EDGES),
    (RDF.type, OWL.AllDisjointProperties): ("all_disjoint_properties", _NO_EDGES),
    (RDFS.domain, None): ("domain", _TYPING.format("the subject")),
    (RDFS.range, None): ("range", _TYPING.format("the object")),
}
_OBJECT_MARKERS = {OWL.ObjectProperty, OWL.TransitiveProperty, OWL.SymmetricProperty, OWL.AsymmetricProperty,
                   OWL.ReflexiveProperty, OWL.IrreflexiveProperty, OWL.InverseFunctionalProperty}
_FORMATS = {".ttl": "turtle", ".turtle": "turtle", ".owl": "xml", ".rdf": "xml", ".xml": "xml"}


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


@dataclass
class CompiledOntology:
    """Datalog rules compiled from one ontology, with what was compiled and what was skipped.

    ``sections`` maps each compiled kind (see KINDS) to its rules, sorted; ``counts``
    maps it to the number of axioms; ``skipped`` maps a kind to (axioms, reason).
    """

    source: str
    iri: str | None
    version_iri: str | None
    version_info: str | None
    license: str | None
    sections: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, tuple[int, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

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
        """Returns a human summary: compiled axioms and rules per kind, skipped ones with reasons."""
        return "\n".join(self._summary())

    def write(self, path: str | Path) -> None:
        """Writes ``to_text()`` to ``path`` atomically (a temporary file, then os.replace)."""
        write_text_atomically(path, self.to_text())

    def _summary(self) -> list[str]:
        lines = [f"{self.source}: {sum(self.counts.values())} axioms compiled to {len(self.rules)} rules"]
        rules = {kind: len(self.sections.get(kind, ())) for kind in self.counts}
        lines += [f"  compiled {self.counts[k]:4d} {text} -> {rules[k]} rule{'s' * (rules[k] != 1)}"
                  for k, text in KINDS.items() if self.counts.get(k)]
        lines += [f"  skipped  {n:4d} {kind}: {reason}" for kind, (n, reason) in sorted(self.skipped.items())]
        return lines + [f"  note: {note}" for note in self.notes]

    def _header(self) -> list[str]:
        out = [
            f"// Datalog rules compiled from the object-property axioms of {self.source}",
            "// by polygraph_logic.ontology.compile_ontology. Do not edit; regenerate with",
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


def compile_ontology(path: str | Path) -> CompiledOntology:
    """Reads an OWL file (RDF/XML or Turtle) and returns its property axioms compiled to rules.

    Raises PolygraphError(file_error) naming the file if it is missing or parses as neither.
    """
    path = Path(path)
    graph = read_graph(path)
    ontology = min(graph.subjects(RDF.type, OWL.Ontology), key=str, default=None)

    def value(predicate) -> str | None:
        found = None if ontology is None else graph.value(ontology, predicate)
        return None if found is None else str(found).strip()

    compiled = CompiledOntology(
        source=path.name,
        iri=str(ontology) if isinstance(ontology, URIRef) else None,
        version_iri=value(OWL.versionIRI),
        version_info=value(OWL.versionInfo),
        license=value(URIRef("http://purl.org/dc/terms/license")),
    )
    _Compiler(graph, compiled).run()
    return compiled


def read_graph(path: Path) -> rdflib.Graph:
    """Parses ``path`` with the rdflib format its extension suggests, falling back to the other."""
    if not path.is_file():
        raise PolygraphError("file_error", f"cannot read {path}: no such file")
    first = _FORMATS.get(path.suffix.lower(), "xml")
    errors = []
    for fmt in (first, "turtle" if first == "xml" else "xml"):
        graph = rdflib.Graph()
        try:
            graph.parse(str(path), format=fmt)
        except Exception as error:  # rdflib raises many types (SAXParseException, BadSyntax, ...)
            message = " ".join(str(error).split())[:200]
            errors.append(f"{'RDF/XML' if fmt == 'xml' else 'Turtle'}: {type(error).__name__}: {message}")
            continue
        if len(graph):
            return graph
        errors.append(f"{'RDF/XML' if fmt == 'xml' else 'Turtle'}: no triples")
    raise PolygraphError(
        "file_error",
        f"{path}: not an OWL ontology in RDF/XML or Turtle ({'; '.join(errors)}). "
        "Convert other syntaxes first, e.g. `robot convert -i FILE -o FILE.owl`",
    )


class _Compiler:
    """Walks the graph once per axiom kind, collecting rules, counts and skips."""

    def __init__(self, graph: rdflib.Graph, out: CompiledOntology):
        self.graph, self.out = graph, out
        self.rules: dict[str, tuple[str, set[str]]] = {}  # rule text -> (kind, comments)

    def run(self) -> None:
        g = self.graph
        for prop in g.subjects(RDF.type, OWL.TransitiveProperty):
            self.axiom("transitive", [prop], lambda p: [(
                p.atom("x", "z"), [p.atom("x", "y"), p.atom("y", "z")], f"transitive: {self.label(p)}")])
        for prop in g.subjects(RDF.type, OWL.SymmetricProperty):
            self.axiom("symmetric", [prop], lambda p: [(
                p.atom("y", "x"), [p.atom("x", "y")], f"symmetric: {self.label(p)}")])
        for prop, other in g.subject_objects(OWL.inverseOf):
            if isinstance(prop, BNode):
                continue  # [owl:inverseOf P] is an expression, compiled where it is used
            self.axiom("inverse_of", [prop, other], lambda p, q: [
                self._implies(p, q.inverted(), f"inverse: {self.label(p)} -> {self.label(q)}"),
                self._implies(q, p.inverted(), f"inverse: {self.label(q)} -> {self.label(p)}")])
        for prop, other in g.subject_objects(OWL.equivalentProperty):
            self.axiom("equivalent_property", [prop, other], lambda p, q: [
                self._implies(p, q, f"equivalent: {self.label(p)} -> {self.label(q)}"),
                self._implies(q, p, f"equivalent: {self.label(q)} -> {self.label(p)}")])
        for sub, sup in g.subject_objects(RDFS.subPropertyOf):
            self.sub_property(sub, sup)
        for sup, items in g.subject_objects(OWL.propertyChainAxiom):
            self.chain(sup, items)
        self.skip_constraints()
        self.finish()

    def axiom(self, kind: str, nodes: list, make) -> None:
        steps = [self.expression(node) for node in nodes]
        if any(step is None for step in steps):
            self.skip("anonymous_expression", "a blank-node property expression other than "
                      "[owl:inverseOf P]: no named predicate to write")
            return
        self.out.counts[kind] = self.out.counts.get(kind, 0) + 1
        for head, body, comment in make(*steps):
            self.add(kind, f"{head} :- {', '.join(body)}.", comment)

    def sub_property(self, sub, sup) -> None:
        if sup == OWL.topObjectProperty or sub == sup:
            self.skip("sub_property_of_trivial", "P subPropertyOf owl:topObjectProperty (or of itself) "
                      "holds of every pair; a rule would only add noise")
            return
        kinds = {self.property_kind(node) for node in (sub, sup)}
        if kinds & {"annotation", "datatype"} or "object" not in kinds:
            self.skip("sub_property_of_non_object", "between annotation (or datatype, or undeclared) "
                      "properties: they annotate terms and relate no edges")
            return
        self.axiom("sub_property_of", [sub, sup], lambda p, q: [
            self._implies(p, q, f"{self.label(p)} -> {self.label(q)}")])

    def chain(self, sup, items) -> None:
        members = list(Collection(self.graph, items))
        if len(members) < 2:
            self.skip("chain_too_short", "a property chain needs at least two members")
            return
        if len(members) > 3:
            self.skip("chain_longer_than_3", "chains of 4 or more steps are not compiled (RO has none)")
            return
        names = ["x", "y", "z"] if len(members) == 2 else ["x", "y1", "y2", "z"]

        def make(*steps):
            *chain, head = steps
            body = [step.atom(a, b) for step, a, b in zip(chain, names, names[1:])]
            text = " o ".join(self.label(step) for step in chain)
            return [(head.atom("x", "z"), body, f"{text} -> {self.label(head)}")]

        self.axiom(f"chain_{len(members)}", [*members, sup], make)

    def skip_constraints(self) -> None:
        for (predicate, obj), (kind, reason) in _NO_RULE.items():
            for _ in self.graph.triples((None, predicate, obj)):
                self.skip(kind, reason)
        expressions = sum(isinstance(s, BNode) for s in self.graph.subjects(OWL.inverseOf))
        if expressions:
            self.out.notes.append(
                f"{expressions} anonymous inverse expressions ([owl:inverseOf P]) occur inside chains and "
                "subPropertyOf axioms; they are compiled there (arguments swapped), not counted as inverseOf")

    def finish(self) -> None:
        by_kind: dict[str, list[str]] = {kind: [] for kind in KINDS}
        for text, (kind, comments) in sorted(self.rules.items()):
            by_kind[kind].append(f"{text}  // {'; '.join(sorted(comments))}")
        self.out.sections = {kind: rules for kind, rules in by_kind.items() if rules}

    def add(self, kind: str, text: str, comment: str) -> None:
        """Records a rule once; one that several axioms give goes with the first kind in KINDS
        and keeps every comment, so the output does not depend on the graph's triple order."""
        old_kind, comments = self.rules.get(text, (kind, set()))
        self.rules[text] = (min(old_kind, kind, key=list(KINDS).index), comments | {comment})

    def skip(self, kind: str, reason: str) -> None:
        count, _ = self.out.skipped.get(kind, (0, reason))
        self.out.skipped[kind] = (count + 1, reason)

    def expression(self, node) -> Step | None:
        """Returns the Step a property node denotes: a named IRI or [owl:inverseOf named]."""
        if isinstance(node, URIRef):
            return Step(node)
        inner = self.graph.value(node, OWL.inverseOf)
        if isinstance(node, BNode) and inner is not None:
            step = self.expression(inner)
            return step.inverted() if step is not None else None
        return None

    def property_kind(self, node) -> str:
        """Returns object, annotation, datatype or unknown for a property node."""
        g = self.graph
        if isinstance(node, BNode):
            return "object" if g.value(node, OWL.inverseOf) is not None else "unknown"
        types = set(g.objects(node, RDF.type))
        used = any((s, p, o) in g for s, p, o in [(node, OWL.inverseOf, None), (None, OWL.inverseOf, node),
                                                   (node, OWL.propertyChainAxiom, None)])
        if types & _OBJECT_MARKERS or used:
            return "object"
        if OWL.AnnotationProperty in types:
            return "annotation"
        if OWL.DatatypeProperty in types:
            return "datatype"
        return "unknown"

    def label(self, step: Step) -> str:
        """Returns the rdfs:label(s) of a step (English or untagged ones if any), else its CURIE."""
        found = list(self.graph.objects(step.iri, RDFS.label))
        english = [lit for lit in found if getattr(lit, "language", None) in (None, "en")]
        labels = sorted({" ".join(str(lit).split()) for lit in english or found})
        name = " / ".join(labels) if labels else curie(step.iri)
        return f"inverse({name})" if step.inverse else name

    @staticmethod
    def _implies(p: Step, q: Step, comment: str) -> tuple[str, list[str], str]:
        return q.atom("x", "y"), [p.atom("x", "y")], comment


def _forward(rule_text: str) -> bool:
    """Returns True when a rule walks edges forward: head x -> last, body x -> y -> ... -> last."""
    from .syntax import parse_clauses

    (rule,) = parse_clauses(rule_text)
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
    Class-level graphs such as Gene Ontology annotations use this profile (with
    rules/existential.dl); instance-level graphs use every rule.
    """
    kept: dict[str, list[str]] = {}
    dropped = 0
    for kind, rules in compiled.sections.items():
        forward = [r for r in rules if _forward(r)]
        dropped += len(rules) - len(forward)
        if forward:
            kept[kind] = forward
    notes = compiled.notes + [
        f"class-level profile: {dropped} rules that turn an edge around (inverse, symmetric, chains "
        "through an inverse) are omitted; they are sound between individuals, not between classes "
        "read existentially (C P some D)"]
    return replace(compiled, sections=kept, notes=notes)


__all__ = ["CompiledOntology", "KINDS", "PREFIXES", "RO_ATTRIBUTION", "Step", "class_level", "compile_ontology",
           "curie", "read_graph"]
