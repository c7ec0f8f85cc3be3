"""The magic-set rewriting (datalog/magic/): what it rewrites, what it leaves alone, and that a
rewritten program derives the same outputs with the same labels.

Expected rows and labels are worked out here in plain Python (tree depths and lowest common
ancestors, reachability along a chain, a naive Boolean closure of rules given as data), and the
rewritten program is compared with the same program evaluated without the rewriting: equal
output relations under ``boolean``, equal uncapped labels under ``why`` (circuit and
semi-naive) and ``lineage``.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main
from polygraph_logic.datalog import evaluate, parse_program
from polygraph_logic.datalog.program import load_program

PRAGMA = '.pragma "magic-transform" "*"\n'


def rows(model, relation) -> set:
    return set(model.facts(relation))


def labels(model, relation) -> dict:
    return {tup: str(label) for tup, label in model.facts(relation).items()}


# --- same generation over a complete binary tree -----------------------------------------------

HEIGHT = 5  # nodes 1 .. 63: node k has children 2k and 2k + 1


def tree_text(tracked: bool) -> str:
    nodes = range(1, 2 ** (HEIGHT + 1))
    facts = [f"node({k})." for k in nodes]
    facts += [f"{f'p{k} :: ' if tracked else ''}parent({k}, {k // 2})." for k in nodes if k > 1]
    return "\n".join(facts) + """
samegen(x, x) :- node(x).
samegen(x, y) :- parent(x, a), samegen(a, b), parent(y, b).
peers(y) :- samegen(32, y).
query() :- samegen(32, 63).
.output peers, query
"""


def depth(k: int) -> int:
    return k.bit_length() - 1


def path_up(k: int, stop: int) -> list[int]:
    """The nodes from ``k`` up to ``stop`` (excluded): the children of the parent facts used."""
    out = []
    while k != stop:
        out.append(k)
        k //= 2
    return out


def lowest_common_ancestor(a: int, b: int) -> int:
    while a != b:
        a, b = (a // 2, b) if a > b else (a, b // 2)
    return a


def test_same_generation_is_specialised_to_the_query_and_derives_linearly():
    program = parse_program(PRAGMA + tree_text(False))
    plain = parse_program(tree_text(False))
    assert program.magic is not None and plain.magic is None
    assert {"samegen.bb", "samegen.bf"} <= set(program.magic.copies)
    model, whole = evaluate(program, "boolean"), evaluate(plain, "boolean")
    expected = {(k,) for k in range(1, 2 ** (HEIGHT + 1)) if depth(k) == depth(32)}
    assert rows(model, "peers") == expected == rows(whole, "peers")
    assert rows(model, "query") == {()} == rows(whole, "query")
    # the rewritten program derives one row per node of each level on 32's way up, not every pair
    levels = sum(2 ** d for d in range(HEIGHT + 1))
    assert len(model.facts("samegen.bf")) <= levels
    assert len(whole.facts("samegen")) == sum(4 ** d for d in range(HEIGHT + 1))
    assert len(model.facts("samegen")) == 0  # wanted only at bindings: the whole relation is never derived


@pytest.mark.parametrize("circuit", [True, False])
def test_same_generation_labels_are_the_parent_facts_up_to_the_common_ancestor(circuit):
    program = parse_program(PRAGMA + tree_text(True))
    model = evaluate(program, "why", cap=None, circuit=circuit)
    whole = evaluate(parse_program(tree_text(True)), "why", cap=None, circuit=circuit)
    assert labels(model, "peers") == labels(whole, "peers")
    for (y,), label in model.facts("peers").items():
        top = lowest_common_ancestor(32, y)
        used = {f"p{k}" for k in {*path_up(32, top), *path_up(y, top)}}
        assert set(label.support_sets()) == {frozenset(used)}  # y = 32: one empty set, the label one
    for guard in program.guards:  # guards carry no provenance
        assert all(str(label) == "1" for label in model.facts(guard).values())


# --- a chain read from a constant ---------------------------------------------------------------

CHAIN = ["a", "b", "c", "d", "e", "f"]
BRANCH = [("c", "x"), ("x", "y"), ("q", "a")]


def chain_text(tracked: bool) -> str:
    edges = list(zip(CHAIN, CHAIN[1:])) + BRANCH
    facts = [f'{f"e_{s}{t} :: " if tracked else ""}edge("{s}", "{t}").' for s, t in edges]
    return "\n".join(facts) + """
