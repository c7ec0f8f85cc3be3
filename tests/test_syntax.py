"""The parser: every construct of the rule language, and syntax errors with positions."""

import pytest

from polygraph_logic.errors import ParseError
from polygraph_logic.datalog.syntax import (
    Arithmetic,
    Atom,
    Comparison,
    Constant,
    Fact,
    Negation,
    Rule,
    Variable,
    Wildcard,
    format_value,
)
from polygraph_logic.datalog.reading.parser import parse_clauses


def test_facts_rules_and_provenance_variables():
    clauses = parse_clauses('a12 :: edge("a", "b").\nedge("b", 3).\npath(x, z) :- edge(x, y), path(y, z).')
    assert clauses[0] == Fact(Atom("edge", (Constant("a"), Constant("b"))), "a12")
    assert clauses[1] == Fact(Atom("edge", (Constant("b"), Constant(3))), None)
    rule = clauses[2]
    assert isinstance(rule, Rule)
    assert rule.head == Atom("path", (Variable("x"), Variable("z")))
    assert [str(lit) for lit in rule.body] == ["edge(x, y)", "path(y, z)"]


def test_identifiers_of_any_case_are_variables_and_underscore_is_a_wildcard():
    (rule,) = parse_clauses("p(X, y, _z) :- q(X, y, _z, _).")
    assert rule.head.args == (Variable("X"), Variable("y"), Variable("_z"))
    assert isinstance(rule.body[0].args[3], Wildcard)


def test_both_negation_forms_and_every_comparison():
    (rule,) = parse_clauses("p(x) :- q(x, y), !r(x), not s(y), x = y, x != y, x < y, x <= y, x > y, x >= y.")
    assert isinstance(rule.body[1], Negation) and isinstance(rule.body[2], Negation)
    assert [lit.op for lit in rule.body[3:]] == ["=", "!=", "<", "<=", ">", ">="]


def test_arithmetic_precedence_and_negative_integers():
    (rule,) = parse_clauses("p(z) :- q(x, y), z = x + y * -2 - (x - 1) / 3.")
    expr = rule.body[1].right
    # ((x + (y * -2)) - ((x - 1) / 3))
    assert isinstance(expr, Arithmetic) and expr.op == "-"
    assert expr.left.op == "+" and expr.left.right.op == "*"
    assert expr.left.right.right == Constant(-2)
    assert expr.right.op == "/"


def test_string_escapes_and_non_ascii():
    (fact,) = parse_clauses(r'p("a\"b\\c\nd\te\u00e9", "Düsseldorf ✓").')
    assert fact.atom.args[0].value == 'a"b\\c\nd\teé'
    assert fact.atom.args[1].value == "Düsseldorf ✓"
    assert parse_clauses(f"p({format_value(fact.atom.args[0].value)}).")[0] == fact.__class__(
        Atom("p", (fact.atom.args[0],)), None)


def test_zero_arity_relations_and_comments():
    clauses = parse_clauses("// line comment\nok(). /* block\n comment */ done() :- ok().")
    assert clauses[0] == Fact(Atom("ok", ()), None)
    assert clauses[1].head == Atom("done", ()) and clauses[1].body[0] == Atom("ok", ())


def test_relation_names_starting_with_not_are_names():
    (rule,) = parse_clauses("p(x) :- notable(x), not nothing(x).")
    assert rule.body[0] == Atom("notable", (Variable("x"),))
    assert isinstance(rule.body[1], Negation) and rule.body[1].atom.relation == "nothing"


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("p(x) :- q(x)", 1, 12, "expected ',', '.'"),
        ("p(x) :-\n  q(x),.", 2, 8, "unexpected '.'"),
        ('p("abc).', 1, 3, "unterminated string"),
        (r'p("a\qb").', 1, 4, "unknown escape"),
        ("p(x) : q(x).", 1, 6, "unexpected character ':'"),
        ("12 :: p(1).", 1, 1, "expected a name"),
        ("p(x) :- q(x) r(x).", 1, 14, "unexpected 'r'"),
    ],
)
def test_syntax_errors_have_code_position_and_expectation(text, line, column, fragment):
    with pytest.raises(ParseError) as caught:
        parse_clauses(text, "rules.dl")
    error = caught.value
    assert error.code == "syntax_error"
    assert (error.position.file, error.position.line, error.position.column) == ("rules.dl", line, column)
    assert fragment in error.message
    assert str(error).startswith(f"rules.dl:{line}:{column}: syntax_error: ")


def test_positions_are_recorded_on_atoms_and_variables():
    (rule,) = parse_clauses("p(x) :-\n   q(x, y),\n   y < 3.", "f.dl")
    assert (rule.body[0].position.line, rule.body[0].position.column) == (2, 4)
    assert rule.body[1].left.position.line == 3
    assert isinstance(rule.body[1], Comparison)


def test_quoted_provenance_variables_for_ids_that_are_not_names():
    clauses = parse_clauses('"gpad:17" :: e("a"). a1 :: e("b"). "not" :: e("c").')
    assert [c.variable for c in clauses] == ["gpad:17", "a1", "not"]
    assert [str(c) for c in clauses] == ['"gpad:17" :: e("a").', 'a1 :: e("b").', '"not" :: e("c").']
    assert [parse_clauses(str(c))[0] for c in clauses] == clauses
