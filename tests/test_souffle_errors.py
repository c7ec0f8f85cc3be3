"""What Soufflé refuses is refused here too: each class of error, its code and its position.

Every program is a small Soufflé program written as a file and run through the real
command (``polygraph eval FILE -D OUT``): it must exit 2 with ``FILE:LINE:COL: code: ...``
on standard error and no traceback. The line and column are those of the construct
Soufflé would point at, counted by hand in the texts below.
"""

from __future__ import annotations

import pytest

from polygraph_logic.cli import main

# name -> (program, code, line, column, a word the message must hold)
CASES = {
    "ungrounded variable in a negation": (
        ".decl a(x: number)\n.decl c(x: number, y: number)\n.decl b(x: number)\n.output b\n"
        "b(x) :- a(x), !c(x, y).\n",
        "unbound_variable", 5, 21, "_ for any value"),
    "ungrounded repeated variable in a negation": (
        ".decl a(x: number)\n.decl c(x: number, y: number, z: number)\n.decl b(x: number)\n.output b\n"
        "b(x) :- a(x), !c(x, y, y).\n",
        "unbound_variable", 5, 21, "variable y"),
    "ungrounded variable in a negation inside an aggregate": (
        ".decl a(x: number)\n.decl c(x: number, y: number)\n.decl b(n: number)\n.output b\n"
        "b(n) :- a(x), n = count : { c(x, z), !c(z, w) }.\n",
        "unbound_variable", 5, 44, "variable w"),
    "ungrounded variable in the head": (
        ".decl a(x: number)\n.decl b(x: number, y: number)\n.output b\nb(x, y) :- a(x).\n",
        "unbound_variable", 4, 6, "variable y"),
    "ungrounded variable in a comparison": (
        ".decl a(x: number)\n.decl b(x: number)\n.output b\nb(x) :- a(x), y > 3.\n",
        "unbound_variable", 4, 15, "variable y"),
    "ungrounded variable in an aggregate": (
        ".decl a(x: number)\n.decl b(x: number)\n.output b\nb(n) :- n = count : { a(y), y < z }.\n",
        "unbound_variable", 4, 33, "variable z"),
    "relation used but not declared": (
        ".decl a(x: number)\n.decl b(x: number)\n.output b\nb(x) :- a(x), c(x).\n",
        "undeclared_relation", 4, 15, ".decl c"),
    "relation negated but not declared": (
        ".decl a(x: number)\n.decl b(x: number)\n.output b\nb(x) :- a(x), !c(x).\n",
        "undeclared_relation", 4, 16, ".decl c"),
    "arity mismatch in a body": (
        ".decl a(x: number)\n.decl b(x: number)\n.output b\nb(x) :- a(x, _).\n",
        "arity_mismatch", 4, 9, "2 argument"),
    "arity mismatch in a head": (
        ".decl a(x: number)\n.decl b(x: number)\n.output b\nb(x, x) :- a(x).\n",
        "arity_mismatch", 4, 1, "2 argument"),
    "symbol compared with a number constant": (
        '.decl a(x: symbol)\n.decl b(x: symbol)\n.output b\nb(x) :- a(x), x = 1.\n',
        "type_error", 4, 17, "a symbol against a number"),
    "symbol compared with a number variable": (
        '.decl a(x: symbol, y: number)\n.decl b(x: symbol)\n.output b\nb(x) :- a(x, y), x != y.\n',
        "type_error", 4, 20, "a symbol against a number"),
    "string function compared with arithmetic": (
        '.decl a(x: symbol, y: number)\n.decl b(x: symbol)\n.output b\nb(x) :- a(x, y), cat(x, "a") = y + 1.\n',
        "type_error", 4, 30, "a symbol against a number"),
    "number compared with a float variable": (
        '.decl a(x: number, y: float)\n.decl b(x: number)\n.output b\nb(x) :- a(x, y), x < y.\n',
        "type_error", 4, 20, "a number against a float"),
    "number compared with a float constant": (
        '.decl a(x: number)\n.decl b(x: number)\n.output b\nb(x) :- a(x), x < 1.5.\n',
        "type_error", 4, 17, "a number against a float"),
    "number constant in a symbol column": (
        ".decl a(x: symbol)\n.output a\na(1).\n",
        "type_error", 3, 1, "not a symbol"),
    "symbol constant in a number column of a rule": (
        '.decl a(x: number)\n.decl b(x: number)\n.output b\nb(x) :- a(x), a("one").\n',
        "type_error", 4, 15, "not a number"),
    "variable used as a symbol and a number": (
        ".decl a(x: symbol)\n.decl n(x: number)\n.decl b(x: symbol)\n.output b\nb(x) :- a(x), n(x).\n",
        "type_error", 5, 17, "variable x"),
    "duplicate declaration": (
        ".decl a(x: number)\n.decl a(x: number)\n.output a\n",
        "duplicate_declaration", 2, 7, "declared twice"),
    "output of an undeclared relation": (
        ".decl a(x: number)\na(1).\n.output zz\n",
        "undeclared_relation", 3, 9, "zz"),
    "negation in a cycle": (
        ".decl a(x: number)\n.decl b(x: number)\n.decl c(x: number)\n.output b\n"
        "b(x) :- a(x), !c(x).\nc(x) :- a(x), !b(x).\n",
        "cyclic_negation", 5, 15, "not stratifiable"),
}