reach(x, y) :- edge(x, y).
reach(x, z) :- edge(x, y), reach(y, z).
from_c(y) :- reach("c", y).
.output from_c
"""


def reachable(start: str) -> dict[str, list[str]]:
    """Each node reachable from ``start``, with the nodes of the (only) path to it."""
    edges = list(zip(CHAIN, CHAIN[1:])) + BRANCH
    found, todo = {}, [(start, [start])]
    while todo:
        node, path = todo.pop()
        for s, t in edges:
            if s == node and t not in found:
                found[t] = path + [t]
                todo.append((t, path + [t]))
    return found


def test_a_constant_in_the_query_binds_the_first_argument():
    program = parse_program(PRAGMA + chain_text(False))
    assert "reach.bf" in program.magic.copies and "magic.reach.bf" in program.guards
    model = evaluate(program, "boolean")
    assert rows(model, "from_c") == {(node,) for node in reachable("c")}
    # only nodes reachable from c are ever asked for
    asked = {node for (node,) in model.facts("magic.reach.bf")}
    assert asked == {"c", *reachable("c")}  # not a, b or q
    assert {x for x, _ in model.facts("reach.bf")} <= asked


@pytest.mark.parametrize("semiring, circuit", [("why", True), ("why", False), ("lineage", False)])
def test_chain_labels_equal_the_unrewritten_programs(semiring, circuit):
    model = evaluate(parse_program(PRAGMA + chain_text(True)), semiring, cap=None, circuit=circuit)
    whole = evaluate(parse_program(chain_text(True)), semiring, cap=None, circuit=circuit)
    assert labels(model, "from_c") == labels(whole, "from_c")
    if semiring == "why":
        for node, path in reachable("c").items():
            edges = frozenset(f"e_{s}{t}" for s, t in zip(path, path[1:]))
            assert model.facts("from_c")[(node,)].support_sets() == [edges]
    # the guards are derived from tracked edges (magic.reach.bf(y) :- magic.reach.bf(x), edge(x, y)), label one
    assert all(str(label) in ("1", "{}") for label in model.facts("magic.reach.bf").values())
    assert len(model.facts("magic.reach.bf")) > 1


# --- what is left alone -------------------------------------------------------------------------

GATED = """
edge("a", "b"). edge("b", "c"). edge("c", "d"). edge("x", "y").
node("a"). node("b"). node("c"). node("d"). node("x"). node("y").
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
unreached(x) :- node(x), !reach("a", x).
count_from_a(n) :- n = count : { reach("a", _) }.
.output unreached, count_from_a
"""


def test_negated_and_aggregated_relations_are_left_as_written():
    program = parse_program(PRAGMA + GATED)
    assert program.magic is None  # reach is read under a negation and in an aggregate: closed
    model = evaluate(program, "boolean")
    from_a = {"b", "c", "d"}
    assert rows(model, "unreached") == {(n,) for n in {"a", "b", "c", "d", "x", "y"} - from_a}
    assert rows(model, "count_from_a") == {(len(from_a),)}


def test_a_query_through_negation_specialises_only_its_positive_part():
    text = PRAGMA + GATED.replace(".output unreached, count_from_a", """
hop(x, y) :- edge(x, y).
hop(x, z) :- hop(x, y), edge(y, z).
far(y) :- hop("b", y), !reach("x", y).
.output far""")
    program = parse_program(text)
    assert set(program.magic.copies) == {"hop.bf"}
    written = {str(rule) for rule in program.written_rules() if rule.head.relation == "reach"}
    assert written <= {str(rule) for rule in program.rules}  # reach's rules kept as written
    assert rows(evaluate(program, "boolean"), "far") == {("c",), ("d",)}


def test_a_relation_the_pragma_does_not_name_is_read_whole():
    text = chain_text(False).replace("from_c(y) :- reach(\"c\", y).", """
