"""Contradictions stay explicit: negated assertions, contradiction rules, resolving sets, what-if.

Checked against independent computations: hitting sets against brute force over subsets
(hypothesis), resolving source sets against a Boolean evaluation of the program from the
surviving assertions for every subset of sources, labels against products worked out by
hand, the owl:propertyDisjointWith rules against rdflib's reading of ro.owl. The GO slice
and ro.owl tests skip when ../shared/data is absent.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main as cli_main
from polygraph_logic.query.contradictions import contradictions, minimal_hitting_sets
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic import build_graph
from polygraph_logic.graph.artifact_ids import triple_id
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.contradiction_layer import sides
from polygraph_logic.graph.records import LoadError, load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.datalog.program import load_program
from polygraph_logic.resources import rule_file
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
DATA = ROOT.parent / "shared" / "data"
RO_OWL = DATA / "ro" / "ro.owl"
GO = DATA / "go-pombase"
POS, NEG = "RO:0002213", "RO:0002212"

def variant_inputs(tmp_path: Path) -> tuple[Path, Path]:
    """Figure 1 plus examples/figure1/contradicting.jsonl (the variant of docs/ledger.md): a40, paper D's negative
    regulation of proliferation by ERK1/2 (which the merge carries onto MAPK/ERK), and a41, paper E's NOT."""
    assertions = tmp_path / "assertions.jsonl"
    text = "".join((FIGURE1 / name).read_text("utf-8") for name in ("assertions.jsonl", "contradicting.jsonl"))
    assertions.write_text(text, "utf-8")
    return assertions, FIGURE1 / "receipts.jsonl"


@pytest.fixture(scope="module")
def variant(tmp_path_factory):
    """The Figure 1 variant built with rules/contradictions.dl alone (no ro.dl: three contradictions)."""
    directory = tmp_path_factory.mktemp("variant")
    assertions, receipts = variant_inputs(directory)
    build = build_graph(assertions, receipts, [rule_file("contradictions")])
    build.write(directory / "v.graph")
    return build, Graph(directory / "v.graph")


def _labels(graph: Graph) -> dict[tuple, str]:
    return {tuple(a.fact[1]): str(graph.label(a)) for a in graph.artifacts("contradiction")}


# --- negated assertions -------------------------------------------------------------------


def test_negated_field_is_validated_and_round_trips(tmp_path):
    good = '{"id": "n1", "source": "S", "subject": "x", "predicate": "RO:1", "object": "y", "negated": true}'
    bad = '{"id": "n2", "source": "S", "subject": "x", "predicate": "RO:1", "object": "y", "negated": "yes"}'
    (tmp_path / "bad.jsonl").write_text(f"{good}\n{bad}\n", "utf-8")
    with pytest.raises(LoadError) as caught:
        load_assertions(tmp_path / "bad.jsonl")
    assert [(p.code, p.position.line) for p in caught.value.problems] == [("bad_field", 2)]
    (tmp_path / "good.jsonl").write_text(f"{good}\n", "utf-8")
    (first,) = load_assertions(tmp_path / "good.jsonl")
    assert first.negated and first.to_json() == json.loads(good)
    assert "negated" not in Assertion("a", "S", "x", "RO:1", "y").to_json()


def test_a_negated_assertion_supports_nothing_positive(variant):
    build, graph = variant
    model = build.model
    assert set(model.facts("neg_edge")) == {("AIM2", "RO:0001025", "cytosol")}
    # a41 is in no claim, edge, merge or summary label: only in its contradiction's
    mentioning = graph.mentioning(["a41"])
    assert [graph.artifact(a).layer for a in mentioning] == ["contradiction"]
    assert graph.assertions["a41"].negated and not graph.assertions["a32"].negated  # stored, read back


def test_receipts_may_cite_a_negated_assertion(tmp_path):
    assertions, _ = variant_inputs(tmp_path)
    receipts = tmp_path / "r.jsonl"
    receipts.write_text('{"artifact": "summary:no", "layer": "summary", "support": [["a41"]]}\n', "utf-8")
    loaded = load_assertions(assertions)
    (receipt,) = load_receipts(receipts, {a.id for a in loaded})
    assert str(compile_inputs(loaded, [receipt]).program()).count("neg_edge(") >= 1


# --- the labels of the Figure 1 variant, worked out by hand ------------------------------