# patterns Python's re reads and std::regex (ECMAScript) refuses: each warned about at load
REFUSED_PATTERNS = ["(?<=a)b", "(?<!a)b", "(?i)abc", "(?P<n>x)", "(?>ab)", "(?#c)x", "a++", "a*+", "a{2}+",
                    "x{,3}", "x{3", "(a", "a)", "[z-a]", "*a", "[a-", "[[:digits:]]+", "a(b"]


@pytest.mark.parametrize("pattern", REFUSED_PATTERNS)
def test_a_constant_pattern_std_regex_refuses_makes_match_and_its_negation_false(pattern, tmp_path, capsys):
    # Soufflé (interpreter/Generator.cpp) warns "wrong pattern provided" when it loads the
    # program, even for a rule that never runs, and then match and !match are both false
    program = tmp_path / "prog.dl"
    program.write_text('.decl a(x: symbol)\na("abc").\n.decl b(x: symbol)\n.output b\nb(x) :- a(x), match("'
                       + pattern + '", x).\nb(x) :- a(x), !match("' + pattern
                       + '", x).\n.decl c(x: symbol)\nc(x) :- c(x), match("' + pattern + '", x).\n',
                       encoding="utf-8")
    assert main(["eval", str(program), "-D", str(tmp_path / "out")]) == 0
    warnings = capsys.readouterr().err.strip().splitlines()
    assert [w.split(": warning")[0] for w in warnings] == [f"{program}:{n}:{c}" for n, c in ((5, 15), (6, 16), (8, 15))]
    assert all(f'warning: wrong pattern provided "{pattern}" for match' in w for w in warnings), warnings
    assert (tmp_path / "out" / "b.csv").read_text(encoding="utf-8") == ""


def test_an_unknown_letter_escape_is_the_letter_and_lazy_repetitions_are_kept(tmp_path, capsys):
    # std::regex reads \A, \Z, \k as the letters A, Z, k (Python's re would read anchors or refuse)
    program = tmp_path / "prog.dl"
    program.write_text('.decl a(x: symbol)\na("xAy").\na("xy").\na("Zk").\na("aab").\n'
                       '.decl b(x: symbol)\n.output b\n'
                       'b(x) :- a(x), match("x\\\\Ay", x).\nb(x) :- a(x), match("\\\\Z\\\\k", x).\n'
                       'b(x) :- a(x), match("a+?b", x).\n', encoding="utf-8")
    assert main(["eval", str(program), "-D", str(tmp_path)]) == 0
    assert sorted((tmp_path / "b.csv").read_text(encoding="utf-8").splitlines()) == ["Zk", "aab", "xAy"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_souffle_error_is_reported_with_its_position(name, tmp_path, capsys):
    text, code, line, column, word = CASES[name]
    program = tmp_path / "prog.dl"
    program.write_text(text, encoding="utf-8")
    status = main(["eval", str(program), "-D", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    first = err.strip().splitlines()[0]
    assert first.startswith(f"{program}:{line}:{column}: {code}: "), first
    assert word in first


def test_a_bad_pattern_computed_at_run_time_makes_the_match_false_with_a_warning(tmp_path, capsys):
    # Soufflé: "warning: wrong pattern provided for match(...)" on standard error, the match false
    program = tmp_path / "prog.dl"
    program.write_text('.decl a(x: symbol)\na("[a-").\na("a.c").\na("x*").\n.decl b(x: symbol)\n.output b\n'
                       'b(x) :- a(x), match(x, "abc").\n', encoding="utf-8")
    status = main(["eval", str(program), "-D", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 0
    assert (tmp_path / "b.csv").read_text(encoding="utf-8") == "a.c\n"
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith(f'{program}:7:15: warning: wrong pattern provided "[a-" for match')


def test_without_declarations_a_variable_only_in_a_negation_stays_existential(tmp_path, capsys):
    program = tmp_path / "prog.dl"
    program.write_text("a(1).\na(2).\nc(1, 5).\nb(x) :- a(x), !c(x, y).\n", encoding="utf-8")
    assert main(["eval", str(program), "--semiring", "boolean", "--json"]) == 0
    assert '"b": [\n    [\n      2\n    ]\n  ]' in capsys.readouterr().out


def test_wildcards_in_negations_and_matching_types_are_accepted(tmp_path, capsys):
    program = tmp_path / "prog.dl"
    program.write_text('.decl a(x: symbol, n: number)\na("p", 1).\na("q", 2).\n.decl c(x: symbol, y: number)\n'
                       'c("q", 7).\n.decl b(x: symbol)\n.output b\n'
                       'b(x) :- a(x, n), !c(x, _), x != "z", n < strlen(x) + 1, to_string(n) = "1", '
                       'to_float(n) < 2.5, n * 2 > 1.\n',
                       encoding="utf-8")
    assert main(["eval", str(program), "-D", str(tmp_path)]) == 0
    assert (tmp_path / "b.csv").read_text(encoding="utf-8") == "p\n"
