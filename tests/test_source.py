"""The fast reading of program text (datalog/reading/source.py) against the grammar alone.

Plain rules and ground facts are read by regular expressions; everything else by the
lark grammar. Both paths must give the same clauses in the same order, with the same
positions (positions do not take part in equality, so they are compared apart).
"""

from pathlib import Path

from hypothesis import given, settings, strategies as st

from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.reading.source import parse_source
from polygraph_logic.datalog.syntax import Atom, Fact, Rule
from polygraph_logic.errors import PolygraphError

RULES = Path(__file__).resolve().parent.parent / "rules"


def _positions(node):
    """Every position in a clause, in a fixed order (what equality leaves out)."""
    out = [getattr(node, "position", None)]
    for name in ("head", "atom"):
        if hasattr(node, name):
            out += _positions(getattr(node, name))
    for name in ("body", "args"):
        for child in getattr(node, name, ()) or ():
            out += _positions(child)
    for name in ("left", "right"):
        if hasattr(node, name):
            out += _positions(getattr(node, name))
    return out


def _same(text: str, file: str = "p.dl") -> list:
    fast = parse_source(text, file)
    grammar = [c for c in parse_clauses(text, file) if not isinstance(c, Fact) or _has_terms(c)]
    assert fast.clauses == grammar
    assert [_positions(c) for c in fast.clauses] == [_positions(c) for c in grammar]
    return fast.clauses


def _has_terms(fact: Fact) -> bool:
    """A fact the scanner leaves to the grammar (arithmetic in it)."""
    return any(type(a).__name__ != "Constant" for a in fact.atom.args)


def test_the_shipped_rule_files_read_alike_by_both_paths():
    for path in sorted(RULES.glob("*.dl")):
        clauses = _same(path.read_text("utf-8"), path.name)
        assert clauses, path


def test_plain_rules_are_read_without_the_grammar(monkeypatch):
    from polygraph_logic.datalog.reading import source

    def refuse(text, file):
        raise AssertionError("the grammar was asked")

    monkeypatch.setattr(source, "parse_clauses", refuse)
    (rule,) = parse_source('edge(x, "P", z) :- edge(x, "P", y),\n    edge(y, "P", z).  // transitive').clauses
    assert isinstance(rule, Rule) and rule.body[1] == Atom("edge", (rule.body[1].args[0],) + rule.body[1].args[1:])
    assert (rule.body[1].position.line, rule.body[1].position.column) == (2, 5)


def test_names_the_grammar_reads_otherwise_go_to_the_grammar():
    # an aggregate keyword as a variable, negation, arithmetic, comparisons, wildcards
    for text in ["p(count) :- q(count).", "p(x) :- q(x), !r(x).", "p(y) :- q(x), y = x + 1.",
                 "p(x) :- q(x, _).", "p(x) :- q(x), x != 2.", "p(x), r(x) :- q(x)."]:
        _same(text)


def test_an_error_in_a_plain_rule_names_the_same_place():
    text = 'p(x) :- q(x).\n\nr(x, z) :-\n  q(x).\n'
    from polygraph_logic.datalog.program import Program
    errors = []
    for clauses in (parse_source(text, "e.dl").clauses, parse_clauses(text, "e.dl")):
        try:
            Program.from_clauses(clauses)
        except PolygraphError as error:
            errors.append(str(error))
    assert len(errors) == 2 and errors[0] == errors[1] and "e.dl:3:6" in errors[0]


_names = st.sampled_from(["x", "y", "z", "node", "X1", "_y", "count"])
_consts = st.one_of(st.sampled_from(['"a"', '"RO:0002211"', '"say \\"x\\""', '"é"']),
                    st.integers(0, 99).map(str))
_args = st.lists(st.one_of(_names, _consts, st.just("_")), min_size=1, max_size=3)
_space = st.sampled_from(["", " ", "  ", "\n", "\n    ", "\t"])


@st.composite
def _atom(draw):
    args = draw(_args)
    return f"{draw(st.sampled_from(['p', 'edge', 'q2', 'contains']))}({', '.join(args)})"


@st.composite
def _statement(draw):
    kind = draw(st.sampled_from(["rule", "rule", "negated", "fact", "tracked", "arith", "decl", "comment"]))
    if kind == "fact":
        return f"f({draw(_consts)}, {draw(_consts)})."  # one arity a relation: the scanner checks it
    if kind == "tracked":
        return f"a{draw(st.integers(0, 9))} :: e({draw(_consts)})."
    if kind == "arith":
        return f"n({draw(st.integers(0, 9))} + 1)."
    if kind == "decl":
        return ".decl d(x: symbol)\n"  # a directive runs to the end of its line
    if kind == "comment":
        return draw(st.sampled_from(["// a comment", "/* a\n block */"]))
    body = draw(st.lists(_atom(), min_size=1, max_size=3))
    if kind == "negated":
        body.append("!" + draw(_atom()))
    glue = "," + draw(_space)
    return f"{draw(_atom())}{draw(_space)}:-{draw(_space)}{glue.join(body)}."


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_statement(), _space), min_size=1, max_size=8))
def test_random_programs_read_alike_by_both_paths(statements):
    text = "".join(s + (sep or " ") for s, sep in statements)
    try:
        grammar = parse_clauses(text, "r.dl")
    except PolygraphError as error:  # a program the grammar refuses, the fast reading refuses alike
        try:
            parse_source(text, "r.dl")
        except PolygraphError as again:
            assert (again.code, again.position) == (error.code, error.position)
            return
        raise AssertionError(f"the fast reading accepted what the grammar refuses: {error}")
    assert grammar is not None
    _same(text, "r.dl")
