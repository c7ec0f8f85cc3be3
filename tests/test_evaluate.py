"""The evaluator against independent references.

Why-polynomials (uncapped) must equal the minimal subsets of tracked facts that
derive each fact, found by brute force over all subsets with a naive evaluator
(tests/reference.py); Boolean closures must agree with pyDatalog.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygraph_logic import evaluate, parse_program
from polygraph_logic.errors import EvaluationError
from polygraph_logic.datalog.pydatalog_engine import evaluate_with_pydatalog
from polygraph_logic.datalog.syntax import format_value

from reference import minimal_supports, naive_closure

# A pool of rules over tracked e/2 and background b/2: linear and non-linear
# recursion, joins, mutual recursion, repeated variables, wildcards, comparisons.
RULES = [
    "p(x, y) :- e(x, y).",
    "p(x, z) :- p(x, y), e(y, z).",
    "p(x, z) :- p(x, y), p(y, z).",
    "q(x, y) :- p(x, y), b(y, x).",
    "q(x, y) :- e(x, y), b(x, y).",
    "r(x) :- e(x, _), e(_, x).",
    "r(x) :- p(x, x).",
    "m1(x, y) :- e(x, y).",
    "m2(x, y) :- m1(y, x).",
    "m1(x, z) :- m2(x, y), b(y, z).",
    "s(x, y) :- p(x, y), x < y.",
    "t(x) :- b(x, y), q(y, x), x != y.",
]
DOMAIN = [1, 2, 3, 4]


def build(tracked, background, rule_ids):
    lines = [f"{name} :: e({a}, {b})." for name, (a, b) in tracked.items()]
    lines += [f"b({a}, {b})." for a, b in background]
    lines += [RULES[i] for i in sorted(rule_ids)]
    # every relation exists even when no chosen rule mentions it
    lines += ["e(0, 0) :- e(0, 0).", "b(0, 0) :- b(0, 0)."]
    return "\n".join(lines)


pairs = st.tuples(st.sampled_from(DOMAIN), st.sampled_from(DOMAIN))
programs = st.tuples(
    st.lists(pairs, min_size=1, max_size=8),
    st.lists(pairs, max_size=5),
    st.sets(st.integers(0, len(RULES) - 1), min_size=1),
)


def check_against_brute_force(tracked_pairs, background, rule_ids):
    # several tracked facts may state the same pair: one variable each
    tracked = {f"a{i}": pair for i, pair in enumerate(tracked_pairs)}
    program = parse_program(build(tracked, background, rule_ids))
    model = evaluate(program, "why", cap=None)
    expected = minimal_supports(
        {n: ("e", pair) for n, pair in tracked.items()},
        {("b", pair) for pair in background},
        program.rules,
    )
    got = {
        (name, tup): sorted(map(sorted, label.support_sets()))
        for name in model.relations()
        for tup, label in model.facts(name).items()
    }
    assert got == {fact: sorted(map(sorted, sets)) for fact, sets in expected.items()}
    for name in model.relations():
        for label in model.facts(name).values():
            assert label.exact


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_why_polynomials_are_the_minimal_support_sets(case):
    check_against_brute_force(*case)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_minimal_support_sets_with_twelve_tracked_facts(seed):
    rng = random.Random(seed)
    tracked = [(rng.choice(DOMAIN), rng.choice(DOMAIN)) for _ in range(12)]
    background = [(rng.choice(DOMAIN), rng.choice(DOMAIN)) for _ in range(4)]
    check_against_brute_force(tracked, background, {0, 1, 2, 3, 5, 7, 8, 9, 10})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.sampled_from(["boolean", "why", "lineage"]))
def test_every_semiring_derives_the_same_facts_as_pydatalog(case, semiring):
    tracked_pairs, background, rule_ids = case
    tracked = {f"a{i}": pair for i, pair in enumerate(tracked_pairs)}
    program = parse_program(build(tracked, background, rule_ids))
    ours = evaluate(program, semiring).boolean()
    theirs = evaluate_with_pydatalog(program.facts, program.rules)
    for name, rows in ours.items():
        assert rows == theirs.get(name, set()), name


def test_capped_labels_keep_the_smallest_sets_and_say_they_are_inexact():
    # via("s", "t") has six alternative derivations: z, and x_i·y_i for i < 5
    text = "\n".join(
        [f"x{i} :: left(\"s\", {i})." for i in range(5)]
        + [f"y{i} :: right({i}, \"t\")." for i in range(5)]
        + ['z :: direct("s", "t").',
           "via(a, c) :- left(a, b), right(b, c).",
           "via(a, c) :- direct(a, c).",
           "top(a) :- via(a, _)."]
    )
    program = parse_program(text)
    full = evaluate(program, "why", cap=None).label("via", ("s", "t"))
    capped = evaluate(program, "why", cap=3).label("via", ("s", "t"))
    assert len(full.support_sets()) == 6 and full.exact
    assert [sorted(s) for s in capped.support_sets()] == [["z"], ["x0", "y0"], ["x1", "y1"]]
    assert not capped.exact
    downstream = evaluate(program, "why", cap=3).label("top", ("s",))
    assert not downstream.exact
    # truncation only makes a fact look deader: every kept set is a real support set
    assert set(capped.support_sets()) <= set(full.support_sets())


def test_background_facts_have_provenance_one_and_duplicates_add():
    model = evaluate(parse_program('e("a"). a1 :: e("b"). a2 :: e("b"). p(x) :- e(x).'), "why")
    assert str(model.label("p", ("a",))) == "1"
    assert str(model.label("p", ("b",))) == "a1 + a2"


def test_arithmetic_comparison_type_errors_and_division_by_zero():
    model = evaluate(parse_program("n(7). n(-3). q(x, y) :- n(x), y = x / 2 * 2."), "boolean")
    assert model.boolean()["q"] == {(7, 6), (-3, -2)}  # C's division, toward zero
    with pytest.raises(EvaluationError) as caught:
        evaluate(parse_program('n(1). s("a"). p(x) :- n(x), s(y), x < y.', "t.dl"), "boolean")
    assert caught.value.code == "type_error" and caught.value.position.line == 1
    with pytest.raises(EvaluationError) as caught:
        evaluate(parse_program("n(0). p(y) :- n(x), y = 5 / x.", "t.dl"), "boolean")
    assert caught.value.code == "division_by_zero"


def test_reference_evaluator_agrees_on_a_hand_example():
    # the reference itself is checked once by hand, so it is not trusted blindly
    program = parse_program('e(1, 2). e(2, 3). p(x, y) :- e(x, y). p(x, z) :- p(x, y), e(y, z).')
    facts = {(f.atom.relation, tuple(a.value for a in f.atom.args)) for f in program.facts}
    closure = naive_closure(facts, program.rules)
    assert {t for r, t in closure if r == "p"} == {(1, 2), (2, 3), (1, 3)}


def test_model_json_keeps_value_types():
    model = evaluate(parse_program('a1 :: e("x", 1). p(y, x) :- e(x, y).'), "why")
    assert model.to_json()["p"] == [{"tuple": [1, "x"], "provenance": [["a1"]], "exact": True}]
    assert evaluate(parse_program('e("x", 1).'), "boolean").to_json() == {"e": [["x", 1]]}
    assert format_value('say "hi"') == '"say \\"hi\\""'
