"""Assertion kinds: validated at file:line, stored, shown by why, exported to RDF, and distrusted
kinds checked against a from-scratch Boolean evaluation without those assertions."""

import json
import sqlite3
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from recompute import truth
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.query.explain import Explainer, robustness, why
from polygraph_logic.query.rests_on import rests_on
from polygraph_logic.export import export_graph, vocabulary_path
from polygraph_logic.export.namespaces import KIND_CLASSES, PG
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic import build_graph
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.kinds import DEFAULT_KIND, KINDS, authority
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"
#: Figure 1 with paper B's two assertions turned into model hypotheses and a32 a tool observation
KIND_OF = {"a20": "model_hypothesis", "a21": "model_hypothesis", "a32": "tool_observation"}


def write_variant(directory: Path, kind_of: dict) -> Path:
    lines = []
    for line in (FIGURE1 / "assertions.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["id"] in kind_of:
            record["kind"] = kind_of[record["id"]]
        lines.append(json.dumps(record))
    path = directory / "assertions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def variant(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kinds")
    assertions = load_assertions(write_variant(directory, KIND_OF))
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    path = directory / "kinds.graph"
    build_graph(assertions, receipts, [RO]).write(path)
    return assertions, receipts, path


def test_kinds_are_read_with_source_claim_as_the_default(variant):
    assertions, _, _ = variant
    assert {a.id: a.kind for a in assertions} == {a.id: KIND_OF.get(a.id, DEFAULT_KIND) for a in assertions}
    assert Assertion("x", "s", "a", "RO:1", "b").kind == "source_claim"
    assert "kind" not in Assertion("x", "s", "a", "RO:1", "b").to_json()
    assert Assertion("x", "s", "a", "RO:1", "b", kind="verification").to_json()["kind"] == "verification"


def test_the_authority_order_is_total_and_documented():
    assert sorted(KINDS, key=authority) == list(KINDS)
    assert set(KINDS) == {"source_claim", "graph_derived", "tool_observation", "model_hypothesis",
                          "user_assertion", "verification", "policy_decision"}
    assert authority("verification") < authority("source_claim") < authority("model_hypothesis")
    concepts = (ROOT / "docs" / "concepts.md").read_text()
    for kind in KINDS:
        assert f"`{kind}`" in concepts


@pytest.mark.parametrize("value", ["guess", 3, None, ["model_hypothesis"], ""])
def test_an_unknown_kind_is_an_error_at_its_line(tmp_path, value):
    good = {"id": "a1", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y"}
    bad = {**good, "id": "a2", "kind": value}
    worse = {**good, "id": "a3", "kind": "hunch"}
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, bad, worse)) + "\n")
    with pytest.raises(PolygraphError) as error:
        load_assertions(path)
    problems = error.value.problems
    assert [(p.code, p.position.line) for p in problems] == [("unknown_kind", 2), ("unknown_kind", 3)]
    assert "model_hypothesis" in problems[0].message


def test_the_graph_stores_kinds_and_an_old_graph_reads_as_source_claims(variant, tmp_path):
    assertions, _, path = variant
    with Graph(path) as graph:
        assert {a.id: a.kind for a in graph.assertions.values()} == {a.id: a.kind for a in assertions}
        assert graph.kind_counts() == {"source_claim": 3, "tool_observation": 1, "model_hypothesis": 2}
        assert set(graph.kind_numbers(["model_hypothesis"]).values()) == {"a20", "a21"}
    old = tmp_path / "old.graph"
    old.write_bytes(path.read_bytes())
    db = sqlite3.connect(old)
    db.executescript("DROP INDEX assertions_by_kind; ALTER TABLE assertions DROP COLUMN kind; VACUUM;")
    db.close()
    with Graph(old) as graph:
        assert {a.kind for a in graph.assertions.values()} == {"source_claim"}
        assert graph.kind_numbers(["model_hypothesis"]) == {}
        assert len(graph.kind_numbers(["source_claim"])) == len(assertions)
        assert what_if(graph, Deletion(kinds=("model_hypothesis",))).dead == []


