"""Values as Soufflé reads, computes and writes them (issue 40, wrong answers): floats of its
64-bit build (doubles, ``%.17g``: these tests run at ``domain_size=64``; the 32-bit build's
singles are in tests/test_domain.py), integer constants typed by their place, ``match`` as ``std::regex`` reads it,
strings as bytes, nullary results. The programs with expected files are in tests/souffle/
(floats, obo_taxa, nullary); these tests pin the cases a file cannot show or that depend
on the machine (the sign of a NaN)."""

from __future__ import annotations

import math
import struct

import pytest

from polygraph_logic.cli import main
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.program import load_program, parse_program
from polygraph_logic.datalog.values.regex import translate
from polygraph_logic.datalog.souffle_output import format_row
from polygraph_logic.errors import EvaluationError, ProgramError


def facts(text: str, relation: str, semiring: str = "boolean") -> set[tuple]:
    return set(evaluate(parse_program(text, domain_size=64), semiring).facts(relation))


def nan(sign: int) -> float:
    return struct.unpack(">d", bytes([0xFF if sign < 0 else 0x7F, 0xF8, 0, 0, 0, 0, 0, 0]))[0]


# --- writing floats -------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (0.0009765625, "0.0009765625"),  # what %g's six digits cut to 0.000976562
    (0.1, "0.10000000000000001"),  # 17 significant digits, not the shortest text
    (0.1 + 0.2, "0.30000000000000004"),
    (3.0, "3"), (100.0, "100"), (1e16, "10000000000000000"), (1e17, "1e+17"), (1e20, "1e+20"),
    (1e-5, "1.0000000000000001e-05"), (5e-324, "4.9406564584124654e-324"),
    (-0.0, "-0"), (math.inf, "inf"), (-math.inf, "-inf"), (nan(1), "nan"), (nan(-1), "-nan"),
])
def test_floats_are_written_as_printf_17g(value, text):
    with domain.using(64):
        assert format_row((value,), "\t") == text
        assert format_row(("s", 2, value), ",") == f"s,2,{text}"


def test_to_string_of_a_float_is_std_to_string():
    assert [domain.fixed_text(v) for v in (0.0009765625, 1e20, -0.0, nan(-1))] == [
        "0.000977", "100000000000000000000.000000", "-0.000000", "-nan"]
    got = facts(".decl s(t: symbol)\ns(to_string(x)) :- x = 1.0 / 3.", "s")
    assert got == {("0.333333",)}


def test_the_stdout_table_writes_floats_as_the_files_do(tmp_path, capsys):
    program = tmp_path / "f.dl"
    program.write_text('.decl r(x: float)\n.output r\nr(0.1). r(7 / 2). r(x) :- x = 2.0 ^ 0.5.\n')
    assert main(["eval", str(program), "-D", "-", "--domain-size", "64"]) == 0
    assert capsys.readouterr().out == ("---------------\nr\n===============\n0.10000000000000001\n"
                                       "1.4142135623730951\n3.5\n===============\n")


# --- computing with floats ------------------------------------------------------------------

def test_float_arithmetic_follows_c_doubles():
    text = (".decl r(k: symbol, x: float)\n"
            'r("a", 1.0 / 0). r("b", -2.5 / 0). r("c", 0.0 / 0). r("d", (-8.0) ^ 0.5). '
            'r("e", 10.0 ^ 400.0). r("f", (-10.0) ^ 401.0). r("g", 0.0 ^ -1.0). r("h", 1e300 * 1e300).'
            .replace("1e300", "1" + "0" * 300 + ".0"))
    got = dict(facts(text, "r"))
    assert got["a"] == math.inf and got["b"] == -math.inf and got["e"] == math.inf
    assert got["f"] == -math.inf and got["g"] == math.inf and got["h"] == math.inf
    assert math.isnan(got["c"]) and math.isnan(got["d"])


def test_integer_arithmetic_errors_are_errors_not_crashes():
    with pytest.raises(EvaluationError) as caught:
        facts("r(x) :- x = 0 ^ -1.", "r")
    assert caught.value.code == "division_by_zero"
    with pytest.raises(EvaluationError) as caught:
        facts("n(1.5). r(x) :- n(y), x = y * (10 ^ 400).", "r")
    assert caught.value.code == "too_large"


def test_integer_constants_in_float_places_are_floats():
    text = (".decl n(x: number)\n.decl f(x: float)\n.decl r(k: symbol, x: float)\n.decl q(x: number)\n"
            '.decl s(t: symbol)\nn(7). f(7). r("const", 7 / 2). r("assign", x) :- x = 1 / 4. '
            'r("min", x) :- x = min(1, 2) / 4. '
            'r("agg", x) :- x = sum y : { f(y) } / 2. r("cast", x) :- n(y), x = to_float(y / 2). '
            "q(x) :- n(y), x = y / 2. s(to_string(x)) :- x = 7 / 2, r(_, x).")
    model = evaluate(parse_program(text, domain_size=64), "boolean")
    assert set(model.facts("r")) == {("const", 3.5), ("assign", 0.25), ("min", 0.25), ("agg", 3.5),
                                     ("cast", 3.0)}
    assert set(model.facts("q")) == {(3,)}  # a number stays a number
    assert set(model.facts("s")) == {("3.500000",)}
    assert facts("r(x) :- x = 7 / 2.", "r") == {(3,)}  # without declarations nothing is typed


