"""Souffle's language beyond the core: declarations and their checks, aggregates, disjunction,
parenthesised constraints, existential variables in negation, tracked facts from files,
the fast path for ground facts and the budget. Results are checked against brute force
written here, not against the engine."""

from __future__ import annotations

import itertools
import random

import pytest

from polygraph_logic import evaluate, load_program, parse_program
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError, ProgramError
from polygraph_logic.datalog.reading.parser import parse_clauses


def boolean(text: str, relation: str) -> set[tuple]:
    return set(evaluate(parse_program(text, "p.dl"), "boolean").facts(relation))


# --- declarations --------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, code, line, column, fragment",
    [
        (".decl e(x: symbol)\ne(\"a\").\np(x) :- e(x).", "undeclared_relation", 3, 1, "p is used but not declared"),
        (".decl e(x: symbol)\ne(\"a\", \"b\").", "arity_mismatch", 2, 1, "but with 1 at its .decl at p.dl:1:7"),
        (".decl e(x: number)\ne(1).\ne(\"a\").", "type_error", 3, 1, "'a' is not a number"),
        (".decl e(x: symbol, n: number)\n.decl p(x: symbol)\np(x) :- e(x, _), e(_, x).",
         "type_error", 3, 23, "variable x is a number"),
        (".decl e(x: Unknown)", "type_error", 1, 12, "type Unknown is not declared"),
        (".decl e(x: unsigned)\ne(-1).", "type_error", 2, 1, "is not an unsigned"),
        (".decl e(x: symbol)\n.decl e(y: symbol)", "duplicate_declaration", 2, 7, "declared twice"),
        (".decl e(x: symbol)\n.output f", "undeclared_relation", 2, 9, "has no .decl"),
        (".type A <: symbol\n.type B <: number\n.type C = A | B", "type_error", 3, 7, "mixes number and symbol"),
    ],
)
def test_declaration_errors_name_file_line_and_column(text, code, line, column, fragment):
    with pytest.raises(ProgramError) as caught:
        parse_program(text, "p.dl")
    error = caught.value
    assert (error.code, error.position.file, error.position.line, error.position.column) == (code, "p.dl", line, column)
    assert fragment in error.message


def test_unsupported_directives_are_named():
    with pytest.raises(PolygraphError) as caught:
        parse_program(".decl e(x: symbol)\n.import graph", "p.dl")
    assert caught.value.code == "unsupported_directive" and "'.import'" in caught.value.message


def test_types_resolve_through_subtypes_and_unions_and_floats_accept_integers():
    program = parse_program(".type A <: symbol\n.type B <: A\n.type U = A | B\n"
                            ".decl e(x: U, f: float)\ne(\"a\", 1).\ne(\"b\", 2.5).")
    assert program.declarations.kinds("e") == ("symbol", "float")
    assert sorted(evaluate(program, "boolean").facts("e")) == [("a", 1.0), ("b", 2.5)]


def test_programs_without_declarations_are_not_checked():
    assert boolean('e("a"). e(1). p(x) :- e(x).', "p") == {("a",), (1,)}


# --- .facts files ------------------------------------------------------------------------

def declared(tmp_path, decl: str, files: dict[str, str]):
    (tmp_path / "p.dl").write_text(decl)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return load_program(tmp_path / "p.dl", fact_dir=tmp_path)


@pytest.mark.parametrize(
    "content, code, line, fragment",
    [
        ("a\t1\nb\tx\n", "type_error", 2, "'x' is not an unsigned (column 2"),
        ("a\t1\nb\n", "arity_mismatch", 2, "has 2 column(s)"),
        ("a\t1\n\nb\t-1\n", "type_error", 3, "is not an unsigned"),
    ],
)
def test_fact_file_errors_name_the_file_and_line(tmp_path, content, code, line, fragment):
    with pytest.raises(ProgramError) as caught:
        declared(tmp_path, ".decl e(x: symbol, n: unsigned)\n.input e", {"e.facts": content})
    error = caught.value
    assert (error.code, error.position.line) == (code, line)
    assert error.position.file.endswith("e.facts") and fragment in error.message


def test_a_missing_fact_file_is_an_error_at_the_input_directive(tmp_path):
    with pytest.raises(ProgramError) as caught:
        declared(tmp_path, ".decl e(x: symbol)\n.input e", {})
    assert caught.value.code == "file_error" and caught.value.position.line == 2
    assert "e.facts" in caught.value.message


