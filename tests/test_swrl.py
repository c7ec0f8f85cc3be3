"""SWRL rules and owl:hasSelf restrictions compiled to Datalog: a small ontology, then RO's.

The RO tests evaluate the shipped rules/ro.dl (no ro.owl needed) on hand examples worked out
from the SWRL text of ro.owl, and compare with pyDatalog; the counts, the fresh-compilation
checks and the GO slice skip when ../shared/data is absent.
"""

from pathlib import Path

import pytest
import rdflib

from polygraph_logic import evaluate, load_program, parse_program
from polygraph_logic.ontology.compiled import KINDS
from polygraph_logic.ontology.owl import class_level, compile_ontology
from polygraph_logic.datalog.pydatalog_engine import evaluate_with_pydatalog

ROOT = Path(__file__).resolve().parent.parent
RO_OWL = ROOT.parent / "shared" / "data" / "ro" / "ro.owl"
RO_DL, RO_CLASS_DL = ROOT / "rules" / "ro.dl", ROOT / "rules" / "ro-class.dl"
GO = ROOT.parent / "shared" / "data" / "go-pombase"

_PROPERTY = ('[ a swrl:IndividualPropertyAtom ; swrl:propertyPredicate {} ; '
             'swrl:argument1 {} ; swrl:argument2 {} ]')


def prop(p, a, b):
    return _PROPERTY.format(p, a, b)


def cls(c, a):
    return f"[ a swrl:ClassAtom ; swrl:classPredicate {c} ; swrl:argument1 {a} ]"


def imp(node, body, head, extra=""):
    return f"{node} a swrl:Imp {extra}; swrl:body ( {' '.join(body)} ) ; swrl:head ( {' '.join(head)} ) .\n"


MINI = """\
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix obo: <http://purl.obolibrary.org/obo/> .
@prefix swrl: <http://www.w3.org/2003/11/swrl#> .
@prefix swrlb: <http://www.w3.org/2003/11/swrlb#> .
@prefix var: <urn:swrl:var#> .
@prefix ex: <http://example.org/> .

<http://example.org/mini-swrl.owl> a owl:Ontology .
var:x a swrl:Variable . var:y a swrl:Variable . var:z a swrl:Variable .
obo:EX_0000001 a owl:ObjectProperty ; rdfs:label "activates" .
obo:EX_0000002 a owl:ObjectProperty ; rdfs:label "inhibits" .
obo:EX_0000003 a owl:ObjectProperty ; rdfs:label "phosphorylates" .
obo:EX_0000004 a owl:ObjectProperty ; rdfs:label "is kinase" .
obo:EX_0000005 a owl:ObjectProperty ; rdfs:label "overlaps" .
obo:EX_0000006 a owl:ObjectProperty ; rdfs:label "is neuron" .
obo:EXC_0000001 a owl:Class ; rdfs:label "kinase" ;
    rdfs:subClassOf [ a owl:Restriction ; owl:onProperty obo:EX_0000004 ; owl:hasSelf true ] .
obo:EXC_0000002 a owl:Class ; rdfs:label "neuron" ;
    owl:equivalentClass [ a owl:Restriction ; owl:onProperty obo:EX_0000006 ; owl:hasSelf true ] .
obo:EXC_0000003 a owl:Class ; rdfs:label "kinase neuron" ;
    rdfs:subClassOf [ owl:intersectionOf ( obo:EXC_0000001
        [ a owl:Restriction ; owl:onProperty obo:EX_0000006 ; owl:hasSelf true ] ) ] .
""" + "".join([
    imp("ex:rule1", [prop("obo:EX_0000001", "var:x", "var:y"), prop("obo:EX_0000002", "var:y", "var:z")],
        [prop("obo:EX_0000002", "var:x", "var:z")], '; rdfs:label "activation then inhibition" '),
    imp("[]", [cls("obo:EXC_0000001", "var:x"), prop("obo:EX_0000003", "var:x", "var:y")],
        [prop("obo:EX_0000001", "var:x", "var:y")]),
    imp("[]", [prop("obo:EX_0000001", "var:x", "var:y"), prop("obo:EX_0000005", "var:x", "var:y")],
        [cls("owl:Nothing", "var:x"), cls("owl:Nothing", "var:y")], '; rdfs:label "disjoint" '),
    imp("[]", [prop("obo:EX_0000001", "var:x", "var:y"),
               "[ a swrl:BuiltinAtom ; swrl:builtin swrlb:equal ; swrl:arguments ( var:x var:y ) ]"],
        [prop("obo:EX_0000002", "var:x", "var:y")], '; rdfs:label "with a built-in" '),
    imp("[]", [prop("obo:EX_0000001", "var:x", "var:y")], [prop("obo:EX_0000002", "var:x", "var:z")],
        '; rdfs:label "unsafe" '),
    imp("[]", [prop("obo:EX_0000001", "var:x", "var:y")], [prop("[ owl:inverseOf obo:EX_0000002 ]", "var:x", "var:y")]),
    imp("[]", [prop("obo:EX_0000003", "ex:alice", "var:y")], [prop("obo:EX_0000001", "ex:alice", "var:y")]),
])