@pytest.mark.parametrize("kinds", [("model_hypothesis",), ("tool_observation",),
                                   ("model_hypothesis", "tool_observation"), ("source_claim",)])
@pytest.mark.parametrize("policy", ["trust-all", "distrust:merge"])
def test_distrusting_kinds_matches_a_boolean_evaluation_without_them(variant, kinds, policy):
    assertions, receipts, path = variant
    distrusted = {a.id for a in assertions if a.kind in kinds}
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(kinds=kinds), policy)
        assert outcome.deleted == distrusted
        same = what_if(graph, Deletion(assertions=tuple(sorted(distrusted))), policy)
        assert outcome.dead == same.dead
        if policy == "trust-all":
            standing = truth(assertions, receipts, distrusted)  # read under trust-all only
            # a demoted claim's claim fact is gone too (its triple stands as an edge)
            dead = set(outcome.dead) | {d["artifact"] for d in outcome.demoted}
            for artifact in graph.artifacts():
                if artifact.id in outcome.summaries:  # sentence-level: trimmed while a sentence stands
                    continue
                assert (artifact.id in dead) == (artifact.fact not in standing), artifact.id
        assert set(outcome.resting) == set(outcome.dead)  # nothing else was deleted


def test_resting_is_what_falls_only_for_the_distrusted_kinds(variant):
    _, _, path = variant
    with Graph(path) as graph:
        both = what_if(graph, Deletion(sources=("PMID:40057077",), kinds=("model_hypothesis",)))
        alone = what_if(graph, Deletion(sources=("PMID:40057077",)))
        assert set(both.resting) == set(both.dead) - set(alone.dead)
        assert both.resting and set(alone.dead) <= set(both.dead)
        record = both.to_json()
        assert record["distrusted_kinds"] == ["model_hypothesis"]
        assert record["rests_on_distrusted_kinds"] == both.resting
        assert record["distrusted_assertions"] == ["a20", "a21"]
        assert set(record["deleted_assertions"]) == {"a20", "a21", "a31"}
        assert "distrust-kind model_hypothesis" in record["deletion"]


def check_rests_on(graph, assertions, receipts, kinds) -> dict:
    """rests_on against brute force: the artifacts every support set of which holds an assertion of
    ``kinds`` (read from each exact label), and independently those a from-scratch Boolean evaluation
    without those assertions does not derive; a still-entailed claim is one whose triple that
    evaluation still derives as an edge; a summary with sentences is listed when any sentence is."""
    result = rests_on(graph, kinds)
    listed = [e["id"] for e in result["artifacts"]]
    assert len(listed) == len(set(listed))
    kind = {a.id: a.kind for a in assertions}
    standing = truth(assertions, receipts, {a.id for a in assertions if a.kind in kinds})
    artifacts = list(graph.artifacts())
    assert set(listed) == {a.id for a in artifacts if a.fact not in standing}
    for a in artifacts:
        if a.exact:  # its stored support sets are all of them: the help text's rule, read off the label
            assert (a.id in listed) == all(any(kind[x] in kinds for x in s) for s in a.support), a.id
    claims = {a.id: a.fact[1] for a in artifacts if a.layer == "claim"}
    entailed = {i for i in listed if i in claims and ("edge", claims[i]) in standing}
    assert {e["artifact"] for e in result["still_entailed"]} == entailed
    expected = {}
    for receipt in receipts:
        sentences = [receipt.sentence_id(i) for i in range(1, len(receipt.sentences) + 1)]
        resting = sorted(s for s in sentences if ("sentence", (s,)) not in standing)
        if resting:
            expected[receipt.artifact] = {"sentences": len(sentences), "resting_sentences": resting,
                                          "under_trust_all": "removed" if resting == sorted(sentences) else "trimmed"}
            assert receipt.artifact in listed and set(resting) <= set(listed)
    assert result["summaries"] == expected
    layers = {a.id: a.layer for a in artifacts}
    assert result["by_layer"] == {layer: sum(layers[i] == layer for i in listed) for layer in result["by_layer"]}
    assert sum(result["by_layer"].values()) == len(listed)
    return result


