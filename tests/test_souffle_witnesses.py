"""Aggregates with witnesses and nested aggregates, as Soufflé scopes them (issue 55): small
programs of our own whose expected rows are computed here in plain Python, under ``boolean``
and ``why``."""

from __future__ import annotations

import random

import pytest

from polygraph_logic import evaluate, parse_program
from polygraph_logic.errors import PolygraphError

SEMIRINGS = ["boolean", "why"]


def rows(text: str, relation: str, semiring: str) -> set[tuple]:
    return set(evaluate(parse_program(text, "p.dl"), semiring).facts(relation))


def facts(relation: str, tuples) -> str:
    return "".join(f"{relation}({', '.join(map(str, t))}).\n" for t in tuples)


def random_rows(rng: random.Random, arity: int, n: int, high: int) -> set[tuple]:
    return {tuple(rng.randrange(high) for _ in range(arity)) for _ in range(n)}


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("seed", range(5))
def test_a_witness_of_min_or_max_is_every_row_that_reaches_it(seed, semiring):
    rng = random.Random(seed)
    r = random_rows(rng, 3, 12, 4)
    groups = {rng.randrange(5) for _ in range(3)}
    text = (".decl r(g: number, x: number, v: number)\n" + facts("r", r) + ".decl grp(g: number)\n"
            + facts("grp", [(g,) for g in groups])
            + ".decl best(g: number, x: number, m: number)\n.decl low(x: number, y: number, s: number)\n"
            ".decl pair(x: number, v: number)\n"
            "best(g, x, m) :- grp(g), m = max v : { r(g, x, v) }.\n"
            "low(x, y, s) :- s = min x + y : { r(_, x, y) }.\n"
            "pair(x, v) :- _ = min g * 10 - v : { r(g, x, v) }.\n")
    best = set()
    for g in groups:
        vs = [v for (h, _, v) in r if h == g]
        if vs:
            best |= {(g, x, max(vs)) for (h, x, v) in r if h == g and v == max(vs)}
    s = min(x + y for (_, x, y) in r)
    key = min(g * 10 - v for (g, _, v) in r)
    assert rows(text, "best", semiring) == best
    assert rows(text, "low", semiring) == {(x, y, s) for (_, x, y) in r if x + y == s}
    assert rows(text, "pair", semiring) == {(x, v) for (g, x, v) in r if g * 10 - v == key}


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("seed", range(5))
def test_a_witness_of_a_nested_min_reaches_the_head(seed, semiring):
    # Soufflé's "reaching witness": the inner min's body is joined back at the top; the count,
    # whose body holds an aggregate, counts distinct bindings of its named variables
    rng = random.Random(seed)
    b, d = random_rows(rng, 2, 8, 5), random_rows(rng, 2, 8, 5)
    text = (".decl b(x: number, y: number)\n.decl d(x: number, y: number)\n" + facts("b", b) + facts("d", d)
            + ".decl f(c: number, w: number)\n"
            "f(c, w) :- c = count : { b(x, _), x > min y : { d(y, w) } }.\n")
    m = min(y for (y, _) in d)
    count = len({x for (x, _) in b if x > m})
    assert rows(text, "f", semiring) == {(count, w) for (y, w) in d if y == m}


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("seed", range(5))
def test_nested_aggregates_group_by_the_variables_their_scope_grounds(seed, semiring):
    # the shape of Soufflé's aggregates_nested: the a whose greatest number of h rows over y is least
    rng = random.Random(seed)
    h = random_rows(rng, 3, 15, 4)
    ps, ys = {rng.randrange(4) for _ in range(3)}, {rng.randrange(4) for _ in range(2)}
    text = (".decl h(a: number, b: number, y: number)\n.decl p(a: number)\n.decl y(y: number)\n"
            + facts("h", h) + facts("p", [(a,) for a in ps]) + facts("y", [(v,) for v in ys])
            + ".decl w(a: number, n: number)\n.decl top(m: number)\n"
            "w(a, n) :- n = min k : { p(a), k = max part : { y(v), part = count : { h(a, _, v) } } }.\n"
            "top(a) :- a = max a : p(a).\n")
    worst = {a: max(len({t for t in h if t[0] == a and t[2] == v}) for v in ys) for a in ps}
    least = min(worst.values())  # a is a witness of the min: the rows of the a's that reach it
    assert rows(text, "w", semiring) == {(a, k) for a, k in worst.items() if k == least}
    assert rows(text, "top", semiring) == {(max(ps),)}


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("seed", range(3))
def test_a_count_counts_tuples_of_one_atom_and_distinct_bindings_otherwise(seed, semiring):
    rng = random.Random(seed)
    e = random_rows(rng, 2, 10, 4)
    text = (".decl e(x: number, y: number)\n" + facts("e", e) + ".decl c(t: number, n: number)\n"
            "c(1, n) :- n = count : { e(x, _), x > 0 }.\n"
            "c(2, n) :- n = count : { e(x, _), x > min y : { e(y, _) } }.\n"
            "c(3, n) :- n = count : { e(x, x) }.\n"
            "c(4, n) :- n = count : { e(x, _), e(_, x) }.\n")
    low = min(x for (x, _) in e)
    assert rows(text, "c", semiring) == {
        (1, sum(1 for (x, _) in e if x > 0)),
        (2, len({x for (x, _) in e if x > low})),
        (3, len({x for (x, y) in e if x == y})),
        (4, len({x for (x, _) in e if any(y == x for (_, y) in e)})),
    }


def test_a_witness_of_a_count_is_refused_with_its_position():
    text = ".decl r(x: number, y: number)\nr(1, 2).\n.decl b(x: number, n: number)\nb(x, n) :- n = sum y : { r(x, y) }.\n"
    with pytest.raises(PolygraphError) as caught:
        parse_program(text, "p.dl")
    error = caught.value
    assert (error.code, error.position.line, error.position.column) == ("aggregate_witness", 4, 16)