ALICE = '"http://example.org/alice"'
MINI_RULES = {
    "swrl_edge": [
        f'edge({ALICE}, "EX:0000001", y) :- edge({ALICE}, "EX:0000003", y).'
        f"  // SWRL rule (no IRI): phosphorylates({ALICE}, y) -> activates({ALICE}, y)",
        'edge(x, "EX:0000002", z) :- edge(x, "EX:0000001", y), edge(y, "EX:0000002", z).  // SWRL rule '
        'http://example.org/rule1 "activation then inhibition": activates(x, y), inhibits(y, z) -> inhibits(x, z)',
        'edge(y, "EX:0000002", x) :- edge(x, "EX:0000001", y).'
        "  // SWRL rule (no IRI): activates(x, y) -> inverse(inhibits)(x, y)",
    ],
    "swrl_class": [
        'edge(x, "EX:0000001", y) :- type(x, "EXC:0000001"), edge(x, "EX:0000003", y).'
        "  // SWRL rule (no IRI): kinase(x), phosphorylates(x, y) -> activates(x, y)",
    ],
    "has_self": [
        'edge(x, "EX:0000004", x) :- type(x, "EXC:0000001").  // hasSelf: kinase SubClassOf is kinase some Self',
        'edge(x, "EX:0000006", x) :- type(x, "EXC:0000002").  // hasSelf: neuron SubClassOf is neuron some Self',
        'type(x, "EXC:0000002") :- edge(x, "EX:0000006", x).  // hasSelf: is neuron some Self SubClassOf neuron',
    ],
    "type": [
        'type(x, c) :- edge(x, "rdf:type", c).  // an individual is a member of its asserted class',
        'type(x, d) :- type(x, c), edge(c, "rdfs:subClassOf", d).  // and of every superclass',
    ],
    "contradiction": [
        'contradiction(x, y, "EX:0000001 vs EX:0000005: SWRL: activates(x, y), overlaps(x, y) -> owl:Nothing(x), '
        'owl:Nothing(y)") :- '
        'edge(x, "EX:0000001", y), edge(x, "EX:0000005", y).  // SWRL rule (no IRI) "disjoint": '
        "activates(x, y), overlaps(x, y) -> owl:Nothing(x), owl:Nothing(y)",
    ],
}


@pytest.fixture
def mini(tmp_path):
    path = tmp_path / "mini-swrl.ttl"
    path.write_text(MINI, encoding="utf-8")
    return path


def test_swrl_and_has_self_give_exactly_the_expected_rules(mini):
    compiled = compile_ontology(mini)
    assert compiled.sections == MINI_RULES
    assert compiled.counts == {"swrl_edge": 3, "swrl_class": 1, "has_self": 2, "contradiction": 1}
    assert len(parse_program(compiled.to_text(), "mini.dl").rules) == 10  # comments do not disturb parsing