def test_variant_contradictions_are_the_products_of_their_sides(variant):
    _, graph = variant
    reason = f"{POS} vs {NEG}: positively and negatively regulates"
    negation = "RO:0001025"  # P alone: "P vs not P"
    # (ERK1/2, +, cp) is a21 and (ERK1/2, -, cp) is a40: a21·a40.  On MAPK/ERK the positive side
    # is a20 + a21·M and the negative side a40·M, with M = a12·a13 + a20·a21 (the merge):
    # (a20 + a21·M)·a40·M = a20·a21·a40 + a12·a13·a20·a40 + a12·a13·a21·a40 (absorbed).
    assert _labels(graph) == {
        ("ERK1/2 cascade", "cell proliferation", reason): "a21·a40",
        ("MAPK/ERK", "cell proliferation", reason): "a20·a21·a40 + a12·a13·a20·a40 + a12·a13·a21·a40",
        ("AIM2", "cytosol", negation): "a32·a41",
    }
    found = {c.subject: c for c in contradictions(graph)}
    assert found["AIM2"].sides == [
        {"subject": "AIM2", "predicate": "RO:0001025", "object": "cytosol", "negated": False,
         "artifact": triple_id("claim", ("AIM2", "RO:0001025", "cytosol"))},
        {"subject": "AIM2", "predicate": "RO:0001025", "object": "cytosol", "negated": True}]
    assert graph.artifact(found["MAPK/ERK"].sides[1]["artifact"]).layer == "edge"  # entailed through the merge


def test_resolving_sets_agree_with_rederivation_over_every_subset_of_sources(variant):
    """A set of sources resolves a contradiction when the program, evaluated (Boolean) from the
    assertions outside them, no longer derives it; the minimal such sets are the listing."""
    build, graph = variant
    by_source: dict[str, list[Assertion]] = {}
    for a in build.assertions:
        by_source.setdefault(a.source, []).append(a)
    rules = load_program(rule_file("contradictions"))
    derived: dict[frozenset, set] = {}
    for size in range(len(by_source) + 1):
        for retracted in itertools.combinations(sorted(by_source), size):
            kept = [a for a in build.assertions if a.source not in retracted]
            # a receipt's rules cite assertion(id) facts: without the retracted ones they do not fire
            program = compile_inputs(kept, build.receipts).program(rules)
            derived[frozenset(retracted)] = set(evaluate(program, "boolean").boolean().get("contradiction", ()))
    for found in contradictions(graph, hitting=None):
        key = (found.subject, found.object, found.reason)
        resolving = [s for s, facts in derived.items() if key not in facts]
        minimal = {s for s in resolving if not any(o < s for o in resolving)}
        assert {frozenset(s) for s in found.by_sources} == minimal
        assert not found.truncated and found.note is None
        assert [len(s) for s in found.by_sources] == sorted(len(s) for s in found.by_sources)


# --- hitting sets against brute force ----------------------------------------------------


def _brute_force(family: list[frozenset]) -> set[frozenset]:
    universe = sorted(set().union(*family)) if family else []
    hitting = [frozenset(c) for k in range(len(universe) + 1) for c in itertools.combinations(universe, k)
               if all(set(c) & s for s in family)]
    return {h for h in hitting if not any(o < h for o in hitting)}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.frozensets(st.sampled_from("abcdefgh"), min_size=1, max_size=4), max_size=7),
       st.integers(min_value=1, max_value=4))
def test_minimal_hitting_sets_match_brute_force(family, limit):
    every, more = minimal_hitting_sets(family)
    assert set(every) == _brute_force(family) and len(every) == len(set(every)) and not more
    assert [len(s) for s in every] == sorted(len(s) for s in every)  # smallest first
    first, _ = minimal_hitting_sets(family, limit)
    assert first == every[:limit]


def test_hitting_sets_say_when_they_stop_early():
    family = [frozenset({f"x{i}", f"y{i}"}) for i in range(12)]  # 2^12 minimal hitting sets of size 12
    found, more = minimal_hitting_sets(family, budget=1_000)
    assert more and all(all(s & f for f in family) for s in found)
    assert minimal_hitting_sets([frozenset({"a"}), frozenset()]) == ([], False)  # an empty set: nothing hits


# --- end to end through the command line -------------------------------------------------


