"""Souffle's operators, integer widths, conversions, choice-domain and the constructs refused by name.

The operators are checked against C computed independently: Python's ctypes for 32-bit
wrapping (``c_int32``, ``c_uint32``) and the precedence table of Souffle's grammar
written out here, not read from the engine.
"""

from __future__ import annotations

import ctypes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.program import parse_program
from polygraph_logic.errors import EvaluationError, ParseError, ProgramError


def i32(value: int) -> int:
    return ctypes.c_int32(value).value


def u32(value: int) -> int:
    return ctypes.c_uint32(value).value


def c_quotient(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# the operators as C computes them on int32 (Souffle's default build)
SIGNED = {
    "+": lambda a, b: i32(a + b),
    "-": lambda a, b: i32(a - b),
    "*": lambda a, b: i32(a * b),
    "/": lambda a, b: i32(c_quotient(a, b)),
    "%": lambda a, b: i32(a - b * c_quotient(a, b)),
    "band": lambda a, b: i32(a & b),
    "bor": lambda a, b: i32(a | b),
    "bxor": lambda a, b: i32(a ^ b),
    "bshl": lambda a, b: i32(u32(a) << (b & 31)),
    "bshr": lambda a, b: i32(a) >> (b & 31),
    "bshru": lambda a, b: i32(u32(a) >> (b & 31)),
    "land": lambda a, b: int(bool(a) and bool(b)),
    "lor": lambda a, b: int(bool(a) or bool(b)),
    "lxor": lambda a, b: int(bool(a) != bool(b)),
}
UNSIGNED = {
    "+": lambda a, b: u32(a + b),
    "-": lambda a, b: u32(a - b),
    "*": lambda a, b: u32(a * b),
    "/": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "band": lambda a, b: a & b,
    "bor": lambda a, b: a | b,
    "bxor": lambda a, b: a ^ b,
    "bshl": lambda a, b: u32(a << (b & 31)),
    "bshr": lambda a, b: a >> (b & 31),
    "bshru": lambda a, b: a >> (b & 31),
}
# Souffle's parser.yy: %left L_OR, L_XOR, L_AND, BW_OR, BW_XOR, BW_AND, shifts, PLUS MINUS, STAR SLASH PERCENT
LEVEL = {"lor": 1, "lxor": 2, "land": 3, "bor": 4, "bxor": 5, "band": 6, "bshl": 7, "bshr": 7, "bshru": 7,
         "+": 8, "-": 8, "*": 9, "/": 9, "%": 9}

int32s = st.integers(-2 ** 31, 2 ** 31 - 1)
uint32s = st.integers(0, 2 ** 32 - 1)


def outputs(text: str, relation: str, semiring: str = "boolean") -> set[tuple]:
    return evaluate(parse_program(text, "t.dl"), semiring).boolean().get(relation, set())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(int32s, int32s), min_size=1, max_size=6))
def test_binary_operators_on_numbers_compute_as_c_int32(pairs):
    ops = list(SIGNED)
    decls = ".decl p(a: number, b: number)\n" + "".join(
        f".decl o{i}(a: number, b: number, v: number)\n" for i in range(len(ops)))
    rules = "".join(f"o{i}(a, b, a {op} b) :- p(a, b){', b != 0' if op in '/%' else ''}.\n"
                    for i, op in enumerate(ops))
    facts = "".join(f"p({a}, {b}).\n" for a, b in pairs)
    model = evaluate(parse_program(decls + rules + facts, "t.dl"), "boolean").boolean()
    for i, op in enumerate(ops):
        expected = {(a, b, SIGNED[op](a, b)) for a, b in pairs if not (op in "/%" and b == 0)}
        assert model.get(f"o{i}", set()) == expected, op


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(uint32s, uint32s), min_size=1, max_size=6))
def test_binary_operators_on_unsigneds_compute_as_c_uint32(pairs):
    ops = list(UNSIGNED)
    decls = ".decl p(a: unsigned, b: unsigned)\n" + "".join(
        f".decl o{i}(a: unsigned, b: unsigned, v: unsigned)\n" for i in range(len(ops)))
    rules = "".join(f"o{i}(a, b, a {op} b) :- p(a, b){', b != 0' if op in '/%' else ''}.\n"
                    for i, op in enumerate(ops))
    rules += ".decl flipped(a: unsigned, v: unsigned)\nflipped(a, bnot a) :- p(a, _).\n"
    facts = "".join(f"p({a}, {b}).\n" for a, b in pairs)
    model = evaluate(parse_program(decls + rules + facts, "t.dl"), "boolean").boolean()
    for i, op in enumerate(ops):
        expected = {(a, b, UNSIGNED[op](a, b)) for a, b in pairs if not (op in "/%" and b == 0)}
        assert model.get(f"o{i}", set()) == expected, op
    assert model["flipped"] == {(a, u32(~a)) for a, _ in pairs}