def test_skipped_rules_and_restrictions_are_listed_with_the_reason(mini):
    compiled = compile_ontology(mini)
    assert {kind: n for kind, (n, _) in compiled.skipped.items()} == {
        "swrl_unsafe": 1, "swrl_unsupported_atom": 1, "has_self_nested": 1, "class_axiom": 1}
    report = compiled.report()
    for line in ['  swrl_unsafe: SWRL rule (no IRI) "unsafe"',
                 '  swrl_unsupported_atom: SWRL rule (no IRI) "with a built-in" (BuiltinAtom)',
                 "  has_self_nested: is neuron some Self",
                 "  class_axiom: EXC:0000003 (kinase neuron) rdfs:subClassOf an anonymous expression"]:
        assert line in report.splitlines()
    for kind, (_, reason) in compiled.skipped.items():
        assert f"skipped     1 {kind}: {reason}" in report


def test_rdf_xml_and_turtle_give_the_same_swrl_rules(mini, tmp_path):
    xml = tmp_path / "mini-swrl.owl"
    xml.write_text(rdflib.Graph().parse(mini, format="turtle").serialize(format="xml"), encoding="utf-8")
    from_ttl, from_xml = compile_ontology(mini), compile_ontology(xml)
    assert from_xml.sections == from_ttl.sections == MINI_RULES
    assert from_xml.skipped == from_ttl.skipped
    assert from_xml.swrl_verdicts == from_ttl.swrl_verdicts


def test_class_profile_keeps_rules_whose_edges_grow_out_of_the_head_subject(mini):
    verdicts = dict(compile_ontology(mini).swrl_verdicts)
    assert verdicts["activates(x, y), inhibits(y, z) -> inhibits(x, z)"] is None
    assert verdicts["kinase(x), phosphorylates(x, y) -> activates(x, y)"] is None
    assert "read backwards" in verdicts["activates(x, y) -> inverse(inhibits)(x, y)"]
    assert "names an individual" in verdicts[f"phosphorylates({ALICE}, y) -> activates({ALICE}, y)"]
    assert "witness" in verdicts["activates(x, y), overlaps(x, y) -> owl:Nothing(x), owl:Nothing(y)"]
    profile = class_level(compile_ontology(mini))
    assert [r.split("  //")[0] for r in profile.sections["swrl_edge"]] == [
        'edge(x, "EX:0000002", z) :- edge(x, "EX:0000001", y), edge(y, "EX:0000002", z).']
    assert "contradiction" not in profile.sections
    assert len(profile.sections["has_self"]) == 2  # the self edge to the class is dropped
    assert profile.sections["type"][0].startswith('type(c, c) :- edge(c, "rdfs:subClassOf", _).')
    assert "class-level SWRL: 2 of 5 rules are sound between classes" in profile.report()


def test_mini_rules_evaluate_through_type_has_self_and_contradiction(mini):
    rules = parse_program(compile_ontology(mini).to_text(), "mini.dl")
    model = evaluate(rules.combine(parse_program("""
        t1 :: edge("k", "rdf:type", "EXC:0000009").
        t2 :: edge("EXC:0000009", "rdfs:subClassOf", "EXC:0000001").
        p1 :: edge("k", "EX:0000003", "s").
        o1 :: edge("k", "EX:0000005", "s").
        n1 :: edge("n", "EX:0000006", "n").
    """)))
    assert str(model.label("type", ("k", "EXC:0000001"))) == "t1·t2"
    assert str(model.label("edge", ("k", "EX:0000004", "k"))) == "t1·t2"  # hasSelf
    assert str(model.label("edge", ("k", "EX:0000001", "s"))) == "p1·t1·t2"  # the class atom
    assert str(model.label("edge", ("s", "EX:0000002", "k"))) == "p1·t1·t2"  # the inverse head
    reason = "EX:0000001 vs EX:0000005: SWRL: activates(x, y), overlaps(x, y) -> owl:Nothing(x), owl:Nothing(y)"
    assert str(model.label("contradiction", ("k", "s", reason))) == "o1·p1·t1·t2"  # product of both sides
    assert str(model.label("type", ("n", "EXC:0000002"))) == "n1"  # equivalence: self edge to class


# --- the Relations Ontology: its 14 SWRL rules over edge/3, one hand example each --------------