def test_figure1_variant_end_to_end(tmp_path, capsys):
    assertions, receipts = variant_inputs(tmp_path)
    graph = tmp_path / "v.graph"
    assert cli_main(["build", "--assertions", str(assertions), "--receipts", str(receipts),
                     "--rules", "ro", "--rules", "contradictions", "-o", str(graph)]) == 0
    capsys.readouterr()
    assert cli_main(["contradictions", str(graph), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    # ro.dl carries positively/negatively regulates up to causally upstream of or within, positive/negative
    # effect (RO:0004047/RO:0004046): both pairs conflict, on ERK1/2 and on MAPK/ERK; and the NOT of a41
    assert listed["contradictions"] == len(listed["listed"]) == 5
    reasons = [c["reason"].split(": ")[0] for c in listed["listed"]]
    assert reasons.count(f"{POS} vs {NEG}") == 2 and reasons.count("RO:0004047 vs RO:0004046") == 2
    erk = next(c for c in listed["listed"] if c["subject"] == "ERK1/2 cascade" and c["reason"].startswith(POS))
    assert erk["label"] == "a21·a40" and erk["exact"]
    assert erk["resolve_by_sources"] == [["example:paper-B"], ["example:paper-D"]]
    assert erk["resolve_by_assertions"] == [["a21"], ["a40"]]
    assert cli_main(["contradictions", str(graph), "--limit", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("5 contradictions (showing 1)\n") and "resolved by retracting sources:" in text
    # retracting paper D resolves the four regulation conflicts and leaves the NOT
    assert cli_main(["whatif", str(graph), "--retract-source", "example:paper-D", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)["contradictions"]
    assert (outcome["resolved"], outcome["remaining"]) == (4, 1)
    not_id = next(c["id"] for c in listed["listed"] if c["subject"] == "AIM2")
    assert outcome["remaining_ids"] == [not_id]
    assert sorted(outcome["resolved_ids"]) == sorted(c["id"] for c in listed["listed"] if c["id"] != not_id)
    assert cli_main(["whatif", str(graph), "--retract-source", "example:paper-D", "--list"]) == 0
    text = capsys.readouterr().out
    assert "contradictions: resolved 4, remaining 1" in text and f"= {not_id}  (contradiction remains)" in text
    # the stored graph is unchanged: the contradictions are all still there
    assert cli_main(["contradictions", str(graph), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["contradictions"] == 5


def test_whatif_counts_agree_with_the_labels(variant):
    _, graph = variant
    every = {c.id: c for c in contradictions(graph, hitting=None)}
    for source in ("example:paper-B", "example:paper-D", "example:paper-C", "PMID:39973430"):
        outcome = what_if(graph, Deletion(sources=(source,)))
        deleted = outcome.deleted
        resolved = {i for i, c in every.items() if all(deleted & set(g) for g in c.support)}
        counts = outcome.contradictions(graph)
        assert set(counts["resolved_ids"]) == resolved
        assert counts["remaining"] == len(every) - len(resolved) == len(counts["remaining_ids"])


def test_a_contradiction_of_the_wrong_arity_is_an_error(tmp_path):
    rules = tmp_path / "mine.dl"
    rules.write_text('contradiction(x, "two") :- claim(x, "RO:0002212", _).\n', "utf-8")
    build = build_graph([Assertion("a1", "S", "x", NEG, "y")], [], [rules])
    with pytest.raises(PolygraphError) as caught:
        build.write(tmp_path / "g.graph")
    assert caught.value.code == "bad_contradiction"


def test_user_rules_derive_contradictions_too(tmp_path):
    rules = tmp_path / "mine.dl"
    rules.write_text('contradiction(x, y, "located in vs not located in: mine") :- '
                     'edge(x, "RO:0001025", y), edge(y, "RO:0001025", x).\n', "utf-8")
    build = build_graph([Assertion("a1", "S1", "x", "RO:0001025", "y"),
                         Assertion("a2", "S2", "y", "RO:0001025", "x")], [], [rules])
    build.write(tmp_path / "g.graph")
    found = list(contradictions(Graph(tmp_path / "g.graph")))
    assert sorted((c.subject, c.label) for c in found) == [("x", "a1·a2"), ("y", "a1·a2")]
    assert sides("x", "y", "SWRL: anything") is None  # not 'P vs Q': listed without sides


# --- owl:propertyDisjointWith from ro.owl ------------------------------------------------

needs_ro = pytest.mark.skipif(not RO_OWL.is_file(), reason=f"{RO_OWL} is absent")


@needs_ro
def test_property_disjoint_with_is_compiled_from_ro(tmp_path):
    import rdflib
    from rdflib import OWL

    g = rdflib.Graph().parse(RO_OWL, format="xml")
    obo = "http://purl.obolibrary.org/obo/"
    pairs = set(g.subject_objects(OWL.propertyDisjointWith))
    assert len(pairs) == 10
    # by hand: 'in paralogy relationship with' (RO:HOM0000011) and 'in orthology relationship with'
    assert (rdflib.URIRef(obo + "RO_HOM0000011"), rdflib.URIRef(obo + "RO_HOM0000017")) in pairs
    shipped = [line for line in rule_file("ro").read_text("utf-8").splitlines()
               if line.startswith("contradiction(") and "owl:propertyDisjointWith" in line]
    assert len(shipped) == 10
    reason = ("RO:HOM0000011 vs RO:HOM0000017: owl:propertyDisjointWith (in paralogy relationship with, "
              "in orthology relationship with)")
    assert (f'contradiction(x, y, "{reason}") :- edge(x, "RO:HOM0000011", y), edge(x, "RO:HOM0000017", y).'
            "  // disjoint: in paralogy relationship with, in orthology relationship with") in shipped
    build = build_graph([Assertion("p1", "S1", "geneA", "RO:HOM0000011", "geneB"),
                         Assertion("o1", "S2", "geneA", "RO:HOM0000017", "geneB")], [], [rule_file("ro")])
    found = build.model.facts("contradiction")
    assert str(found[("geneA", "geneB", reason)]) == "o1·p1"
    # both relations are symmetric in RO: the mirrored pair conflicts too, with the same label
    assert {str(label) for label in found.values()} == {"o1·p1"}
    assert sides("geneA", "geneB", reason)[1]["predicate"] == "RO:HOM0000017"


# --- the GO slice -------------------------------------------------------------------------

needs_go = pytest.mark.skipif(not (GO / "truncated-pombase.gpad").exists(), reason=f"{GO} is absent")


@pytest.mark.slow
@needs_go
def test_go_slice_not_annotations_give_contradictions_with_their_resolving_sources(tmp_path):
    """The slice has no NOT line (so no contradiction of its own, checked here); NOT-qualified
    copies of real lines, written to a temporary GPAD beside the real one, conflict exactly where
    the positive annotations entail the same triple (the annotation itself or a superclass of it)."""
    from polygraph_logic.importers import read_gpad, read_obographs, write_background
    from polygraph_logic.importers.relations import ANNOTATION_RELATIONS

    assertions, report = read_gpad(GO / "truncated-pombase.gpad")
    assert report.negated == 0
    edges, _, _ = read_obographs(GO / "go-truncated-pombase.json")
    write_background(tmp_path / "background.dl", edges)
    rules = [rule_file("ro-class"), rule_file("existential"), tmp_path / "background.dl",
             rule_file("contradictions")]
    label_of = {curie: label for label, curie in ANNOTATION_RELATIONS.items()}
    parents = {}
    for e in edges:
        if e[1] == "rdfs:subClassOf":
            parents.setdefault(e[0], e[2])
    chosen = [a for a in assertions[::200]][:8]  # eight real annotations, spread over the file
    negations = []
    for i, a in enumerate(chosen):
        term = a.object if i % 2 == 0 else parents.get(a.object, a.object)  # the term, or its parent
        negations.append((a.subject, a.predicate, term, f"PMID:99000{i:02d}"))
    negations.append((chosen[0].subject, chosen[0].predicate, "GO:0000000", "PMID:9900099"))  # entails nothing
    lines = ["!gpa-version: 1.2"] + [
        "\t".join([s.split(":", 1)[0], s.split(":", 1)[1], f"NOT|{label_of[p]}", o, ref, "ECO:0000314",
                   "", "", "20260101", "test", "", ""]) for s, p, o, ref in negations]
    (tmp_path / "not.gpad").write_text("\n".join(lines) + "\n", "utf-8")
    nots, not_report = read_gpad(tmp_path / "not.gpad", id_prefix="not")
    assert not_report.negated == len(nots) == len(negations)

    build = build_graph(assertions + nots, [], rules)
    build.write(tmp_path / "go.graph")
    graph = Graph(tmp_path / "go.graph")
    positive = build.model.facts("edge")
    expected = {(s, o) for s, p, o, _ in negations if (s, p, o) in positive}
    found = list(contradictions(graph))
    assert {(c.subject, c.object) for c in found} == expected
    assert len(expected) == len({(s, o) for s, _, o, _ in negations[:8]})  # all eight; the unknown term none
    source_of = {n.id: n.source for n in nots}
    for c in found:
        # every support set holds exactly one NOT: the slice's own annotations contradict nothing
        assert all(sum(a.startswith("not") for a in g) == 1 for g in c.support)
        (negated,) = {a for g in c.support for a in g if a.startswith("not")}
        # the label is the product: every support set is one of the positive edge's plus the NOT
        (s, p, o) = c.sides[0]["subject"], c.sides[0]["predicate"], c.sides[0]["object"]
        edge = {frozenset(g) | {negated} for g in build.model.semiring.to_json(positive[(s, p, o)])}
        assert {frozenset(g) for g in c.support} <= edge
        # the NOT's own source resolves it alone, and every listed source set does resolve it
        assert [source_of[negated]] in [list(x) for x in c.by_sources]
        for retracted in c.by_sources:
            outcome = what_if(graph, Deletion(sources=tuple(retracted)))
            assert c.id in outcome.contradictions(graph)["resolved_ids"]


def test_contradictions_and_negations_round_trip_through_rdf(variant, tmp_path, capsys):
    import rdflib

    from polygraph_logic.export.namespaces import PG

    _, graph = variant
    assert cli_main(["export", str(graph.path), "-o", str(tmp_path / "v.trig")]) == 0
    assert cli_main(["import", "rdf", str(tmp_path / "v.trig"), "-o", str(tmp_path / "back.graph")]) == 0
    capsys.readouterr()
    back = Graph(tmp_path / "back.graph")
    assert list(back.artifacts()) == list(graph.artifacts())
    assert list(back.assertions.values()) == list(graph.assertions.values()) and back.assertions["a41"].negated
    parsed = rdflib.Dataset()
    parsed.parse(tmp_path / "v.trig", format="trig")  # re-read by rdflib, not by our importer
    typed = {str(s) for s, _, _, _ in parsed.quads((None, rdflib.RDF.type, rdflib.URIRef(PG + "Contradiction"), None))}
    assert len(typed) == 3  # the three artifacts (each typed in its provenance graph)
    negated = {str(s) for s, _, o, _ in parsed.quads((None, rdflib.URIRef(PG + "negated"), None, None))
               if o.toPython() is True}
    assert len(negated) == 1 and next(iter(negated)).endswith("a41")


def test_a_negated_assertion_does_not_state_its_claim(variant):
    """Re-derivation, the deployed policy and the edge audit read the stored assertions: a NOT of a
    claimed triple must not count as stating it."""
    from polygraph_logic.audit.edges import EdgeRederivation
    from polygraph_logic.query.rederive import stated_by

    _, graph = variant
    triple = ("AIM2", "RO:0001025", "cytosol")
    assert set(graph.stating(triple).values()) == {"a32"}
    assert set(graph.stating(triple, negated=True).values()) == {"a41"}
    assert set(stated_by(graph, ("neg_edge", triple)).values()) == {"a41"}
    # without a32, nothing derives the edge, whatever the NOT; the NOT stays a neg_edge
    edges = EdgeRederivation(graph)
    assert triple not in edges.edges(frozenset({"a32"}), "ours")
    assert triple in edges.edges(frozenset({"a41"}), "ours")
    inputs = {(f.atom.relation, tuple(a.value for a in f.atom.args)) for f in edges.inputs(frozenset())}
    assert ("neg_edge", triple) in inputs and ("claim", triple) in inputs  # a32's claim, a41's negation
    outcome = what_if(graph, Deletion(sources=("example:paper-C",)), "deployed")
    assert triple_id("claim", triple) in outcome.dead


def test_retrieval_ground_truth_counts_contradictions_and_ignores_negations(variant):
    from polygraph_logic.graph.index import GraphIndex
    from polygraph_logic.retrieval.consequences import ground_truth

    _, graph = variant
    index = GraphIndex(graph)
    truth = ground_truth(index, Deletion(sources=("example:paper-D",)))
    resolved = {c.id for c in contradictions(graph) if c.subject != "AIM2"}
    assert truth.sources["contradiction"]["artifacts"] == 3 and truth.sources["contradiction"]["dead"] == 2
    assert resolved <= truth.dead
    # a32 is the only assertion stating AIM2 located in cytosol: the NOT a41 does not keep the claim
    truth = ground_truth(index, Deletion(sources=("example:paper-C",)))
    assert triple_id("claim", ("AIM2", "RO:0001025", "cytosol")) in truth.dead


def test_an_oracle_sees_a_negated_assertion_as_a_denial():
    from polygraph_logic.llm.evidence_lines import evidence_line

    denial = Assertion("a41", "S", "AIM2", "RO:0001025", "cytosol", "not in the cytosol", negated=True)
    assert evidence_line(denial) == "[a41] AIM2 | NOT RO:0001025 | cytosol | not in the cytosol"
    plain = Assertion("a32", "S", "AIM2", "RO:0001025", "cytosol")
    assert evidence_line(plain) == "[a32] AIM2 | RO:0001025 | cytosol | "


def test_prefer_is_an_opt_in_named_precedence_policy(tmp_path):
    records = [Assertion("h1", "model:gpt", "X", POS, "Y", kind="model_hypothesis"),
               Assertion("v1", "lab:check", "X", NEG, "Y", kind="verification"),
               Assertion("s1", "PMID:7", "X", POS, "Y")]
    build_graph(records, [], [rule_file("contradictions")]).write(tmp_path / "k.graph")
    graph = Graph(tmp_path / "k.graph")
    (plain,) = contradictions(graph)
    assert plain.prefer is None and "policy" not in plain.to_json()  # nothing unless asked
    assert plain.label == "h1·v1 + s1·v1" and plain.by_assertions == [("v1",), ("h1", "s1")]
    kinds = {a.id: a.kind for a in records}
    order = ["verification", "source_claim", "tool_observation", "user_assertion", "graph_derived",
             "model_hypothesis"]
    for prefer in order:
        (found,) = contradictions(graph, prefer=prefer)
        deletable = sorted(a for a in kinds if order.index(kinds[a]) > order.index(prefer))
        # brute force: the minimal sets of deletable assertions that hit every support set
        hitting = [set(c) for k in range(len(deletable) + 1) for c in itertools.combinations(deletable, k)
                   if all(set(c) & set(g) for g in found.support)]
        minimal = {frozenset(h) for h in hitting if not any(o < h for o in hitting)}
        assert {frozenset(s) for s in found.preferred} == minimal, prefer
        assert found.to_json()["policy"] == f"prefer:{prefer}"
    assert [list(c.preferred) for c in contradictions(graph, prefer="verification")] == [[("h1", "s1")]]
    with pytest.raises(PolygraphError) as caught:
        list(contradictions(graph, prefer="rumour"))
    assert caught.value.code == "unknown_kind"


def test_the_duckdb_engine_finds_the_same_contradictions(tmp_path, capsys):
    pytest.importorskip("duckdb")
    assertions, receipts = variant_inputs(tmp_path)
    for engine in ("python", "duckdb"):
        assert cli_main(["build", "--assertions", str(assertions), "--receipts", str(receipts), "--rules", "ro",
                         "--rules", "contradictions", "--engine", engine, "-o", str(tmp_path / f"{engine}.graph")]) == 0
    capsys.readouterr()
    python, duckdb = (list(Graph(tmp_path / f"{e}.graph").artifacts("contradiction")) for e in ("python", "duckdb"))
    assert len(python) == 5 and python == duckdb


def test_a_capped_label_says_its_resolving_sets_may_not_suffice(tmp_path, capsys):
    records = [Assertion(f"p{i}", f"S{i}", "X", POS, "Y") for i in (1, 2, 3)] + [Assertion("n1", "T", "X", NEG, "Y")]
    build_graph(records, [], [rule_file("contradictions")], cap=1).write(tmp_path / "c.graph")
    graph = Graph(tmp_path / "c.graph")
    (found,) = contradictions(graph, hitting=None)
    assert not found.exact and found.note and "whatif --exact" in found.note
    assert len(found.support) == 1 and "n1" in found.support[0]  # the cap kept one of p1·n1, p2·n1, p3·n1
    # n1 resolves it; a positive assertion alone hits the listed set but not the dropped ones
    verdicts = {}
    for chosen in found.by_assertions:
        outcome = what_if(graph, Deletion(assertions=chosen), exact=True)
        verdicts[chosen] = found.id in outcome.contradictions(graph)["resolved_ids"]
    assert verdicts == {("n1",): True, tuple(a for a in found.support[0] if a != "n1"): False}
    assert cli_main(["contradictions", str(tmp_path / "c.graph")]) == 0
    text = capsys.readouterr().out
    assert "(1 support set, capped)" in text and "note: the label is capped" in text


def test_add_finds_the_contradictions_a_full_build_finds(tmp_path, capsys):
    """Figure 1, then the contradicting batch by `polygraph add` (incremental): the same artifacts,
    contradictions included, as one build of both."""
    assertions, receipts = variant_inputs(tmp_path)
    rules = ["--rules", "ro", "--rules", "contradictions"]
    base = ["--receipts", str(receipts), *rules]
    assert cli_main(["build", "--assertions", str(assertions), *base, "-o", str(tmp_path / "full.graph")]) == 0
    assert cli_main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), *base,
                     "-o", str(tmp_path / "grown.graph")]) == 0
    assert cli_main(["add", str(tmp_path / "grown.graph"), "--assertions", str(FIGURE1 / "contradicting.jsonl")]) == 0
    capsys.readouterr()
    full, grown = (sorted(Graph(tmp_path / f"{n}.graph").artifacts(), key=lambda a: a.id) for n in ("full", "grown"))
    assert full == grown and sum(a.layer == "contradiction" for a in grown) == 5


def test_why_marks_a_negated_assertion(variant, capsys):
    from polygraph_logic.query.explain import Explainer, why

    _, graph = variant
    (aim2,) = [c for c in contradictions(graph) if c.subject == "AIM2"]
    result = why(graph, aim2.id, Explainer(graph), trees=0)
    entries = {a["id"]: a for group in result["support_sets"] for a in group}
    assert entries["a41"].get("negated") is True and "negated" not in entries["a32"]
    assert cli_main(["why", str(graph.path), aim2.id, "--trees", "0"]) == 0
    assert "AIM2 NOT RO:0001025 cytosol" in capsys.readouterr().out


def test_add_carries_a_first_negation_across_a_merge(tmp_path, capsys):
    """The merge rules for neg_edge are compiled only once a negated assertion exists: an add that
    brings the first one, about a merged member, still reaches the canonical entity as a build does."""
    batch = tmp_path / "neg.jsonl"
    batch.write_text(json.dumps({"id": "a50", "source": "example:paper-F", "subject": "ERK1/2 cascade",
                                 "predicate": POS, "object": "cell proliferation", "negated": True}) + "\n", "utf-8")
    both = tmp_path / "both.jsonl"
    both.write_text((FIGURE1 / "assertions.jsonl").read_text("utf-8") + batch.read_text("utf-8"), "utf-8")
    common = ["--receipts", str(FIGURE1 / "receipts.jsonl"), "--rules", "contradictions"]
    assert cli_main(["build", "--assertions", str(both), *common, "-o", str(tmp_path / "full.graph")]) == 0
    assert cli_main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), *common,
                     "-o", str(tmp_path / "grown.graph")]) == 0
    assert cli_main(["add", str(tmp_path / "grown.graph"), "--assertions", str(batch)]) == 0
    capsys.readouterr()
    full, grown = (Graph(tmp_path / f"{n}.graph") for n in ("full", "grown"))
    assert sorted(full.artifacts(), key=lambda a: a.id) == sorted(grown.artifacts(), key=lambda a: a.id)
    assert _labels(grown) == {
        ("ERK1/2 cascade", "cell proliferation", POS): "a21·a50",
        ("MAPK/ERK", "cell proliferation", POS): "a20·a21·a50 + a12·a13·a20·a50 + a12·a13·a21·a50"}


def test_contradictions_at_a_version(tmp_path, capsys):
    """``contradictions --at N`` lists the graph as it was at version N: Figure 1 has none, the
    version that added the contradicting assertions has those of a graph built with them."""
    assertions, receipts = variant_inputs(tmp_path)
    graph, rules = str(tmp_path / "g.graph"), str(rule_file("contradictions"))
    assert cli_main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(receipts),
                     "--rules", rules, "-o", graph]) == 0
    assert cli_main(["add", graph, "--assertions", str(FIGURE1 / "contradicting.jsonl")]) == 0
    build_graph(assertions, receipts, [rule_file("contradictions")]).write(tmp_path / "whole.graph")
    capsys.readouterr()
    found = {}
    for name, arguments in (("at 1", [graph, "--at", "1"]), ("at 2", [graph, "--at", "2"]), ("latest", [graph]),
                            ("whole", [str(tmp_path / "whole.graph")])):
        assert cli_main(["contradictions", *arguments, "--json"]) == 0
        found[name] = json.loads(capsys.readouterr().out)
    assert found["at 1"] == {"contradictions": 0, "listed": []}
    assert found["at 2"] == found["latest"] == found["whole"] and found["whole"]["contradictions"] == 3
    assert cli_main(["contradictions", graph, "--at", "3"]) == 2
    assert "no_version" in capsys.readouterr().err


