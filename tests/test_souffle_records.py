"""Records and ADTs as Souffle defines them: values, patterns, fact files, output, errors, provenance.

The programs tests/souffle/records and tests/souffle/adts run in test_souffle_programs.py;
here their expected files are computed again by plain Python (souffle_oracles.py), and
the parts are checked one by one: the text of values read and written back (hypothesis
round trips), lists walked by rules against Python, errors with file, line and column,
provenance under why, JSON and the SQL engines' refusal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main
from polygraph_logic.datalog.checks.declarations import Declarations
from polygraph_logic.datalog.evaluate import evaluate, tuple_key
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.program import parse_program
from polygraph_logic.datalog.reading.record_text import RecordTextError, read_value
from polygraph_logic.datalog.values.record_values import NIL, Branch, Record
from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.reading.souffle_input import c_float_text
from polygraph_logic.errors import PolygraphError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import souffle_oracles  # noqa: E402

FOLDER = Path(__file__).parent / "souffle"


@pytest.mark.parametrize("name", ["records", "adts"])
def test_expected_files_equal_a_plain_python_computation(name, tmp_path, capsys):
    here = FOLDER / name
    computed = getattr(souffle_oracles, name)(here / "facts")
    sizes = {k.split()[0]: v for k, v in computed.items() if k.endswith(" size")}
    files = {k: v for k, v in computed.items() if not k.endswith(" size")}
    assert files == {p.stem: p.read_text() for p in (here / "expected").iterdir()}
    assert main(["eval", str(here / f"{name}.dl"), "-F", str(here / "facts"), "-D", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert printed == "".join(f"{rel}\t{n}\n" for rel, n in sizes.items())


def test_records_print_to_stdout_as_souffle_writes_them(capsys):
    here = FOLDER / "records"
    assert main(["eval", str(here / "records.dl"), "-F", str(here / "facts"), "-D", "-"]) == 0
    out = capsys.readouterr().out
    assert "---------------\nfull\n===============\n[1, [2, [3, [4, [5, nil]]]]]\n===============\n" in out
    assert "[[0, 0], [3, 0]]\t0\n" in out and "[bob , nil]\n" in out and "\nsuffix\t6\n" in out



def test_a_record_compared_with_nil_or_a_record_value_is_no_type_error(tmp_path, capsys):
    """The comparison type check (souffle_checks) leaves records to record_types: ``l = nil``
    and ``l != [1, nil]`` compare a List with a List, as Soufflé accepts them."""
    program = tmp_path / "nil.dl"
    program.write_text(".type List = [head: number, tail: List]\n.decl l(x: List)\n.decl empty(x: List)\n"
                       ".decl other(x: List)\nl(nil). l([1, nil]). l([2, nil]).\n"
                       "empty(x) :- l(x), x = nil.\nother(x) :- l(x), x != [1, nil], x != nil.\n"
                       ".output empty, other\n")
    assert main(["eval", str(program), "-D", "-"]) == 0
    out = capsys.readouterr().out
    assert "empty\n===============\nnil\n===============\n" in out
    assert "other\n===============\n[2, nil]\n===============\n" in out

# --- values: read, written, compared -------------------------------------------------------
TYPES = """
.type Pair = [left: number, right: symbol]
.type Tree = Leaf {value: float} | Node {left: Tree, right: Tree} | Empty {}
.type Box = [pair: Pair, tree: Tree, next: Box, count: unsigned]
"""


def _structures():
    return Declarations.collect(c for c in parse_clauses(TYPES) if not hasattr(c, "head")).structures


symbols = st.text(st.characters(blacklist_characters='"\\,])\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0',
                                blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=6)
floats = st.floats(allow_nan=False, allow_infinity=False)
trees = st.recursive(st.just(Branch("Empty")) | floats.map(lambda f: Branch("Leaf", (f,))),
                     lambda inner: st.tuples(inner, inner).map(lambda lr: Branch("Node", lr)), max_leaves=6)
pairs = st.just(NIL) | st.tuples(st.integers(-10 ** 12, 10 ** 12), symbols).map(Record)
boxes = st.recursive(st.just(NIL), lambda inner: st.tuples(pairs, trees, inner, st.integers(0, 2 ** 40)).map(Record),
                     max_leaves=4)


@settings(max_examples=150, deadline=None)
@given(boxes)
def test_a_value_written_reads_back_equal(box):
    """Round trip: the text a value is written as (Souffle's) is read back to the same value
    (doubles and integers beyond 32 bits: at the domain size 64)."""
    with domain.using(64):
        assert read_value(str(box), "Box", _structures(), c_float_text) == box


@settings(max_examples=100, deadline=None)
@given(boxes, boxes)
def test_records_are_equal_when_their_structure_is_and_sort_consistently(a, b):
    def plain(v):  # an independent model: nested Python lists, None for nil
        if v is NIL:
            return None
        if isinstance(v, Branch):
            return ["$" + v.name, [plain(x) for x in v.args]]
        if isinstance(v, Record):
            return [plain(x) for x in v]
        return v

    assert (a == b) == (plain(a) == plain(b)) == (str(a) == str(b))
    assert (hash(a) == hash(b)) or a != b
    ka, kb = tuple_key((a,)), tuple_key((b,))
    assert (ka == kb) == (a == b)


@pytest.mark.parametrize("text, kind, value", [
    ("nil", "Box", NIL),
    ("  [ 7 ,  a b ]", "Pair", Record((7, "a b "))),
    ('[-3, "x, \\"y\\"]"]', "Pair", Record((-3, 'x, "y"]'))),
    ("$Node($Leaf(0.5), $Empty)", "Tree", Branch("Node", (Branch("Leaf", (0.5,)), Branch("Empty")))),
    ("$Leaf( 1e3 )", "Tree", Branch("Leaf", (1000.0,))),
])
def test_fact_text_is_read_as_souffle_reads_it(text, kind, value):
    assert read_value(text, kind, _structures(), c_float_text) == value


@pytest.mark.parametrize("text, kind, fragment", [
    ("[1, a", "Pair", "not closed"),
    ("[1]", "Pair", "','"),
    ("[1, a, b]", "Pair", "after the 2 field(s)"),
    ("$Twig(1)", "Tree", "no constructor of Tree"),
    ("$Empty()", "Tree", "unexpected '()'"),
    ("[x, a]", "Pair", "is not a number"),
])
def test_bad_fact_text_says_what_was_expected(text, kind, fragment):
    with pytest.raises(RecordTextError) as error:
        read_value(text, kind, _structures(), c_float_text)
    assert fragment in str(error.value)


def test_a_bad_record_in_a_fact_file_is_an_error_with_file_and_line(tmp_path, capsys):
    (tmp_path / "p.dl").write_text(".type P = [x: number, y: number]\n.decl p(a: P)\n.input p\n.output p\n")
    (tmp_path / "p.facts").write_text("[1, 2]\n[1, 2, 3]\n")
    assert main(["eval", str(tmp_path / "p.dl"), "-F", str(tmp_path), "-D", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert f"{tmp_path / 'p.facts'}:2:1: type_error: '[1, 2, 3]' is not a value of P" in err
    assert "Traceback" not in err


# --- lists walked by rules, against Python --------------------------------------------------
LIST_PROGRAM = """
.type List = [head: number, tail: List]
.decl list(name: symbol, l: List)
.input list
.decl suffix(name: symbol, l: List)
suffix(n, l) :- list(n, l).
suffix(n, t) :- suffix(n, [_, t]).
.decl total(name: symbol, l: List, s: number)
total(n, nil, 0) :- list(n, _).
total(n, l, h + s) :- suffix(n, l), l = [h, t], total(n, t, s).
.decl summed(name: symbol, s: number)
.output summed
summed(n, s) :- list(n, l), total(n, l, s).
.decl reversed(name: symbol, rest: List, acc: List)
reversed(n, l, nil) :- list(n, l).
reversed(n, t, [h, acc]) :- reversed(n, [h, t], acc).
.decl reverse(name: symbol, r: List)
.output reverse
reverse(n, r) :- reversed(n, nil, r).
"""


def _as_record(items):
    value = NIL
    for item in reversed(items):
        value = Record((item, value))
    return value


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(-100, 100), max_size=6), min_size=1, max_size=4))
def test_lists_walked_by_rules_sum_and_reverse_as_python_does(lists):
    text = "".join(f"l{i}\t{_as_record(items)}\n" for i, items in enumerate(lists))
    with TemporaryDirectory() as folder:
        (Path(folder) / "list.facts").write_text(text)
        (Path(folder) / "prog.dl").write_text(LIST_PROGRAM)
        assert main(["eval", str(Path(folder) / "prog.dl"), "-F", folder, "-D", folder]) == 0
        sums = (Path(folder) / "summed.csv").read_text()
        reverses = (Path(folder) / "reverse.csv").read_text()
    expected_sums = sorted((f"l{i}", sum(items)) for i, items in enumerate(lists))
    assert sums == "".join(f"{n}\t{s}\n" for n, s in expected_sums)
    expected = sorted(f"l{i}\t{_souffle_list(list(reversed(items)))}" for i, items in enumerate(lists))
    assert reverses == "".join(line + "\n" for line in expected)


def _souffle_list(items) -> str:
    text = "nil"
    for item in reversed(items):
        text = f"[{item}, {text}]"
    return text


# --- errors with file, line and column ------------------------------------------------------
ERRORS = [
    ('.type P = [x: number, y: number]\n.decl p(a: P)\n.decl q(x: number)\nq(x) :- p([x]).\n',
     "4:11", "arity_mismatch", "the record [x] has 1 field(s), but P has 2"),
    ('.type P = [x: number, y: Nope]\n.decl p(a: P)\n', "1:26", "type_error", "type Nope is not declared"),
    ('.type E = A {x: number} | B {}\n.decl p(a: E)\n.decl q(a: E)\nq(x) :- p(x), x = $C(1).\n',
     "4:19", "type_error", "unknown constructor $C (constructors: $A, $B)"),
    ('.type E = A {x: number} | B {}\n.decl p(a: E)\np($C(1)).\n', "3:3", "type_error", "unknown constructor $C"),
    ('p($A(1)).\n', "1:3", "type_error", "unknown constructor $A (constructors: none is declared)"),
    ('.type E = A {x: number} | B {}\n.decl p(a: E)\n.decl q(x: number)\nq(x) :- p($A(x, 2)).\n',
     "4:11", "arity_mismatch", "$A takes 1 argument(s) (A {x: number}), not 2"),
    ('.decl p(a: number)\n.decl q(a: number)\nq(1) :- p([1]).\n', "3:11", "type_error",
     "the record [1] stands where a number is expected"),
    ('.type P = [x: number]\n.decl p(a: P)\n.decl q(a: P)\nq(a) :- p(a), p(b), a < b.\n', "4:23", "type_error",
     "records and ADT values compare only with = and !=, not <"),
    ('.type P = [x: number]\n.decl p(a: P)\n.decl q(a: P)\nq([_]) :- p(a).\n', "4:4", "unsupported_pattern",
     "'_' inside a record or ADT value in a rule head: the value is built there"),
    ('.type P = [x: number, y: number]\n.decl p(a: P)\n.decl q(a: number)\nq(x) :- q(x), !p([x + y, _]).\n',
     "4:23", "unbound_variable", "variable y in the negation !p([(x + y), _]) is not bound"),
    ('.type P = [x: number, y: symbol]\n.decl p(a: P)\n.decl q(a: number)\nq(y) :- p([_, y]).\n',
     "4:15", "type_error", "variable y is a symbol in [_, y] but a number in q(y)"),
    ('.type E = A {x: number}\n.type F = C {}\n.decl p(a: E)\np($C).\n', "4:1", "type_error",
     "$C is not a value of E"),
    ('.decl p(a: number)\np(nil).\n', "2:1", "type_error", "nil is not a number"),
    ('.type P = [x: number, x: number]\n', "1:26", "syntax_error", "field x is named twice"),
    ('.type E = A {}\n.type F = A {}\n', "2:11", "duplicate_declaration", "constructor A is declared twice"),
    ('.type E = A {} | B\n', "1:18", "syntax_error", "expected '{'"),
    ('.type P = [x: number]\n.decl p(a: P)\np([1, 2]).\n', "3:1", "type_error",
     "the record [1, 2] has 2 field(s), but P has 1"),
]


@pytest.mark.parametrize("text, where, code, message", ERRORS)
def test_bad_programs_are_errors_with_a_position(text, where, code, message, tmp_path, capsys):
    path = tmp_path / "bad.dl"
    path.write_text(text)
    assert main(["eval", str(path), "-D", "-"]) != 0
    err = capsys.readouterr().err
    assert f"{path}:{where}: {code}: " in err and message in err, err
    assert "Traceback" not in err


# --- provenance, JSON, engines --------------------------------------------------------------
def test_a_fact_holding_a_record_has_the_provenance_of_its_derivation():
    program = parse_program('a :: p([1, "x"]).\nb :: p([2, "y"]).\nc :: r(2).\n'
                            "q([y, n]) :- p([n, y]).\ns(y) :- p([n, y]), r(n).\n")
    model = evaluate(program, "why")
    assert model.label("q", (Record(("x", 1)),)).support_sets() == [frozenset({"a"})]
    assert model.label("s", ("y",)).support_sets() == [frozenset({"b", "c"})]
    assert model.label("p", (Record((2, "y")),)).support_sets() == [frozenset({"b"})]


def test_json_writes_records_and_adt_values_as_souffle_text(capsys, tmp_path):
    path = tmp_path / "j.dl"
    path.write_text(".type T = L {n: number} | E {}\n.type R = [n: number, r: R]\n.decl t(x: T, y: T)\n"
                    "t($L(1), $E).\n.decl p(r: R)\np([1, nil]).\n")
    assert main(["eval", str(path), "--json", "--semiring", "boolean"]) == 0
    out = capsys.readouterr().out
    assert '"$L(1)"' in out and '"$E"' in out and '"[1, nil]"' in out


def test_the_sql_engine_refuses_records_by_name():
    pytest.importorskip("duckdb")
    from polygraph_logic.engines import make_plan

    for text, fragment in [
        ('s1 :: e("a", "b").\nf([X, Y]) :- e(X, Y).\n', "it builds or matches records or ADT values"),
        ('.type P = [a: symbol]\n.decl e(x: P)\n.decl f(x: P)\ns1 :: e(["a"]).\nf(X) :- e(X).\n',
         "its relation e has a column of records or ADT values (x: P)"),
    ]:
        with pytest.raises(PolygraphError) as error:
            make_plan(parse_program(text), 8)
        assert error.value.code == "engine_unsupported" and fragment in error.value.message


def test_a_long_list_is_built_walked_and_written_without_deep_recursion(tmp_path, capsys):
    """A list of 5,000 records nests 5,000 deep: built in linear time (hashes are kept), its
    suffixes walked, and written (the writer and the sort key do not recurse)."""
    (tmp_path / "long.dl").write_text(
        ".type List = [head: number, tail: List]\n.decl down(l: List)\ndown([5000, nil]).\n"
        "down([n - 1, [n, t]]) :- down([n, t]), n > 1.\n.decl full(l: List)\n.output full\n"
        "full(l) :- down(l), l = [1, _].\n.decl suffix(l: List)\nsuffix(l) :- full(l).\n"
        "suffix(t) :- suffix([_, t]).\n.printsize suffix\n")
    assert main(["eval", str(tmp_path / "long.dl"), "-D", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "suffix\t5001\n"
    written = (tmp_path / "full.csv").read_text()
    assert written == "".join(f"[{i}, " for i in range(1, 5001)) + "nil" + "]" * 5000 + "\n"


def test_a_fact_nested_deeper_than_the_reader_follows_is_an_error_not_a_crash(tmp_path, capsys):
    text = "nil"
    for i in range(6000):
        text = f"[{i}, {text}]"
    (tmp_path / "l.facts").write_text(text + "\n")
    (tmp_path / "p.dl").write_text(".type L = [h: number, t: L]\n.decl l(x: L)\n.input l\n.printsize l\n")
    assert main(["eval", str(tmp_path / "p.dl"), "-F", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "l.facts:1:1: type_error: " in err and "nests deeper than this reader follows" in err


# --- pattern matching against a Python unifier -----------------------------------------------
# values: integers and records of them (tuples), nil as None; patterns add variables
# ("x", "y", "z", repeated at will), "_" and integer constants
values = st.recursive(st.integers(0, 2) | st.just(None),
                      lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=6)
_parts = st.recursive(st.sampled_from(["x", "y", "z", "_"]) | st.integers(0, 2) | st.just(None),
                      lambda inner: st.lists(inner, min_size=1, max_size=3).map(tuple), max_leaves=6)
patterns = st.lists(_parts, min_size=1, max_size=3).map(tuple)  # a record pattern at the top


def _unify(pattern, value, binding: dict) -> bool:
    if pattern == "_":
        return True
    if isinstance(pattern, str):
        if pattern in binding:
            return binding[pattern] == value
        binding[pattern] = value
        return True
    if isinstance(pattern, tuple):
        return (isinstance(value, tuple) and len(value) == len(pattern)
                and all(_unify(p, v, binding) for p, v in zip(pattern, value)))
    return pattern == value and type(pattern) is type(value)


def _dl(term) -> str:
    if term is None:
        return "nil"
    if isinstance(term, tuple):
        return "[" + ", ".join(map(_dl, term)) + "]"
    return str(term)


def _to_python(value):
    if value is NIL:
        return None
    if isinstance(value, Record):
        return tuple(map(_to_python, value))
    return value


def _names_in(pattern) -> list[str]:
    if isinstance(pattern, tuple):
        return [n for p in pattern for n in _names_in(p)]
    return [pattern] if isinstance(pattern, str) and pattern != "_" else []


def _instance(pattern, binding: dict, draw):
    """A value the pattern matches (``binding`` fixes its variables), or, now and then, one
    that differs from it in one place."""
    if pattern == "_":
        return draw(values)
    if isinstance(pattern, str):
        return binding[pattern] if draw(st.integers(0, 9)) else draw(values)
    if isinstance(pattern, tuple):
        return tuple(_instance(p, binding, draw) for p in pattern)
    return pattern


@settings(max_examples=120, deadline=None)
@given(patterns, st.data())
def test_patterns_match_as_a_python_unifier_does_in_atoms_and_in_equalities(pattern, data):
    instances = st.fixed_dictionaries({n: values for n in "xyz"}).map(
        lambda binding: _instance(pattern, binding, data.draw))
    facts = data.draw(st.lists(values | instances, min_size=1, max_size=6))
    names = sorted(set(_names_in(pattern)))
    expected = set()
    for value in facts:
        binding: dict = {}
        if _unify(pattern, value, binding):
            expected.add(tuple(binding[n] for n in names))
    head = f"m({', '.join(names)})" if names else "m()"
    text = "".join(f"f({_dl(v)}).\n" for v in facts)
    rules = [f"{head} :- f({_dl(pattern)}).", f"{head} :- f(r), r = {_dl(pattern)}.",
             f"{head} :- f(r), {_dl(pattern)} = r."]
    if names and "_" not in repr(pattern):  # every variable bound first: the record is built, then looked up
        rules.append(f"{head} :- b({', '.join(names)}), f({_dl(pattern)}).")
        text += "".join(f"b({', '.join(_dl(v) for v in row)}).\n" for row in expected)
    for rule in rules:
        model = evaluate(parse_program(text + rule + "\n"), "boolean")
        found = {tuple(map(_to_python, t)) for t in model.facts("m")} if "m" in model.relations() else set()
        assert found == expected, rule


def test_integers_in_float_fields_are_floats_as_souffle_types_them(tmp_path, capsys):
    """``[1, 2]`` of ``[v: float, n: number]`` holds 1.0: ``v / 2`` is 0.5, not 0 (written ``1``
    all the same, as %.17g writes 1.0), in facts, heads, ADT arguments and ``r = [1, n]``."""
    (tmp_path / "f.dl").write_text(
        ".type F = [v: float, n: number]\n.type G = W {f: F} | K {x: float}\n.decl p(a: F)\n.output p\n"
        "p([1, 2]).\np([3, 4]) :- p([1, _]).\n.decl g(a: G)\ng($W([5, 1])).\ng($K(7)).\n"
        ".decl half(x: float)\n.output half\nhalf(y) :- p([x, _]), y = x / 2.\nhalf(y) :- g($K(x)), y = x / 2.\n"
        "half(y) :- g($W([x, _])), y = x / 2.\n.decl eq(n: number)\n.output eq\neq(n) :- p(r), r = [1, n].\n")
    assert main(["eval", str(tmp_path / "f.dl"), "-D", str(tmp_path)]) == 0
    assert (tmp_path / "half.csv").read_text() == "0.5\n1.5\n2.5\n3.5\n"
    assert (tmp_path / "p.csv").read_text() == "[1, 2]\n[3, 4]\n"
    assert (tmp_path / "eq.csv").read_text() == "2\n"


@settings(max_examples=100, deadline=None)
@given(patterns, st.data())
def test_negated_patterns_hold_when_no_fact_unifies_as_python_says(pattern, data):
    """``k(x) :- d(x), !f(PATTERN).``: x comes from d; _, y and z inside the pattern stand for any
    value (the same one where they repeat); k(x) holds when no fact unifies with the pattern."""
    if "x" not in _names_in(pattern):
        pattern = pattern + ("x",)
    instances = st.fixed_dictionaries({n: values for n in "xyz"}).map(
        lambda binding: _instance(pattern, binding, data.draw))
    facts = data.draw(st.lists(values | instances, min_size=1, max_size=6))
    domain = data.draw(st.lists(values, min_size=1, max_size=4))
    expected = {x for x in domain if not any(_unify(pattern, f, {"x": x}) for f in facts)}
    text = "".join(f"f({_dl(v)}).\n" for v in facts) + "".join(f"d({_dl(v)}).\n" for v in domain)
    model = evaluate(parse_program(text + f"k(x) :- d(x), !f({_dl(pattern)}).\n"), "boolean")
    found = {_to_python(t[0]) for t in model.facts("k")} if "k" in model.relations() else set()
    assert found == expected


def test_an_open_pattern_in_a_negation_runs_under_why(tmp_path):
    program = parse_program(".type P = [x: number, y: number]\n.decl p(a: P)\n.decl n(x: number)\n"
                            ".decl k(x: number)\na :: n(1).\nb :: n(2).\np([1, 5]).\nk(x) :- n(x), !p([x, _]).\n")
    model = evaluate(program, "why")
    assert set(model.facts("k")) == {(2,)}
    assert model.label("k", (2,)).support_sets() == [frozenset({"b"})]


def test_a_free_variable_repeated_in_a_negated_pattern_must_repeat_in_the_value():
    program = parse_program("p([1, 2, 3]).\np([2, 4, 4]).\nn(1).\nn(2).\nn(3).\n"
                            "k(x) :- n(x), !p([x, y, y]).\nj(x) :- n(x), !p([x, _, _]).\n"
                            "i(x) :- n(x), !p([y, x, y]).\n")
    model = evaluate(program, "boolean")
    assert set(model.facts("k")) == {(1,), (3,)}
    assert set(model.facts("j")) == {(3,)}
    assert set(model.facts("i")) == {(1,), (2,), (3,)}


@pytest.mark.parametrize("rules, fragment", [
    ('pair([s, o]) :- edge(s, "RO:0002211", o).\n', "1:1: engine_unsupported: a graph stores symbols and numbers"),
    ("p([1, 2]).\n", "the fact p([1, 2]) holds a record or ADT value"),
])
def test_a_graph_build_refuses_records_by_name(rules, fragment, tmp_path, capsys):
    (tmp_path / "r.dl").write_text(rules)
    assertions = Path(__file__).resolve().parent.parent / "examples" / "figure1" / "assertions.jsonl"
    status = main(["build", "--assertions", str(assertions), "--rules", str(tmp_path / "r.dl"),
                   "-o", str(tmp_path / "g.pg")])
    err = capsys.readouterr().err
    assert status == 2 and fragment in err and "internal_error" not in err


def test_records_holding_the_delimiter_are_read_whole_as_souffle_reads_them(tmp_path, capsys):
    (tmp_path / "r.csv").write_text("[1, 2],a,$S([3, 4], x y)\n[5,6],b,$N\n")
    (tmp_path / "r.dl").write_text(".type P = [x: number, y: number]\n.type T = S {p: P, s: symbol} | N {}\n"
                                   ".decl r(p: P, name: symbol, t: T)\n"
                                   '.input r(filename="r.csv", delimiter=",")\n.output r(delimiter=",")\n')
    assert main(["eval", str(tmp_path / "r.dl"), "-F", str(tmp_path), "-D", str(tmp_path)]) == 0
    assert (tmp_path / "r.csv").read_text() == "[1, 2],a,$S([3, 4], x y)\n[5, 6],b,$N\n"