# (facts as (subject, predicate, object), the edge the SWRL rule concludes)
RO_EDGE_RULES = [
    ([("a", "RO:0002213", "b"), ("b", "RO:0002212", "c")], ("a", "RO:0002212", "c")),  # pos o neg -> neg
    ([("a", "RO:0002212", "b"), ("b", "RO:0002213", "c")], ("a", "RO:0002212", "c")),  # neg o pos -> neg
    ([("a", "RO:0002212", "b"), ("b", "RO:0019002", "c")], ("a", "RO:0019001", "c")),
    ([("a", "RO:0002264", "b"), ("b", "RO:0002411", "c")], ("a", "RO:0002263", "c")),
    ([("a", "RO:0002411", "b"), ("b", "RO:0002411", "c")], ("a", "RO:0012011", "c")),
    ([("a", "RO:0012011", "b"), ("a", "RO:0002211", "b")], ("a", "RO:0012012", "b")),
    ([("gp", "RO:0002333", "b"), ("b", "RO:0002352", "c"), ("d", "RO:0002013", "c")], ("gp", "RO:0002578", "d")),
    ([("gp", "RO:0002333", "b"), ("b", "RO:0002352", "c"), ("d", "RO:0002015", "c")], ("gp", "RO:0002629", "d")),
    ([("gp", "RO:0002333", "b"), ("b", "RO:0002352", "c"), ("d", "RO:0002014", "c")], ("gp", "RO:0002630", "d")),
    ([("mf", "RO:0002025", "eff"), ("eff", "RO:0002233", "i")], ("mf", "RO:0002233", "i")),
    ([("mf", "RO:0002025", "eff"), ("mf", "RO:0002233", "i")], ("eff", "RO:0002233", "i")),
    ([("mf", "RO:0002025", "eff"), ("mf", "RO:0002578", "t")], ("eff", "RO:0002578", "t")),
    ([("mf", "RO:0002025", "eff"), ("mf", "RO:0002629", "t")], ("eff", "RO:0002629", "t")),
    ([("mf", "RO:0002025", "eff"), ("mf", "RO:0002630", "t")], ("eff", "RO:0002630", "t")),
]


def section(path: Path, *kinds: str):
    """Returns the rules of the given kinds in a compiled rule file (those it has), as a program."""
    heads = tuple(f"{KINDS[kind]} ---\n" for kind in kinds)
    parts = [p.split("\n", 1)[1] for p in path.read_text(encoding="utf-8").split("\n// --- ")[1:]
             if p.startswith(heads)]
    assert parts, kinds
    return parse_program("\n".join(parts), path.name)


@pytest.fixture(scope="module")
def ro_program():
    return load_program(RO_DL)


@pytest.fixture(scope="module")
def ro_axioms():
    """The OWL property axioms of rules/ro.dl (its first seven kinds), parsed once: combined, never modified."""
    return section(RO_DL, *list(KINDS)[:7])


@pytest.fixture(scope="module")
def ro_swrl():
    """The SWRL rules over edges of rules/ro.dl, parsed once: tests combine it with facts, never modify it."""
    return section(RO_DL, "swrl_edge")


def facts_text(facts):
    return "\n".join(f'f{i} :: edge("{s}", "{p}", "{o}").' for i, (s, p, o) in enumerate(facts, 1))


def test_the_shipped_file_has_fourteen_swrl_rules_over_edges():
    assert len(section(RO_DL, "swrl_edge").rules) == len(RO_EDGE_RULES) == 14


@pytest.mark.parametrize("facts, expected", RO_EDGE_RULES, ids=[e[1] for _, e in RO_EDGE_RULES])
def test_each_ro_swrl_rule_on_a_hand_example(ro_program, ro_axioms, ro_swrl, facts, expected):
    given = parse_program(facts_text(facts))
    model = evaluate(ro_program.combine(given))
    # every fact is needed, and nothing else: the label is their product
    assert str(model.label("edge", expected)) == "·".join(f"f{i}" for i in range(1, len(facts) + 1))
    # the OWL property axioms alone do not give it: the SWRL rule does
    axioms = ro_axioms
    assert evaluate(axioms.combine(given), semiring="boolean").label("edge", expected) is None
    # pyDatalog, resolving top down, agrees on what the 14 SWRL rules derive from these facts
    swrl = ro_swrl
    ours = evaluate(swrl.combine(given), semiring="boolean").boolean()["edge"]
    theirs = evaluate_with_pydatalog(given.facts, swrl.rules)["edge"]
    assert theirs == ours == set(facts) | {expected}