TRIPLES = [(5, 3, 2), (-7, 2, 3), (12, -5, 1), (1, 1, 31), (-40, 7, -3), (2147483647, 2, 1)]


@pytest.mark.parametrize("first", sorted(LEVEL))
@pytest.mark.parametrize("second", sorted(LEVEL))
def test_two_operators_group_by_soufflés_precedence(first, second):
    """``a first b second c`` for every pair of binary operators: the one of higher level binds
    first, and of two at one level the left one (all are left-associative)."""
    def expected(a, b, c):
        if LEVEL[second] > LEVEL[first]:
            return SIGNED[first](a, SIGNED[second](b, c))
        return SIGNED[second](SIGNED[first](a, b), c)

    facts = "".join(f"p({a}, {b}, {c}).\n" for a, b, c in TRIPLES)
    text = (f".decl r(a: number, b: number, c: number, v: number)\n.decl p(a: number, b: number, c: number)\n"
            f"{facts}r(a, b, c, a {first} b {second} c) :- p(a, b, c).\n")
    try:
        values = {(a, b, c, expected(a, b, c)) for a, b, c in TRIPLES}
    except ZeroDivisionError:
        with pytest.raises(EvaluationError) as caught:
            outputs(text, "r")
        assert caught.value.code == "division_by_zero"
        return
    assert outputs(text, "r") == values


@pytest.mark.parametrize("expression, value", [
    ("-2 ^ 2", -4), ("2 ^ 3 ^ 2", 512), ("bnot 1 + 1", -1), ("lnot 0 + 1", 2), ("lnot 3", 0),
    ("-x ^ 2", -9), ("2 ^ -x", 0), ("1 bshl 31", -2 ** 31), ("1 bshl 32", 1), ("2147483647 + 1", -2 ** 31),
    ("-7 / 2", -3), ("-7 % 2", -1), ("7 % -2", 1), ("2 ^ 31", -2 ** 31), ("3 ^ 40", 0),
])
def test_prefix_operators_powers_and_wrapping(expression, value):
    text = f".decl r(v: number)\n.decl p(x: number)\np(3).\nr({expression}) :- p(x).\n"
    assert outputs(text, "r") == {(value,)}


def test_programs_without_declarations_keep_unbounded_integers():
    assert outputs("p(2147483647). r(x + 1) :- p(x).", "r") == {(2 ** 31,)}
    assert outputs("p(-7). r(x / 2, x % 2) :- p(x).", "r") == {(-3, -1)}  # C's division all the same


def test_unsigned_constants_and_conversions():
    text = """
    .decl r(k: symbol, u: unsigned, n: number)
    r("minus_one", to_unsigned(-1), to_number(to_unsigned(-1))).
    r("literal", 0x10u, to_number(2.75)).
    r("negative_float", to_unsigned(-2.5), to_number(-2.75)).
    .decl f(k: symbol, x: float)
    f("symbol", to_float("2.5")).
    f("number", to_float(7)).
    """
    assert outputs(text, "r") == {("minus_one", 2 ** 32 - 1, -1), ("literal", 16, 2),
                                  ("negative_float", 2 ** 32 - 2, -2)}
    assert outputs(text, "f") == {("symbol", 2.5), ("number", 7.0)}


def test_ord_tells_symbols_apart_and_keeps_numbers():
    text = """
    .decl w(x: symbol)
    w("a"). w("b"). w("ab"). w("é").
    .decl same(x: symbol, y: symbol)
    same(x, y) :- w(x), w(y), ord(x) = ord(y).
    """
    assert outputs(text, "same") == {(x, x) for x in ("a", "b", "ab", "é")}


def test_choice_domain_keeps_the_first_tuple_per_key():
    text = """
    .decl c(x: number, y: number)
    c(1, 10). c(1, 11). c(2, 20). c(3, 20).
    .decl one(x: number, y: number) choice-domain x
    one(x, y) :- c(x, y).
    .decl both(x: number, y: number) choice-domain x, y
    both(x, y) :- c(x, y).
    """
    model = evaluate(parse_program(text, "t.dl"), "boolean").boolean()
    assert {x for x, _ in model["one"]} == {1, 2, 3} and len(model["one"]) == 3
    assert len({y for _, y in model["both"]}) == len(model["both"]) == len({x for x, _ in model["both"]})
    assert len(model["both"]) == 2  # (1, 1x) and one of (2, 20), (3, 20)


