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
compiled by swapping the arguments of that step. SWRL rules and owl:hasSelf restrictions
are compiled by swrl.py (class atoms read ``type/2``; owl:Nothing gives ``contradiction/3``).
A disjointness derives a contradiction (the pair in CURIE order, see rules/contradictions.dl):

    P propertyDisjointWith Q  contradiction(x, y, "P vs Q: ...") :- edge(x, "P", y), edge(x, "Q", y).

Axioms that constrain rather than derive (functional, irreflexive, domain, ...) and class
axioms have no rule and are counted in ``skipped``, each listed in ``report()``, with the reason.

    compiled = compile_ontology("ro.owl"); compiled.write("rules/ro.dl"); print(compiled.report())
"""

from __future__ import annotations

from pathlib import Path

import rdflib
from rdflib import OWL, RDF, RDFS, BNode, URIRef
from rdflib.collection import Collection

from polygraph_logic.ontology.compiled import (
    KINDS,
    RO_ATTRIBUTION,
    CompiledOntology,
    INSTANCE_TYPE_RULES,
    class_level,
)
from polygraph_logic.errors import PolygraphError
from polygraph_logic.ontology.terms import PREFIXES, Step, curie, expression, step_label
from polygraph_logic.datalog.syntax import format_value
from polygraph_logic.ontology.swrl import Compiled, translate

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
    (RDF.type, OWL.AllDisjointProperties): ("all_disjoint_properties", _NO_EDGES),
    (RDFS.domain, None): ("domain", _TYPING.format("the subject")),
    (RDFS.range, None): ("range", _TYPING.format("the object")),
}
_DISJOINT_BETWEEN_CLASSES = ("a contradiction needs one pair of individuals related both ways; between classes "
                             "read existentially each edge may have its own witness")
_OBJECT_MARKERS = {OWL.ObjectProperty, OWL.TransitiveProperty, OWL.SymmetricProperty, OWL.AsymmetricProperty,
                   OWL.ReflexiveProperty, OWL.IrreflexiveProperty, OWL.InverseFunctionalProperty}
_FORMATS = {".ttl": "turtle", ".turtle": "turtle", ".owl": "xml", ".rdf": "xml", ".xml": "xml"}


def compile_ontology(path: str | Path) -> CompiledOntology:
    """Reads an OWL file (RDF/XML or Turtle) and returns its property axioms, SWRL rules and
    hasSelf restrictions compiled to rules.

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
        for prop, other in g.subject_objects(OWL.propertyDisjointWith):
            self.disjoint(prop, other)
        self.skip_constraints()
        self.skip_class_axioms()
        self.swrl()
        self.finish()

    def axiom(self, kind: str, nodes: list, make) -> None:
        steps = [expression(self.graph, node) for node in nodes]
        if any(step is None for step in steps):
            self.skip("anonymous_expression", "a blank-node property expression other than "
                      "[owl:inverseOf P]: no named predicate to write", f"{kind}: " + ", ".join(map(self.name, nodes)))
            return
        self.out.counts[kind] = self.out.counts.get(kind, 0) + 1
        for head, body, comment in make(*steps):
            self.add(kind, f"{head} :- {', '.join(body)}.", comment)

    def sub_property(self, sub, sup) -> None:
        if sup == OWL.topObjectProperty or sub == sup:
            self.skip("sub_property_of_trivial", "P subPropertyOf owl:topObjectProperty (or of itself) "
                      "holds of every pair; a rule would only add noise", self.triple(sub, RDFS.subPropertyOf, sup))
            return
        kinds = {self.property_kind(node) for node in (sub, sup)}
        if kinds & {"annotation", "datatype"} or "object" not in kinds:
            self.skip("sub_property_of_non_object", "between annotation (or datatype, or undeclared) "
                      "properties: they annotate terms and relate no edges", self.triple(sub, RDFS.subPropertyOf, sup))
            return
        self.axiom("sub_property_of", [sub, sup], lambda p, q: [
            self._implies(p, q, f"{self.label(p)} -> {self.label(q)}")])

    def chain(self, sup, items) -> None:
        members = list(Collection(self.graph, items))
        item = f"{' o '.join(map(self.name, members))} -> {self.name(sup)}"
        if len(members) < 2:
            self.skip("chain_too_short", "a property chain needs at least two members", item)
            return
        if len(members) > 3:
            self.skip("chain_longer_than_3", "chains of 4 or more steps are not compiled (RO has none)", item)
            return
        names = ["x", "y", "z"] if len(members) == 2 else ["x", "y1", "y2", "z"]

        def make(*steps):
            *chain, head = steps
            body = [step.atom(a, b) for step, a, b in zip(chain, names, names[1:])]
            text = " o ".join(self.label(step) for step in chain)
            return [(head.atom("x", "z"), body, f"{text} -> {self.label(head)}")]

        self.axiom(f"chain_{len(members)}", [*members, sup], make)

    def disjoint(self, prop, other) -> None:
        """P propertyDisjointWith Q: no pair may be related by both, so both edges between one pair are a
        ``contradiction(x, y, "P vs Q: ...")`` (rules/contradictions.dl's encoding: the sides are
        (x, P, y) and (x, Q, y)), the pair written in CURIE order so P-Q and Q-P give one rule."""
        item = self.triple(prop, OWL.propertyDisjointWith, other)
        if not (isinstance(prop, URIRef) and isinstance(other, URIRef)):
            self.skip("anonymous_expression", "a blank-node property expression: the contradiction's "
                      "encoding names two named properties", item)
            return
        if prop == other:
            self.skip("property_disjoint_with_itself", "a property disjoint with itself relates nothing; "
                      "every edge of it would be a contradiction", item)
            return

        def make(p, q):
            p, q = sorted((p, q), key=lambda step: curie(step.iri))
            labels = f"{self.label(p)}, {self.label(q)}"
            reason = format_value(f"{curie(p.iri)} vs {curie(q.iri)}: owl:propertyDisjointWith ({labels})")
            return [(f"contradiction(x, y, {reason})", [p.atom("x", "y"), q.atom("x", "y")],
                     f"disjoint: {labels}")]

        self.axiom("property_disjoint_with", [prop, other], make)
        for text, (kind, _) in self.rules.items():
            if kind == "property_disjoint_with":
                self.out.class_omitted[text] = _DISJOINT_BETWEEN_CLASSES

    def skip_constraints(self) -> None:
        for (predicate, obj), (kind, reason) in _NO_RULE.items():
            for triple in sorted(self.graph.triples((None, predicate, obj))):
                self.skip(kind, reason, self.triple(*triple))
        expressions = sum(isinstance(s, BNode) for s in self.graph.subjects(OWL.inverseOf))
        if expressions:
            self.out.notes.append(
                f"{expressions} anonymous inverse expressions ([owl:inverseOf P]) occur inside chains, "
                "subPropertyOf axioms or SWRL atoms; they are compiled there (arguments swapped), "
                "not counted as inverseOf")

    def skip_class_axioms(self) -> None:
        """Counts the class axioms: edges between classes come from the ontology's graph
        (`polygraph import obographs`), not from this compiler; hasSelf ones are compiled."""
        g = self.graph
        selfish = set(g.subjects(OWL.hasSelf, None))
        triples = [t for p in (RDFS.subClassOf, OWL.equivalentClass, OWL.disjointWith, OWL.disjointUnionOf)
                   for t in g.triples((None, p, None)) if not {t[0], t[2]} & selfish]
        triples += list(g.triples((None, RDF.type, OWL.AllDisjointClasses)))
        for triple in sorted(triples):
            self.skip("class_axiom", "a class axiom (subClassOf, equivalentClass, disjointness): this compiler "
                      "reads property axioms, SWRL rules and hasSelf restrictions; class edges come from the "
                      "ontology's graph (polygraph import obographs)", self.triple(*triple))

    def swrl(self) -> None:
        """Adds the SWRL rules and hasSelf restrictions (swrl.py), and type/2 if any rule reads it."""
        for found in translate(self.graph):
            if not isinstance(found, Compiled):
                self.skip(found.kind, found.reason, found.item)
                continue
            self.out.counts[found.kind] = self.out.counts.get(found.kind, 0) + 1
            for text, comment in found.rules:
                self.add(found.kind, text, comment)
            self.out.class_omitted.update(found.class_omitted)
            if found.verdict is not None:
                self.out.swrl_verdicts.append(found.verdict)
        if any("type(" in text for text in self.rules):
            for line in INSTANCE_TYPE_RULES:
                text, comment = line.split("  // ")
                self.add("type", text, comment)

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

    def skip(self, kind: str, reason: str, item: str) -> None:
        count, _ = self.out.skipped.get(kind, (0, reason))
        self.out.skipped[kind] = (count + 1, reason)
        self.out.skipped_items.setdefault(kind, []).append(item)

    def name(self, node) -> str:
        """Returns a term as the report lists it: CURIE and label, or 'an anonymous expression'."""
        if isinstance(node, BNode):
            step = expression(self.graph, node)
            return f"inverse({self.name(step.iri)})" if step else "an anonymous expression"
        text = curie(node)
        found = step_label(self.graph, Step(node)) if isinstance(node, URIRef) else text
        return text if found == text else f"{text} ({found})"

    def triple(self, s, p, o) -> str:
        return f"{self.name(s)} {curie(p)} {self.name(o)}"

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
        return step_label(self.graph, step)

    @staticmethod
    def _implies(p: Step, q: Step, comment: str) -> tuple[str, list[str], str]:
        return q.atom("x", "y"), [p.atom("x", "y")], comment


__all__ = ["CompiledOntology", "KINDS", "PREFIXES", "RO_ATTRIBUTION", "Step", "class_level", "compile_ontology",
           "curie", "read_graph"]
