"""Semiring laws for every provenance semiring, and the behaviour of the why cap."""

from __future__ import annotations

from functools import reduce
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygraph_logic.provenance import (
    SEMIRINGS,
    BooleanSemiring,
    LineageSemiring,
    NegationNotSupported,
    WhySemiring,
    make_semiring,
    natural_key,
)
from polygraph_logic.provenance.variables import VariableTable

NAMES = ["a1", "a2", "a3", "a12", "a40", "b7"]
SEMIRING = {
    "boolean": BooleanSemiring(),
    "why": WhySemiring(cap=None),
    "lineage": LineageSemiring(),
}

supports = st.lists(st.frozensets(st.sampled_from(NAMES), max_size=3), max_size=5)


def label(name: str):
    """Returns a strategy of labels of the semiring ``name``."""
    sr = SEMIRING[name]
    if name == "boolean":
        return st.booleans()
    if name == "why":
        return supports.map(sr.polynomial)
    flat = st.frozensets(st.sampled_from(NAMES), max_size=4).map(sr.lineage)
    return st.one_of(st.just(sr.zero()), flat)


def draw3(data, name):
    return data.draw(label(name)), data.draw(label(name)), data.draw(label(name))


laws = pytest.mark.parametrize("name", SEMIRINGS)


@laws
@given(data=st.data())
@settings(max_examples=150)
def test_plus_and_times_are_associative_and_commutative(name, data):
    sr = SEMIRING[name]
    a, b, c = draw3(data, name)
    assert sr.plus(sr.plus(a, b), c) == sr.plus(a, sr.plus(b, c))
    assert sr.times(sr.times(a, b), c) == sr.times(a, sr.times(b, c))
    assert sr.plus(a, b) == sr.plus(b, a)
    assert sr.times(a, b) == sr.times(b, a)


@laws
@given(data=st.data())
@settings(max_examples=150)
def test_times_distributes_over_plus(name, data):
    sr = SEMIRING[name]
    a, b, c = draw3(data, name)
    assert sr.times(a, sr.plus(b, c)) == sr.plus(sr.times(a, b), sr.times(a, c))
    assert sr.times(sr.plus(b, c), a) == sr.plus(sr.times(b, a), sr.times(c, a))


@laws
@given(data=st.data())
@settings(max_examples=100)
def test_identities_annihilation_and_idempotence(name, data):
    sr = SEMIRING[name]
    a = data.draw(label(name))
    assert sr.plus(a, sr.zero()) == a and sr.plus(sr.zero(), a) == a
    assert sr.times(a, sr.one()) == a and sr.times(sr.one(), a) == a
    assert sr.is_zero(sr.times(a, sr.zero())) and sr.is_zero(sr.times(sr.zero(), a))
    assert sr.plus(a, a) == a
    assert sr.times(a, a) == a


@laws
def test_zero_and_one_are_singletons_and_distinct(name):
    sr = make_semiring(name)
    assert sr.zero() is sr.zero() and sr.one() is sr.one()
    assert sr.is_zero(sr.zero()) and not sr.is_zero(sr.one())
    assert sr.is_one(sr.one()) and not sr.is_one(sr.zero())
    assert not sr.is_zero(sr.variable("a1"))


@pytest.mark.parametrize("name", ["boolean", "why"])
@given(data=st.data())
@settings(max_examples=150)
def test_absorption(name, data):
    sr = SEMIRING[name]
    a, b = data.draw(label(name)), data.draw(label(name))
    assert sr.plus(a, sr.times(a, b)) == a


def test_lineage_is_not_absorptive():
    sr = LineageSemiring()
    a, b = sr.variable("a1"), sr.variable("a2")
    assert sr.plus(a, sr.times(a, b)) != a
    assert sr.plus(a, sr.times(a, b)).variables() == {"a1", "a2"}


def test_lineage_zero_differs_from_empty_set_and_restrict_deletes_anything_touched():
    sr = LineageSemiring()
    assert sr.zero() != sr.one() and sr.one().support_sets() == [frozenset()]
    assert sr.to_json(sr.zero()) == [] and sr.to_json(sr.one()) == [[]]
    lin = sr.plus(sr.variable("a40"), sr.times(sr.variable("a12"), sr.variable("a77")))
    assert str(lin) == "{a12, a40, a77}" and sr.to_json(lin) == [["a12", "a40", "a77"]]
    assert lin.restrict(["a77"]).is_zero() and lin.restrict(["zz"]) is lin and lin.exact


def test_negation_boolean_only():
    assert BooleanSemiring().negate(True) is False
    for sr in (WhySemiring(), LineageSemiring()):
        with pytest.raises(NegationNotSupported):
            sr.negate(sr.one())


def test_make_semiring_rejects_unknown_names():
    assert make_semiring("why", cap=3).cap == 3
    with pytest.raises(ValueError, match="boolean, why, lineage"):
        make_semiring("probabilistic")