hop(x, y) :- edge(x, y).
hop(x, z) :- edge(x, y), hop(y, z).
from_c(y) :- hop("c", y), reach("c", y).""")
    named = parse_program('.pragma "magic-transform" "hop"\n' + text)
    assert set(named.magic.copies) == {"hop.bf"}
    excluded = parse_program(PRAGMA + '.pragma "magic-transform-exclude" "hop,reach"\n' + text)
    assert excluded.magic is None
    qualifier = parse_program(".decl edge(x: symbol, y: symbol)\n.decl reach(x: symbol, y: symbol) no_magic\n"
                              ".decl hop(x: symbol, y: symbol) magic\n.decl from_c(y: symbol)\n" + text)
    assert set(qualifier.magic.copies) == {"hop.bf"}
    expected = {(node,) for node in reachable("c")}
    for program in (named, excluded, qualifier):
        assert rows(evaluate(program, "boolean"), "from_c") == expected


def test_no_query_no_rewriting():
    program = parse_program(PRAGMA + chain_text(False).replace(".output from_c", ""))
    assert program.magic is None
    assert rows(evaluate(program, "boolean"), "from_c") == {(node,) for node in reachable("c")}


def test_the_listing_shows_the_programs_relations_not_the_copies():
    model = evaluate(parse_program(PRAGMA + chain_text(False)), "boolean")
    assert model.relations() == ["edge", "from_c", "reach"]
    assert model.facts("reach.bf")  # read by name all the same


def test_the_command_line_option_asks_for_it_and_overrides_the_pragma(tmp_path, capsys):
    source = tmp_path / "chain.dl"
    source.write_text(chain_text(False))
    assert main(["eval", str(source), "-D", str(tmp_path), "--magic-transform", "*", "--stats"]) == 0
    err = capsys.readouterr().err
    assert "stratum reach.bf:" in err and "stratum reach:" not in err
    lines = sorted((tmp_path / "from_c.csv").read_text().splitlines())
    assert lines == sorted(reachable("c"))
    source.write_text(PRAGMA + chain_text(False))
    assert main(["eval", str(source), "-D", str(tmp_path), "--magic-transform-exclude", "reach", "--stats"]) == 0
    assert "stratum reach.bf:" not in capsys.readouterr().err
    assert load_program(source, overrides={"magic-transform": "edge"}).magic is None


def test_a_combined_program_holds_the_rules_as_written():
    rewritten = parse_program(PRAGMA + chain_text(False))
    combined = rewritten.combine(parse_program('edge("f", "g").'))
    assert combined.magic is None and not combined.guards
    assert {r.head.relation for r in combined.rules} == {"reach", "from_c"}
    assert "magic.reach.bf" not in combined.fact_tables()
    assert rows(evaluate(combined, "boolean"), "from_c") == {(node,) for node in reachable("c")} | {("g",)}


def test_an_excluded_inline_relation_is_not_inlined():
    text = """
