"""The Gene Ontology slice end to end: import, build, soundness of labels, exact what-if.

Skips when ../shared/data/go-pombase is absent.
"""

import random
from pathlib import Path

import pytest

from polygraph_logic import evaluate
from polygraph_logic import build_graph
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.datalog.program import load_program
from polygraph_logic.resources import rule_file
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "go-pombase"
pytestmark = pytest.mark.skipif(not (DATA / "truncated-pombase.gpad").exists(),
                                reason=f"the Gene Ontology slice is not at {DATA}")


@pytest.fixture(scope="module")
def go(tmp_path_factory):
    from polygraph_logic.importers import read_gpad, read_obographs, write_background
    directory = tmp_path_factory.mktemp("go")
    assertions, _ = read_gpad(DATA / "truncated-pombase.gpad")
    edges, _, _ = read_obographs(DATA / "go-truncated-pombase.json")
    write_background(directory / "background.dl", edges)
    rules = [rule_file("ro-class"), rule_file("existential"), directory / "background.dl"]
    build = build_graph(assertions, [], rules)
    build.write(directory / "go.graph")
    return assertions, rules, build, GraphIndex(Graph(directory / "go.graph"))


@pytest.mark.slow
def test_the_slice_builds_end_to_end(go):
    assertions, _, build, index = go
    counts = build.counts()
    assert len(assertions) == 1984 and len(index.sources) == 523
    assert counts["claim"] == len({a.triple for a in assertions})
    assert counts["edge"] > 10 * counts["claim"]  # annotations propagate up is_a and part_of
    # an annotation to a term holds for its superclasses (C P D, D is_a D2 give C P D2)
    superclasses = {}
    for (relation, args) in index.labels:
        if relation == "edge" and args[1] == "rdfs:subClassOf":
            superclasses.setdefault(args[0], []).append(args[2])
    checked = 0
    for a in assertions[:200]:
        for parent in superclasses.get(a.object, ()):
            assert ("edge", (a.subject, a.predicate, parent)) in index.labels
            checked += 1
    assert checked > 50


@pytest.mark.slow
def test_every_support_set_rederives_its_edge_by_itself(go):
    assertions, rules, build, index = go
    rng = random.Random(1)
    edges = [a for a in build.artifacts if a.layer == "edge"]
    rule_program = load_program(*[str(r) for r in rules])
    by_id = {a.id: a for a in assertions}
    for artifact in rng.sample(edges, 4):
        support = rng.choice(artifact.support)
        kept = [by_id[a] for a in support]
        model = evaluate(compile_inputs(kept, []).program(rule_program), "boolean")
        triple = (artifact.content["subject"], artifact.content["predicate"], artifact.content["object"])
        assert triple in model.boolean()["edge"], (artifact.id, support)


@pytest.mark.slow
def test_exact_what_if_equals_boolean_recompute(go):
    assertions, rules, build, index = go
    rule_program = load_program(*[str(r) for r in rules])
    rng = random.Random(2)
    for source in rng.sample(sorted(index.sources), 2):
        outcome = what_if(index, Deletion(sources=(source,)), exact=True)
        surviving = [a for a in assertions if a.id not in outcome.deleted]
        truth = evaluate(compile_inputs(surviving, []).program(rule_program), "boolean").boolean()
        for artifact_id in outcome.touched:
            relation, args = index.artifacts[artifact_id].fact
            entailed = args in truth[relation] or (relation == "claim" and args in truth["edge"])
            assert (artifact_id in outcome.dead) == (not entailed), artifact_id


@pytest.mark.slow
def test_exact_what_if_settles_capped_verdicts_as_recompute_does(go):
    """The source whose retraction leaves the most dead verdicts on capped labels."""
    assertions, rules, build, index = go
    graph = index.graph
    counts = [(what_if(graph, Deletion(sources=(s,))).settled, s) for s in sorted(index.sources)]
    settled, source = max(counts)
    assert settled > 0 and graph.has_circuit()
    outcome = what_if(graph, Deletion(sources=(source,)), exact=True)
    assert outcome.settled == settled and outcome.uncertain == [] and outcome.settled_by == "circuit"
    surviving = [a for a in assertions if a.id not in outcome.deleted]
    truth = evaluate(compile_inputs(surviving, []).program(load_program(*[str(r) for r in rules])),
                     "boolean").boolean()
    for artifact_id in outcome.touched:
        relation, args = index.artifacts[artifact_id].fact
        entailed = args in truth[relation] or (relation == "claim" and args in truth["edge"])
        assert (artifact_id in outcome.dead) == (not entailed), artifact_id


@pytest.mark.slow
def test_disk_path_equals_the_reference_for_every_policy(go, tmp_path):
    """Label verdicts (the graph without its circuit) against the naive reference; the circuit's
    verdicts against re-derivation's, under every policy."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from circuits import assert_settled_as_rederived, without_circuit
    from reference_whatif import ReferenceGraph
    from test_store import assert_same, random_deletions

    from polygraph_logic.query.whatif import POLICIES
    circuit = go[3].graph
    with Graph(without_circuit(circuit.path, tmp_path / "labels.graph")) as graph:
        reference = ReferenceGraph(graph)
        for deletion in random_deletions(reference, random.Random(5), 4):
            for policy in POLICIES:
                assert_same(graph, reference, deletion, policy)
                assert_settled_as_rederived(circuit, graph, deletion, policy)