def test_natural_key_and_table():
    assert sorted(["a12", "a2", "b1", "a100"], key=natural_key) == ["a2", "a12", "a100", "b1"]
    table = VariableTable()
    for name in ["a12", "a2", "a7"]:
        table.intern(name)
    assert table.intern("a2") == 1 and table.name(0) == "a12"
    assert table.names_of(table.mask(["a12", "a2", "unknown"])) == ["a2", "a12"]


# ---- the cap ---------------------------------------------------------------

CAP = 3


def cap_key(support: frozenset[str]) -> tuple:
    """Returns the reference cap key: size, then the names compared in natural order."""
    return (len(support), sorted(natural_key(n) for n in support))

# An expression: a support-set list (a leaf) or ("+"|"*", left, right).
expressions = st.recursive(
    supports, lambda sub: st.tuples(st.sampled_from("+*"), sub, sub), max_leaves=6
)


def evaluate(sr, expr):
    if isinstance(expr, tuple):
        op = sr.plus if expr[0] == "+" else sr.times
        return op(evaluate(sr, expr[1]), evaluate(sr, expr[2]))
    return sr.polynomial(expr)


def brute_minimal(sets):
    """Returns the minimal sets among ``sets`` by direct comparison (reference)."""
    sets = set(sets)
    return {s for s in sets if not any(t < s for t in sets)}


@given(expr=expressions)
@settings(max_examples=200)
def test_capped_results_are_small_and_imply_the_uncapped_result(expr):
    capped = evaluate(WhySemiring(cap=CAP), expr)
    full = evaluate(WhySemiring(cap=None), expr)
    assert len(capped.monomials) <= CAP
    assert full.exact
    full_sets = full.support_sets()
    # Truncation may only make a label look deader: each kept set is implied by the full label.
    for kept in capped.support_sets():
        assert any(f <= kept for f in full_sets)
    if capped.exact:
        assert set(capped.support_sets()) == set(full_sets)
    if len(full_sets) > CAP:
        assert not capped.exact


@given(a=st.lists(st.frozensets(st.sampled_from(NAMES), min_size=1, max_size=3), max_size=CAP),
       b=st.lists(st.frozensets(st.sampled_from(NAMES), min_size=1, max_size=3), max_size=CAP))
@settings(max_examples=200)
def test_single_plus_keeps_the_k_smallest_of_the_uncapped_sum(a, b):
    sr = WhySemiring(cap=CAP)
    pa, pb = sr.polynomial(a), sr.polynomial(b)
    assert pa.exact and pb.exact  # at most CAP sets each, so nothing was truncated yet
    reference = sorted(brute_minimal(list(a) + list(b)), key=cap_key)
    result = sr.plus(pa, pb)
    assert result.support_sets() == reference[:CAP]
    assert result.exact == (len(reference) <= CAP)


def test_truncation_propagates_through_plus_and_times():
    sr = WhySemiring(cap=2)
    wide = sr.polynomial([["a1"], ["a2"], ["a3"]])
    assert not wide.exact and wide.support_sets() == [{"a1"}, {"a2"}]
    other = sr.variable("b7")
    assert not sr.plus(wide, other).exact and not sr.plus(other, wide).exact
    assert not sr.times(wide, other).exact and not sr.times(other, wide).exact
    assert not sr.plus(wide, sr.variable("a1")).exact  # absorbed, still inexact
    assert not sr.plus(sr.variable("a1"), wide).exact  # two monomials, no truncation here
    assert not wide.restrict(["a1", "a2"]).exact and wide.restrict(["a1", "a2"]).is_zero()
    assert sr.times(wide, sr.zero()) is sr.zero()  # 0 is exact whatever was dropped
    assert sr.plus(wide, sr.one()) is sr.one()  # so is 1
    assert sr.plus(other, sr.variable("a2")).exact


@given(data=st.data(), expr=expressions)
@settings(max_examples=100)
def test_cap_tie_breaking_is_independent_of_interning_order(data, expr):
    first, second = WhySemiring(cap=2), WhySemiring(cap=2)
    order = data.draw(st.permutations(NAMES))
    for name in NAMES:
        first.variable(name)
    for name in order:
        second.variable(name)
    p, q = evaluate(first, expr), evaluate(second, expr)
    assert p.support_sets() == q.support_sets() and p.exact == q.exact
    assert first.to_json(p) == second.to_json(q) and str(p) == str(q)
    assert p == q and hash(p) == hash(q)


@given(sets=supports)
@settings(max_examples=150)
def test_polynomial_minimises_like_brute_force(sets):
    p = SEMIRING["why"].polynomial(sets)
    assert set(p.support_sets()) == brute_minimal(sets)
    expected = reduce(lambda acc, s: acc | s, sets, frozenset())
    assert p.variables() <= expected
    # Minimal DNF is an antichain.
    assert not any(x <= y for x, y in combinations(p.support_sets(), 2))
