"""The domain size (32 or 64, Soufflé's SOUFFLE_DOMAIN_64BIT build option) against C computed independently.

Integers are checked against ctypes' ``c_int32``/``c_uint32`` and ``c_int64``/``c_uint64``
wrapping, with the C operators written out here (shift counts modulo the width), not read
from the engine; floats against ctypes' ``c_float``/``c_double`` and libc's ``strtof`` and
``snprintf`` (``%.9g``, ``%.17g``).
"""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main
from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.program import load_program, parse_program
from polygraph_logic.datalog.reading.souffle_input import c_float_text
from polygraph_logic.errors import EvaluationError, ProgramError

SIGNED_C = {32: ctypes.c_int32, 64: ctypes.c_int64}
UNSIGNED_C = {32: ctypes.c_uint32, 64: ctypes.c_uint64}


def c_quotient(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def signed_ops(bits: int) -> dict:
    s, u = (lambda v: SIGNED_C[bits](v).value), (lambda v: UNSIGNED_C[bits](v).value)
    return {
        "+": lambda a, b: s(a + b), "-": lambda a, b: s(a - b), "*": lambda a, b: s(a * b),
        "/": lambda a, b: s(c_quotient(a, b)), "%": lambda a, b: s(a - b * c_quotient(a, b)),
        "band": lambda a, b: s(a & b), "bor": lambda a, b: s(a | b), "bxor": lambda a, b: s(a ^ b),
        "bshl": lambda a, b: s(u(a) << (b % bits)), "bshr": lambda a, b: a >> (b % bits),
        "bshru": lambda a, b: s(u(a) >> (b % bits)),
    }


def unsigned_ops(bits: int) -> dict:
    u = lambda v: UNSIGNED_C[bits](v).value  # noqa: E731
    return {
        "+": lambda a, b: u(a + b), "-": lambda a, b: u(a - b), "*": lambda a, b: u(a * b),
        "/": lambda a, b: a // b, "%": lambda a, b: a % b, "band": lambda a, b: a & b,
        "bor": lambda a, b: a | b, "bxor": lambda a, b: a ^ b, "bshl": lambda a, b: u(a << (b % bits)),
        "bshr": lambda a, b: a >> (b % bits), "bshru": lambda a, b: a >> (b % bits),
    }


def model(text: str, size: int) -> dict:
    return evaluate(parse_program(text, "t.dl", domain_size=size), "boolean").boolean()


def run_operators(kind: str, ops: dict, pairs, size: int) -> None:
    names = list(ops)
    text = f".decl p(a: {kind}, b: {kind})\n" + "".join(
        f".decl o{i}(a: {kind}, b: {kind}, v: {kind})\no{i}(a, b, a {op} b) :- p(a, b)"
        f"{', b != 0' if op in '/%' else ''}.\n" for i, op in enumerate(names))
    text += "".join(f"p({a}{'u' if kind == 'unsigned' else ''}, {b}{'u' if kind == 'unsigned' else ''}).\n"
                    for a, b in pairs)
    found = model(text, size)
    for i, op in enumerate(names):
        expected = {(a, b, ops[op](a, b)) for a, b in pairs if not (op in "/%" and b == 0)}
        assert found.get(f"o{i}", set()) == expected, (op, size)


@pytest.mark.parametrize("size", domain.SIZES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_number_operators_compute_as_c_at_each_width(size, data):
    values = st.integers(-2 ** (size - 1), 2 ** (size - 1) - 1) | st.integers(-70, 70)
    pairs = data.draw(st.lists(st.tuples(values, values), min_size=1, max_size=5))
    run_operators("number", signed_ops(size), pairs, size)


@pytest.mark.parametrize("size", domain.SIZES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unsigned_operators_compute_as_c_at_each_width(size, data):
    values = st.integers(0, 2 ** size - 1) | st.integers(0, 70)
    pairs = data.draw(st.lists(st.tuples(values, values), min_size=1, max_size=5))
    run_operators("unsigned", unsigned_ops(size), pairs, size)


@pytest.mark.parametrize("size, expression, value", [
    (32, "2147483647 + 1", -2 ** 31), (64, "2147483647 + 1", 2 ** 31),
    (64, "9223372036854775807 + 1", -2 ** 63), (32, "1 bshl 32", 1), (64, "1 bshl 32", 2 ** 32),
    (64, "1 bshl 63", -2 ** 63), (64, "1 bshl 64", 1), (32, "bnot 0", -1), (64, "-1 bshru 1", 2 ** 63 - 1),
    (32, "-1 bshru 1", 2 ** 31 - 1), (64, "2 ^ 40", 2 ** 40), (32, "2 ^ 40", 0),
])
def test_wrapping_and_shifts_follow_the_width(size, expression, value):
    assert model(f".decl r(v: number)\nr({expression}).\n", size)["r"] == {(value,)}


@pytest.mark.parametrize("size", domain.SIZES)
def test_conversions_and_sums_keep_the_widths_bits(size):
    text = (".decl r(u: unsigned, n: number)\nr(to_unsigned(-1), to_number(to_unsigned(-2))).\n"
            ".decl n(x: number)\nn(-1). n(1). n(2).\n.decl s(t: unsigned)\ns(t) :- t = sum to_unsigned(x) : n(x).\n")
    found = model(text, size)
    assert found["r"] == {(UNSIGNED_C[size](-1).value, -2)}
    assert found["s"] == {(UNSIGNED_C[size](UNSIGNED_C[size](-1).value + 3).value,)}


@pytest.mark.parametrize("size, text, message", [
    (32, ".decl r(x: number)\nr(3000000000).\n", "3000000000 is out of a number's 32-bit range"),
    (64, ".decl r(x: number)\nr(9223372036854775808).\n", "is out of a number's 64-bit range"),
    (64, ".decl r(x: unsigned)\nr(18446744073709551616).\n", "is out of an unsigned's 64-bit range"),
])
def test_constants_out_of_the_widths_range_are_refused_with_their_line(size, text, message):
    with pytest.raises(ProgramError) as caught:
        parse_program(text, "t.dl", domain_size=size)
    assert caught.value.code == "type_error" and caught.value.position.line == 2 and message in caught.value.message


def test_a_64_bit_program_holds_what_a_32_bit_one_refuses(tmp_path):
    (tmp_path / "r.facts").write_text("3000000000\t18446744073709551615\n")
    path = tmp_path / "p.dl"
    path.write_text(".decl r(x: number, u: unsigned)\n.input r\nr(-9223372036854775808, 0).\n")
    program = load_program(path, fact_dir=tmp_path, domain_size=64)
    assert set(evaluate(program, "boolean").facts("r")) == {(3000000000, 2 ** 64 - 1), (-2 ** 63, 0)}
    path.write_text(".decl r(x: number, u: unsigned)\n.input r\n")
    with pytest.raises(ProgramError) as caught:
        load_program(path, fact_dir=tmp_path)
    error = caught.value
    assert "3000000000 is out of a number's 32-bit range" in error.message
    assert error.position.file.endswith("r.facts") and error.position.line == 1


def test_two_widths_in_one_process_do_not_meet():
    """Each program keeps its width; evaluating one does not change the other's, nor the default."""
    text = ".decl r(v: number)\nr(RAM_DOMAIN_SIZE + 0).\n.decl w(v: number)\nw(2147483647 + 1).\n"
    wide, narrow = parse_program(text, "t.dl", domain_size=64), parse_program(text, "t.dl")
    assert (wide.domain_size, narrow.domain_size) == (64, 32)
    assert evaluate(wide, "boolean").boolean()["w"] == {(2 ** 31,)}
    assert evaluate(narrow, "boolean").boolean() == {"r": {(32,)}, "w": {(-2 ** 31,)}}
    assert evaluate(wide, "boolean").boolean()["r"] == {(64,)} and domain.size() == 32


def test_the_setting_refuses_other_widths():
    with pytest.raises(ValueError):
        parse_program("p(1).", domain_size=16)


def test_the_cli_takes_the_domain_size(tmp_path, capsys):
    path = tmp_path / "p.dl"
    path.write_text(".decl r(v: number)\n.output r\nr(RAM_DOMAIN_SIZE). r(2147483647 + 1).\n")
    assert main(["eval", str(path), "-D", "-", "--domain-size", "64"]) == 0
    assert capsys.readouterr().out.splitlines()[3:5] == ["64", "2147483648"]
    assert main(["eval", str(path), "-D", "-"]) == 0
    assert capsys.readouterr().out.splitlines()[3:5] == ["-2147483648", "32"]


# --- floats: C's float at 32, double at 64 (ctypes and libc, not the engine) ----------------

LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.strtof.restype, LIBC.strtof.argtypes = ctypes.c_float, [ctypes.c_char_p, ctypes.c_void_p]
FLOAT_C = {32: ctypes.c_float, 64: ctypes.c_double}


def c_real(size: int, value: float) -> float:
    return FLOAT_C[size](value).value


def c_text(size: int, value: float) -> str:
    buffer = ctypes.create_string_buffer(64)
    LIBC.snprintf(buffer, 64, b"%.9g" if size == 32 else b"%.17g", ctypes.c_double(value))
    return buffer.value.decode()


singles = st.floats(width=32, allow_nan=False, allow_infinity=False)
doubles = st.floats(allow_nan=False, allow_infinity=False)


def c_op(size: int, a: float, op: str, b: float) -> float:
    # +, -, *, / on two floats: the exact result rounded once, which the double result rounded
    # to float is (a double carries more than twice a float's digits)
    return c_real(size, {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op])


@pytest.mark.parametrize("size", domain.SIZES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float_operators_and_their_text_compute_as_c_at_each_width(size, data, tmp_path_factory):
    values = singles if size == 32 else doubles
    pairs = data.draw(st.lists(st.tuples(values, values.filter(bool)), min_size=1, max_size=4))
    ops = ["+", "-", "*", "/"]
    folder = tmp_path_factory.mktemp("floats")
    (folder / "p.facts").write_text("".join(f"{i}\t{c_text(size, a)}\t{c_text(size, b)}\n"
                                            for i, (a, b) in enumerate(pairs)))
    program = folder / "p.dl"
    program.write_text(".decl p(i: number, a: float, b: float)\n.input p\n" + "".join(
        f".decl o{k}(i: number, v: float)\n.output o{k}\no{k}(i, a {op} b) :- p(i, a, b).\n"
        for k, op in enumerate(ops)))
    assert main(["eval", str(program), "-F", str(folder), "-D", str(folder), "--domain-size", str(size)]) == 0
    for k, op in enumerate(ops):
        expected = "".join(f"{i}\t{c_text(size, c_op(size, a, op, b))}\n" for i, (a, b) in enumerate(pairs))
        assert (folder / f"o{k}.csv").read_text() == expected, op


@settings(max_examples=200, deadline=None)
@given(singles)
def test_a_single_written_at_32_reads_back_as_the_same_single(value):
    with domain.using(32):
        text = domain.float_text(value)
        assert text == "%.9g" % value
        assert c_float_text(text) == value and LIBC.strtof(text.encode(), None) == value


@settings(max_examples=200, deadline=None)
@given(st.decimals(allow_nan=False, allow_infinity=False, places=None).map(str)
       | st.floats(allow_nan=False, allow_infinity=False).map(repr))
def test_fact_texts_read_at_32_as_libc_strtof_reads_them(text):
    expected = LIBC.strtof(text.encode(), None)
    with domain.using(32):
        got = c_float_text(text)
    if abs(expected) == float("inf"):
        assert got is None  # strtof's overflow (ERANGE), refused as Souffle refuses it
    else:
        assert got == expected and str(got) == str(expected)  # -0.0 too


def test_a_decimal_just_past_a_midpoint_is_rounded_once():
    """1 + 2^-24 (and a little) lies past the midpoint of two singles, but its nearest double is
    the midpoint itself: rounding the double again would give 1.0; strtof gives the next single."""
    text = "1.000000059604644775390625000000001"
    expected = LIBC.strtof(text.encode(), None)
    assert expected == 1 + 2 ** -23
    with domain.using(32):
        assert c_float_text(text) == expected
    assert float(text) == 1 + 2 ** -24  # the double sits on the midpoint


@pytest.mark.parametrize("size", domain.SIZES)
def test_sums_means_constants_and_to_string_hold_the_widths_floats(size):
    values = [0.1, 0.2, 0.3, 1e8, -1e8, 0.7]
    text = (".decl r(i: number, v: float)\n" + "".join(f"r({i}, {v!r})." for i, v in enumerate(values))
            + "\n.decl s(t: float, m: float, c: float, k: symbol)\n"
            "s(t, m, 0.1, to_string(to_float(\"0.1\"))) :- t = sum v : r(_, v), m = mean v : r(_, v).\n")
    (found,) = model(text, size)["s"]
    total = c_real(size, 0.0)
    for v in values:  # by r's first column
        total = c_op(size, total, "+", c_real(size, v))
    assert found[0] == total
    assert found[1] == c_op(size, total, "/", float(len(values)))
    assert found[2] == c_real(size, 0.1)
    assert found[3] == "%f" % c_real(size, 0.1)


def test_a_float_constant_beyond_a_single_is_refused_at_32_with_its_position():
    text = ".decl r(x: float)\nr(1" + "0" * 39 + ".0).\n"
    with pytest.raises(ProgramError) as caught:
        parse_program(text, "t.dl")
    assert caught.value.code == "type_error" and caught.value.position.line == 2
    assert "float's 32-bit range" in caught.value.message
    assert model(text, 64)["r"] == {(1e39,)}
    with pytest.raises(ProgramError) as caught:
        parse_program(".decl r(x: float)\nr(1" + "0" * 400 + ".0).\n", "t.dl", domain_size=64)
    assert "float's 64-bit range" in caught.value.message and caught.value.position.line == 2


@pytest.mark.parametrize("size, text, message", [
    (32, "1e39", "out of a float's 32-bit range"), (64, "1e309", "out of a float's 64-bit range"),
    (32, "abc", "is not a number"),
])
def test_to_float_of_a_symbol_refuses_what_strtof_or_strtod_cannot_hold(size, text, message):
    with pytest.raises(EvaluationError) as caught:
        model(f'.decl r(x: float)\nr(to_float("{text}")).\n', size)
    assert caught.value.code == "type_error" and message in caught.value.message
    assert model('.decl r(x: float)\nr(to_float("1e38")).\n', size)["r"] == {(c_real(size, 1e38),)}


def test_fact_files_beyond_a_single_are_refused_at_32(tmp_path):
    (tmp_path / "v.facts").write_text("3.4028235e38\n3.5e38\n")
    path = tmp_path / "v.dl"
    path.write_text(".decl v(x: float)\n.input v\n")
    with pytest.raises(ProgramError) as caught:
        load_program(path, fact_dir=tmp_path)
    assert caught.value.position.line == 2 and "'3.5e38' is not a float" in caught.value.message
    assert sorted(load_program(path, fact_dir=tmp_path, domain_size=64).fact_tables()["v"].rows) == [
        (3.4028235e38,), (3.5e38,)]
