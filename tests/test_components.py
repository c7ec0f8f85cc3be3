"""Soufflé's components (datalog/reading/components.py): instances, inheritance, overrides, nesting,
type parameters, their errors with file, line and column, and provenance through them.
Results are checked against closures computed here in plain Python, not against the engine."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from polygraph_logic import evaluate, parse_program
from polygraph_logic.datalog.reading.source import parse_source
from polygraph_logic.datalog.syntax import Atom, Fact, Rule
from polygraph_logic.errors import ProgramError

GRAPH = """
.comp Graph<N> {
  .decl edge(x: N, y: N)
  .decl reach(x: N, y: N) overridable
  reach(x, y) :- edge(x, y).
  reach(x, z) :- reach(x, y), edge(y, z).
}
.comp Undirected<N> : Graph<N> {
  .override reach
  reach(x, y) :- edge(x, y).
  reach(x, y) :- edge(y, x).
  reach(x, z) :- reach(x, y), reach(y, z).
}
"""


def closure(pairs: set[tuple]) -> set[tuple]:
    reach = set(pairs)
    while True:
        new = {(x, z) for x, y in reach for y2, z in pairs if y == y2} - reach
        if not new:
            return reach
        reach |= new


def facts(relation: str, pairs) -> str:
    return "".join(f"{relation}({x}, {y}).\n" for x, y in pairs)


def boolean(text: str, relation: str) -> set[tuple]:
    return set(evaluate(parse_program(text, "p.dl"), "boolean").facts(relation))


edges = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=10)


@settings(max_examples=40, deadline=None)
@given(edges, edges)
def test_two_instances_and_an_override_give_the_closures_computed_here(first, second):
    text = GRAPH + ".init a = Graph<number>\n.init b = Graph<number>\n.init u = Undirected<number>\n"
    text += facts("a.edge", first) + facts("b.edge", second) + facts("u.edge", first)
    model = evaluate(parse_program(text, "p.dl"), "boolean")
    assert set(model.facts("a.reach")) == closure(first)
    assert set(model.facts("b.reach")) == closure(second)
    assert set(model.facts("u.reach")) == closure(first | {(y, x) for x, y in first})


def test_instance_relations_are_qualified_and_the_component_itself_makes_none():
    program = parse_program(GRAPH + ".init g = Graph<symbol>\ng.edge(\"a\", \"b\").", "p.dl")
    assert set(program.declarations.relations) == {"g.edge", "g.reach"}
    assert [str(a) for a in program.declarations.relations["g.edge"].attributes] == ["x: symbol", "y: symbol"]


def test_types_declared_in_a_component_are_renamed_with_its_instance():
    text = """
    .comp Scores<T> {
      .type Score <: T
      .decl score(who: symbol, s: Score)
      score("ann", 3).
    }
    .init s = Scores<number>
    """
    program = parse_program(text, "p.dl")
    assert "s.Score" in program.declarations.types and "Score" not in program.declarations.types
    assert program.declarations.kinds("s.score") == ("symbol", "number")


def test_nested_components_instances_inside_instances_and_orphan_clauses():
    text = """
    .decl seen(x: number)
    .comp Outer<T> {
      .comp Inner<U> {
        .decl item(x: U)
        seen(x) :- item(x).
      }
      .init left = Inner<T>
      .init right = Inner<T>
      left.item(1).
      right.item(2).
    }
    .init o = Outer<number>
    """
    program = parse_program(text, "p.dl")
    assert {"o.left.item", "o.right.item", "seen"} <= set(program.declarations.relations)
    assert boolean(text, "seen") == {(1,), (2,)}


def test_a_type_parameter_can_name_the_base_component():
    text = GRAPH + """
    .comp Wrapped<Impl> : Impl<number> { }
    .init w = Wrapped<Graph>
    w.edge(1, 2). w.edge(2, 3).
    """
    assert boolean(text, "w.reach") == {(1, 2), (2, 3), (1, 3)}


def test_the_base_rules_of_an_overridden_relation_are_dropped_and_others_kept():
    text = """
    .comp Base {
      .decl r(x: number) overridable
      .decl s(x: number)
      r(1). s(1).
    }
    .comp Derived : Base {
      .override r
      r(2).
    }
    .init d = Derived
    """
    assert boolean(text, "d.r") == {(2,)} and boolean(text, "d.s") == {(1,)}


def test_qualified_names_outside_components_are_read_whole_by_the_fast_reader():
    source = parse_source('inst.rel("a").\nq(x) :- inst.rel(x).\nr(x) :- inst.rel("b"), q(x).\n', "p.dl")
    facts_ = [c for c in source.clauses if isinstance(c, Fact)]
    rules = [c for c in source.clauses if isinstance(c, Rule)]
    assert not source.tables and [f.atom.relation for f in facts_] == ["inst.rel"]
    assert [[a.relation for a in r.body if isinstance(a, Atom)] for r in rules] == [["inst.rel"], ["inst.rel", "q"]]
    assert rules[1].body[0].position.line == 3 and rules[1].body[0].position.column == 9


def test_components_carry_no_provenance_of_their_own():
    """A tracked fact of an instance relation explains what it derives exactly as the same
    program written without the component does."""
    tracked = 'e1 :: g.edge(1, 2).\ne2 :: g.edge(2, 3).\ne3 :: g.edge(1, 3).\n'
    with_component = evaluate(parse_program(GRAPH + ".init g = Graph<number>\n" + tracked, "p.dl"), "why")
    by_hand = """
    .decl g.edge(x: number, y: number)
    .decl g.reach(x: number, y: number)
    g.reach(x, y) :- g.edge(x, y).
    g.reach(x, z) :- g.reach(x, y), g.edge(y, z).
    """ + tracked
    plain = evaluate(parse_program(by_hand, "q.dl"), "why")
    assert with_component.facts("g.reach") == plain.facts("g.reach")
    assert str(with_component.label("g.reach", (1, 3))) == str(plain.label("g.reach", (1, 3)))


@pytest.mark.parametrize(
    "text, code, line, column, fragment",
    [
        (".init a = Missing", "unknown_component", 1, 11, "component Missing is not declared"),
        (".comp A { }\n.comp B : Nope { }\n.init b = B", "unknown_component", 2, 11,
         "component Nope is not declared (components: A, B)"),
        (".comp A<T> { }\n.init a = A<number, symbol>", "arity_mismatch", 2, 11,
         "component A takes 1 type argument(s) (<T>), not 2"),
        (".comp A<T, U> { }\n.comp B : A<number> { }\n.init b = B", "arity_mismatch", 2, 11,
         "takes 2 type argument(s)"),
        (".comp A { .decl r(x: number) overridable }\n.comp B : A {\n  .override s\n}\n.init b = B",
         "override_error", 3, 13, "overrides s, which no base component declares (bases: A)"),
        (".comp A { .decl r(x: number) }\n.comp B : A {\n  .override r\n}\n.init b = B",
         "override_error", 3, 13, "which is not overridable"),
        (".comp A { }\n.comp B : A {\n  .decl r(x: number)\n  .override r\n}\n.init b = B",
         "override_error", 4, 13, "which it declares itself"),
        (".comp A : C { }\n.comp B : A { }\n.comp C : B { }\n.init a = A", "inheritance_cycle", 2, 11,
         "component A inherits from itself (A : C : B : A)"),
        (".decl r(x: number)\n.override r", "syntax_error", 2, 11, "belongs inside a .comp"),
        # checked even when nothing instantiates them, as Soufflé's component checker does
        (".comp A : Missing { }", "unknown_component", 1, 11, "component Missing is not declared"),
        (".comp A { .init x = Missing }", "unknown_component", 1, 21, "component Missing is not declared"),
        (".comp A<T> { }\n.comp B { .init x = A }", "arity_mismatch", 2, 21, "takes 1 type argument(s)"),
        (".comp A : B { }\n.comp B : A { }", "inheritance_cycle", 2, 11,
         "component A inherits from itself (A : B : A)"),
        (".comp D<Base> : Base<number> { }\n.init d = D<D>", "inheritance_cycle", 1, 17,
         "component D inherits from itself"),
        (".comp A { }\n.comp A { }", "duplicate_declaration", 2, 7, "component A is declared twice"),
        (".comp A { .init again = A }\n.init a = A", "component_depth", 1, 17, "more than 100 levels deep"),
        (".comp A { .decl r(x: number) }\n.init a = A\n.init b = A\n.decl c(x: number)\nc(x) :- a.r(x), b.r(x, x).",
         "arity_mismatch", 5, 17, "b.r is used with 2 argument(s) here but with 1 at its .decl at p.dl:1:17"),
    ],
)
def test_component_errors_name_file_line_and_column(text, code, line, column, fragment):
    with pytest.raises(ProgramError) as caught:
        parse_program(text, "p.dl")
    error = caught.value
    assert (error.code, error.position.file, error.position.line, error.position.column) == (code, "p.dl", line, column)
    assert fragment in error.message


def test_a_name_with_dots_is_no_variable():
    with pytest.raises(Exception) as caught:
        parse_program(".decl r(x: number)\nr(x) :- r(y), x = a.b.", "p.dl")
    assert "'a.b' is no variable" in str(caught.value) and ":2:19:" in str(caught.value)


def test_two_instances_of_one_name_are_an_error_at_the_second():
    with pytest.raises(ProgramError) as caught:
        parse_program(".comp A { .decl r(x: number) }\n.init a = A\n.init a = A", "p.dl")
    assert caught.value.code == "duplicate_declaration" and caught.value.position.line == 3
    assert "instance a is made twice (first at p.dl:2:7)" in caught.value.message


def test_a_chain_of_base_components_deeper_than_the_limit_is_an_error_not_a_crash():
    chain = "".join(f".comp A{i} : A{i + 1} {{ }}\n" for i in range(150)) + ".comp A150 { .decl r(x: number) }\n"
    with pytest.raises(ProgramError) as caught:
        parse_program(chain + ".init a = A0", "p.dl")
    assert caught.value.code == "component_depth" and caught.value.position.line == 100
    shallow = "".join(f".comp A{i} : A{i + 1} {{ }}\n" for i in range(50)) + ".comp A50 { .decl r(x: number) r(1). }\n"
    assert boolean(shallow + ".init a = A0", "a.r") == {(1,)}


def test_a_tracked_fact_in_a_component_is_one_assertion_for_every_instance():
    text = ".comp C { .decl e(x: number) a1 :: e(1). }\n.init one = C\n.init two = C\n"
    model = evaluate(parse_program(text, "p.dl"), "why")
    assert str(model.label("one.e", (1,))) == str(model.label("two.e", (1,))) == "a1"


@pytest.mark.parametrize("text, line, fragment", [
    (".decl A(x: number)\n.comp A { }", 2, "component A has the name of '.decl A(x: number)' (p.dl:1:7)"),
    (".comp A { }\n.init A = A", 2, "instance A has the name of '.comp A { ... }' (p.dl:1:7)"),
    (".type T <: number\n.comp C { }\n.init T = C", 3, "instance T has the name of '.type T <: number'"),
])
def test_a_component_or_instance_named_like_a_type_or_relation_is_an_error(text, line, fragment):
    with pytest.raises(ProgramError) as caught:
        parse_program(text, "p.dl")
    assert caught.value.code == "duplicate_declaration" and caught.value.position.line == line
    assert fragment in caught.value.message
