"""Why-provenance evaluated as a circuit (datalog/circuit_eval.py, provenance/gates.py,
provenance/gate_labels.py) against references written here, independent of the engine.

- Random small graphs of tracked ``e`` facts (cycles, self-loops, the same edge stated twice,
  background edges) under random rule sets (linear left and right recursion, non-linear
  closure, a wildcard, a join of two tracked relations, untracked relations): every uncapped
  label equals the minimal support sets found by brute force, a tiny naive Boolean evaluator
  (``closure`` below) run for every subset of the assertions; the older semi-naive engine
  (``circuit=False``) gives the same labels.
- ``what_if``: per relation, the tuples alive and dead equal a from-scratch closure without
  the deleted facts (a fact on a cycle stands only on a well-founded derivation), and the
  alive labels are the brute-force support sets the deletion leaves.
- Capped at the default 8 on dense graphs: every shown set is sufficient (the naive evaluator
  derives the fact from it) and holds a true minimal set; an exact label is all of them
  (simple paths, enumerated).
- A capped label whose kept sets all die with a deletion but which stands on a derivation
  the cap dropped: the circuit keeps it alive.
- ``polygraph eval --semiring why`` with and without ``--delete``, as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygraph_logic.datalog import evaluate, parse_program
from polygraph_logic.datalog.circuit_eval import CircuitModel
from polygraph_logic.datalog.evaluate import what_if

from go_slice import GO_SKIP, go_inputs

# --- the reference: rules as data, a naive Boolean closure ----------------------------------------

# A rule is (head, body): an atom is (relation, args), an arg a variable name or "_".
RULES = {
    "base": (("p", ("x", "y")), [("e", ("x", "y"))]),
    "right": (("p", ("x", "z")), [("e", ("x", "y")), ("p", ("y", "z"))]),
    "left": (("p", ("x", "z")), [("p", ("x", "y")), ("e", ("y", "z"))]),
    "nonlinear": (("p", ("x", "z")), [("p", ("x", "y")), ("p", ("y", "z"))]),
    "wildcard": (("q", ("x",)), [("p", ("x", "_"))]),
    "loop": (("s", ("x",)), [("p", ("x", "x"))]),
    "join": (("j", ("x", "z")), [("e", ("x", "y")), ("f", ("y", "z"))]),
    "join_closure": (("k", ("x", "z")), [("p", ("x", "y")), ("f", ("y", "z"))]),
    "background": (("g", ("x",)), [("b", ("x",))]),
    "untracked": (("r", ("x", "y")), [("p", ("x", "y")), ("g", ("y",))]),
}


def rule_text(rule) -> str:
    (head, head_args), body = rule
    atoms = ", ".join(f"{rel}({', '.join(args)})" for rel, args in body)
    return f"{head}({', '.join(head_args)}) :- {atoms}."


def fact_text(relation: str, tup: tuple, name: str | None = None) -> str:
    atom = f"{relation}({', '.join(map(str, tup))})."
    return f"{name} :: {atom}" if name else atom


def _bindings(body, pools, env):
    if not body:
        yield env
        return
    (relation, args), rest = body[0], body[1:]
    for tup in pools.get(relation, ()):
        extended = dict(env)
        for arg, value in zip(args, tup):
            if arg == "_":
                continue
            if extended.setdefault(arg, value) != value:
                break
        else:
            yield from _bindings(rest, pools, extended)


def closure(facts, rules, seed=frozenset()) -> frozenset:
    """The least model of ``facts`` (a set of (relation, tuple)) under ``rules``, naively: every
    rule over every fact until nothing new appears. ``seed``: facts known to be in it."""
    model = set(facts) | set(seed)
    while True:
        pools: dict[str, list] = {}
        for relation, tup in model:
            pools.setdefault(relation, []).append(tup)
        new = {(head, tuple(env[v] for v in args))
               for (head, args), body in rules for env in _bindings(body, pools, {})}
        if new <= model:
            return frozenset(model)
        model |= new


class Case:
    """A program: tracked facts (one assertion id each), background facts and rules."""

    def __init__(self, tracked: dict[str, tuple], background: set, rule_names):
        self.tracked = tracked  # id -> (relation, tuple)
        self.background = set(background)
        self.rules = [RULES[name] for name in sorted(rule_names)]
        self.ids = sorted(tracked)
        self._closures = None

    def text(self) -> str:
        lines = [fact_text(rel, tup, name) for name, (rel, tup) in self.tracked.items()]
        lines += [fact_text(rel, tup) for rel, tup in sorted(self.background)]
        lines += [rule_text(rule) for rule in self.rules]
        return "\n".join(lines)

    def program(self):
        return parse_program(self.text())

    def holding(self, ids) -> frozenset:
        """The closure under the assertions ``ids`` and the background facts."""
        return closure({self.tracked[i] for i in ids} | self.background, self.rules)

    def closures(self) -> list[frozenset]:
        """The closure under every subset of the assertions, by bitmask over ``ids``."""
        if self._closures is None:
            found = [closure(self.background, self.rules)]
            for mask in range(1, 1 << len(self.ids)):
                smaller = found[mask & (mask - 1)]  # the closure without the lowest assertion
                facts = {self.tracked[i] for n, i in enumerate(self.ids) if mask >> n & 1}
                found.append(closure(facts | self.background, self.rules, smaller))
            self._closures = found
        return self._closures

    def supports(self) -> dict[tuple, set[frozenset]]:
        """Every fact of the full model: its minimal support sets, by brute force (a set S
        is minimal when the fact holds under S and under no S minus one assertion)."""
        closures = self.closures()
        out: dict[tuple, set[frozenset]] = {}
        for mask, model in enumerate(closures):
            for fact in model:
                if all(fact not in closures[mask & ~(1 << n)] for n in range(len(self.ids)) if mask >> n & 1):
                    out.setdefault(fact, set()).add(
                        frozenset(i for n, i in enumerate(self.ids) if mask >> n & 1))
        return out


def labels(model) -> dict[tuple, set[frozenset]]:
    return {(name, tup): set(label.support_sets())
            for name in model.relations() for tup, label in model.facts(name).items()}


def model_facts(model) -> set[tuple]:
    return {(name, tup) for name in model.relations() for tup in model.facts(name)}


# --- random programs ------------------------------------------------------------------------------

@st.composite
def cases(draw):
    n = draw(st.integers(4, 6))
    node = st.integers(0, n - 1)
    edge = st.tuples(node, node)  # self-loops allowed
    rule_names = draw(st.sets(st.sampled_from(sorted(RULES)), min_size=1, max_size=6))
    if draw(st.booleans()):  # most cases close over e
        rule_names |= {"base"}
    edges = draw(st.lists(edge, min_size=1, max_size=8))  # the same edge may be stated twice
    uses_f = bool(rule_names & {"join", "join_closure"})
    f_facts = draw(st.lists(edge, max_size=2)) if uses_f else []
    tracked = {f"a{i}": ("e", pair) for i, pair in enumerate(edges)}
    tracked.update({f"f{i}": ("f", pair) for i, pair in enumerate(f_facts)})
    background = {("e", pair) for pair in draw(st.lists(edge, max_size=3))}
    background |= {("f", pair) for pair in (draw(st.lists(edge, max_size=1)) if uses_f else [])}
    background |= {("b", (x,)) for x in draw(st.sets(node, max_size=3))}
    return Case(tracked, background, rule_names)


EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@EXAMPLES
@given(cases())
def test_uncapped_circuit_labels_are_the_brute_force_minimal_support_sets(case):
    model = evaluate(case.program(), "why", cap=None)
    assert isinstance(model, CircuitModel)  # the default under "why"
    assert labels(model) == case.supports(), case.text()  # each label read off on its own
    for name in model.relations():
        assert all(label.exact for label in model.facts(name).values())
    # every label at once (CircuitModel.labels) reads the same
    bulk = evaluate(case.program(), "why", cap=None)
    bulk.labels()
    assert labels(bulk) == labels(model)


@EXAMPLES
@given(cases())
def test_the_circuit_and_the_label_fixpoint_agree(case):
    circuit = evaluate(case.program(), "why", cap=None)
    fixpoint = evaluate(case.program(), "why", cap=None, circuit=False)
    assert labels(circuit) == labels(fixpoint), case.text()
    for name in circuit.relations():
        for tup, label in circuit.facts(name).items():
            assert str(label) == str(fixpoint.label(name, tup)), (name, tup, case.text())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_what_if_equals_a_closure_without_the_deleted_facts(case, data):
    deleted = data.draw(st.sets(st.sampled_from(case.ids)))
    model = evaluate(case.program(), "why", cap=None)
    result = what_if(model, deleted)
    assert result.deleted == frozenset(deleted)
    before = model_facts(model)
    after = case.holding(set(case.ids) - deleted)
    assert after <= before
    supports = case.supports()
    for name in model.relations():
        alive = {tup for rel, tup in after if rel == name}
        assert set(result.alive.get(name, {})) == alive, (name, sorted(deleted), case.text())
        dead = {tup for rel, tup in before - after if rel == name}
        assert sorted(result.dead.get(name, [])) == sorted(dead), (name, sorted(deleted), case.text())
        for tup, label in result.alive.get(name, {}).items():
            left = {s for s in supports[(name, tup)] if not s & deleted}
            assert set(label.support_sets()) == left, (name, tup, sorted(deleted), case.text())
    # the capped model (the default cap) gives the same verdicts: the circuit is never capped
    capped = what_if(evaluate(case.program(), "why"), deleted)
    for name in model.relations():
        assert set(capped.alive.get(name, {})) == set(result.alive.get(name, {}))
        assert sorted(capped.dead.get(name, [])) == sorted(result.dead.get(name, []))


# --- the display cap on dense graphs --------------------------------------------------------------

def path_supports(edges: dict[str, tuple], background: set, source, target) -> set[frozenset]:
    """The minimal support sets of reachability from ``source`` to ``target`` (a cycle when they
    are equal) over at least one edge: the assertions of each simple path, minimized. An edge
    stated by a background fact needs no assertion."""
    by_pair: dict[tuple, list[frozenset]] = {}
    for name, pair in edges.items():
        by_pair.setdefault(pair, []).append(frozenset({name}))
    for pair in background:
        by_pair[pair] = [frozenset()]
    found = set()

    def walk(at, visited, used):
        for (a, b), choices in by_pair.items():
            if a != at:
                continue
            for choice in choices:
                if b == target:
                    found.add(used | choice)
                elif b not in visited:
                    walk(b, visited | {b}, used | choice)

    walk(source, {source}, frozenset())
    return {s for s in found if not any(t < s for t in found)}


@st.composite
def dense_cases(draw):
    n = 5  # sixteen simple paths between two nodes of the complete graph
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    missing = draw(st.sets(st.sampled_from(pairs), max_size=3))
    kept = [pair for pair in pairs if pair not in missing]
    loops = draw(st.sets(st.integers(0, n - 1), max_size=1))
    kept += [(x, x) for x in sorted(loops)]
    twice = draw(st.sets(st.sampled_from(kept), max_size=2))  # stated by two assertions
    edges = {f"a{i:02d}": pair for i, pair in enumerate(kept)}
    edges.update({f"d{i}": pair for i, pair in enumerate(sorted(twice))})
    background = draw(st.sets(st.sampled_from(kept), max_size=1))
    recursion = draw(st.sampled_from([{"right"}, {"left"}, {"nonlinear"}, {"left", "nonlinear"}]))
    rule_names = {"base", "wildcard"} | recursion
    case = Case({name: ("e", pair) for name, pair in edges.items()},
                {("e", pair) for pair in background}, rule_names)
    return n, edges, background, case


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dense_cases())
def test_capped_labels_show_true_support_sets_and_exact_ones_show_all(dense):
    n, edges, background, case = dense
    model = evaluate(case.program(), "why")  # the default cap, 8
    model.labels()  # every label at once: read one by one, each would walk the whole circuit
    truth = {("p", (a, b)): path_supports(edges, background, a, b) for a in range(n) for b in range(n)}
    for a in range(n):
        truth[("q", (a,))] = {s for b in range(n) for s in truth[("p", (a, b))]}
        truth[("q", (a,))] = {s for s in truth[("q", (a,))] if not any(t < s for t in truth[("q", (a,))])}
    checked: dict[frozenset, frozenset] = {}
    inexact = 0
    for name in ("p", "q"):
        for tup, label in model.facts(name).items():
            shown = label.support_sets()
            assert 1 <= len(shown) <= 8
            for support in shown:
                if support not in checked:
                    checked[support] = case.holding(support)
                assert (name, tup) in checked[support], (name, tup, support)
                # it contains a true minimal support set; it is one when the label is exact (a
                # capped label may keep a superset of a smaller set the cap dropped on a cycle)
                assert any(t <= support for t in truth[(name, tup)]), (name, tup, support)
            if label.exact:
                assert set(shown) == truth[(name, tup)], (name, tup)
            else:  # inexact: the cap dropped sets here or in a label it was built from
                inexact += 1
    assert inexact  # the cap did bite
    assert {(name, tup) for name in ("p", "q") for tup in model.facts(name)} == {
        fact for fact, sets in truth.items() if sets}


# --- a deletion the display cap cannot see ---------------------------------------------------------

def _shared_edge_case() -> dict[str, tuple]:
    """p(0, 9) over eight three-edge paths 0 -> 1 -> m -> 9 that all use the edge 0 -> 1 (a00),
    and one path of four edges that avoids it; the cap (8) keeps the eight shorter sets."""
    edges = {"a00": (0, 1)}
    for m in range(11, 19):
        edges[f"b{m}"] = (1, m)
        edges[f"c{m}"] = (m, 9)
    edges.update({"z1": (0, 30), "z2": (30, 31), "z3": (31, 32), "z4": (32, 9)})
    return edges


def test_a_deletion_keeps_a_fact_whose_surviving_derivation_the_cap_dropped():
    edges = _shared_edge_case()
    for rules in ({"base", "right", "wildcard"}, {"base", "left", "wildcard"}, {"base", "nonlinear", "wildcard"}):
        case = Case({name: ("e", pair) for name, pair in edges.items()}, set(), rules)
        model = evaluate(case.program(), "why")
        label = model.label("p", (0, 9))
        shown = label.support_sets()
        assert not label.exact and len(shown) == 8
        assert all("a00" in s and len(s) == 3 for s in shown)
        uncapped = evaluate(case.program(), "why", cap=None).label("p", (0, 9))
        assert len(uncapped.support_sets()) == 9 and frozenset({"z1", "z2", "z3", "z4"}) in uncapped.support_sets()

        # every kept set dies with a00, yet p(0, 9) stands on z1..z4, as brute force says
        assert ("p", (0, 9)) in case.holding(set(edges) - {"a00"})
        result = what_if(model, {"a00"})
        assert (0, 9) in result.alive["p"] and (0, 9) not in result.dead["p"]
        assert set(result.alive["p"][(0, 9)].support_sets()) == {frozenset({"z1", "z2", "z3", "z4"})}
        assert (0,) in result.alive["q"]
        # the label fixpoint, which only has the capped sets, loses it
        old = what_if(evaluate(case.program(), "why", circuit=False), {"a00"})
        assert (0, 9) in old.dead["p"]

        # and with z2 deleted too, nothing is left: dead
        assert ("p", (0, 9)) not in case.holding(set(edges) - {"a00", "z2"})
        result = what_if(model, {"a00", "z2"})
        assert (0, 9) in result.dead["p"] and (0, 9) not in result.alive["p"]


def test_a_cycle_alone_does_not_keep_a_fact_alive():
    # p(0, 1) and p(0, 2) derive each other around the cycle 1 <-> 2; their only way in is a0
    edges = {"a0": (0, 1), "a1": (1, 2), "a2": (2, 1), "a3": (3, 2)}
    for rules in ({"base", "left"}, {"base", "right"}, {"base", "nonlinear"}):
        case = Case({name: ("e", pair) for name, pair in edges.items()}, {("e", (2, 2))}, rules)
        model = evaluate(case.program(), "why")
        result = what_if(model, {"a0"})
        expected = case.holding({"a1", "a2", "a3"})
        assert {tup for tup in result.alive["p"]} == {tup for rel, tup in expected if rel == "p"}
        assert {(0, 1), (0, 2)} <= set(result.dead["p"])
        assert str(result.alive["p"][(3, 1)]) == "a2·a3"
        assert str(result.alive["p"][(2, 2)]) == "1"


# --- the command line -------------------------------------------------------------------------------

PROGRAM = """\
a1 :: e("x", "y").
a2 :: e("y", "z").
a3 :: e("x", "z").
a4 :: e("z", "x").
e("z", "w").
p(x, y) :- e(x, y).
p(x, z) :- e(x, y), p(y, z).
q(x) :- p(x, _).
"""


def polygraph(*argv):
    done = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", *argv],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cli_eval_prints_circuit_labels_and_what_a_deletion_leaves(tmp_path):
    path = tmp_path / "graph.dl"
    path.write_text(PROGRAM)
    out = polygraph("eval", str(path), "--semiring", "why", "--relation", "p", "--relation", "q")
    lines = [line.strip() for line in out.splitlines()]
    assert "p (12 facts)" in lines
    assert 'p("x", "z")  a3 + a1·a2' in lines
    assert 'p("x", "w")  a3 + a1·a2' in lines
    assert 'p("x", "x")  a3·a4 + a1·a2·a4' in lines
    assert 'p("z", "w")  1' in lines
    assert 'p("z", "z")  a3·a4 + a1·a2·a4' in lines
    assert 'q("z")  1' in lines
    assert 'q("y")  a2' in lines

    out = polygraph("eval", str(path), "--semiring", "why", "--delete", "a3", "--relation", "p")
    lines = [line.strip() for line in out.splitlines()]
    assert "deleting a3" in lines
    assert "p (12 alive, 0 dead)" in lines
    assert 'p("x", "z")  a1·a2' in lines
    assert 'p("x", "x")  a1·a2·a4' in lines

    # a2 gone: y reaches nothing, and x is cut from y's side of the cycle (only x -> z stays)
    out = polygraph("eval", str(path), "--semiring", "why", "--delete", "a2,a3", "--json")
    data = json.loads(out)
    alive = {tuple(row["tuple"]): row["provenance"] for row in data["alive"]["p"]}
    dead = {tuple(row) if isinstance(row, list) else tuple(row["tuple"]) for row in data["dead"]["p"]}
    case = Case({"a1": ("e", ("x", "y")), "a2": ("e", ("y", "z")), "a3": ("e", ("x", "z")),
                 "a4": ("e", ("z", "x"))}, {("e", ("z", "w"))}, {"base", "right", "wildcard"})
    expected = {tup for rel, tup in case.holding({"a1", "a4"}) if rel == "p"}
    assert set(alive) == expected
    assert dead == {tup for rel, tup in case.holding({"a1", "a2", "a3", "a4"}) if rel == "p"} - expected
    assert alive[("z", "y")] == [["a1", "a4"]]
    assert alive[("z", "w")] == [[]]


def _both_engines_agree(assertions, receipts, rules) -> int:
    """Evaluates a build's program uncapped as a circuit and with the label engine; asserts
    the same facts with the same support sets; returns how many facts were compared."""
    from polygraph_logic.graph.build import prepare_build
    program = prepare_build(assertions, receipts, [str(r) for r in rules], None).program
    circuit = evaluate(program, "why", cap=None, circuit=True)
    labels = evaluate(program, "why", cap=None, circuit=False)
    compared = 0
    for name in labels.relations():
        expected, got = labels.facts(name), circuit.facts(name)
        assert set(got) == set(expected), name
        for tup, label in expected.items():
            assert set(got[tup].support_sets()) == set(label.support_sets()), (name, tup)
            compared += 1
    return compared


def test_figure1_and_the_synthetic_graph_have_the_label_engines_uncapped_labels(tmp_path):
    from polygraph_logic.graph.synthetic import generate
    from polygraph_logic.resources import rule_file
    examples = Path(__file__).resolve().parent.parent / "examples" / "figure1"
    assert _both_engines_agree(examples / "assertions.jsonl", examples / "receipts.jsonl", [rule_file("ro")]) > 100
    generate(0).write(tmp_path)
    assert _both_engines_agree(tmp_path / "assertions.jsonl", tmp_path / "receipts.jsonl",
                               [rule_file("ro")]) > 30_000


@pytest.mark.slow
@GO_SKIP
def test_the_go_slice_has_the_label_engines_uncapped_labels(tmp_path):
    assertions, rules = go_inputs(tmp_path)
    assert _both_engines_agree(assertions, None, rules) > 10_000