def test_contradictions_at_a_version_list_as_a_fresh_build_of_it(tmp_path, capsys):
    """Two adds whose contradictions interleave by subject: read ``--at`` each version, the listing
    (and its ``--limit`` prefix) is the one of a graph built fresh from that version's inputs, in
    the documented order: sorted by subject, object and reason."""
    third = tmp_path / "third.jsonl"
    third.write_text("".join(json.dumps(r) + "\n" for r in [  # 'AAA' sorts before AIM2, 'BRAF' after it
        {"id": "b1", "source": "paper:X", "subject": "AAA kinase", "predicate": POS, "object": "growth"},
        {"id": "b2", "source": "paper:Y", "subject": "AAA kinase", "predicate": POS, "object": "growth",
         "negated": True},
        {"id": "b3", "source": "paper:X", "subject": "BRAF", "predicate": POS, "object": "growth"},
        {"id": "b4", "source": "paper:Z", "subject": "BRAF", "predicate": NEG, "object": "growth"}]), "utf-8")
    assertions, receipts = variant_inputs(tmp_path)
    rules = ["--receipts", str(receipts), "--rules", str(rule_file("contradictions"))]
    grown = str(tmp_path / "grown.graph")
    assert cli_main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), *rules, "-o", grown]) == 0
    assert cli_main(["add", grown, "--assertions", str(FIGURE1 / "contradicting.jsonl")]) == 0
    assert cli_main(["add", grown, "--assertions", str(third)]) == 0
    both = tmp_path / "both.jsonl"
    both.write_text(assertions.read_text("utf-8") + third.read_text("utf-8"), "utf-8")
    for name, inputs in (("two", assertions), ("three", both)):
        assert cli_main(["build", "--assertions", str(inputs), *rules, "-o", str(tmp_path / f"{name}.graph")]) == 0

    def listing(*arguments) -> list[dict]:
        capsys.readouterr()
        assert cli_main(["contradictions", *arguments, "--json"]) == 0
        return json.loads(capsys.readouterr().out)["listed"]

    for version, fresh in (("2", "two"), ("3", "three")):
        found = listing(grown, "--at", version)
        assert found == listing(str(tmp_path / f"{fresh}.graph"))
        assert listing(grown, "--at", version, "--limit", "2") == found[:2]
        keys = [(c["subject"], c["object"], c["reason"]) for c in found]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert [c["subject"] for c in listing(grown)] == ["AAA kinase", "AIM2", "BRAF", "ERK1/2 cascade", "MAPK/ERK"]