@pytest.mark.parametrize("kinds", [("model_hypothesis",), ("tool_observation",), ("source_claim",),
                                   ("model_hypothesis", "tool_observation")])
def test_rests_on_lists_exactly_the_artifacts_every_support_set_of_which_holds_the_kind(variant, kinds):
    assertions, receipts, path = variant
    with Graph(path) as graph:
        result = check_rests_on(graph, assertions, receipts, kinds)
        assert result["assertions"] == sum(a.kind in kinds for a in assertions) and result["artifacts"]
        if kinds == ("model_hypothesis",):
            assert "merge:mapk-erk" not in {e["id"] for e in result["artifacts"]}  # paper A's evidence
        with pytest.raises(PolygraphError) as error:
            rests_on(graph, ("hunch",))
        assert error.value.code == "unknown_kind"


#: a hypothesis (h1) states a triple a source claim (h2) entails; summary:some has one sentence of two
#: resting on hypotheses, summary:all both; summary:none cites the hypothesis beside other evidence
HAND_MADE = [
    {"id": "h1", "source": "m:1", "subject": "X", "predicate": "RO:0002211", "object": "Y", "kind": "model_hypothesis"},
    {"id": "h2", "source": "p:2", "subject": "X", "predicate": "RO:0002213", "object": "Y"},
    {"id": "h3", "source": "m:1", "subject": "Y", "predicate": "RO:0002213", "object": "Z", "kind": "model_hypothesis"},
    {"id": "h4", "source": "p:3", "subject": "Z", "predicate": "RO:0002213", "object": "W"},
]
HAND_MADE_RECEIPTS = [
    {"artifact": "summary:some", "layer": "summary", "content": {},
     "sentences": [{"text": "Y raises Z.", "support": [["h3"]]}, {"text": "X regulates Y.", "support": [["h1"], ["h2"]]}]},
    {"artifact": "summary:all", "layer": "summary", "content": {},
     "sentences": [{"text": "Y raises Z.", "support": [["h3", "h4"]]}, {"text": "X regulates Y.", "support": [["h1"]]}]},
    {"artifact": "summary:none", "layer": "summary", "content": {},
     "sentences": [{"text": "Z raises W.", "support": [["h4"], ["h3", "h2"]]}]},
]


