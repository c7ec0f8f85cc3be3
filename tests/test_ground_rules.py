"""Ground rules read by atom: an ``add`` reads the stored ground rules its new facts reach, and the
result is the graph a full build of the union gives, on both forms, with or without the look-up.

The rules file mixes the ontology-like recursive rules of test_ledger with ground rules of both
kinds an add meets: ground rules into the recursive relation (``edge``: evaluated semi-naively,
read round by round) and ground rules into relations of their own (``alert``, ``alarm``: a ground
stratum, derived again from scratch in rule order).  The reference is a full build of the union.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ledger import RULES, assert_same, batches, union  # noqa: E402

from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.datalog.program import parse_program  # noqa: E402
from polygraph_logic.graph.ledger import add  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.graph.store.stored_rules import ground_atoms  # noqa: E402

GROUND = """\
edge("e2", "T:2", "e0") :- edge("e0", "T:1", "e1").
edge("e3", "T:1", "e3") :- edge("e1", "T:2", "e2"), edge("e0", "T:3", "e1").
alert("k1") :- edge("e0", "T:1", "e2").
alert("k1") :- edge("e1", "T:1", "e0"), edge("e2", "T:1", "e3").
alert("k2") :- edge("e3", "T:1", "e3").
alarm("k1", 3) :- alert("k1"), alert("k2").
"""

TRIPLES = [("e0", "T:1", "e1"), ("e1", "T:2", "e2"), ("e0", "T:3", "e1"), ("e1", "T:1", "e2"),
           ("e2", "T:1", "e3"), ("e1", "T:1", "e0"), ("e3", "T:2", "e0"), ("e0", "T:1", "e1")]


def _rules(text: str):
    return parse_program(text, "(test)").rules


def test_which_rules_are_ground_and_their_atoms_as_the_facts_table_keys_them():
    rules = _rules(GROUND + RULES + 'p("a") :- q("b"), "b" != "c".\nq("d") :- !r("e").\ns("f") :- t(1.5).\n'
                   'u("g") :- v(7, "é").\n')
    atoms = [ground_atoms(rule) for rule in rules]
    assert atoms[0] == json.dumps([["edge", '["e2", "T:2", "e0"]'], ["edge", '["e0", "T:1", "e1"]']])
    assert atoms[5] == json.dumps([["alarm", '["k1", 3]'], ["alert", '["k1"]'], ["alert", '["k2"]']])
    assert all(a is not None for a in atoms[:6])
    assert all(a is None for a in atoms[6:10])  # variables
    assert atoms[10:13] == [None, None, None]  # a comparison, a negation, a float
    assert json.loads(atoms[13]) == [["u", '["g"]'], ["v", '[7, "é"]']]


def _inputs(directory: Path, triples) -> Path:
    path = directory / "a.jsonl"
    path.write_text("".join(json.dumps({"id": f"a{i}", "source": f"s{i % 3}", "subject": s, "predicate": p,
                                        "object": o}) + "\n" for i, (s, p, o) in enumerate(triples)))
    return path


def _facts(graph_path: Path) -> dict:
    with Graph(graph_path) as graph:
        return {(f.relation, tuple(f.args)): (sorted(sorted(s) for s in f.support), f.exact) for f in graph.facts()}


def _drop_lookup(graph_path: Path) -> None:
    """Makes a graph as one written before ground rules were kept by atom."""
    if graph_path.is_dir():
        (graph_path / "rule_atoms.parquet").unlink()
    else:
        db = sqlite3.connect(graph_path)
        db.execute("DROP TABLE rule_atoms")
        db.commit()
        db.close()


@pytest.mark.parametrize("engine", ["python", "duckdb"])
def test_an_add_reaching_stored_ground_rules_equals_a_full_build(tmp_path, engine, monkeypatch):
    rules = tmp_path / "rules.dl"
    rules.write_text(RULES + GROUND)
    files = batches([line for line in _inputs(tmp_path, TRIPLES).read_text().splitlines()], [], 2,
                    random.Random(0), tmp_path, cuts=[2])
    # uncapped: the semiring is order free, so the add is incremental and equals the build label for label
    build_graph(*union(files, tmp_path), [rules], cap=None).write(tmp_path / "rebuilt.graph")
    expected = _facts(tmp_path / "rebuilt.graph")
    assert ("alarm", ("k1", 3)) in expected  # the new facts reach the stored ground rules, two strata up
    results = []
    for lookup in (True, False):
        graph = tmp_path / f"{engine}-{lookup}"
        target = ["-o", str(graph)] if engine == "python" else ["--tables", str(graph)]
        assert main(["build", "--assertions", str(files[0][0]), "--rules", str(rules), "--engine", engine,
                     "--cap", "none", *target]) == 0
        if lookup:
            # the add reads the rules the new facts reach, never every rule
            monkeypatch.setattr(Graph, "rules", lambda self: pytest.fail("every rule was read"))
        else:
            _drop_lookup(graph)
        report = add(graph, files[1][0])
        monkeypatch.undo()
        assert report.mode == "incremental" and report.changed.get("alarm") == 1
        results.append(_facts(graph))
        if engine == "python":
            assert_same(graph, tmp_path / "rebuilt.graph")
    assert results[0] == results[1] == expected


def test_a_rule_added_again_is_not_stored_twice(tmp_path):
    rules = tmp_path / "rules.dl"
    rules.write_text(RULES + GROUND)
    path = _inputs(tmp_path, TRIPLES[:3])
    receipt = {"artifact": "merge:m0", "layer": "merge", "content": {"canonical": "e0", "members": ["e0", "e1"]},
               "support": [["a0"], ["a1", "a2"]]}
    receipts = tmp_path / "r.jsonl"
    receipts.write_text(json.dumps(receipt) + "\n")
    build_graph(path, receipts, [rules]).write(tmp_path / "g.graph")
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "a9", "source": "s9", "subject": "e3", "predicate": "T:1", "object": "e3"}) + "\n")
    with Graph(tmp_path / "g.graph") as graph:
        before = len(graph.rules())
    add(tmp_path / "g.graph", more)
    with Graph(tmp_path / "g.graph") as graph:
        assert len(graph.rules()) == before
        # the look-up holds each ground rule's atoms: those of the merge's receipt among them
        assert graph.ground_rules({"assertion": [("a1",)]}, body=True)


_ENTITIES = ["e0", "e1", "e2", "e3"]
_TRIPLE = st.tuples(st.sampled_from(_ENTITIES), st.sampled_from(["T:1", "T:2", "T:3"]), st.sampled_from(_ENTITIES))


def _atom(triple) -> str:
    return "edge(" + ", ".join(json.dumps(v) for v in triple) + ")"


@st.composite
def _programs(draw):
    stated = draw(st.lists(_TRIPLE, min_size=2, max_size=10))
    ground = []
    for _ in range(draw(st.integers(0, 5))):
        body = ", ".join(_atom(t) for t in draw(st.lists(_TRIPLE, min_size=1, max_size=2)))
        head = _atom(draw(_TRIPLE)) if draw(st.booleans()) else f'alert("k{draw(st.integers(0, 2))}")'
        ground.append(f"{head} :- {body}.")
    if draw(st.booleans()):
        ground.append('alarm("k") :- alert("k0"), alert("k1").')
    return stated, ground, draw(st.sampled_from([2, 3, None])), draw(st.integers(0, 10 ** 6))


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_programs())
def test_adds_over_random_ground_rules_equal_a_full_build(tmp_path_factory, drawn):
    stated, ground, cap, seed = drawn
    directory = tmp_path_factory.mktemp("ground")
    rules = directory / "rules.dl"
    rules.write_text(RULES + "\n".join(ground) + "\n")
    files = batches(_inputs(directory, stated).read_text().splitlines(), [], min(3, len(stated)),
                    random.Random(seed), directory)
    build_graph(files[0][0], files[0][1], [rules], cap=cap).write(directory / "grown.graph")
    reports = [add(directory / "grown.graph", a, r) for a, r in files[1:]]
    build_graph(*union(files, directory), [rules], cap=cap).write(directory / "rebuilt.graph")
    if cap is None:  # the semiring is order free: always incremental, always the full build's graph
        assert all(r.mode == "incremental" for r in reports)
        assert_same(directory / "grown.graph", directory / "rebuilt.graph")
    else:  # as test_ledger checks capped adds: against the uncapped closure (labels may depend on order)
        build_graph(*union(files, directory), [rules], cap=None).write(directory / "full.graph")
        grown, truth = _facts(directory / "grown.graph"), _facts(directory / "full.graph")
        assert grown.keys() == truth.keys() == _facts(directory / "rebuilt.graph").keys()
        for key, (sets, exact) in grown.items():
            assert not exact or sets == truth[key][0], key
            assert all(any(set(t) <= set(s) for t in truth[key][0]) for s in sets), key
    shutil.rmtree(directory, ignore_errors=True)
