"""Why-provenance polynomials checked against sympy's Boolean algebra, plus display forms."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import And, Or, Symbol, simplify_logic

from polygraph_logic.provenance import WhySemiring

NAMES = ["a1", "a2", "a3", "a12", "a40", "b7"]
WHY = WhySemiring(cap=None)

supports = st.lists(st.frozensets(st.sampled_from(NAMES), max_size=3), max_size=5)
polynomials = supports.map(WHY.polynomial)
deletions = st.sets(st.sampled_from(NAMES + ["zz9"]), max_size=4)


def prime_implicants(expr) -> set[frozenset[str]]:
    """Returns the support sets of sympy's minimal DNF of ``expr`` (the reference)."""
    simplified = simplify_logic(expr, form="dnf")
    return set(WHY.from_sympy(simplified).support_sets())


@given(p=polynomials, deleted=deletions)
@settings(max_examples=150, deadline=None)
def test_restrict_agrees_with_sympy_substitution(p, deleted):
    substituted = p.to_sympy().subs({Symbol(d): False for d in deleted})
    restricted = p.restrict(deleted)
    assert set(restricted.support_sets()) == prime_implicants(substituted)
    assert restricted.exact == p.exact
    assert not restricted.variables() & deleted


@given(p=polynomials)
@settings(max_examples=150, deadline=None)
def test_sympy_round_trip(p):
    assert WHY.from_sympy(p.to_sympy()) == p


@given(p=polynomials, q=polynomials)
@settings(max_examples=100, deadline=None)
def test_plus_and_times_agree_with_sympy(p, q):
    assert set(WHY.plus(p, q).support_sets()) == prime_implicants(Or(p.to_sympy(), q.to_sympy()))
    assert set(WHY.times(p, q).support_sets()) == prime_implicants(And(p.to_sympy(), q.to_sympy()))


def test_to_sympy_of_constants():
    assert WHY.zero().to_sympy() is sympy.false
    assert WHY.one().to_sympy() is sympy.true
    assert WHY.from_sympy(sympy.true) is WHY.one() and WHY.from_sympy(sympy.false).is_zero()


def test_from_sympy_distributes_and_absorbs():
    a, b, c = sympy.symbols("a b c")
    p = WHY.from_sympy(And(a, Or(b, c, And(b, a))))
    assert set(p.support_sets()) == {frozenset({"a", "b"}), frozenset({"a", "c"})}


@pytest.mark.parametrize("expr", ["~a", "a & ~b", "a ^ b", "Implies(a, b)", "Equivalent(a, b)"])
def test_from_sympy_rejects_negation(expr):
    parsed = sympy.sympify(expr)
    with pytest.raises(ValueError, match="not a positive"):
        WHY.from_sympy(parsed)


def test_from_sympy_names_the_offending_subexpression():
    with pytest.raises(ValueError, match=r"~b"):
        WHY.from_sympy(sympy.sympify("a | (c & ~b)"))


def test_pretty_printing():
    sr = WhySemiring()
    p = sr.polynomial([["a77"], ["a40", "a12"]])
    assert str(p) == "a77 + a12·a40"
    assert sr.format(sr.polynomial([["a40", "a12"]])) == "a12·a40"
    assert str(sr.polynomial([["a12"], ["a2"]])) == "a2 + a12"
    assert str(sr.polynomial([["a12", "a2", "a100"]])) == "a2·a12·a100"
    assert str(sr.zero()) == "0" and str(sr.one()) == "1"
    assert str(sr.plus(sr.variable("a9"), sr.one())) == "1"


def test_to_json_shapes():
    sr = WhySemiring()
    p = sr.polynomial([["a40", "a12"], ["a77"], ["a12", "a40", "a77"]])
    assert sr.to_json(p) == [["a77"], ["a12", "a40"]]
    assert sr.to_json(sr.zero()) == [] and sr.to_json(sr.one()) == [[]]
    assert p.support_sets() == [frozenset({"a77"}), frozenset({"a12", "a40"})]
    assert p.variables() == {"a12", "a40", "a77"}


def test_polynomial_is_immutable_and_hashable():
    p = WHY.polynomial([["a1"]])
    with pytest.raises(AttributeError):
        p.exact = False
    assert len({p, WHY.variable("a1"), WHY.polynomial([["a1"]], exact=False)}) == 2
