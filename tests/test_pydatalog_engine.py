"""The pyDatalog bridge against closures computed by hand."""

from types import SimpleNamespace

import pytest

from polygraph_logic.datalog.pydatalog_engine import closure, evaluate_with_pydatalog
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.syntax import Fact


def run(text: str) -> dict[str, set[tuple]]:
    clauses = parse_clauses(text)
    facts = [c for c in clauses if isinstance(c, Fact)]
    rules = [c for c in clauses if not isinstance(c, Fact)]
    return evaluate_with_pydatalog(facts, rules)


def test_transitive_closure_of_a_chain_with_a_cycle():
    result = run(
        """
        edge("a", "b"). edge("b", "c"). edge("c", "a"). edge("c", "d").
        path(x, y) :- edge(x, y).
        path(x, z) :- path(x, y), edge(y, z).
        """
    )
    cycle = {"a", "b", "c"}
    expected = {(x, y) for x in cycle for y in cycle} | {(x, "d") for x in cycle}
    assert result["path"] == expected
    assert result["edge"] == {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}
    assert set(result) == {"edge", "path"}


def test_negation_with_wildcards_and_an_empty_relation():
    result = run(
        """
        node("a"). node("b"). node("c"). edge("a", "b").
        sink(x) :- node(x), !edge(x, _).
        source(x) :- node(x), !edge(_, x).
        isolated(x) :- sink(x), source(x).
        kept(x) :- node(x), !banned(x).
        never(x) :- node(x), banned(x).
        """
    )
    assert result["sink"] == {("b",), ("c",)}
    assert result["source"] == {("a",), ("c",)}
    assert result["isolated"] == {("c",)}
    assert result["kept"] == {("a",), ("b",), ("c",)}
    assert result["banned"] == set()
    assert result["never"] == set()


def test_negation_is_stratified_over_derived_relations():
    result = run(
        """
        edge(1, 2). edge(2, 3). node(1). node(2). node(3). node(4).
        reach(y) :- edge(1, y).
        reach(z) :- reach(y), edge(y, z).
        unreached(x) :- node(x), !reach(x), x != 1.
        """
    )
    assert result["reach"] == {(2,), (3,)}
    assert result["unreached"] == {(4,)}


def test_comparisons_on_integers_and_strings():
    result = run(
        """
        n(1). n(2). n(3). s("apple"). s("banana").
        lt(x, y) :- n(x), n(y), x < y.
        le(x, y) :- n(x), n(y), x <= y, x != 2.
        big(x) :- n(x), 2 <= x.
        eq(x) :- n(x), 3 = x.
        before(x, y) :- s(x), s(y), x < y.
        """
    )
    assert result["lt"] == {(1, 2), (1, 3), (2, 3)}
    assert result["le"] == {(1, 1), (1, 2), (1, 3), (3, 3)}
    assert result["big"] == {(2,), (3,)}
    assert result["eq"] == {(3,)}
    assert result["before"] == {("apple", "banana")}


def test_arithmetic_binds_and_divides_toward_zero():
    result = run(
        """
        n(7). n(-7). n(0).
        succ(x, y) :- n(x), y = x + 1.
        pred(x, y) :- n(x), x - 1 = y.
        half(x, x / 2) :- n(x).
        neg(x, -x) :- n(x).
        twice(x) :- n(x), x * 2 = x + x.
        odd(x) :- n(x), x - (x / 2) * 2 = 1.
        below(x) :- n(x), !n(x + 7).
        guarded(x, y) :- n(x), n(y), y != 0, x / y = -1.
        """
    )
    assert result["succ"] == {(7, 8), (-7, -6), (0, 1)}
    assert result["pred"] == {(7, 6), (-7, -8), (0, -1)}
    assert result["half"] == {(7, 3), (-7, -3), (0, 0)}  # C division, toward zero: -7 / 2 = -3
    assert result["neg"] == {(7, -7), (-7, 7), (0, 0)}
    assert result["twice"] == {(7,), (-7,), (0,)}
    assert result["odd"] == {(7,)}  # toward zero: -7 - (-3 * 2) = -1, not 1
    assert result["below"] == {(7,)}  # -7 + 7 = 0 and 0 + 7 = 7 are in n
    assert result["guarded"] == {(7, -7), (-7, 7)}


def test_zero_arity_relations():
    result = run(
        """
        ready(). edge("a", "b").
        go() :- ready(), edge("a", _).
        stop() :- !ready().
        nothing() :- edge("b", _).
        marked(x) :- edge(x, _), go().
        unmarked(x) :- edge(_, x), !stop().
        """
    )
    assert result["ready"] == {()}
    assert result["go"] == {()}
    assert result["stop"] == set()
    assert result["nothing"] == set()
    assert result["marked"] == {("a",)}
    assert result["unmarked"] == {("b",)}


def test_string_constants_survive_quotes_backslashes_and_unicode():
    result = run(
        r"""
        name("say \"hi\"", 1). name("back\\slash", 2). name("Zürich — 東京", 3).
        name("Capital.with.dots", 4). name("_underscore", 5). name("1", 6). name("line\nbreak", 7).
        label(s) :- name(s, _).
        hit(n) :- name("say \"hi\"", n).
        hit(n) :- name("Zürich — 東京", n).
        hit(n) :- name("back\\slash", n).
        digit(n) :- name("1", n).
        digit(n) :- name(1, n).
        """
    )
    texts = {'say "hi"', "back\\slash", "Zürich — 東京", "Capital.with.dots", "_underscore", "1", "line\nbreak"}
    assert result["label"] == {(t,) for t in texts}
    assert result["hit"] == {(1,), (3,), (2,)}
    assert result["digit"] == {(6,)}  # the string "1" is not the integer 1


def test_same_names_as_python_builtins_and_variables_named_like_fresh_ones():
    result = run(
        """
        list(1). type(2). sum(3).
        len(T1) :- list(T1).
        len(W1) :- type(W1), W1 + 1 = 3.
        min(V_x) :- sum(V_x), !list(V_x).
        """
    )
    assert result["len"] == {(1,), (2,)}
    assert result["min"] == {(3,)}


def test_ground_comparisons_and_fact_like_rules():
    result = run(
        """
        base(1).
        always(1) :- 1 < 2.
        never(1) :- 2 < 1.
        three(x) :- x = 3.
        fact(1 + 2).
        """
    )
    assert result["always"] == {(1,)}
    assert result["never"] == set()
    assert result["three"] == {(3,)}
    assert result["fact"] == {(3,)}


def test_calls_are_independent_and_closure_reads_a_program():
    first = run('edge("a", "b"). path(x, y) :- edge(x, y).')
    second = run('edge("c", "d"). path(x, y) :- edge(x, y).')
    assert first["path"] == {("a", "b")}
    assert second["path"] == {("c", "d")}
    clauses = parse_clauses('p(1). q(x) :- p(x).')
    program = SimpleNamespace(facts=[clauses[0]], rules=[clauses[1]])
    assert closure(program) == {"p": {(1,)}, "q": {(1,)}}


def test_tracked_facts_count_as_facts():
    result = run('a1 :: edge("a", "b"). edge("b", "c"). path(x, z) :- edge(x, y), edge(y, z).')
    assert result["path"] == {("a", "c")}


def test_unsafe_rule_is_refused():
    with pytest.raises(ValueError):
        run("p(x) :- q(y), x < y. q(1).")
