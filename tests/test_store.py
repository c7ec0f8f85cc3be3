"""The graph queried in place: the disk path against a naive in-memory reference, every
policy, random deletions; demotion; the previous file format refused; odd file names."""

import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.build import build_graph
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store import Graph
from polygraph_logic.whatif import POLICIES, Deletion, what_if

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_whatif import ReferenceGraph  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RO = ROOT / "rules" / "ro.dl"


def build(tmp_path, directory, cap=8, rules=(RO,), name="g.graph") -> Path:
    assertions = load_assertions(directory / "assertions.jsonl")
    receipts = load_receipts(directory / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path / name
    build_graph(assertions, receipts, rules, cap=cap).write(path)
    return path


def random_deletions(reference: ReferenceGraph, rng: random.Random, count: int) -> list[Deletion]:
    sources = sorted({a.source for a in reference.assertions})
    relations = sorted({a.predicate for a in reference.assertions})
    ids = [a.id for a in reference.assertions]
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(Deletion(sources=tuple(rng.sample(sources, 1))))
        elif kind == 1:
            out.append(Deletion(sources=tuple(rng.sample(sources, min(len(sources), rng.randint(2, 8))))))
        elif kind == 2:
            out.append(Deletion(relations=tuple(rng.sample(relations, 1))))
        else:
            out.append(Deletion(sources=tuple(rng.sample(sources, 1)), assertions=tuple(rng.sample(ids, 3))))
    return out


def assert_same(graph: Graph, reference: ReferenceGraph, deletion: Deletion, policy: str) -> None:
    outcome = what_if(graph, deletion, policy)
    expected = reference.what_if(deletion, policy)
    where = (str(deletion), policy)
    assert set(outcome.touched) == expected.touched, where
    assert set(outcome.dead) == expected.dead, where
    assert set(outcome.kept) == expected.touched - expected.dead, where
    assert {d["artifact"] for d in outcome.demoted} == expected.demoted, where
    assert set(outcome.uncertain) == expected.uncertain, where
    assert outcome.summaries == expected.summaries, where
    assert outcome.deleted == frozenset(reference.deleted(deletion)), where


@pytest.mark.slow
@pytest.mark.parametrize("example, cap", [("figure1", 8), ("figure1", 1), ("synthetic", 8), ("synthetic", 1)])
def test_disk_path_equals_the_reference_for_every_policy(tmp_path, example, cap):
    path = build(tmp_path, ROOT / "examples" / example, cap)
    with Graph(path) as graph:
        reference = ReferenceGraph(graph)
        rng = random.Random(cap)
        for deletion in random_deletions(reference, rng, 8 if example == "synthetic" else 12):
            for policy in POLICIES:
                assert_same(graph, reference, deletion, policy)


def test_a_claim_whose_triple_is_still_entailed_is_demoted_not_dead(tmp_path):
    """x regulates y is stated by S1 only; S2 states x positively regulates y, a sub-property:
    retracting S1 leaves the triple entailed, so the claim is demoted to an edge."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "assertions.jsonl").write_text(
        '{"id": "a1", "source": "S1", "subject": "x", "predicate": "RO:0002211", "object": "y"}\n'
        '{"id": "a2", "source": "S2", "subject": "x", "predicate": "RO:0002213", "object": "y"}\n')
    (tmp_path / "in" / "receipts.jsonl").write_text("")
    with Graph(build(tmp_path, tmp_path / "in")) as graph:
        claim = next(a for a in graph.artifacts("claim") if a.content["predicate"] == "RO:0002211")
        for policy in ("trust-all", "deployed", "distrust:summary"):
            outcome = what_if(graph, Deletion(sources=("S1",)), policy)
            assert claim.id not in outcome.dead and claim.id in outcome.kept
            assert outcome.demoted == [{"artifact": claim.id, "triple": ["x", "RO:0002211", "y"],
                                        "support": [["a2"]], "rederived": False}]
            assert outcome.by_layer()["claim"]["demoted"] == 1
        assert claim.id in what_if(graph, Deletion(sources=("S1",)), "flat").dead
        assert claim.id in what_if(graph, Deletion(sources=("S1",)), "distrust:edge").dead
        both = what_if(graph, Deletion(sources=("S1", "S2")), "trust-all")
        assert claim.id in both.dead and not both.demoted


def test_uncertain_verdicts_are_the_dead_ones_on_capped_labels(tmp_path):
    path = build(tmp_path, ROOT / "examples" / "figure1", cap=1)
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(sources=("PMID:39973430",)), "trust-all")
        inexact = {a.id for a in graph.artifacts() if not a.exact}
        assert outcome.uncertain and set(outcome.uncertain) <= set(outcome.dead) & inexact
        exact = what_if(graph, Deletion(sources=("PMID:39973430",)), "trust-all", exact=True)
        assert exact.uncertain == [] and exact.to_json()["uncertain"] == []


def test_a_graph_of_the_previous_format_is_refused_with_the_rebuild_command(tmp_path):
    path = tmp_path / "old.graph"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO meta VALUES ('format', 'polygraph-graph/1'), ('cap', '8');")
    db.commit()
    db.close()
    with pytest.raises(PolygraphError) as error:
        Graph(path)
    assert error.value.code == "old_graph" and "polygraph build" in str(error.value)


@pytest.mark.parametrize("name", ["g%41.graph", "g#1.graph", "g?x.graph"])
def test_graph_paths_with_uri_characters_open_that_file(tmp_path, name):
    path = build(tmp_path, ROOT / "examples" / "figure1")
    odd = tmp_path / name
    shutil.copy(path, odd)
    before = sorted(p.name for p in tmp_path.iterdir())
    with Graph(odd) as graph:
        assert graph.counts() == Graph(path).counts()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created beside it


def test_opening_reads_metadata_only_and_rules_come_without_the_parser(tmp_path):
    path = build(tmp_path, ROOT / "examples" / "figure1")
    with Graph(path) as graph:
        assert "rules" not in graph.meta
        stats = json.loads(graph.meta["stats"])
        assert stats["assertions"] == len(graph.assertions)
        rules = graph.rules()
        assert [str(r) for r in rules] == graph.rules_text().splitlines()


def test_a_damaged_rules_tree_is_a_bad_graph_error_not_code(tmp_path):
    import pickle
    path = build(tmp_path, ROOT / "examples" / "figure1")
    db = sqlite3.connect(path)
    db.execute("UPDATE rules SET tree = ?", (pickle.dumps(print),))
    db.commit()
    db.close()
    with Graph(path) as graph, pytest.raises(PolygraphError) as error:
        graph.rules()
    assert error.value.code == "bad_graph"


def test_listings_name_each_claim_and_edge_triple(tmp_path, capsys):
    from polygraph_logic.cli import main
    path = build(tmp_path, ROOT / "examples" / "figure1")
    assert main(["whatif", str(path), "--retract-source", "PMID:39973430", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    with Graph(path) as graph:
        for artifact_id in result["dead"]:
            artifact = graph.artifact(artifact_id)
            if artifact.layer in ("claim", "edge"):
                assert result["triples"][artifact_id] == list(artifact.fact[1])
        edge = next(a for a in result["dead"] if a.startswith("edge:"))
        triple = " ".join(result["triples"][edge])
    assert main(["whatif", str(path), "--retract-source", "PMID:39973430", "--list"]) == 0
    assert f"  - {edge}  {triple}" in capsys.readouterr().out
    assert main(["why", str(path), edge]) == 0
    assert capsys.readouterr().out.startswith(f"{edge} (edge {triple}):")