def test_a_sum_of_floats_does_not_depend_on_the_order_of_the_facts():
    values = [1e16, 1.0, -1e16, 1.0, 3.0]  # sequential sums differ by order: 4.0, 2.0, 0.0, ...
    rules = ".decl r(i: number, v: float)\n.decl s(x: float)\ns(x) :- x = sum v : r(_, v).\n"
    forward = " ".join(f"r({i}, {v!r})." for i, v in enumerate(values))
    backward = " ".join(f"r({i}, {v!r})." for i, v in reversed(list(enumerate(values))))
    forward, backward = (t.replace("1e+16", "10000000000000000.0") for t in (forward, backward))
    got = facts(rules + forward, "s")
    assert got == facts(rules + backward, "s")
    total = 0.0
    for v in values:  # in the order of r's rows: by i
        total += v
    assert got == {(total,)}


# --- reading floats -------------------------------------------------------------------------

def _read(tmp_path, content: str):
    (tmp_path / "v.facts").write_text(content)
    program = tmp_path / "v.dl"
    program.write_text(".decl v(x: float)\n.input v\n")
    return load_program(program, fact_dir=tmp_path, domain_size=64)


def test_fact_files_read_floats_as_strtod_does(tmp_path):
    program = _read(tmp_path, "0x1p-3\n-0x1.8p1\n 2.5\ninf\n-0.0\n3\n")
    rows = sorted(program.fact_tables()["v"].rows)
    assert rows == [(-3.0,), (-0.0,), (0.125,), (2.5,), (3.0,), (math.inf,)]


@pytest.mark.parametrize("bad", ["1_000.5", "2.5 ", "1e400", "0x", "abc"])
def test_fact_files_refuse_what_strtod_does_not_read(tmp_path, bad):
    with pytest.raises(ProgramError) as caught:
        _read(tmp_path, f"1.5\n{bad}\n")
    assert caught.value.code == "type_error" and caught.value.position.line == 2


# --- match as std::regex reads it; strings as bytes -----------------------------------------

@pytest.mark.parametrize("pattern, text, matched", [
    ("NCBITaxon_[[:digit:]]+", "NCBITaxon_9606", True),
    ("NCBITaxon_[[:digit:]]+", "NCBITaxon_96x6", False),
    ("[^[:alpha:]_]+", "12-3", True), ("[^[:alpha:]_]+", "1_2", False),
    ("[[:upper:]][[:lower:]]+ [[:alnum:]]+", "Homo sapiens2", True),
    ("[[:space:]]*x[[:punct:]]", " \tx!", True), ("[[:xdigit:]]+", "09afAF", True),
    ("[[:w:]]+", "a_1", True), ("[[=a=]]b", "ab", True), ("[[.-.]]", "-", True),
    ("a[]b", "ab", False), ("a[^]b", "a\nb", True), ("[[]", "[", True), ("[a&&b]+", "a&b", True),
    ("a.c", "a\nc", False), ("a.c", "a\rc", False), ("ab$", "ab\n", False), ("\\d+", "١٢", False),
    ("h.llo", "héllo", False), ("h..llo", "héllo", True),  # "é" is two bytes, as std::regex sees it
    ("\\x41\\cJ", "A\n", True), ("\\u0041", "A", True), ("\\u00e9", "é", False),
])
def test_match_reads_patterns_as_std_regex(pattern, text, matched):
    program = ".decl t(s: symbol)\n.decl m(s: symbol)\nm(s) :- t(s), match(" + _quote(pattern) + ", s).\n"
    assert facts(program + f"t({_quote(text)}).", "m") == ({(text,)} if matched else set())


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") \
        .replace("\r", "\\r") + '"'


def test_a_bad_posix_class_is_a_warning_at_the_match_and_the_match_is_false(capsys):
    assert facts('t("a").\nm(s) :- t(s), match("[[:digits:]]", s).\nm(s) :- t(s), !match("[[:digits:]]", s).',
                 "m") == set()
    assert "2:15: warning: wrong pattern provided \"[[:digits:]]\" for match" in capsys.readouterr().err
    assert translate("[[:digit:]].$") == "[0-9][^\\n\\r]\\Z"


def test_strlen_and_substr_count_bytes_as_souffle_does(tmp_path):
    text = ('.decl r(n: number, a: symbol, b: symbol, c: symbol)\n.output r\n'
            'r(strlen("héllo"), substr("héllo", 0, 2), substr("héllo", 1, 2), substr("abc", 1, -1)).\n')
    (tmp_path / "s.dl").write_text(text, encoding="utf-8")
    assert main(["eval", str(tmp_path / "s.dl"), "-D", str(tmp_path)]) == 0
    assert (tmp_path / "r.csv").read_bytes() == "6\th\\xc3\té\tbc\n".encode().replace(b"\\xc3", b"\xc3")


# --- nullary results --------------------------------------------------------------------------

def test_printsize_counts_a_nullary_relation_that_holds_as_one(tmp_path, capsys):
    program = tmp_path / "n.dl"
    program.write_text(".decl e(x: number)\n.decl holds()\n.decl fails()\n.printsize holds\n"
                       ".printsize fails\n.output holds\n.output fails\ne(1).\nholds() :- e(1).\n"
                       "fails() :- e(2).\n")
    assert main(["eval", str(program), "-D", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "holds\t1\nfails\t0\n"
    assert (tmp_path / "holds.csv").read_bytes() == b"()\n"
    assert (tmp_path / "fails.csv").read_bytes() == b""
