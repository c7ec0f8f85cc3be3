"""Witness labels (``polygraph build --labels witness``): one support set per fact, read off the
evaluation's circuit, with the gates of every inexact fact stored as the graph's circuit.

Checked against independent answers: each witness is a true support set (the brute-force closure
of its assertions alone holds the fact) and an exact one is the brute-force minimal DNF; the
stored gates equal the derivations found again from the stored rules; what-if verdicts under
trust-all and deployed equal those of the capped build and a from-scratch Boolean recomputation.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given

from polygraph_logic.datalog import evaluate, parse_program
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.circuit_build import derivations
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.provenance.witness import witness_labels
from polygraph_logic.query.whatif import Deletion, what_if

from recompute import truth
from test_circuit_eval import EXAMPLES, cases

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
RO = str(ROOT / "rules" / "ro.dl")


@EXAMPLES
@given(cases())
def test_a_witness_is_a_true_support_set_and_an_exact_one_is_the_whole_label(case):
    model = evaluate(case.program(), "why", cap=None, circuit=True)
    witness, exact = witness_labels(model.circuit)
    supports = case.supports()
    names = model.semiring.table
    for name in model.relations():
        for tup, node in model.store.relations[name].items():
            if type(node) is not int:  # a fact of an untracked relation: provenance one
                assert (name, tup) in case.holding(())
                continue
            found = frozenset(names.names_in(witness[node]))
            assert (name, tup) in case.holding(found), (name, tup, sorted(found), case.text())
            assert any(s <= found for s in supports[(name, tup)])
            if exact[node]:
                assert supports[(name, tup)] == {found}, (name, tup, case.text())


@EXAMPLES
@given(cases())
def test_the_witness_does_not_depend_on_the_order_of_facts_and_rules(case):
    """The smallest witness of the round that made a fact, in the cap's order (the assertion ids'
    natural order, not the order they were read in): any engine's rounds give the same."""
    lines = case.text().splitlines()
    flipped = "\n".join(lines[::-1])
    found = []
    for text in (case.text(), flipped):
        model = evaluate(parse_program(text), "why", cap=None, circuit=True)
        model.witness = True
        found.append({(name, tup): (label.support_sets(), label.exact)
                      for name in model.relations() for tup, label in model.facts(name).items()})
    assert found[0] == found[1], case.text()


def _inputs(name: str) -> tuple[Path, Path]:
    return EXAMPLES_DIR / name / "assertions.jsonl", EXAMPLES_DIR / name / "receipts.jsonl"


@pytest.fixture(scope="module", params=["figure1", "synthetic"])
def built(request, tmp_path_factory):
    """The example built twice, with capped and with witness labels."""
    folder = tmp_path_factory.mktemp(request.param)
    assertions, receipts = _inputs(request.param)
    graphs = {}
    for labels in ("capped", "witness"):
        graphs[labels] = folder / f"{labels}.graph"
        build_graph(assertions, receipts, [RO], output=graphs[labels], labels=labels)
    return request.param, graphs


def test_the_stored_circuit_is_every_derivation_of_every_inexact_fact(built):
    _, graphs = built
    with Graph(graphs["witness"]) as graph:
        facts = graph.inexact_facts()
        assert facts, "the example has facts a witness cannot settle"
        found = {}
        for fact, _, body in derivations(graph, facts):
            found.setdefault(fact, set()).add(body)
    stored = {}
    with sqlite3.connect(graphs["witness"]) as db:
        for fact, rule, body in db.execute("SELECT fact, rule, body FROM derivations"):
            stored.setdefault(fact, set()).add(tuple(json.loads(body)))
            assert rule >= 1
    assert stored == found


def test_exact_witness_labels_are_the_capped_labels(built):
    _, graphs = built
    with Graph(graphs["capped"]) as capped, Graph(graphs["witness"]) as witness:
        full = {(f.relation, tuple(f.args)): f for f in capped.facts()}
        exact = 0
        for fact in witness.facts():
            other = full[(fact.relation, tuple(fact.args))]
            assert len(fact.support) == 1
            if fact.exact:
                exact += 1
                assert other.exact and [sorted(s) for s in other.support] == [sorted(s) for s in fact.support]
            else:  # one of the true support sets, or a superset of one
                assert any(set(s) <= set(fact.support[0]) for s in other.support) or not other.exact
        assert exact
        assert witness.meta["labels"] == "witness" and "labels" not in capped.meta


