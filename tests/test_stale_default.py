"""Stale by default: a question naming no view of the evidence reads the current one (what is
superseded, retracted or expired now is left out), `--raw` reads every stored assertion.  Checked
against the test's own reading of each record's times and status (test_evidence.kept_by_hand) and
a from-scratch Boolean evaluation of what it keeps (recompute.truth)."""

import json

import pytest

from recompute import truth
from test_evidence import FIGURE1, RO, dated, kept_by_hand  # noqa: F401  (dated: the fixture)
from polygraph_logic import build_graph
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.kinds import KINDS
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.evidence import EvidenceView, Requirement, default_view
from polygraph_logic.query.listing import Listing
from polygraph_logic.query.whatif import Deletion, what_if


def _left_out_now(records) -> set[str]:
    view = EvidenceView()
    return {r["id"] for r in records} - kept_by_hand(records, None, None, None, view.reference)


def test_the_default_leaves_out_exactly_what_is_invalidated_or_expired_now(dated):
    records, assertions, receipts, path, _ = dated
    gone = _left_out_now(records)
    with Graph(path) as graph:
        if not gone:  # a draw with nothing invalidated or expired now: the current view leaves nothing out
            assert default_view(graph) is None and what_if(graph, Deletion()).deleted == frozenset()
            return
        outcome = what_if(graph, Deletion())
        assert outcome.deleted == gone
        assert {i for ids in outcome.evidence_excluded.values() for i in ids} == gone
        standing = truth(assertions, receipts, gone)
        dead = set(outcome.dead) | {d["artifact"] for d in outcome.demoted}
        for artifact in graph.artifacts():
            if artifact.id not in outcome.summaries:
                assert (artifact.id in dead) == (artifact.fact not in standing), artifact.id
        # the raw view counts every stored assertion
        assert what_if(graph, Deletion(raw=True)).deleted == frozenset()
        # a named deletion is joined by what the current view leaves out, unless raw
        source = next(a.source for a in assertions if a.id not in gone)
        named = {a.id for a in assertions if a.source == source}
        assert what_if(graph, Deletion(sources=(source,))).deleted == named | gone
        assert what_if(graph, Deletion(sources=(source,), raw=True)).deleted == named


def test_a_requirement_is_met_by_nothing_left_out_now(dated):
    """With every kind required, an artifact meets the requirement exactly when it stands on the
    evidence the current view keeps (show's listing and why's marks agree)."""
    records, assertions, receipts, path, _ = dated
    standing = truth(assertions, receipts, _left_out_now(records))
    with Graph(path) as graph:
        listing = Listing(graph, ["claim", "merge", "edge"], None, Requirement(tuple(KINDS)))
        checked = 0
        for _, artifact in listing.rows():
            marks = listing.marks(artifact)
            assert marks["meets_requirement"] == (artifact.fact in standing), artifact.id
            if artifact.exact:
                assert any(marks["qualifying_sets"]) == (artifact.fact in standing), artifact.id
            checked += 1
        assert checked > 50


def test_a_graph_without_such_items_reads_as_before(tmp_path):
    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path / "plain.graph"
    build_graph(assertions, receipts, [RO]).write(path)
    with Graph(path) as graph:
        assert default_view(graph) is None
        outcome = what_if(graph, Deletion())
        assert str(outcome.deletion) == "nothing" and outcome.deleted == frozenset()


def test_cli_raw_and_its_errors(dated, capsys):
    records, _, _, path, _ = dated
    gone = _left_out_now(records)
    assert main(["whatif", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert sorted(document["deleted_assertions"]) == sorted(gone)
    assert main(["whatif", str(path), "--raw", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted_assertions"] == []
    assert main(["whatif", str(path), "--raw", "--as-of", "2020-01-01"]) == 2
    assert "--raw reads every assertion" in capsys.readouterr().err
    with pytest.raises(PolygraphError, match="cannot be combined"):
        EvidenceView.parse(None, None, "team:a", raw=True)
