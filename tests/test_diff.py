"""``polygraph diff``: two graphs compared by content, against references computed apart.

References: the same inputs built into a file and into a folder (other engines, the same
content: no difference), an export read back (none), an applied deletion (the artifacts only in
the first are what the what-if engine calls dead), an add (the artifacts and labels compared
directly, artifact by artifact, in the test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygraph_logic import build_graph
from polygraph_logic.cli import main
from polygraph_logic.export import export_graph
from polygraph_logic.graph.ledger import add
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.importers import import_rdf
from polygraph_logic.query.diff import diff_graphs
from polygraph_logic.query.session import Session
from polygraph_logic.query.whatif import Deletion, what_if
from polygraph_logic.resources import rule_file

FIGURE1 = Path(__file__).resolve().parent.parent / "examples" / "figure1"


def _artifacts(path: Path, at: int | None = None) -> dict:
    with Graph(path, at=at) as graph:
        return {a.id: (a.layer, a.content, sorted(sorted(s) for s in a.support), a.exact) for a in graph.artifacts()}


def test_a_graph_and_its_export_read_back_say_the_same(figure1_graph, tmp_path):
    export_graph(figure1_graph, tmp_path / "f.nq", "nquads")
    import_rdf(tmp_path / "f.nq", tmp_path / "back.graph")
    found = diff_graphs(figure1_graph, tmp_path / "back.graph")
    assert found.identical and found.symmetric == 0
    assert sum(c.same for c in found.layers.values()) == len(_artifacts(figure1_graph))
    assert found.assertions.same == 6


def test_a_file_and_a_folder_of_the_same_inputs_say_the_same(tmp_path):
    pytest.importorskip("duckdb")
    inputs = ["--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(FIGURE1 / "receipts.jsonl"),
              "--rules", "ro"]
    assert main(["build", *inputs, "-o", str(tmp_path / "f.graph")]) == 0
    assert main(["build", *inputs, "--engine", "duckdb", "--tables", str(tmp_path / "f.tables")]) == 0
    assert diff_graphs(tmp_path / "f.graph", tmp_path / "f.tables").identical


def test_an_applied_deletion_removes_what_the_whatif_calls_dead(figure1_graph, tmp_path):
    session = Session.open(figure1_graph, "trust-all")
    session.retract("PMID:39973430")
    session.apply(tmp_path / "cleaned.graph")
    session.graph.close()
    with Graph(figure1_graph) as graph:
        outcome = what_if(graph, Deletion(sources=("PMID:39973430",)), "trust-all")
        dead, deleted = set(outcome.dead), set(outcome.deleted)
    found = diff_graphs(figure1_graph, tmp_path / "cleaned.graph", limit=1000)
    only_first = {e["artifact"] for e in found.examples if e["change"] == "only in first"}
    assert only_first == dead and sum(c.only_first for c in found.layers.values()) == len(dead)
    assert found.assertions.only_first == len(deleted) and not found.assertions.only_second
    before, after = _artifacts(figure1_graph), _artifacts(tmp_path / "cleaned.graph")
    relabelled = {i for i in before.keys() & after.keys() if before[i] != after[i]}
    assert {e["artifact"] for e in found.examples if e["change"] == "label differs"} == relabelled
    assert sum(c.label for c in found.layers.values()) == len(relabelled)


def test_versions_of_a_grown_graph_compared_with_at(tmp_path):
    path = tmp_path / "g.graph"
    build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro")]).write(path)
    report = add(path, FIGURE1 / "contradicting.jsonl")
    found = diff_graphs(path, path, at_first=1, at_second=2, limit=0)
    before, after = _artifacts(path, 1), _artifacts(path, 2)
    assert found.examples == []
    assert sum(c.only_second for c in found.layers.values()) == len(after.keys() - before.keys()) == report.artifacts
    assert sum(c.only_first for c in found.layers.values()) == len(before.keys() - after.keys()) == report.retired
    assert sum(c.label + c.content for c in found.layers.values()) == sum(
        before[i] != after[i] for i in before.keys() & after.keys())
    assert found.assertions.only_second == report.assertions
    same = diff_graphs(path, path, at_first=2, at_second=2)
    assert same.identical


def test_the_command_exits_1_on_a_difference_and_prints_json(figure1_graph, tmp_path, capsys):
    path = tmp_path / "g.graph"
    build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro")]).write(path)
    add(path, FIGURE1 / "contradicting.jsonl")
    capsys.readouterr()
    assert main(["diff", str(path), str(path), "--at1", "1", "--json", "--limit", "2"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert not data["identical"] and len(data["examples"]) == 2 and data["symmetric_difference"] > 0
    assert set(data["layers"]["edge"]) >= {"only_first", "only_second", "content", "label", "same", "differing"}
    assert main(["diff", str(figure1_graph), str(figure1_graph), "--layer", "merge"]) == 0
    out = capsys.readouterr().out
    assert "the same" in out and "merge" in out and "edge" not in out
    with pytest.raises(SystemExit) as refused:
        main(["diff", str(path), str(path), "--limit", "-1"])
    assert refused.value.code == 2 and "cannot be negative" in capsys.readouterr().err
    assert main(["diff", str(path), str(tmp_path / "missing.graph")]) == 2