def test_what_if_verdicts_equal_the_capped_build_and_a_recomputation(built):
    name, graphs = built
    assertions_path, receipts_path = _inputs(name)
    assertions = load_assertions(assertions_path)
    receipts = load_receipts(receipts_path, {a.id for a in assertions})
    sources = sorted({a.source for a in assertions})
    rng = random.Random(5)
    deletions = [tuple(rng.sample(sources, k)) for k in (1, 1, 2, 3)]
    with Graph(graphs["capped"]) as capped, Graph(graphs["witness"]) as witness:
        for chosen in deletions:
            deletion = Deletion(sources=chosen)
            for policy in ("trust-all", "deployed"):
                a, b = what_if(capped, deletion, policy), what_if(witness, deletion, policy)
                assert set(a.dead) == set(b.dead), (chosen, policy)
                assert not b.uncertain
                assert {d["artifact"] for d in a.demoted} == {d["artifact"] for d in b.demoted}
            deleted = {x.id for x in assertions if x.source in chosen}
            holds = truth(assertions, receipts, deleted, rules=(Path(RO),))
            dead = set(what_if(witness, deletion, "trust-all").dead)
            edges = [a for a in witness.artifacts() if a.layer == "edge"]
            assert edges
            for artifact in edges:
                triple = tuple(artifact.content[k] for k in ("subject", "predicate", "object"))
                assert (artifact.id not in dead) == (("edge", triple) in holds), (chosen, artifact.id)


def test_policies_that_read_every_support_set_are_refused_by_name(built):
    _, graphs = built
    with Graph(graphs["witness"]) as graph:
        source = next(iter(graph.assertions.values())).source
        for policy in ("flat", "distrust:edge"):
            with pytest.raises(PolygraphError) as refused:
                what_if(graph, Deletion(sources=(source,)), policy)
            assert refused.value.code == "needs_capped_labels"
            assert "--labels capped" in refused.value.message


def test_witness_labels_are_refused_where_they_cannot_be_built(tmp_path):
    assertions, receipts = _inputs("figure1")
    with pytest.raises(PolygraphError, match="tables=True"):  # duckdb writes witness labels as a folder
        build_graph(assertions, receipts, [RO], engine="duckdb", output=tmp_path / "t.graph", labels="witness")
    with pytest.raises(PolygraphError, match="not spark"):
        build_graph(assertions, receipts, [RO], engine="spark", output=tmp_path / "t", tables=True,
                    labels="witness")
    with pytest.raises(PolygraphError, match="cannot be left out"):
        build_graph(assertions, receipts, [RO], output=tmp_path / "g.graph", labels="witness", circuit=False)
    with pytest.raises(PolygraphError, match="one of capped, witness"):
        build_graph(assertions, receipts, [RO], output=tmp_path / "g.graph", labels="all")


def _polygraph(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "polygraph_logic", *map(str, argv)], capture_output=True, text=True)


def test_the_cli_builds_witness_labels_and_replays_them(tmp_path):
    assertions, receipts = _inputs("figure1")
    graph = tmp_path / "w.graph"
    done = _polygraph("build", "--assertions", assertions, "--receipts", receipts, "--rules", "ro",
                      "--labels", "witness", "-o", graph)
    assert done.returncode == 0, done.stderr
    shown = _polygraph("show", graph, "--layer", "merge")
    assert "a12·a13  [witness]" in shown.stdout, shown.stdout
    info = _polygraph("info", graph)
    assert "witness (one support set per fact" in info.stdout, info.stdout
    refused = _polygraph("whatif", graph, "--retract-source", "PMID:39973430", "--policy", "flat")
    assert refused.returncode == 2 and "needs_capped_labels" in refused.stderr
    replayed = _polygraph("replay", graph, "-o", tmp_path / "again.graph", "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["identical"] is True


def test_an_add_to_a_witness_graph_settles_as_a_build_of_all_its_inputs(tmp_path):
    """An add evaluates its new facts with capped labels over the stored witnesses (both sound,
    the capped facts' derivations stored with the version): every verdict equals a build of the
    union, with witness labels and with capped ones."""
    lines = (EXAMPLES_DIR / "synthetic" / "assertions.jsonl").read_text().splitlines()
    (tmp_path / "base.jsonl").write_text("\n".join(lines[:-40]) + "\n")
    (tmp_path / "batch.jsonl").write_text("\n".join(lines[-40:]) + "\n")
    grown = tmp_path / "grown.graph"
    assert _polygraph("build", "--assertions", tmp_path / "base.jsonl", "--rules", "ro", "--labels", "witness",
                      "-o", grown).returncode == 0
    added = _polygraph("add", grown, "--assertions", tmp_path / "batch.jsonl")
    assert added.returncode == 0, added.stderr
    fresh = {}
    for labels in ("witness", "capped"):
        fresh[labels] = tmp_path / f"{labels}.graph"
        build_graph(EXAMPLES_DIR / "synthetic" / "assertions.jsonl", None, [RO], output=fresh[labels], labels=labels)
    sources = sorted({json.loads(line)["source"] for line in lines})
    with Graph(grown) as a, Graph(fresh["witness"]) as b, Graph(fresh["capped"]) as c:
        for source in sources[::3]:
            deletion = Deletion(sources=(source,))
            dead = [set(what_if(g, deletion).dead) for g in (a, b, c)]
            assert dead[0] == dead[1] == dead[2], source
