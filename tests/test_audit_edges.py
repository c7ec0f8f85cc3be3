"""The audit's symbolic edge oracles: our engine and pyDatalog agree on examples/figure1 and
with the edge labels; a corrupted label, a disagreement between the engines and a capped
label are each reported as they should be; the rule restriction and the round-by-round
driver that make pyDatalog usable change no closure."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from polygraph_logic import evaluate
from polygraph_logic.audit import EdgeRederivation, ScriptedOracle, audit, can_fire
from polygraph_logic.audit.edges import pydatalog_rounds
from polygraph_logic.cli import main
from polygraph_logic import build_graph
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.writer import write_graph
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.pydatalog_engine import evaluate_with_pydatalog
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.syntax import Fact
from polygraph_logic.query.whatif import Deletion

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
MAPK = Deletion(sources=("PMID:39973430",))
DELETIONS = [MAPK, Deletion(sources=("PMID:40057077",)), Deletion(relations=("RO:0002211",)),
             Deletion(assertions=("a20",)), Deletion(assertions=("a13", "a21"))]
LEAKY_EDGE = ("MAPK/ERK", "RO:0002411", "apoptosis")  # rests on a12 or a13 in every support set
LIVE_EDGE = ("MAPK/ERK", "RO:0002411", "cell proliferation")  # a20 alone derives it


def never(task):
    return False


def build(tmp_path, cap=8) -> Path:
    path = tmp_path / f"figure1-{cap}.graph"
    build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [ROOT / "rules" / "ro.dl"],
                cap=cap).write(path)
    return path


@pytest.fixture(scope="module")
def graph_path(tmp_path_factory, figure1_graph) -> Path:
    """This module's copy of Figure 1 at cap 8 (conftest.py's ``figure1_graph``, named as ``build`` names it)."""
    path = tmp_path_factory.mktemp("edges") / "figure1-8.graph"
    shutil.copy(figure1_graph, path)
    return path


@pytest.mark.slow
def test_engines_agree_on_figure1_and_with_every_edge_label(graph_path):
    report = audit(graph_path, DELETIONS, ScriptedOracle(never), draws=1, edge_oracle="pydatalog")
    assert report.findings == []
    checked = 0
    for entry in report.deletions:
        assert entry.edges, entry.deletion.name
        for edge in entry.edges:
            assert edge.answers["ours"] == edge.answers["pydatalog"] == edge.label, (entry.deletion.name, edge)
            assert edge.outcome == "agree" and edge.exact
            checked += 1
        ran, of, rounds = entry.pydatalog_rules
        assert ran < of / 10 and rounds >= 2
    assert checked > 100
    mapk = report.deletions[0]
    assert {e.edge: e.label for e in mapk.edges}[LEAKY_EDGE] == "dead"
    assert {e.edge: e.label for e in mapk.edges}[LIVE_EDGE] == "alive"
    assert "pyDatalog ran the" in report.table_text()


def test_edge_verdicts_match_a_from_scratch_build_without_the_deleted_sources(graph_path):
    """A third opinion, through the build pipeline instead of the stored rules: build the graph
    again from the surviving assertions, each merge keeping the support sets that survive."""
    from polygraph_logic.graph.records import load_assertions, load_receipts

    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    report = audit(graph_path, [MAPK], ScriptedOracle(never), draws=1)
    survivors = [a for a in assertions if a.source != "PMID:39973430"]
    ids = {a.id for a in survivors}
    merges = [dataclasses.replace(r, support=tuple(g for g in r.support if g <= ids))
              for r in receipts if r.layer == "merge"]
    rebuilt = build_graph(survivors, [r for r in merges if r.support], [ROOT / "rules" / "ro.dl"])
    alive = {(a.content["subject"], a.content["predicate"], a.content["object"])
             for a in rebuilt.artifacts if a.layer in ("edge", "claim")}
    assert len(report.deletions[0].edges) == 61
    for edge in report.deletions[0].edges:
        assert (edge.answers["ours"] == "alive") == (edge.edge in alive), edge


def corrupted(graph_path: Path, tmp_path: Path) -> Path:
    """Writes a copy of the graph whose labels of two edges are wrong (facts and rules intact)."""
    with Graph(graph_path) as graph:
        # the leaky label must still mention a deleted assertion: only touched labels are graded
        wrong = {LEAKY_EDGE: (("a20",), ("a12", "a13")), LIVE_EDGE: (("a12",),)}
        artifacts = []
        for artifact in graph.artifacts():
            triple = tuple(artifact.content[k] for k in ("subject", "predicate", "object")) \
                if artifact.layer == "edge" else None
            artifacts.append(dataclasses.replace(artifact, support=wrong[triple]) if triple in wrong else artifact)
        path = tmp_path / "corrupted.graph"
        meta = {k: v for k, v in graph.meta.items() if k not in ("format", "rules")}
        write_graph(path, list(graph.assertions.values()), artifacts, meta, list(graph.facts()), graph.rules_text())
    return path


def test_a_corrupted_edge_label_is_reported_as_a_finding(graph_path, tmp_path, capsys):
    path = corrupted(graph_path, tmp_path)
    for engine in ("ours", "pydatalog"):
        report = audit(path, [MAPK], ScriptedOracle(never), draws=1, edge_oracle=engine)
        labels = [f for f in report.findings if f["kind"] == "label"]
        assert {tuple(f["edge"]): (f["label"], f["rederived"], f["outcome"]) for f in labels} == {
            LEAKY_EDGE: ("alive", "dead", "leaky"), LIVE_EDGE: ("dead", "alive", "over-deleted")}
        assert not [f for f in report.findings if f["kind"] == "engines"]
        assert "the label of" in report.table_text() and "says alive, re-derivation by" in report.table_text()
    # the CLI exits 1 on a finding, 0 on the intact graph (the merge's answers are replayed)
    recorded = tmp_path / "recorded.json"
    audit(path, [MAPK], ScriptedOracle(never)).write(recorded)
    assert main(["audit", str(path), "--retract-source", "PMID:39973430", "--oracle", f"replay:{recorded}"]) == 1
    assert "findings:" in capsys.readouterr().out
    assert main(["audit", str(graph_path), "--retract-source", "PMID:39973430", "--oracle",
                 f"replay:{recorded}"]) == 0


def test_a_disagreement_between_the_engines_is_a_finding_with_both_answers(graph_path, monkeypatch):
    import polygraph_logic.datalog.pydatalog_engine as bridge

    honest = bridge.evaluate_with_pydatalog

    def forgetful(facts, rules):  # a pyDatalog that never derives LIVE_EDGE
        result = honest(facts, rules)
        return {name: rows - {LIVE_EDGE} if name.endswith("edge") else rows for name, rows in result.items()}

    monkeypatch.setattr(bridge, "evaluate_with_pydatalog", forgetful)
    report = audit(graph_path, [MAPK], ScriptedOracle(never), draws=1, edge_oracle="pydatalog")
    engines = [f for f in report.findings if f["kind"] == "engines"]
    assert len(engines) == 1
    assert (tuple(engines[0]["edge"]), engines[0]["ours"], engines[0]["pydatalog"]) == (LIVE_EDGE, "alive", "dead")
    assert "the engines disagree on" in report.table_text()


def test_a_capped_label_calling_a_live_edge_dead_is_counted_not_reported(tmp_path):
    path = build(tmp_path, cap=1)  # MAPK/ERK regulates apoptosis keeps only a12·a13
    report = audit(path, [Deletion(assertions=("a12",))], ScriptedOracle(never), draws=1)
    over = [e for e in report.deletions[0].edges if e.outcome == "over-deleted"]
    assert over and all(not e.exact and e.answers["ours"] == "alive" for e in over)
    assert ("MAPK/ERK", "RO:0002211", "apoptosis") in {e.edge for e in over}
    assert report.findings == []
    assert f"{len(over)} over-deleted ({len(over)} by a capped label)" in report.table_text()


def program(text: str) -> tuple[list, list]:
    clauses = parse_clauses(text)
    return [c for c in clauses if isinstance(c, Fact)], [c for c in clauses if not isinstance(c, Fact)]


def test_can_fire_drops_only_rules_that_derive_nothing():
    facts, rules = program("""
        q("a", "j"). e("a", "b"). e("b", "c"). t("c").
        p(x) :- q(x, "k").                  // no q fact has "k": cannot fire
        r(x, "b") :- e(x, _).               // fires
        s(x) :- r(x, "b").                  // fires through r's constant
        u(x) :- r(x, "z").                  // r never has "z": cannot fire
        path(x, y) :- e(x, y).
        path(x, z) :- path(x, y), e(y, z).
        v(x) :- path(x, "c"), !t(x).        // fires (negation is ignored by the abstraction)
        w(x) :- p(x).                       // p is empty: cannot fire
    """)
    live = can_fire(facts, rules)
    assert [str(r.head.relation) for r in live] == ["r", "s", "path", "path", "v"]
    full = evaluate(Program.from_clauses([*facts, *rules]), "boolean").boolean()
    restricted = evaluate(Program.from_clauses([*facts, *live]), "boolean").boolean()
    assert {k: v for k, v in full.items() if v} == {k: v for k, v in restricted.items() if v}


def test_rounds_of_pydatalog_equal_its_one_shot_closure():
    facts, rules = program("""
        edge("a", "b"). edge("b", "c"). edge("c", "a"). edge("c", "d"). node("a"). node("d"). node("e").
        path(x, y) :- edge(x, y).
        path(x, z) :- path(x, y), path(y, z).
        sym(x, y) :- path(y, x).
        lonely(x) :- node(x), !edge(x, _).
        top() :- path("a", "d").
    """)
    rounds, count = pydatalog_rounds(facts, rules)
    assert rounds == evaluate_with_pydatalog(facts, rules) and count > 2
    assert rounds["lonely"] == {("d",), ("e",)} and rounds["top"] == {()}


def test_restriction_and_rounds_keep_the_figure1_closure(graph_path):
    with Graph(graph_path) as graph:
        rederivation = EdgeRederivation(graph)
        for deleted in (frozenset(), frozenset({"a12", "a13"}), frozenset({"a20", "a31"})):
            facts = rederivation.inputs(deleted)
            live = can_fire(facts, rederivation.rules)
            assert len(live) < len(rederivation.rules) / 10
            full = evaluate(Program.from_clauses([*facts, *rederivation.rules]), "boolean").boolean()
            restricted = evaluate(Program.from_clauses([*facts, *live]), "boolean").boolean()
            assert restricted["edge"] == full["edge"]
            assert pydatalog_rounds(facts, live)[0]["edge"] == full["edge"]