def test_fact_files_keep_symbols_raw_and_read_hex_numbers(tmp_path):
    program = declared(tmp_path, ".decl e(x: symbol, n: number)\n.input e",
                       {"e.facts": 'say "hi" \\n\t0x10\n  spaced \t-3\n'})
    assert set(evaluate(program, "boolean").facts("e")) == {('say "hi" \\n', 16), ("  spaced ", -3)}


def test_a_provenance_column_tracks_each_fact_under_its_assertion_id(tmp_path):
    rules = "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n"
    from_file = declared(
        tmp_path, ".decl edge(x: symbol, y: symbol)\n.input edge(provenance=1)\n"
        ".decl path(x: symbol, y: symbol)\n" + rules,
        {"edge.facts": "e1\ta\tb\ne2\tb\tc\ne3\ta\tc\n"})
    from_text = parse_program('e1 :: edge("a", "b"). e2 :: edge("b", "c"). e3 :: edge("a", "c").\n' + rules)
    ours, theirs = evaluate(from_file, "why", cap=None), evaluate(from_text, "why", cap=None)
    assert from_file.assertion_ids() == ["e1", "e2", "e3"]
    assert {t: l.support_sets() if hasattr(l, "support_sets") else str(l) for t, l in ours.facts("path").items()} \
        == {t: l.support_sets() if hasattr(l, "support_sets") else str(l) for t, l in theirs.facts("path").items()}
    assert str(ours.label("path", ("a", "c"))) == str(theirs.label("path", ("a", "c")))
    assert "e3" in str(ours.label("path", ("a", "c"))) and "e1" in str(ours.label("path", ("a", "c")))


# --- the fast path for ground facts agrees with the grammar ----------------------------

FACTS_TEXT = r'''// e("commented", 1).
e("a", 1). e("b\"q", -2).   /* e("in block", 3).
   e("still in block", 4). */
x9 :: e("c", 0x1F).  "id:7" :: e("d\n\u00e9", 2.5).
p(x) :-
  e(x, _),
  e("continued", 5).
e("sum", 1 + 2).
z().
'''


def test_fast_path_reads_the_same_facts_as_the_grammar():
    fast = parse_program(FACTS_TEXT, "f.dl")
    slow = [c for c in parse_clauses(FACTS_TEXT, "f.dl") if not hasattr(c, "head")]
    def values(facts):
        return sorted((f.variable or "", f.atom.relation, repr(tuple(getattr(a, "value", a) for a in f.atom.args)))
                      for f in facts)

    slow[slow.index(next(f for f in slow if f.atom.args[-1].__class__.__name__ == "Arithmetic"))] = \
        parse_program('e("sum", 3).').facts[0]
    assert len(values(fast.facts)) == 6
    assert values(fast.facts) == values(slow)
    assert len(fast.rules) == 1 and str(fast.rules[0]) == 'p(x) :- e(x, _), e("continued", 5).'


def test_fast_path_positions_match_the_grammar():
    with pytest.raises(ProgramError) as caught:
        parse_program('e("a").\n  e("b").   e("c", "d").', "f.dl")
    assert (caught.value.position.line, caught.value.position.column) == (2, 13)
    assert "f.dl:1:1" in caught.value.message


# --- aggregates against brute force -----------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_aggregates_agree_with_brute_force(seed):
    rng = random.Random(seed)
    rows = {(rng.choice("abc"), rng.randint(0, 4), rng.randint(-5, 9)) for _ in range(rng.randint(0, 14))}
    facts = " ".join(f'r("{g}", {k}, {v}).' for g, k, v in rows) + ' g("a"). g("b"). g("c"). g("d").'
    text = facts + """
    c(x, n) :- g(x), n = count : { r(x, _, _) }.
    s(x, n) :- g(x), n = sum v : { r(x, _, v) }.
    lo(x, n) :- g(x), n = min v : { r(x, _, v) }.
    hi(x, n) :- g(x), n = max v : r(x, _, v).
    keys(x, n) :- g(x), n = count : { r(x, k, v), v > 0 }.
    """
    model = evaluate(parse_program(text), "boolean")
    groups = "abcd"
    of = {x: [(k, v) for g, k, v in rows if g == x] for x in groups}
    assert set(model.facts("c")) == {(x, len(of[x])) for x in groups}
    assert set(model.facts("s")) == {(x, sum(v for _, v in of[x])) for x in groups}
    assert set(model.facts("lo")) == {(x, min(v for _, v in of[x])) for x in groups if of[x]}
    assert set(model.facts("hi")) == {(x, max(v for _, v in of[x])) for x in groups if of[x]}
    assert set(model.facts("keys")) == {(x, len({(k, v) for k, v in of[x] if v > 0})) for x in groups}