def test_rests_on_a_hand_made_graph_names_still_entailed_claims_and_summaries_by_sentence(tmp_path, capsys):
    a, r = tmp_path / "a.jsonl", tmp_path / "r.jsonl"
    a.write_text("".join(json.dumps(x) + "\n" for x in HAND_MADE))
    r.write_text("".join(json.dumps(x) + "\n" for x in HAND_MADE_RECEIPTS))
    assertions = load_assertions(a)
    receipts = load_receipts(r, {x.id for x in assertions})
    path = tmp_path / "hand.graph"
    build_graph(assertions, receipts, [RO]).write(path)
    with Graph(path) as graph:
        result = check_rests_on(graph, assertions, receipts, ("model_hypothesis",))
        claim = next(x.id for x in graph.artifacts("claim") if x.fact[1] == ("X", "RO:0002211", "Y"))
    listed = {e["id"] for e in result["artifacts"]}
    assert claim in listed and [e["artifact"] for e in result["still_entailed"]] == [claim]
    assert result["still_entailed"][0]["support"] == [["h2"]]
    assert {"summary:some", "summary:some#s1", "summary:all", "summary:all#s1", "summary:all#s2"} <= listed
    assert not {"summary:none", "summary:none#s1", "summary:some#s2"} & listed
    assert result["summaries"]["summary:some"]["under_trust_all"] == "trimmed"
    assert result["summaries"]["summary:all"]["under_trust_all"] == "removed"
    # the what-if's cleanup verdicts, which rests-on explains: the claim is demoted, summary:some trimmed
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(kinds=("model_hypothesis",)))
    assert claim not in outcome.dead and "summary:some" not in outcome.dead and "summary:all" in outcome.dead
    assert main(["rests-on", str(path), "--kind", "model_hypothesis"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{len(listed)} artifacts rest only on model_hypothesis")
    line = {row.split()[1]: row for row in out if row.startswith("  - ")}
    assert "still entailed by other evidence" in line[claim]
    assert "1 of 2 sentences rest on model_hypothesis: trust-all keeps it trimmed" in line["summary:some"]
    assert "2 of 2 sentences rest on model_hypothesis: trust-all removes it" in line["summary:all"]
    assert "[" not in line["summary:some#s1"] and len(line) == len(listed)


def test_rests_on_generated_graphs_matches_brute_force(tmp_path):
    import dataclasses
    import random
    from polygraph_logic.graph.synthetic import generate
    statuses = []
    for seed in (1, 2):
        generated = generate(seed=seed, documents=30, assertions=240, merges=8, summaries=8)
        rng = random.Random(seed)
        sources = sorted({a.source for a in generated.assertions})
        kind_of = {s: rng.choice(["model_hypothesis", "source_claim", "source_claim", "tool_observation"])
                   for s in sources}
        assertions = [dataclasses.replace(a, kind=kind_of[a.source]) for a in generated.assertions]
        path = tmp_path / f"generated{seed}.graph"
        build_graph(assertions, generated.receipts, [RO]).write(path)  # cap 8: capped labels settled by the circuit
        with Graph(path) as graph:
            assert any(not a.exact for a in graph.artifacts())
            for kinds in (("model_hypothesis",), ("tool_observation",), ("model_hypothesis", "tool_observation")):
                result = check_rests_on(graph, assertions, generated.receipts, kinds)
                statuses += [s["under_trust_all"] for s in result["summaries"].values()]
                statuses += ["unlisted"] * (graph.layer_count("summary") - len(result["summaries"]))
    assert {"trimmed", "removed", "unlisted"} <= set(statuses)  # every case of a summary met


def test_why_shows_kinds_and_marks_sets_resting_on_distrusted_kinds(variant):
    _, _, path = variant
    with Graph(path) as graph:
        result = why(graph, "merge:mapk-erk", Explainer(graph), distrust=("model_hypothesis",))
        kinds = [[a["kind"] for a in support] for support in result["support_sets"]]
        assert kinds == [["source_claim", "source_claim"], ["model_hypothesis", "model_hypothesis"]]
        assert result["distrusted"] == [False, True] and result["stands"] is True
        flat = why(graph, "summary:aim2-flat", distrust=("tool_observation", "source_claim"))
        assert flat["distrusted"] == [True, True] and flat["stands"] is False
        assert "distrusted" not in why(graph, "merge:mapk-erk")


def test_robustness_counts_only_trusted_support_sets(variant):
    _, _, path = variant
    with Graph(path) as graph:
        full = robustness(graph, "merge:mapk-erk")
        trusted = robustness(graph, "merge:mapk-erk", distrust=("model_hypothesis",))
    assert (full["paths"], full["distrusted_kinds"] if "distrusted_kinds" in full else None) == (2, None)
    assert trusted["paths"] == 1 and trusted["distrusted_sets"] == 1
    assert trusted["sources"] == ["PMID:39973430"]


def test_cli_why_rests_on_and_whatif_with_distrusted_kinds(variant, capsys):
    _, _, path = variant
    assert main(["why", str(path), "merge:mapk-erk", "--distrust-kind", "model_hypothesis"]) == 0
    out = capsys.readouterr().out
    assert "model_hypothesis" in out and "cannot support" in out and "stands without model_hypothesis" in out
    assert main(["rests-on", str(path), "--kind", "model_hypothesis", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["kinds"] == ["model_hypothesis"] and listed["artifacts"]
    assert main(["whatif", str(path), "--distrust-kind", "model_hypothesis", "--list"]) == 0
    out = capsys.readouterr().out
    assert f"{len(listed['artifacts'])} of the dead rest only on them" in out
    assert "2 assertions of model_hypothesis distrusted (none retracted)" in out
    assert main(["whatif", str(path), "--distrust-kind", "hunch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("unknown_kind: ") and err.count("\n") == 1


def test_rdf_export_types_each_assertion_with_its_kind_class(variant, tmp_path):
    assertions, _, path = variant
    vocabulary = rdflib.Graph().parse(vocabulary_path(), format="turtle")
    for iri in KIND_CLASSES.values():
        assert (rdflib.URIRef(iri), rdflib.RDFS.subClassOf, rdflib.URIRef(PG + "Assertion")) in vocabulary
        assert vocabulary.value(rdflib.URIRef(iri), rdflib.RDFS.comment)
    assert set(KIND_CLASSES) == set(KINDS)
    for format, ox_format in (("trig", ox.RdfFormat.TRIG), ("nquads", ox.RdfFormat.N_QUADS)):
        out = tmp_path / f"kinds.{format}"
        export_graph(path, out, format)
        data = rdflib.Dataset(default_union=True)
        data.parse(out, format=format)
        pg_id = rdflib.URIRef(PG + "assertionId")
        found = {str(data.value(node, pg_id, any=True)): {str(t) for t in data.objects(node, rdflib.RDF.type)}
                 for node in set(data.subjects(pg_id, None))}
        for a in assertions:
            assert KIND_CLASSES[a.kind] in found[a.id]
            assert {KIND_CLASSES[k] for k in KINDS} & found[a.id] == {KIND_CLASSES[a.kind]}
        typed = {(q.subject.value, q.object.value) for q in ox.parse(path=str(out), format=ox_format)
                 if q.predicate.value == str(rdflib.RDF.type) and q.object.value in KIND_CLASSES.values()}
        assert len(typed) == len(assertions)


def test_check_reports_a_stored_kind_that_is_not_a_kind(variant, tmp_path, capsys):
    _, _, path = variant
    damaged = tmp_path / "damaged.graph"
    damaged.write_bytes(path.read_bytes())
    db = sqlite3.connect(damaged)
    db.execute("UPDATE assertions SET kind = 'hunch' WHERE id = 'a20'")
    db.commit()
    db.close()
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert "assertions of an unknown kind: row" in err and "'hunch'" in err


def test_a_verified_hypothesis_stops_resting_on_hypotheses_in_the_new_version_only(variant, tmp_path):
    from polygraph_logic.graph.ledger import add
    assertions, receipts, path = variant
    grown = tmp_path / "grown.graph"
    grown.write_bytes(path.read_bytes())
    check = Assertion("v1", "lab:check-1", "MAPK/ERK", "RO:0002213", "cell proliferation", kind="verification")
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps(check.to_json()) + "\n")
    add(grown, new)
    rebuilt = tmp_path / "rebuilt.graph"  # the oracle: a full build from the union of the inputs
    build_graph([*assertions, check], receipts, [RO]).write(rebuilt)
    with Graph(path) as before, Graph(grown, at=1) as first, Graph(grown) as latest, Graph(rebuilt) as union:
        ids = {g: {e["id"] for e in rests_on(g, ("model_hypothesis",))["artifacts"]}
               for g in (before, first, latest, union)}
        assert ids[first] == ids[before] and ids[latest] == ids[union]
        assert ids[latest] < ids[before]
        claim = next(a.id for a in latest.artifacts("claim") if a.fact[1] == check.triple)
        assert claim in ids[before] and claim not in ids[latest]
        assert latest.assertions["v1"].kind == "verification"
        assert first.kind_counts() == {"source_claim": 3, "tool_observation": 1, "model_hypothesis": 2}