def test_ro_class_atoms_and_self_restrictions(ro_program):
    model = evaluate(ro_program.combine(parse_program("""
        t1 :: edge("act", "rdf:type", "GO:0004674").
        t2 :: edge("GO:0004674", "rdfs:subClassOf", "GO:0016301").
        c1 :: edge("gene", "RO:0002215", "act").
        d1 :: edge("act", "RO:0002400", "substrate").
        h1 :: edge("e", "RO:0000053", "d").
        h2 :: edge("d", "rdf:type", "BFO:0000034").
    """)))
    # kinase activity SubClassOf (is kinase activity some Self): the self edge from the class,
    # then capable of o is kinase activity o has direct input -> phosphorylates
    assert str(model.label("edge", ("act", "RO:0002481", "act"))) == "t1·t2"
    assert str(model.label("edge", ("gene", "RO:0002447", "substrate"))) == "c1·d1·t1·t2"
    # has characteristic(e, d), function(d) -> has function(e, d)
    assert str(model.label("edge", ("e", "RO:0000085", "d"))) == "h1·h2"
    assert model.label("edge", ("e", "RO:0000086", "d")) is None  # d is not a quality


def test_ro_nothing_rules_give_contradictions(ro_program):
    model = evaluate(ro_program.combine(parse_program("""
        u1 :: edge("p", "RO:0002411", "q").
        o1 :: edge("p", "RO:0002131", "q").
    """)))
    found = {args: str(label) for args, label in model.facts("contradiction").items()}
    # both rules fire: overlaps is symmetric and causally downstream of is the inverse of upstream
    assert sorted((x, y, reason.split("), ")[0]) for x, y, reason in found) == [
        ("p", "q", "RO:0002411 vs RO:0002131: SWRL: causally upstream of(x, y"),
        ("q", "p", "RO:0002404 vs RO:0002131: SWRL: causally downstream of(x, y")]
    assert set(found.values()) == {"o1·u1"}  # the product of the two sides
    # the reason names the two sides (two edges between the individuals, as a disjointness does)
    from polygraph_logic.graph.contradiction_layer import sides
    (x, y, reason), = [key for key in found if key[0] == "p"]
    assert sides(x, y, reason) == [{"subject": "p", "predicate": "RO:0002411", "object": "q", "negated": False},
                                   {"subject": "p", "predicate": "RO:0002131", "object": "q", "negated": False}]


def test_ro_nothing_contradictions_have_sides_and_a_balance(tmp_path):
    """Built into a graph, RO's owl:Nothing contradictions list their sides and the balance of
    origins of each (one paper for each side here: undecided)."""
    from polygraph_logic import build_graph
    from polygraph_logic.query.contradictions import contradictions
    from polygraph_logic.graph.store.graph_file import Graph
    (tmp_path / "a.jsonl").write_text(
        '{"id": "u1", "source": "paper:U", "subject": "p", "predicate": "RO:0002411", "object": "q"}\n'
        '{"id": "o1", "source": "paper:O", "subject": "p", "predicate": "RO:0002131", "object": "q"}\n')
    build_graph(tmp_path / "a.jsonl", None, [RO_DL]).write(tmp_path / "g.graph")
    with Graph(tmp_path / "g.graph") as graph:
        found = [c for c in contradictions(graph) if "SWRL" in c.reason]
        assert found and all(c.balance is not None and len(c.sides) == 2 for c in found)
        upstream = next(c for c in found if c.subject == "p")
        assert upstream.balance.supporting == ("paper:U",) and upstream.balance.refuting == ("paper:O",)
        assert upstream.balance.verdict == "undecided"


# --- with ro.owl: counts, verdicts, fresh compilations -------------------------------------------


def ro_path() -> Path:
    if not RO_OWL.is_file():
        pytest.skip(f"{RO_OWL} is absent (the shared data folder is not checked out)")
    return RO_OWL


@pytest.fixture(scope="module")
def ro():
    return compile_ontology(ro_path())


