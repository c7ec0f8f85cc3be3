"""Compiles the SWRL rules and owl:hasSelf restrictions of an ontology into Datalog rules.

A SWRL rule (``swrl:Imp``, in RDF/XML or Turtle) whose atoms are object-property atoms
is a Datalog rule over ``edge/3`` as it stands:

    positively regulates(?x, ?y), negatively regulates(?y, ?z) -> negatively regulates(?x, ?z)
    edge(x, "RO:0002212", z) :- edge(x, "RO:0002213", y), edge(y, "RO:0002212", z).

A class atom ``C(?x)`` becomes ``type(x, "C")``; the graph says what ``type/2`` holds
(rules of kind ``type``, see compiled.py). A rule concluding ``owl:Nothing``
becomes ``contradiction(x, y, "reason")``: its label is the product of the two sides.
``C SubClassOf (P hasSelf true)`` becomes ``edge(x, "P", x) :- type(x, "C").``, an
equivalence also the converse. Built-ins, data values, sameAs/differentFrom atoms and
class expressions have no counterpart and are skipped with the reason.

Each rule also gets a verdict for the class-level profile: sound between classes read
existentially when its property atoms form a tree growing out of the head's subject.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

import rdflib
from rdflib import OWL, RDF, RDFS, BNode, Literal, Namespace, URIRef
from rdflib.collection import Collection

from polygraph_logic.ontology.terms import curie, expression, label, step_label
from polygraph_logic.datalog.syntax import format_value

SWRL = Namespace("http://www.w3.org/2003/11/swrl#")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class Compiled(NamedTuple):
    """One SWRL rule or hasSelf restriction, compiled: rules as (text, comment) pairs."""

    kind: str
    rules: list[tuple[str, str]]
    class_omitted: dict[str, str]  # rule text -> why it is not sound between classes
    verdict: tuple[str, str | None] | None = None  # SWRL text, None if sound between classes


class Skipped(NamedTuple):
    """One SWRL rule or restriction with no rule: the skip kind, reason and what it was."""

    kind: str
    reason: str
    item: str


class _Skip(Exception):
    def __init__(self, kind: str, reason: str, detail: str = ""):
        super().__init__(reason)
        self.kind, self.reason, self.detail = kind, reason, detail


class _Atom(NamedTuple):
    """A SWRL atom: ``edge`` (a Step and two terms), ``type`` (a class and one term), ``nothing``."""

    kind: str
    term: object  # Step for edge, class IRI for type, None for nothing
    args: tuple[str, ...]  # Datalog terms: variable names or quoted constants

    def datalog(self) -> str:
        if self.kind == "edge":
            return self.term.atom(*self.args)
        return f"type({self.args[0]}, {format_value(curie(self.term))})"

    def ends(self) -> tuple[str, str]:
        """Returns (subject, object) of an edge atom after an inverse is turned around."""
        s, o = self.args
        return (o, s) if self.term.inverse else (s, o)


def translate(graph: rdflib.Graph) -> Iterator[Compiled | Skipped]:
    """Yields every SWRL rule (sorted by its text) and hasSelf restriction, compiled or skipped."""
    found = []
    for imp in set(graph.subjects(RDF.type, SWRL.Imp)):
        reader = _RuleReader(graph, imp)
        try:
            found.append(reader.compile())
        except _Skip as skip:
            found.append(Skipped(skip.kind, skip.reason, reader.name() + (f" ({skip.detail})" * bool(skip.detail))))
    yield from sorted(found, key=lambda r: (r.kind, str(r.rules if isinstance(r, Compiled) else r.item)))
    yield from _has_self(graph)


class _RuleReader:
    """Reads one swrl:Imp into atoms and writes its Datalog rules."""

    def __init__(self, graph: rdflib.Graph, imp):
        self.graph, self.imp = graph, imp
        self.variables: dict[object, str] = {}

    def name(self) -> str:
        """Returns how the report names the rule: its IRI or 'anonymous', and its label."""
        iri = curie(self.imp) if isinstance(self.imp, URIRef) else "(no IRI)"
        found = label(self.graph, self.imp) if (self.imp, RDFS.label, None) in self.graph else None
        return f"SWRL rule {iri}" + (f' "{found}"' if found else "")

    def compile(self) -> Compiled:
        body, head = self.atoms(SWRL.body), self.atoms(SWRL.head)
        if not body or not head:
            raise _Skip("swrl_empty", "a SWRL rule with an empty body or head states no implication")
        bound = {a for atom in body for a in atom.args if _is_variable(a)}
        if any(a not in bound for atom in head for a in atom.args if _is_variable(a)):
            raise _Skip("swrl_unsafe", "a head variable that no body atom binds: an unsafe rule")
        text = f"{self.human(body)} -> {self.human(head)}"
        comment = f"{self.name()}: {text}"
        joined = ", ".join(atom.datalog() for atom in body)
        nothing = [a for atom in head if atom.kind == "nothing" for a in atom.args]
        if nothing:
            reason = format_value(_sides(body, nothing) + f"SWRL: {text}")
            rule = f"contradiction({nothing[0]}, {nothing[-1]}, {reason}) :- {joined}."
            why = ("a conclusion of owl:Nothing needs one tuple of individuals; between classes each edge "
                   "may have its own witness")
            return Compiled("contradiction", [(rule, comment)], {rule: why}, (text, why))
        rules = [(f"{atom.datalog()} :- {joined}.", comment) for atom in head]
        why = _class_verdict(body, head)
        kind = "swrl_class" if any(atom.kind == "type" for atom in body + head) else "swrl_edge"
        return Compiled(kind, rules, {r: why for r, _ in rules} if why else {}, (text, why))

    def atoms(self, part) -> list[_Atom]:
        node = self.graph.value(self.imp, part)
        return [] if node is None else [self.atom(a) for a in Collection(self.graph, node)]

    def atom(self, node) -> _Atom:
        g = self.graph
        kind = g.value(node, RDF.type)
        if kind == SWRL.IndividualPropertyAtom:
            step = expression(g, g.value(node, SWRL.propertyPredicate))
            if step is None:
                raise _Skip("swrl_property_expression", "a property atom over a property expression other "
                            "than a named property or [owl:inverseOf P]")
            return _Atom("edge", step, (self.term(g.value(node, SWRL.argument1)),
                                        self.term(g.value(node, SWRL.argument2))))
        if kind == SWRL.ClassAtom:
            cls = g.value(node, SWRL.classPredicate)
            if cls == OWL.Nothing:
                return _Atom("nothing", None, (self.term(g.value(node, SWRL.argument1)),))
            if not isinstance(cls, URIRef):
                raise _Skip("swrl_class_expression", "a class atom over a class expression (restriction, "
                            "intersection, ...): type/2 holds named classes only")
            return _Atom("type", cls, (self.term(g.value(node, SWRL.argument1)),))
        local = str(kind).rsplit("#", 1)[-1] if kind is not None else "an untyped atom"
        raise _Skip("swrl_unsupported_atom", "a built-in, data-valued, data-range, sameAs or differentFrom "
                    "atom: edge/3 and type/2 have no counterpart", local)

    def term(self, node) -> str:
        if node is None or isinstance(node, (Literal, BNode)):
            raise _Skip("swrl_unsupported_atom", "a built-in, data-valued, data-range, sameAs or differentFrom "
                        "atom: edge/3 and type/2 have no counterpart", "an argument that is a data value or missing")
        if (node, RDF.type, SWRL.Variable) not in self.graph:
            return format_value(curie(node))  # a named individual: a constant
        if node not in self.variables:
            name = re.split(r"[#/:]", str(node))[-1]
            name = name if _NAME.match(name) and name != "not" else f"v{len(self.variables)}"
            while name in self.variables.values():
                name += "_"
            self.variables[node] = name
        return self.variables[node]

    def human(self, atoms: list[_Atom]) -> str:
        def one(atom):
            if atom.kind == "edge":
                return f"{step_label(self.graph, atom.term)}({', '.join(atom.args)})"
            name = "owl:Nothing" if atom.kind == "nothing" else label(self.graph, atom.term)
            return f"{name}({atom.args[0]})"
        return ", ".join(map(one, atoms))


_EDGE = re.compile(r'edge\((\w+), "([^"]+)", (\w+)\)\Z')


def _sides(body: list[_Atom], nothing: list[str]) -> str:
    """``"P vs Q: "`` when the body is two edges between the conclusion's two individuals, in its
    direction (the form of a disjointness: the contradiction then has sides, contradiction_layer.py);
    else nothing."""
    found = [_EDGE.match(atom.datalog()) for atom in body]
    ends = (nothing[0], nothing[-1])
    if len(found) != 2 or not all(m is not None and (m[1], m[3]) == ends for m in found) or found[0][2] == found[1][2]:
        return ""
    return f"{found[0][2]} vs {found[1][2]}: "


def _is_variable(term: str) -> bool:
    return not term.startswith('"')


def _class_verdict(body: list[_Atom], head: list[_Atom]) -> str | None:
    """Returns why a rule is unsound between classes read existentially, or None if it is sound.

    Sound when the edges of the body form a tree growing out of the head's subject:
    every C0 has some C1 by its P1 edge, that one some C2, ...; each witness is chosen
    once, so the head's conclusion holds for every member of the root class.
    """
    roots = {atom.args[0] if atom.kind == "type" else atom.ends()[0] for atom in head}
    if len(roots) != 1:
        return "its conclusions start from different variables"
    (root,) = roots
    edges = [atom.ends() for atom in body if atom.kind == "edge"]
    terms = {a for atom in body + head for a in atom.args}
    if any(not _is_variable(t) for t in terms):
        return "it names an individual, which a class-level graph does not hold"
    incoming: dict[str, list[str]] = {}
    for s, o in edges:
        incoming.setdefault(o, []).append(s)
    if root in incoming:
        return f"an edge comes into the head's subject {root}: it is read backwards"
    for var, sources in incoming.items():
        if len(sources) > 1:
            return f"{var} is reached by {len(sources)} edges, whose witnesses need not be one individual"
    reached, frontier = {root}, [root]
    while frontier:
        at = frontier.pop()
        for s, o in edges:
            if s == at and o not in reached:
                reached.add(o)
                frontier.append(o)
    missing = sorted(terms - reached)
    if missing:
        return f"{', '.join(missing)} is not reached from the head's subject {root} along the edges"
    return None


def _has_self(graph: rdflib.Graph) -> Iterator[Compiled | Skipped]:
    """Yields each owl:hasSelf restriction compiled against the named classes it is said of."""
    for restriction in sorted(set(graph.subjects(OWL.hasSelf, None)), key=lambda n: _has_self_key(graph, n)):
        step = expression(graph, graph.value(restriction, OWL.onProperty))
        value = graph.value(restriction, OWL.hasSelf)
        name = f"{step_label(graph, step) if step else 'an unnamed property'} some Self"
        if step is None or not (isinstance(value, Literal) and value.toPython() is True):
            yield Skipped("has_self_other", "a hasSelf restriction that is false or over a property "
                          "expression: no self edge follows", name)
            continue
        self_edge = step.atom("x", "x")
        forward, backward = [], []  # class -> self edge; self edge -> class
        for cls, predicate in graph.subject_predicates(restriction):
            if isinstance(cls, URIRef) and predicate in (RDFS.subClassOf, OWL.equivalentClass):
                forward.append(cls)
                if predicate == OWL.equivalentClass:
                    backward.append(cls)
        for predicate, cls in graph.predicate_objects(restriction):
            if isinstance(cls, URIRef) and predicate in (RDFS.subClassOf, OWL.equivalentClass):
                backward.append(cls)
                if predicate == OWL.equivalentClass:
                    forward.append(cls)
        if not forward and not backward:
            yield Skipped("has_self_nested", "a hasSelf restriction inside a class expression (intersection, "
                          "someValuesFrom, ...), not said of a named class: no rule", name)
            continue
        rules, omitted = [], {}
        for cls in sorted(set(forward)):
            rules.append((f"{self_edge} :- type(x, {format_value(curie(cls))}).",
                          f"hasSelf: {label(graph, cls)} SubClassOf {name}"))
        for cls in sorted(set(backward)):
            rule = f"type(x, {format_value(curie(cls))}) :- {self_edge}."
            rules.append((rule, f"hasSelf: {name} SubClassOf {label(graph, cls)}"))
            omitted[rule] = "between classes a self edge C P C says every C is P-related to some C, not to itself"
        yield Compiled("has_self", rules, omitted)


def _has_self_key(graph: rdflib.Graph, node) -> str:
    return str(graph.value(node, OWL.onProperty)) + " ".join(sorted(map(str, graph.subjects(None, node))))


__all__ = ["SWRL", "Compiled", "Skipped", "translate"]
