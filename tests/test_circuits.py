"""Provenance circuits (provenance/circuit.py, graph/circuit_build.py, query/circuit_support.py).

- ``settle`` and ``expand`` on random circuits, cycles included, against brute force: every
  subset of the variables, the circuit's least fixpoint computed naively for each; the
  minimal true subsets are the minimal DNF.
- On built graphs (Figure 1 and the synthetic graph with the RO rules, caps 1 and 2): the
  expansion of every capped fact equals its label in a build without a cap, and the stored
  derivations are those of the uncapped build's facts.
- ``why --sets`` lists the expanded sets; a graph folder built by DuckDB stores the same circuit.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from polygraph_logic.cli import main
from polygraph_logic import build_graph
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.provenance.circuit import Expansion, expand, expand_many, minimal, settle
from polygraph_logic.query.circuit_support import expanded

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
RO = ROOT / "rules" / "ro.dl"


# --- random circuits against brute force -------------------------------------------------------

@st.composite
def circuits(draw):
    """Facts 0..n-1; each states some of the variables 0..v-1 and has derivations over other facts
    (cycles allowed); some facts are "exact": their value is given as a DNF over the variables."""
    v = draw(st.integers(1, 4))
    n = draw(st.integers(1, 7))
    stated = {f: frozenset(draw(st.sets(st.integers(0, v - 1), max_size=2))) for f in range(n)}
    bodies = {f: [tuple(sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3))))
                  for _ in range(draw(st.integers(0, 3)))] for f in range(n)}
    return v, n, stated, bodies


def holding(v_true: frozenset, n: int, stated, bodies) -> set[int]:
    """The least fixpoint, naively: repeat until nothing changes."""
    holds: set[int] = set()
    changed = True
    while changed:
        changed = False
        for f in range(n):
            if f not in holds and (stated[f] & v_true or any(all(b in holds for b in body) for body in bodies[f])):
                holds.add(f)
                changed = True
    return holds


def brute_dnf(fact: int, v: int, n: int, stated, bodies) -> set[frozenset]:
    true_points = [frozenset(s) for k in range(v + 1) for s in itertools.combinations(range(v), k)
                   if fact in holding(frozenset(s), n, stated, bodies)]
    return set(minimal(true_points))


@settings(max_examples=150, deadline=None)
@given(circuits())
def test_expand_equals_the_minimal_dnf_of_the_least_fixpoint(circuit):
    v, n, stated, bodies = circuit

    def gates(asked):
        return {f: ([frozenset((x,)) for x in sorted(stated[f])], bodies[f]) for f in asked}

    for fact in range(n):
        found = expand(fact, lambda f: None, gates)
        assert found.complete and set(found.sets) == brute_dnf(fact, v, n, stated, bodies), fact


@settings(max_examples=150, deadline=None)
@given(circuits(), st.data())
def test_expanding_many_roots_at_once_equals_brute_force_reading_a_level_a_call(circuit, data):
    v, n, stated, bodies = circuit
    roots = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    # some facts exact: their brute-force DNF given as their label (leaves of the circuit)
    exact = data.draw(st.sets(st.integers(0, n - 1)))
    calls = []

    def gates(asked):
        calls.append(sorted(asked))
        assert not set(asked) & exact
        return {f: ([frozenset((x,)) for x in sorted(stated[f])], bodies[f]) for f in asked}

    found = expand_many(roots, lambda f: brute_dnf(f, v, n, stated, bodies) if f in exact else None, gates)
    assert set(found) == set(roots)
    for root in roots:
        assert found[root].complete and set(found[root].sets) == brute_dnf(root, v, n, stated, bodies), root
    assert len(calls) <= n and len({f for asked in calls for f in asked}) == sum(map(len, calls))  # each fact read once


def test_expand_many_says_incomplete_only_the_roots_whose_cone_holds_a_partial_fact():
    # 0 <- 1, 2 (nine sets past a budget of 4); 3 <- 4; 5 <- 6, where 6 is a capped leaf (a lower bound)
    stated = {0: (), 1: (0, 1, 2), 2: (3, 4, 5), 3: (), 4: (6,), 5: ()}
    bodies = {0: [(1, 2)], 1: [], 2: [], 3: [(4,)], 4: [], 5: [(6,)]}

    def gates(asked):
        return {f: ([frozenset((x,)) for x in stated[f]], bodies[f]) for f in asked}

    def label(f):
        return Expansion([frozenset((7,))], False) if f == 6 else None

    found = expand_many([0, 3, 5], label, gates, budget=4)
    assert not found[0].complete and len(found[0].sets) == 4
    assert found[3].complete and found[3].sets == [frozenset((6,))]
    assert not found[5].complete and found[5].sets == [frozenset((7,))]


@settings(max_examples=150, deadline=None)
@given(circuits(), st.data())
def test_settle_equals_the_least_fixpoint_after_a_deletion(circuit, data):
    v, n, stated, bodies = circuit
    surviving = frozenset(data.draw(st.sets(st.integers(0, v - 1))))
    truth = holding(surviving, n, stated, bodies)
    before = holding(frozenset(range(v)), n, stated, bodies)
    # every fact that held before is open (a capped label with no kept set left: the hardest case)
    open_facts = set(before)
    dead = set(range(n))  # nothing is known to hold outside the open facts here
    stated_alive = {f for f in open_facts if stated[f] & surviving}
    assert settle(open_facts, dead, stated_alive, bodies) == truth & before


def test_expand_stops_at_its_budget_and_says_so():
    # fact 0 <- 1, 2; facts 1 and 2 each stated by three variables: nine sets of two
    stated = {0: frozenset(), 1: frozenset({0, 1, 2}), 2: frozenset({3, 4, 5})}
    bodies = {0: [(1, 2)], 1: [], 2: []}

    def gates(asked):
        return {f: ([frozenset((x,)) for x in sorted(stated[f])], bodies[f]) for f in asked}

    assert len(expand(0, lambda f: None, gates).sets) == 9
    capped = expand(0, lambda f: None, gates, budget=4)
    assert not capped.complete and len(capped.sets) == 4
    assert all(len(m) == 2 for m in capped.sets)


# --- built graphs: the expansion of every capped label equals the uncapped label ---------------

def _build(tmp_path, name: str, cap, rules=(RO,)) -> Path:
    directory = ROOT / "examples" / name
    path = tmp_path / f"{name}-{cap}.graph"
    build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl", list(rules), cap=cap).write(path)
    return path


def _shared(shared_graph, tmp_path: Path, name: str, cap) -> Path:
    """``_build(tmp_path, name, cap)``'s graph: this test's copy of the one built once (conftest.py's shared_graph)."""
    return shared_graph(f"circuits-{name}-{cap}", lambda folder: _build(folder, name, cap),
                        tmp_path / f"{name}-{cap}.graph")


def _labels(graph: Graph) -> dict:
    numbers = {v: k for k, v in graph.assertion_numbers().items()}
    return {(f.relation, f.args): (f.exact, {frozenset(s) for s in f.support}) for f in graph.facts()}, numbers


@pytest.mark.parametrize("name,cap", [("figure1", 1), ("figure1", 2), ("synthetic", 1), ("synthetic", 2)])
def test_every_capped_label_expands_to_the_uncapped_label(tmp_path, shared_graph, name, cap):
    capped_path, full_path = _shared(shared_graph, tmp_path, name, cap), _shared(shared_graph, tmp_path, name, None)
    with Graph(capped_path) as capped, Graph(full_path) as full:
        assert capped.has_circuit()
        full_labels, _ = _labels(full)
        capped_labels, _ = _labels(capped)
        names = {n: i for i, n in capped.assertion_numbers().items()}
        inexact = [key for key, (exact, _) in capped_labels.items() if not exact]
        assert inexact, "the cap truncated nothing: the test would prove nothing"
        for key in inexact:
            found = expanded(capped, key)
            assert found is not None and found.complete, key
            assert {frozenset(names[n] for n in m) for m in found.sets} == full_labels[key][1], key
        # exact labels are stored whole: equal to the uncapped build's
        for key, (exact, sets) in capped_labels.items():
            if exact:
                assert sets == full_labels[key][1], key


def test_a_graph_with_no_capped_label_stores_an_empty_circuit(tmp_path, shared_graph):
    path = _shared(shared_graph, tmp_path, "figure1", None)
    with Graph(path) as graph:
        assert graph.has_circuit() and graph.inexact_facts() == []
        assert graph.query("SELECT count(*) FROM derivations").fetchone()[0] == 0


def test_why_sets_lists_the_expanded_support_sets(tmp_path, shared_graph, capsys):
    capped, full = _shared(shared_graph, tmp_path, "synthetic", 1), _shared(shared_graph, tmp_path, "synthetic", None)
    assert main(["why", str(capped), "merge:m002", "--sets", "20", "--trees", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["why", str(full), "merge:m002", "--trees", "0", "--json"]) == 0
    uncapped = json.loads(capsys.readouterr().out)
    assert not result["exact"] and result["expanded"] == {"support_sets": 3, "complete": True}
    assert result["support_sets"] == uncapped["support_sets"]
    assert main(["why", str(capped), "merge:m002", "--sets", "2", "--trees", "0"]) == 0
    text = capsys.readouterr().out
    assert "support set 2:" in text and "support set 3:" not in text
    assert "2 of 3 support sets, expanded from the circuit" in text


def test_a_duckdb_folder_stores_the_circuit_of_the_python_graph(tmp_path, shared_graph):
    pytest.importorskip("duckdb")
    directory = ROOT / "examples" / "synthetic"
    folder = tmp_path / "g"
    build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl", [RO],
                engine="duckdb", cap=1, output=folder, tables=True)
    path = _shared(shared_graph, tmp_path, "synthetic", 1)
    with Graph(folder) as tables, Graph(path) as graph:
        assert tables.has_circuit() and graph.has_circuit()

        def rows(g):
            facts = {num: (relation, args) for num, relation, args in g.inexact_facts()}
            keys = {row[0]: (row[1], g.args(row[2])) for row in g.query("SELECT num, relation, args FROM facts")}
            return {(facts[f], rule, tuple(sorted(keys[b] for b in body)))
                    for f, found in g.derivations(facts).items() for rule, body in found}
        assert rows(tables) == rows(graph) and rows(graph)


# --- versions: each add stores the circuit of its version ---------------------------------------

def _first_batch(tmp_path: Path, form: str, example: Path, seed: int) -> tuple[list, Path]:
    """An example's inputs cut in three batches (``Random(seed)``) and the first built at cap 1:
    a file by the Python engine, a folder by DuckDB."""
    import random
    from test_ledger import batches, lines
    if form == "folder":
        pytest.importorskip("duckdb")
    files = batches(lines(example / "assertions.jsonl"), lines(example / "receipts.jsonl"), 3,
                    random.Random(seed), tmp_path)
    grown = tmp_path / ("grown" if form == "folder" else "grown.graph")
    if form == "folder":
        build_graph(files[0][0], files[0][1], [RO], engine="duckdb", cap=1, output=grown, tables=True)
    else:
        build_graph(files[0][0], files[0][1], [RO], cap=1).write(grown)
    return files, grown


@pytest.mark.parametrize("form", ["file", "folder"])
def test_each_version_of_a_grown_graph_settles_as_a_build_of_its_inputs(tmp_path, shared_graph, form):
    """Figure 1 grown in three batches at cap 1 (a file by the Python engine, a folder by DuckDB):
    at every version the circuit is complete, and every deletion's verdicts are those of a fresh
    build of that version's inputs; an applied deletion keeps the circuit of the version before."""
    from test_ledger import FIGURE1, union
    from polygraph_logic.graph.ledger import add
    from polygraph_logic.query.session import Session
    from polygraph_logic.query.whatif import Deletion, what_if
    files, grown = _first_batch(tmp_path, form, FIGURE1, 11)
    for a, r in files[1:]:
        add(grown, a, r)
    revived = 0
    for version in (1, 2, 3):
        # the fresh build of a version's inputs (the same batches, Random(11), for both forms): built
        # once, each form reading its own copy (conftest.py's shared_graph)

        def fresh_build(folder: Path, version=version) -> Path:
            build_graph(*union(files, folder, version), [RO], cap=1).write(folder / f"v{version}.graph")
            return folder / f"v{version}.graph"
        fresh = shared_graph(f"circuits-grown-11-v{version}", fresh_build, tmp_path / f"v{version}.graph")
        with Graph(grown, at=version) as old, Graph(fresh) as built:
            assert old.has_circuit() and built.has_circuit(), version
            for source in sorted({a.source for a in built.assertions.values()}):
                mine = what_if(old, Deletion(sources=(source,))).to_json()
                theirs = what_if(built, Deletion(sources=(source,))).to_json()
                for key in ("touched", "dead", "kept", "demoted", "summaries", "uncertain"):
                    assert mine[key] == theirs[key], (version, source, key)
                revived += mine["revived_by_rederivation"]
    assert revived > 0
    session = Session.open(grown)
    session.retract(sorted({a.source for a in session.graph.assertions.values()})[0])
    copy = tmp_path / ("applied" if form == "folder" else "applied.graph")
    session.apply(copy)
    with Graph(copy) as applied:
        assert applied.version_read() == 4 and applied.has_circuit()


@pytest.mark.parametrize("engine", ["python", "duckdb"])
def test_no_circuit_builds_a_graph_whose_capped_verdicts_are_uncertain(tmp_path, capsys, engine):
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    directory = ROOT / "examples" / "figure1"
    out = ["--tables", str(tmp_path / "g")] if engine == "duckdb" else ["-o", str(tmp_path / "g.graph")]
    assert main(["build", "--assertions", str(directory / "assertions.jsonl"), "--receipts",
                 str(directory / "receipts.jsonl"), "--cap", "1", "--engine", engine, "--no-circuit", *out]) == 0
    path = Path(out[1])
    with Graph(path) as graph:
        assert not graph.has_circuit()
    capsys.readouterr()
    assert main(["whatif", str(path), "--retract-source", "PMID:39973430", "--json"]) == 0
    loose = json.loads(capsys.readouterr().out)
    assert main(["whatif", str(path), "--retract-source", "PMID:39973430", "--exact", "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)
    assert loose["uncertain"] and not loose["exact"] and exact["settled_by"] == "rederivation"


@pytest.mark.parametrize("form", ["file", "folder"])
def test_an_add_stores_every_new_derivation_of_the_capped_facts(tmp_path, form):
    """An incremental add derives again only the capped facts its evaluation reached (the others
    had every derivation stored already): at each version the stored derivations of every capped
    fact are all its derivations, found afresh from the rules over that version's facts."""
    from polygraph_logic.graph.circuit_build import derivations
    from polygraph_logic.graph.ledger import add
    files, grown = _first_batch(tmp_path, form, ROOT / "examples" / "synthetic", 5)
    modes = []
    for a, r in files[1:]:
        modes.append(add(grown, a, r).mode)
        with Graph(grown) as graph:
            facts = graph.inexact_facts()
            assert facts and graph.has_circuit()
            stored = {fact: set(found) for fact, found in graph.derivations(num for num, _, _ in facts).items()}
            fresh: dict[int, set] = {}
            for fact, rule, body in derivations(graph, facts):
                fresh.setdefault(fact, set()).add((rule, body))
            assert stored == fresh
    assert "incremental" in modes



@pytest.mark.parametrize("cap", [1, 2])
def test_a_folders_circuit_settles_in_the_store_as_rederivation_does(tmp_path, cap):
    """A folder asks its store for the open facts and the derivations that can still fire
    (whatif_verdicts._settled_in_store): under every policy, its verdicts equal those that
    re-derivation from the rules settles on the same folder without its circuit."""
    pytest.importorskip("duckdb")
    import random
    from circuits import assert_settled_as_rederived, without_circuit
    from reference_whatif import ReferenceGraph
    from test_store import random_deletions
    from polygraph_logic.query.whatif import POLICIES, what_if
    example = ROOT / "examples" / "synthetic"
    folder = tmp_path / "g.tables"
    build_graph(example / "assertions.jsonl", example / "receipts.jsonl", [RO], engine="duckdb", cap=cap,
                output=folder, tables=True)
    settled = 0
    with Graph(folder) as circuit, Graph(without_circuit(folder, tmp_path / "labels.tables")) as graph:
        assert circuit.has_circuit() and not graph.has_circuit()
        for deletion in random_deletions(ReferenceGraph(graph), random.Random(cap), 8):
            settled += what_if(circuit, deletion).settled
            for policy in POLICIES:
                assert_settled_as_rederived(circuit, graph, deletion, policy)
    assert settled