def test_ro_has_25_swrl_rules_and_5_self_restrictions_all_compiled(ro):
    graph = rdflib.Graph().parse(ro_path(), format="xml")
    swrl = rdflib.Namespace("http://www.w3.org/2003/11/swrl#")
    assert len(set(graph.subjects(rdflib.RDF.type, swrl.Imp))) == 25
    assert len(set(graph.subjects(rdflib.OWL.hasSelf, None))) == 5
    assert {k: ro.counts[k] for k in ("swrl_edge", "swrl_class", "contradiction", "has_self")} \
        == {"swrl_edge": 14, "swrl_class": 9, "contradiction": 2, "has_self": 5}
    assert not [kind for kind in ro.skipped if kind.startswith(("swrl", "has_self"))]
    assert sum(len(items) for items in ro.skipped_items.values()) == sum(n for n, _ in ro.skipped.values())
    assert ro.report().count("\n  domain: ") == ro.skipped["domain"][0] == 161


def test_ro_class_profile_says_which_swrl_rules_are_sound(ro):
    verdicts = dict(ro.swrl_verdicts)
    assert len(verdicts) == 25 and sum(v is None for v in verdicts.values()) == 13
    assert verdicts["positively regulates(x, y), negatively regulates(y, z) -> negatively regulates(x, z)"] is None
    both = "indirectly causally upstream of(p, q), regulates(p, q) -> indirectly regulates(p, q)"
    assert "witnesses" in verdicts[both]
    text = RO_CLASS_DL.read_text(encoding="utf-8")
    assert "//   note: class-level SWRL: 13 of 25 rules are sound between classes" in text
    assert "contradiction(" not in text.split("\n// --- ", 1)[1]


def test_shipped_ro_class_rules_are_a_fresh_compilation(ro):
    assert RO_CLASS_DL.read_text(encoding="utf-8") == class_level(ro).to_text(), (
        "rules/ro-class.dl is stale: regenerate it with "
        "polygraph compile-ontology ro.owl -o rules/ro-class.dl --profile class")


# --- the Gene Ontology slice: what the new rules add -----------------------------------------------


@pytest.mark.slow
def test_go_slice_new_edges_from_swrl_and_has_self(tmp_path):
    """The GO slice under the class profile gains 220 edges, all from the hasSelf restrictions of
    kinase and ubiquitin-protein transferase activity: a self edge on each subclass, its
    super-properties, and (rules/existential.dl) the same edges to the superclasses; the 13
    class-sound SWRL rules add no edge the axioms did not already give on this slice."""
    if not (GO / "truncated-pombase.gpad").is_file():
        pytest.skip(f"the Gene Ontology slice is not at {GO}")
    from polygraph_logic.graph.compile import compile_inputs
    from polygraph_logic.importers import read_gpad, read_obographs, write_background
    assertions, _ = read_gpad(GO / "truncated-pombase.gpad")
    edges, _, _ = read_obographs(GO / "go-truncated-pombase.json")
    write_background(tmp_path / "background.dl", edges)
    rest = load_program(ROOT / "rules" / "existential.dl", tmp_path / "background.dl")

    def closure(rules):
        return evaluate(compile_inputs(assertions, []).program(rules.combine(rest)), "boolean").boolean()["edge"]

    before = closure(section(RO_CLASS_DL, *list(KINDS)[:7]))
    swrl_only = closure(section(RO_CLASS_DL, *list(KINDS)[:7], "swrl_edge", "swrl_class", "type"))
    after = closure(load_program(RO_CLASS_DL))
    new = after - before
    print(f"GO slice: {len(before)} edges with the axiom rules, {len(after)} with SWRL and hasSelf: "
          f"{len(new)} new ({len(swrl_only - before)} from SWRL rules)")
    assert before <= swrl_only <= after
    selfish = {s for s, p, o in new if s == o and p in ("RO:0002481", "RO:0002482")}  # is kinase, is ubiquitination
    assert len(new) == 220 and len(selfish) == 7  # the kinase and ubiquitin transferase classes of the slice
    assert all(s in selfish for s, _, _ in new)  # the self edges, their super-properties, up subClassOf