.decl edge(x: number, y: number)
.decl step(x: number, y: number) inline
.decl out(y: number)
edge(1, 2). edge(2, 3).
step(x, y) :- edge(x, y).
out(y) :- step(1, y).
.output out
"""
    inlined = parse_program(text)
    kept = parse_program('.pragma "magic-transform-exclude" "step"\n' + text)
    assert "step" not in {r.head.relation for r in inlined.rules}
    assert "step" in {r.head.relation for r in kept.rules}
    assert rows(evaluate(kept, "boolean"), "out") == rows(evaluate(inlined, "boolean"), "out") == {(2,)}


# --- random positive programs -------------------------------------------------------------------

VALUES = ("a", "b", "c")
EDB = {"e": 2, "f": 2}
IDB = {"p": 2, "q": 2, "r": 1}
VARIABLES = ("x", "y", "z")

argument = st.one_of(st.sampled_from(VARIABLES), st.sampled_from(VALUES).map(lambda v: f'"{v}"'))


@st.composite
def atoms(draw, relations: dict[str, int], arguments=argument):
    name = draw(st.sampled_from(sorted(relations)))
    return name, tuple(draw(arguments) for _ in range(relations[name]))


def variables_of(body) -> list[str]:
    return sorted({a for _, args in body for a in args if a in VARIABLES})


@st.composite
def rules(draw):
    body = draw(st.lists(atoms({**EDB, **IDB}), min_size=1, max_size=3))
    bound = variables_of(body)
    head = draw(st.sampled_from(sorted(IDB)))
    choices = st.sampled_from(bound) if bound else st.sampled_from(VALUES).map(lambda v: f'"{v}"')
    return (head, tuple(draw(choices) for _ in range(IDB[head]))), tuple(body)


@st.composite
def queries(draw, name: str):
    """``name(v...) :- atom with a constant, ...``: what the rewriting specialises for."""
    first = draw(atoms(IDB, argument))
    constant = draw(st.sampled_from(VALUES))
    position = draw(st.integers(0, len(first[1]) - 1))
    first = (first[0], first[1][:position] + (f'"{constant}"',) + first[1][position + 1:])
    body = (first, *draw(st.lists(atoms({**EDB, **IDB}), max_size=1)))
    bound = variables_of(body)
    head = tuple(draw(st.lists(st.sampled_from(bound), min_size=0, max_size=2))) if bound else ()
    return (name, head), body


BASE = [(("p", ("x", "y")), (("e", ("x", "y")),)), (("q", ("x", "y")), (("f", ("x", "y")),)),
        (("r", ("x",)), (("e", ("x", "y")),))]


@st.composite
def programs(draw):
    """Tracked and background facts, the base rules (each IDB relation fed by an EDB one) with
    some of them dropped, random rules, and two queries with constants."""
    facts = draw(st.lists(st.tuples(st.sampled_from(sorted(EDB)), st.sampled_from(VALUES),
                                    st.sampled_from(VALUES), st.booleans()), min_size=2, max_size=12))
    base = [rule for rule in BASE if draw(st.integers(0, 4))]
    return facts, base + draw(st.lists(rules(), min_size=1, max_size=4)), [draw(queries("out1")), draw(queries("out2"))]


def text_of(facts, rule_list, query_list, magic: bool) -> str:
    lines = [PRAGMA] if magic else []
    lines += [f'{f"t{n} :: " if tracked else ""}{rel}("{a}", "{b}").' for n, (rel, a, b, tracked) in enumerate(facts)]
    for (head, head_args), body in [*rule_list, *query_list]:
        atoms_text = ", ".join(f"{rel}({', '.join(args)})" for rel, args in body)
        lines.append(f"{head}({', '.join(head_args)}) :- {atoms_text}.")
    lines.append(".output out1, out2")
    return "\n".join(lines)


def naive_closure(facts, rule_list) -> dict[str, set]:
    """Every rule applied to every binding until nothing new: the Boolean model, by brute force."""
    model: dict[str, set] = {name: set() for name in [*EDB, *IDB, "out1", "out2"]}
    for rel, a, b, _ in facts:
        model[rel].add((a, b))
    changed = True
    while changed:
        changed = False
        for (head, head_args), body in rule_list:
            names = variables_of(body)
            for values in itertools.product(VALUES, repeat=len(names)):
                env = dict(zip(names, values))

                def value(arg):
                    return env[arg] if arg in VARIABLES else arg.strip('"')

                if all(tuple(value(a) for a in args) in model[rel] for rel, args in body):
                    tup = tuple(value(a) for a in head_args)
                    if tup not in model[head]:
                        model[head].add(tup)
                        changed = True
    return model


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_rewritten_random_programs_derive_the_same_outputs_with_the_same_labels(drawn):
    facts, rule_list, query_list = drawn
    rewritten = parse_program(text_of(facts, rule_list, query_list, True))
    plain = parse_program(text_of(facts, rule_list, query_list, False))
    assert plain.magic is None  # rewritten.magic is None too when no query reads a rule-defined relation
    expected = naive_closure(facts, [*rule_list, *query_list])
    boolean = evaluate(rewritten, "boolean")
    for out in ("out1", "out2"):
        assert rows(boolean, out) == expected[out]
    for circuit in (True, False):
        ours = evaluate(rewritten, "why", cap=None, circuit=circuit)
        theirs = evaluate(plain, "why", cap=None, circuit=circuit)
        for out in ("out1", "out2"):
            assert labels(ours, out) == labels(theirs, out)
        for copy, original in (rewritten.magic.copies if rewritten.magic else {}).items():  # a copy's facts: the original's, same labels
            whole = labels(theirs, original)
            assert all(whole[tup] == label for tup, label in labels(ours, copy).items())
        for guard in rewritten.guards:
            assert all(str(label) == "1" for label in ours.facts(guard).values())