def test_aggregates_must_not_sit_in_recursion():
    with pytest.raises(ProgramError) as caught:
        parse_program("p(1). p(n) :- p(m), n = count : { p(_) }, n < 5.")
    assert caught.value.code == "cyclic_negation" and "aggregates" in caught.value.message


def test_aggregates_over_tracked_facts_are_refused_under_provenance_semirings():
    program = parse_program('a1 :: e("x"). n(c) :- c = count : { e(_) }.', "p.dl")
    assert set(evaluate(program, "boolean").facts("n")) == {(1,)}
    with pytest.raises(ProgramError) as caught:
        evaluate(program, "why")
    assert caught.value.code == "aggregate_over_tracked" and caught.value.position.line == 1
    untracked = parse_program('e("x"). e("y"). n(c) :- c = count : { e(_) }.')
    assert str(evaluate(untracked, "why").label("n", (2,))) == "1"


# --- disjunction, parentheses, existential negation --------------------------------------

def test_disjunction_is_the_union_of_its_branches():
    base = 'a(1). a(2). b(2). b(3). c(3). c(4). '
    ored = boolean(base + "p(x) :- a(x) ; b(x), (x > 2 ; c(x)).", "p")
    split = boolean(base + "p(x) :- a(x). p(x) :- b(x), x > 2. p(x) :- b(x), c(x).", "p")
    assert ored == split == {(1,), (2,), (3,)}


def test_parenthesised_constraints_and_expressions():
    assert boolean("n(1). n(5). n(30). p(x) :- n(x), (x <= 25), (x + 1) * 2 > 5.", "p") == {(5,)}


@pytest.mark.parametrize("seed", range(4))
def test_variables_only_in_a_negation_are_existential(seed):
    rng = random.Random(seed)
    q = {rng.randint(0, 3) for _ in range(4)}
    r = {(rng.randint(0, 3), rng.randint(0, 2), rng.randint(0, 2)) for _ in range(6)}
    facts = " ".join(f"q({x})." for x in q) + " " + " ".join(f"r({a}, {b}, {c})." for a, b, c in r)
    got = boolean(facts + " p(x) :- q(x), !r(x, y, y). w(x) :- q(x), !r(x, _, y).", "p")
    assert got == {(x,) for x in q if not any(a == x and b == c for a, b, c in r)}
    assert boolean(facts + " w(x) :- q(x), !r(x, _, y).", "w") == {(x,) for x in q if not any(a == x for a, *_ in r)}


def test_a_variable_in_a_negation_and_elsewhere_must_still_be_bound():
    with pytest.raises(ProgramError) as caught:
        parse_program("p(x) :- q(x), !r(x, y), y > 2.")
    assert caught.value.code == "unbound_variable"


def test_contains_is_a_relation_when_the_program_defines_one():
    assert boolean('contains("a", "b"). w("b"). p(x) :- w(x), contains("a", x).', "p") == {("b",)}
    assert boolean('w("cab"). w("d"). p(x) :- w(x), contains("a", x).', "p") == {("cab",)}


def test_eqrel_is_an_equivalence():
    got = boolean('.decl e(x: number, y: number) eqrel\ne(1, 2). e(2, 3). e(5, 6).', "e")
    classes = [{1, 2, 3}, {5, 6}]
    assert got == {(a, b) for c in classes for a, b in itertools.product(c, c)}


# --- the budget ----------------------------------------------------------------------------

def test_a_runaway_program_stops_with_limit_exceeded_and_status_2(tmp_path, capsys):
    program = tmp_path / "n.dl"
    program.write_text("n(0).\nn(y) :- n(x), y = x + 1.\n")
    assert main(["eval", str(program), "--max-facts", "500"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"limit_exceeded: relation n passed 500 facts (rule at {program}:2)")


def test_the_timeout_stops_evaluation(tmp_path, capsys):
    program = tmp_path / "n.dl"
    program.write_text("n(0).\nn(y) :- n(x), y = x + 1.\n")
    assert main(["eval", str(program), "--timeout", "0.2", "--semiring", "boolean"]) == 2
    assert "limit_exceeded: evaluation passed the 0.2 s timeout" in capsys.readouterr().err
