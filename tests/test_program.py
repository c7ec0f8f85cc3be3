"""Program checks: arity, safety, stratification, and negation under provenance."""

import pytest

from polygraph_logic import evaluate, parse_program
from polygraph_logic.errors import ProgramError


def error_of(text, **kwargs):
    with pytest.raises(ProgramError) as caught:
        program = parse_program(text, "prog.dl")
        evaluate(program, **kwargs)
    return caught.value


def test_arity_mismatch_names_both_uses():
    error = error_of('e("a", "b").\np(x) :- e(x).')
    assert error.code == "arity_mismatch"
    assert (error.position.line, error.position.column) == (2, 9)
    assert "prog.dl:1:1" in error.message and "1 argument" in error.message


@pytest.mark.parametrize(
    "text, name, line, column",
    [
        ("p(x, z) :- e(x, y).", "z", 1, 6),
        ("p(x) :- e(x, _), !f(y), y > 1.", "y", 1, 21),
        ("p(x) :- e(x, _), x < y.", "y", 1, 22),
        ("p(x) :- e(x, _), y = z + 1.", "y", 1, 18),
        ('e(x, "b").', "x", 1, 3),
    ],
)
def test_unbound_variables(text, name, line, column):
    error = error_of(text)
    assert error.code == "unbound_variable"
    assert (error.position.line, error.position.column) == (line, column)
    assert f" {name} " in f" {error.message} " or name in error.message


def test_assignment_binds_a_variable_as_in_souffle():
    model = evaluate(parse_program("n(1). n(y) :- n(x), y = x + 1, y <= 4."), "boolean")
    assert model.boolean()["n"] == {(1,), (2,), (3,), (4,)}


def test_wildcard_in_head_is_rejected():
    assert error_of("p(_) :- e(_, _).").code == "unbound_variable"


def test_cyclic_negation_names_the_cycle():
    error = error_of("p(x) :- e(x), !q(x).\nq(x) :- e(x), r(x).\nr(x) :- p(x).\ne(1).")
    assert error.code == "cyclic_negation"
    assert (error.position.line, error.position.column) == (1, 15)
    assert "q -> p -> r -> q" in error.message


def test_negation_over_tracked_relation_is_rejected_only_under_provenance():
    text = 'a1 :: e("x"). n("x"). n("y"). lonely(x) :- n(x), !e(x).'
    model = evaluate(parse_program(text), "boolean")
    assert model.boolean()["lonely"] == {("y",)}
    for semiring in ("why", "lineage"):
        error = error_of(text, semiring=semiring)
        assert error.code == "negation_over_tracked"
        assert error.position.column == text.index("!") + 1


def test_negation_over_background_relations_is_fine_under_provenance():
    text = 'a1 :: n("x"). a2 :: n("y"). blocked("y"). ok(x) :- n(x), !blocked(x).'
    model = evaluate(parse_program(text), "why")
    assert {t: str(l) for t, l in model.facts("ok").items()} == {("x",): "a1"}


def test_strata_put_negated_relations_first():
    program = parse_program("a(1). b(x) :- a(x). c(x) :- a(x), !b(x). d(x) :- c(x).")
    order = [next(iter(s)) for s in program.strata]
    assert order.index("b") < order.index("c") < order.index("d")


def test_undefined_relation_is_a_warning_and_empty():
    program = parse_program("p(x) :- q(x).", "w.dl")
    assert any("q has no facts and no rules" in w for w in program.warnings)
    assert evaluate(program, "boolean").boolean()["p"] == set()


def test_ground_arithmetic_in_facts_is_folded():
    model = evaluate(parse_program("p(2 * 3 + 1)."), "boolean")
    assert model.boolean()["p"] == {(7,)}