def test_the_balance_counts_the_origins_of_the_assertions_that_state_each_side(tmp_path):
    """Figure 1's variant: paper D says ERK1/2 signalling negatively regulates proliferation, paper
    B positively (of MAPK/ERK and of the ERK1/2 cascade, which a merge joins); the merge's evidence
    (papers A and B, "regulates apoptosis" and the positive claims) carries paper D's claim onto
    MAPK/ERK.  Worked by hand: every regulation conflict is paper B against paper D, undecided,
    at RO's causal level too (positively/negatively regulates are sub-properties of it)."""
    assertions, receipts = variant_inputs(tmp_path)
    build_graph(assertions, receipts, [rule_file("ro"), rule_file("contradictions")]).write(tmp_path / "v.graph")
    with Graph(tmp_path / "v.graph") as graph:
        listed = [c for c in contradictions(graph) if c.sides and not c.sides[1]["negated"]]
        assert len(listed) == 4
        for found in listed:
            assert found.balance.supporting == ("example:paper-B",), found.reason
            assert found.balance.refuting == ("example:paper-D",), found.reason
            assert found.balance.verdict == "undecided" and found.balance.shared == ()
        # the label of MAPK/ERK's refuting side holds papers A and B too: the merge's evidence
        mapk = next(c for c in listed if c.subject == "MAPK/ERK" and "RO:0002213" in c.reason)
        cited = {a for group in mapk.support for a in group}
        assert {"a12", "a13", "a20", "a21", "a40"} <= cited
        # after paper B is retracted, the positive side stands on no statement: 0 against 1
        after = next(c for c in contradictions(graph, deletion=Deletion(sources=("example:paper-B",)))
                     if c.id == mapk.id)
        assert after.balance_after.resolved
