"""What-if deletions: policies, sentence-level summaries, and exact verdicts (through the stored
circuit, and by re-derivation on a graph without one) checked against a from-scratch Boolean
evaluation on the surviving assertions."""

import random
import sys
from pathlib import Path

import pytest

from recompute import truth
from polygraph_logic.errors import PolygraphError
from polygraph_logic import build_graph
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion, what_if

sys.path.insert(0, str(Path(__file__).resolve().parent))
from circuits import without_circuit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"


def built(tmp_path, directory, cap, rules=(RO,), circuit=True):
    """The inputs and the graph built from them (``circuit=False``: as written before circuits,
    its capped verdicts settled by re-derivation)."""
    assertions = load_assertions(directory / "assertions.jsonl")
    receipts = load_receipts(directory / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path / f"g{cap}.graph"
    build_graph(assertions, receipts, rules, cap=cap).write(path)
    if not circuit:
        path = without_circuit(path, tmp_path / f"old{cap}.graph")
    return assertions, receipts, GraphIndex(Graph(path))


@pytest.fixture(scope="module")
def figure1(tmp_path_factory):
    return built(tmp_path_factory.mktemp("f1"), FIGURE1, 8)


def test_retracting_the_figure1_sources(figure1):
    _, _, index = figure1
    outcome = what_if(index, Deletion(sources=("PMID:39973430", "PMID:40057077")), "trust-all")
    layer = {a: index.artifacts[a].layer for a in outcome.touched}
    dead = set(outcome.dead)
    assert "merge:mapk-erk" in outcome.kept  # paper B still supports the merge
    edge = index.by_fact[("edge", ("MAPK/ERK", "RO:0002411", "apoptosis"))].id
    assert edge in dead  # the entailed edge rested only on the retracted evidence
    assert "summary:aim2-flat" in outcome.kept  # the flat receipt leaks: a32 keeps it alive
    assert outcome.summaries["summary:aim2"] == {"status": "trimmed", "sentences": 2, "dead_sentences": 1}
    assert "summary:aim2" in outcome.kept and "summary:aim2#s1" in dead
    assert sorted(set(layer.values())) == ["claim", "edge", "merge", "sentence", "summary"]
    counts = outcome.by_layer()
    assert counts["claim"] == {"touched": 3, "dead": 3, "kept": 0}


def test_policies_differ_as_specified(figure1):
    _, _, index = figure1
    deletion = Deletion(sources=("PMID:39973430", "PMID:40057077"))
    deployed = what_if(index, deletion, "deployed")
    assert {index.artifacts[a].layer for a in deployed.dead} == {"claim"}
    flat = what_if(index, deletion, "flat")
    assert set(flat.dead) == set(flat.touched)
    distrust = what_if(index, deletion, "distrust:summary")
    assert "summary:aim2-flat" in distrust.dead and "merge:mapk-erk" in distrust.kept
    assert distrust.summaries["summary:aim2"]["status"] == "removed"
    trust = what_if(index, deletion, "trust-all")
    assert set(deployed.dead) < set(trust.dead) < set(flat.dead)


def test_what_if_never_mutates_the_graph(figure1):
    _, _, index = figure1
    before = list(index.graph.artifacts())
    what_if(index, Deletion(relations=("RO:0002211",)), "flat", exact=True)
    assert list(index.graph.artifacts()) == before


def test_unknown_names_are_errors_with_suggestions(figure1):
    _, _, index = figure1
    with pytest.raises(PolygraphError) as caught:
        what_if(index, Deletion(sources=("PMID:3997343",), relations=("RO:000221",), assertions=("a99",)))
    message = caught.value.message
    assert caught.value.code == "unknown_deletion"
    assert "PMID:39973430" in message and "RO:0002211" in message and "'a99'" in message
    with pytest.raises(PolygraphError, match="unknown policy"):
        what_if(index, Deletion(assertions=("a12",)), "trust-some")


def expected_dead(fact, alive) -> bool:
    """Dead by recomputation: the fact is not derived; a claim also needs its triple not entailed
    as an edge (otherwise it is demoted, and kept)."""
    relation, args = fact
    if relation == "claim":
        return fact not in alive and ("edge", args) not in alive
    return fact not in alive


def assert_demotions_are_entailed(outcome, index, alive):
    for entry in outcome.demoted:
        fact = index.artifacts[entry["artifact"]].fact
        assert fact not in alive and ("edge", fact[1]) in alive, entry


@pytest.mark.slow
@pytest.mark.parametrize("circuit", [True, False], ids=["circuit", "rederivation"])
@pytest.mark.parametrize("cap", [1, 2])
def test_exact_what_if_equals_boolean_recompute_on_capped_labels(tmp_path, cap, circuit):
    assertions, receipts, index = built(tmp_path, FIGURE1, cap, circuit=circuit)
    labels_only = GraphIndex(Graph(without_circuit(index.graph.path, tmp_path / "labels.graph"))) if circuit else index
    rng = random.Random(cap)
    ids = [a.id for a in assertions]
    deletions = [Deletion(assertions=tuple(rng.sample(ids, k))) for k in (1, 2, 3) for _ in range(4)]
    deletions.append(Deletion(sources=("PMID:39973430",)))
    revived = 0
    for deletion in deletions:
        outcome = what_if(index, deletion, "trust-all", exact=True)
        alive = truth(assertions, receipts, outcome.deleted)
        for artifact_id in outcome.touched:
            artifact = index.artifacts[artifact_id]
            if artifact.layer == "summary" and artifact_id in outcome.summaries:
                continue  # sentence-level summaries are trimmed, not judged by their conjunction
            assert (artifact_id in outcome.dead) == expected_dead(artifact.fact, alive), (deletion, artifact_id)
        assert_demotions_are_entailed(outcome, index, alive)
        # by the labels alone, truncation can only make things look deader, never alive
        loose = what_if(labels_only, deletion, "trust-all")
        assert set(outcome.dead) <= set(loose.dead) and set(loose.dead) - set(outcome.dead) <= set(loose.uncertain)
        assert what_if(index, deletion, "trust-all").to_json()["exact"] is circuit
        revived += outcome.revived
    assert revived > 0  # the caps did truncate, and the circuit or re-derivation did settle verdicts


@pytest.mark.slow
@pytest.mark.parametrize("circuit", [True, False], ids=["circuit", "rederivation"])
def test_exact_what_if_on_a_synthetic_graph_equals_recompute(tmp_path, circuit):
    assertions, receipts, index = built(tmp_path, ROOT / "examples" / "synthetic", 1, circuit=circuit)
    rng = random.Random(7)
    revived = 0
    for source in rng.sample(sorted(index.sources), 6):
        outcome = what_if(index, Deletion(sources=(source,)), "trust-all", exact=True)
        alive = truth(assertions, receipts, outcome.deleted)
        for artifact_id in outcome.touched:
            artifact = index.artifacts[artifact_id]
            if artifact_id in outcome.summaries:
                continue
            assert (artifact_id in outcome.dead) == expected_dead(artifact.fact, alive), (source, artifact_id)
        assert_demotions_are_entailed(outcome, index, alive)
        revived += outcome.revived
    assert revived > 0


def test_exact_verdicts_agree_with_pydatalog_on_a_small_graph(tmp_path):
    from polygraph_logic.datalog.pydatalog_engine import evaluate_with_pydatalog
    assertions, receipts, index = built(tmp_path, FIGURE1, 1, rules=())
    outcome = what_if(index, Deletion(sources=("PMID:39973430",)), "trust-all", exact=True)
    surviving = [a for a in assertions if a.id not in outcome.deleted]
    program = compile_inputs(surviving, receipts).program()
    closure = evaluate_with_pydatalog(program.facts, program.rules)
    for artifact_id in outcome.touched:
        relation, args = index.artifacts[artifact_id].fact
        if artifact_id in outcome.summaries:
            continue
        alive = {(name, tup) for name, rows in closure.items() for tup in rows}
        assert (artifact_id in outcome.dead) == expected_dead((relation, args), alive), artifact_id


def test_deployed_checks_capped_claims_against_their_stating_assertions(tmp_path):
    """A claim stated twice, its label capped at one assertion: retracting that one
    assertion's source leaves the claim stated, so even deployed keeps it."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "assertions.jsonl").write_text(
        '{"id": "a1", "source": "S1", "subject": "x", "predicate": "RO:0002211", "object": "y"}\n'
        '{"id": "a2", "source": "S2", "subject": "x", "predicate": "RO:0002211", "object": "y"}\n')
    (tmp_path / "in" / "receipts.jsonl").write_text("")
    _, _, index = built(tmp_path, tmp_path / "in", 1, rules=())
    claim = index.by_fact[("claim", ("x", "RO:0002211", "y"))]
    assert not index.exact[claim.fact]
    kept_by = index.graph.artifact(claim.id).support[0][0]
    source = {"a1": "S1", "a2": "S2"}[kept_by]
    assert claim.id in what_if(index, Deletion(sources=(source,)), "deployed").kept
    assert claim.id in what_if(index, Deletion(sources=("S1", "S2")), "deployed").dead


def test_a_long_deletion_is_named_briefly_in_the_text_and_whole_in_json():
    """The text heads a what-if with at most ten names of each kind and how many more (2,440
    retracted sources made a 100 KB first line); ``str`` and the JSON keep every name."""
    deletion = Deletion(sources=tuple(f"s{i}" for i in range(12)), assertions=("a1", "a2"), kinds=("model_hypothesis",))
    assert deletion.summary() == ", ".join(f"retract-source s{i}" for i in range(10)) + (
        ", and 2 more retract-source, assertion a1, assertion a2, distrust-kind model_hypothesis")
    assert deletion.summary(3).startswith("retract-source s0, retract-source s1, retract-source s2, and 9 more")
    assert str(deletion) == deletion.summary(None) and str(deletion).count("retract-source") == 12
    assert Deletion().summary() == "nothing"


def test_the_study_policy_and_policies_composed_per_layer(figure1_graph):
    """Figure 1's AIM2 summaries after PMID:40057077 (the source of a31, their first sentence):
    the flat one falls under study and the sentence-level one is trimmed; distrust:summary
    removes both; a composition says the same as its named form."""
    from polygraph_logic.query.policies import check_policy, layer_rules
    with Graph(figure1_graph) as graph:
        deletion = Deletion(sources=("PMID:40057077",))
        study = what_if(graph, deletion, "study")
        assert "summary:aim2-flat" in study.dead and "summary:aim2" not in study.dead
        assert study.summaries["summary:aim2"]["status"] == "trimmed"
        assert "summary:aim2-flat" not in what_if(graph, deletion, "trust-all").dead
        assert {"summary:aim2", "summary:aim2-flat"} <= set(what_if(graph, deletion, "distrust:summary").dead)
        for named, composed in (("study", "summary=distrust-flat"), ("distrust:merge", "merge=distrust"),
                                ("trust-all", "claim=trust,edge=trust")):
            assert what_if(graph, deletion, named).dead == what_if(graph, deletion, composed).dead
        both = what_if(graph, Deletion(sources=("PMID:39973430", "example:paper-B")), "summary=distrust-flat,merge=distrust")
        assert "merge:mapk-erk" in both.dead
    assert layer_rules("summary=distrust-flat, merge = distrust") == {"summary": "distrust-flat", "merge": "distrust"}
    for bad, why in (("edge=distrust-flat", "no rule 'distrust-flat' for edge"), ("nodes=trust", "no layer 'nodes'"),
                     ("edge=trust,edge=distrust", "named twice"), ("lenient", "unknown policy")):
        with pytest.raises(PolygraphError, match=why) as raised:
            check_policy(bad)
        assert raised.value.code == "unknown_policy"