def test_choice_domain_and_autoinc_over_background_facts_have_provenance_one():
    text = """
    .decl c(x: number, y: number)
    c(1, 10). c(1, 11).
    .decl one(x: number, y: number) choice-domain x
    one(x, y) :- c(x, y).
    .decl n(x: number, i: number)
    n(x, autoinc()) :- c(x, _).
    """
    model = evaluate(parse_program(text, "t.dl"), "why")
    assert len(model.facts("one")) == 1 and {i for _, i in model.facts("n")} == {0, 1}
    assert all(str(label) == "1" for label in model.facts("one").values())


def _error(text: str, semiring: str = "boolean"):
    with pytest.raises((ParseError, ProgramError)) as caught:
        evaluate(parse_program(text, "t.dl"), semiring)
    return caught.value


@pytest.mark.parametrize("text, code, line, column", [
    (".decl r(x: number)\nr(1).\nr(x) < r(y) :- x < y.\n", "syntax_error", 3, 6),
    (".decl r(x: number)\n.decl s(x: number)\nr(x) <= s(y) :- x < y.\n", "subsumption_relations", 3, 6),
    (".decl r(x: number)\n.functor inc(x: number): number\n", "unsupported_functor", 2, 1),
    (".decl r(x: number)\nr(x) :- x = @inc(1).\n", "unsupported_functor", 2, 13),
    (".decl r(x: number, y: number) choice-domain z\n", "syntax_error", 1, 7),
    (".decl r(x: number, y: number)\nr(1, 2).\n.decl b(x: number, y: number)\n"
     "b(x, y) :- y = count : { r(x, _) }.\n", "aggregate_witness", 4, 16),
    (".decl r(x: number)\nr(0).\nr(autoinc()) :- r(x), x < 5.\n", "autoinc_in_recursion", 3, 3),
    (".decl r(x: number)\nr(autoinc()).\n", "autoinc_in_fact", 2, 3),
])
def test_refused_constructs_name_kind_line_and_column(text, code, line, column):
    error = _error(text)
    assert (error.code, error.position.line, error.position.column) == (code, line, column), str(error)


def test_subsumption_keeps_the_tuples_no_other_one_dominates():
    text = ".decl a(x: number)\na(1). a(2). a(3).\na(x1) <= a(x2) :- x1 <= x2.\n"
    assert outputs(text, "a") == {(3,)}
    keyed = (".decl b(k: symbol, x: number)\nb(\"p\", 1). b(\"p\", 5). b(\"q\", 2). b(\"q\", 2).\n"
             "b(k, x) <= b(k, y) :- x < y.\n")
    assert outputs(keyed, "b") == {("p", 5), ("q", 2)}
    assert outputs(keyed, "b", "why") == {("p", 5), ("q", 2)}  # over background facts


def dijkstra(edges: list[tuple[int, int, int]], source: int) -> dict[int, int]:
    best, frontier = {source: 0}, [(0, source)]
    while frontier:
        frontier.sort()
        d, x = frontier.pop(0)
        if d > best[x]:
            continue
        for a, b, w in edges:
            if a == x and (b not in best or d + w < best[b]):
                best[b] = d + w
                frontier.append((d + w, b))
    return best


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 9)), max_size=14))
def test_subsumption_computes_shortest_paths_as_dijkstra(edges):
    text = (".decl e(x: number, y: number, w: number)\n.decl d(x: number, c: number)\nd(0, 0).\n"
            + "".join(f"e({a}, {b}, {w}).\n" for a, b, w in edges)
            + "d(y, c + w) :- d(x, c), e(x, y, w).\nd(x, c1) <= d(x, c2) :- c2 <= c1.\n")
    assert outputs(text, "d") == set(dijkstra(edges, 0).items())


@pytest.mark.parametrize("semiring", ["why", "lineage"])
def test_choice_and_autoinc_over_tracked_facts_are_refused_under_provenance(semiring):
    choice = ".decl c(x: number)\na1 :: c(1).\n.decl one(x: number, y: number) choice-domain x\none(x, x) :- c(x).\n"
    error = _error(choice, semiring)
    assert (error.code, error.position.line) == ("choice_over_tracked", 3)
    assert "--semiring boolean" in error.message
    subsumed = ".decl c(x: number)\na1 :: c(1).\nc(2).\nc(x) <= c(y) :- x < y.\n"
    error = _error(subsumed, semiring)
    assert (error.code, error.position.line) == ("subsumption_over_tracked", 4)
    assert outputs(subsumed, "c") == {(2,)}
    counter = ".decl c(x: number)\na1 :: c(1).\n.decl n(x: number, i: number)\nn(x, autoinc()) :- c(x).\n"
    error = _error(counter, semiring)
    assert (error.code, error.position.line, error.position.column) == ("autoinc_over_tracked", 4, 6)
    assert len(evaluate(parse_program(choice, "t.dl"), "boolean").boolean()["one"]) == 1


@pytest.mark.parametrize("expression", ['"a" band 1', "1.5 bshl 1", 'lnot "x"'])
def test_bitwise_operators_on_non_integers_are_type_errors(expression):
    with pytest.raises(EvaluationError) as caught:
        outputs(f"r(v) :- v = {expression}.", "r")
    assert caught.value.code == "type_error" and caught.value.position.line == 1


def test_the_cli_prints_a_refusal_on_one_line(tmp_path, capsys):
    path = tmp_path / "functor.dl"
    path.write_text(".decl r(x: number)\nr(1).\n.functor inc(x: number): number\n")
    assert main(["eval", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{path}:3:1: unsupported_functor: ") and "\n" not in err


def test_declarations_print_their_choice_domain_back():
    (declaration,) = parse_program(".decl r(x: number, y: number, z: number) choice-domain x, (y, z)\n").directives()
    assert str(declaration) == ".decl r(x: number, y: number, z: number) choice-domain x, (y, z)"


def test_a_sum_of_numbers_wraps_as_soufflés_does():
    text = (".decl n(x: number)\nn(2147483647). n(1). n(5).\n.decl s(t: number)\ns(t) :- t = sum x : n(x).\n"
            ".decl u(x: unsigned)\nu(4294967295). u(2).\n.decl v(t: unsigned)\nv(t) :- t = sum x : u(x).\n")
    assert outputs(text, "s") == {(i32(2147483647 + 1 + 5),)}
    assert outputs(text, "v") == {(u32(4294967295 + 2),)}
    assert outputs("n(2147483647). n(1). s(t) :- t = sum x : n(x).", "s") == {(2 ** 31,)}  # no declarations


@pytest.mark.parametrize("text, message", [
    (".decl r(x: number)\nr(3000000000).\n", "3000000000 is out of a number's 32-bit range"),
    (".decl r(x: number)\nr(-2147483649).\n", "-2147483649 is out of a number's 32-bit range"),
    (".decl r(x: unsigned)\nr(4294967296).\n", "4294967296 is out of an unsigned's 32-bit range"),
    (".decl r(x: unsigned)\nr(-1).\n", "-1 is not an unsigned"),
])
def test_constants_out_of_32_bits_are_refused_as_souffle_refuses_them(text, message):
    error = _error(text)
    assert error.code == "type_error" and error.position.line == 2 and message in error.message
    assert outputs(".decl r(x: number)\nr(2147483647). r(-2147483648).\n", "r") == {(2 ** 31 - 1,), (-2 ** 31,)}


@settings(max_examples=40, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-7, 7).filter(bool) | st.none())
def test_range_binds_each_value_as_pythons_range(start, end, step):
    call = f"range({start}, {end})" if step is None else f"range({start}, {end}, {step})"
    expected = range(start, end, step if step is not None else (1 if start <= end else -1))
    assert outputs(f".decl r(x: number)\nr(x) :- x = {call}.\n", "r") == {(x,) for x in expected}


def test_range_elsewhere_than_an_assignment_is_refused():
    error = _error(".decl r(x: number)\nr(x) :- x = range(1, 3) + 1.\n")
    assert (error.code, error.position.line, error.position.column) == ("range_outside_assignment", 2, 13)


def test_range_in_a_long_body_runs_as_a_stage():
    checks = ", ".join(f"x > {-i}" for i in range(1, 45))  # more steps than a chain of closures holds
    text = f".decl r(x: number, y: number)\nr(x, y) :- x = range(0, 3), {checks}, y = range(x, 3).\n"
    assert outputs(text, "r") == {(x, y) for x in range(3) for y in range(x, 3)}


def test_range_with_its_variable_bound_tests_membership():
    text = ".decl q(x: number, n: number)\nq(1, 3). q(5, 3). q(2, 2). q(0, 1).\n.decl r(x: number)\n" \
           "r(x) :- q(x, n), x = range(0, n).\n"
    assert outputs(text, "r") == {(1,), (0,)}
