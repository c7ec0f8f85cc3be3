"""Lazy facts (``.lazy``): left out of a build, derived on demand, with the labels a full build gives them.

The reference is the full evaluation of the same program without the declaration, uncapped:
every fact outside the lazy patterns keeps its label, and every lazy fact's support sets,
expanded from its on-demand circuit, are its label there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.lazy.part import split
from polygraph_logic.datalog.lazy.on_demand import OnDemand
from polygraph_logic.datalog.program import parse_program
from polygraph_logic.errors import PolygraphError
from polygraph_logic.provenance.circuit import expand_many

ROOT = Path(__file__).resolve().parent.parent
PREDICATES = ("p", "q", "r", "s")
ENTITIES = ("e0", "e1", "e2", "e3", "e4")
TEMPLATES = (
    'edge(x, "{0}", z) :- edge(x, "{0}", y), edge(y, "{0}", z).',
    'edge(y, "{0}", x) :- edge(x, "{0}", y).',
    'edge(x, "{1}", y) :- edge(x, "{0}", y).',
    'edge(x, "{2}", z) :- edge(x, "{0}", y), edge(y, "{1}", z).',
    'edge(x, "{2}", z) :- edge(x, "{0}", y), edge(z, "{1}", y).',
    'tag(x, "{0}") :- edge(x, "{0}", _).',
    'edge(x, "{1}", y) :- tag(x, "{0}"), edge(x, "{2}", y).',
)
GENERIC = ('edge(c, p, o) :- edge(m, p, o), member(m, c).', 'edge(s, p, c) :- edge(s, p, m), member(m, c).')


def _labels(model) -> dict:
    return {(name, tup): frozenset(frozenset(s) for s in model.semiring.to_json(label))
            for name in model.relations() for tup, label in model.facts(name).items()}


def _on_demand_labels(text: str) -> tuple[dict, dict, object]:
    """(full labels, lazy labels: the materialized facts' and each lazy fact's expansion, the lazy part)."""
    program = parse_program(text)
    full = _labels(evaluate(program, "why", cap=None))
    rules, part = split(program.rules, program.declarations.lazy, program.arities)
    built = evaluate(parse_program("\n".join([*(str(f) for f in program.facts), *map(str, rules)])), "why", cap=None)
    stored = _labels(built)
    numbers = {key: n for n, key in enumerate(sorted(stored, key=repr), 1)}
    by_number = {n: key for key, n in numbers.items()}

    def lookup(relation, pattern):
        for (name, args), n in numbers.items():
            if name == relation and all(p is None or p == v for p, v in zip(pattern, args)):
                yield args, (None if stored[(name, args)] == {frozenset()} else n)

    engine = OnDemand(part, lookup)
    found = dict(stored)
    def label(num):
        return None if num < 0 else list(stored[by_number[num]])

    def circuit(asked):
        return {n: ((), [tuple(body) for body in engine.derivations[n]]) for n in asked}

    for relation in part.patterns.by_relation:
        arity = program.arities[relation]
        nodes = engine.ask(relation, (None,) * arity)
        # every answer's circuit expanded together, as query/circuit_support.expand_nodes does
        expansions = expand_many(list(nodes.values()), label, circuit, budget=100_000)
        for args, node in nodes.items():
            assert expansions[node].complete
            found[(relation, args)] = frozenset(expansions[node].sets)
    return full, found, (part, stored)


@st.composite
def programs(draw):
    facts = draw(st.lists(st.tuples(st.sampled_from(ENTITIES), st.sampled_from(PREDICATES),
                                    st.sampled_from(ENTITIES)), min_size=1, max_size=9, unique=True))
    members = draw(st.lists(st.tuples(st.sampled_from(ENTITIES), st.sampled_from(ENTITIES)), max_size=2, unique=True))
    rules = draw(st.lists(st.tuples(st.sampled_from(TEMPLATES), st.permutations(PREDICATES)), min_size=1, max_size=6))
    generic = draw(st.lists(st.sampled_from(GENERIC), max_size=2, unique=True))
    lazy = draw(st.sampled_from(PREDICATES))
    background = draw(st.booleans())
    lines = [f'a{i} :: edge("{s}", "{p}", "{o}").' for i, (s, p, o) in enumerate(facts)]
    lines += [f'm{i} :: member("{m}", "{c}").' for i, (m, c) in enumerate(members)]
    if background:  # a rule file's fact inside the lazy pattern: stored, and one more derivation on demand
        lines.append(f'edge("e0", "{lazy}", "e1").')
    lines += [template.format(*order) for template, order in rules] + list(generic)
    lines += ['member("none", "none").', f'.lazy edge(_, "{lazy}", _)']
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_lazy_facts_on_demand_equal_the_full_evaluation(text):
    full, found, (part, stored) = _on_demand_labels(text)
    assert found == full, text
    # the build holds no fact a lazy pattern covers, but the program's own facts
    ground = {line.split(" :: ")[-1] for line in text.splitlines() if line.endswith('").')}
    for (relation, args) in stored:
        if part.patterns.covers(relation, args):
            assert f'edge("{args[0]}", "{args[1]}", "{args[2]}").' in ground


def test_patterns_close_over_what_follows_from_them():
    program = parse_program('.lazy edge(_, "ov", _)\n'
                            'edge(x, "ov", z) :- edge(x, "part", y), edge(z, "part", y).\n'
                            'edge(x, "rel", y) :- edge(x, "ov", y).\n'
                            'bad(x) :- edge(x, "rel", _).\n'
                            'edge(x, "part", z) :- edge(x, "part", y), edge(y, "part", z).\n'
                            'edge(s, p, o) :- claim(s, p, o).\n'
                            'a1 :: claim("a", "part", "b").')
    rules, part = split(program.rules, program.declarations.lazy, program.arities)
    assert sorted(part.patterns.to_json()) == [["bad", [None]], ["edge", [None, "ov", None]],
                                               ["edge", [None, "rel", None]]]
    built = {str(r) for r in rules}
    assert 'edge(s, p, o) :- claim(s, p, o), p != "ov", p != "rel".' in built
    assert 'edge(x, "part", z) :- edge(x, "part", y), edge(y, "part", z).' in built
    assert not any('"ov"' in r.split(":-")[0] for r in built)


@pytest.mark.parametrize("text, code, where", [
    ('.lazy edge(x, "ov", _)\nedge("a", "b", "c").', "syntax_error", ":1:"),
    ('.lazy nothing\nedge("a", "b", "c").', "unknown_relation", ":1:"),
    ('.lazy edge(_, "ov")\nedge("a", "b", "c").', "arity_mismatch", ":1:"),
    ('.lazy edge(_, "ov", _)\nn(x) :- node(x), !edge(x, "ov", _).\nnode("a").', "lazy_negation", ":2:"),
    ('.lazy edge("a", "ov", _)\nedge(s, p, o) :- claim(s, p, o).\nclaim("a", "b", "c").', "lazy_split", ":2:"),
])
def test_bad_lazy_declarations_are_errors_with_a_position(text, code, where):
    with pytest.raises(PolygraphError) as caught:
        program = parse_program(text, "rules.dl")
        split(program.rules, program.declarations.lazy, program.arities)
    assert caught.value.code == code and where in str(caught.value), str(caught.value)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A small synthetic graph built three times: the full RO, and with overlaps and spatially
    coextensive lazy by the Python engine and by DuckDB; all uncapped."""
    folder = tmp_path_factory.mktemp("lazy")
    from polygraph_logic.graph.synthetic import generate
    generate(documents=60, assertions=500, merges=20, summaries=6).write(folder)
    (folder / "lazy.dl").write_text('.lazy edge(_, "RO:0002131", _), edge(_, "RO:0002379", _)\n')
    from polygraph_logic import build_graph
    inputs = (folder / "assertions.jsonl", folder / "receipts.jsonl")
    ro = ROOT / "rules" / "ro.dl"
    build_graph(*inputs, [ro], cap=None).write(folder / "full.graph")
    build_graph(*inputs, [ro, folder / "lazy.dl"], cap=None).write(folder / "lazy.graph")
    pytest.importorskip("duckdb")
    build_graph(*inputs, [ro, folder / "lazy.dl"],
                engine="duckdb", cap=None, output=folder / "lazy.tables", tables=True)
    return folder


def _facts(path: Path) -> dict:
    from polygraph_logic.graph.store.graph_file import Graph
    with Graph(path) as graph:
        return {(f.relation, f.args): frozenset(map(frozenset, f.support)) for f in graph.facts()}


@pytest.mark.parametrize("built", ["lazy.graph", "lazy.tables"])
def test_a_lazy_build_stores_the_rest_and_answers_the_lazy_facts_as_the_full_build(synthetic, built):
    from polygraph_logic.graph.store.graph_file import Graph
    from polygraph_logic.query.lazy_facts import ask, lazy_part
    full, lazy = _facts(synthetic / "full.graph"), _facts(synthetic / built)
    with Graph(synthetic / built) as graph:
        part = lazy_part(graph)
        covered = {key for key in full if part.patterns.covers(*key)}
        assert len(covered) > 20
        assert lazy == {key: label for key, label in full.items() if key not in covered}
        answered = {}
        for predicate in ("RO:0002131", "RO:0002379", "RO:0002323"):
            for answer in ask(graph, f'edge(_, "{predicate}", _)'):
                assert answer.complete
                answered[(answer.relation, answer.args)] = frozenset(map(frozenset, answer.support_sets))
    assert answered == {key: full[key] for key in covered if key[1][1] in ("RO:0002131", "RO:0002379", "RO:0002323")}


@pytest.mark.parametrize("built", ["full.graph", "lazy.graph", "lazy.tables"])
def test_ask_with_a_bound_argument_answers_every_fact_it_matches(synthetic, built):
    """A bound first or third argument is looked up through the store's indexes (a folder's sorted
    facts, its look-up file by third argument): the answers are the full build's facts that match."""
    from polygraph_logic.graph.store.graph_file import Graph
    from polygraph_logic.query.lazy_facts import ask
    full = _facts(synthetic / "full.graph")
    entity = max((args[0] for relation, args in full if relation == "edge"),
                 key=lambda e: sum(1 for relation, args in full if relation == "edge" and e in (args[0], args[2])))
    with Graph(synthetic / built) as graph:
        for question, position in ((f'edge("{entity}", _, _)', 0), (f'edge(_, _, "{entity}")', 2),
                                   (f'edge("{entity}", "RO:0002131", _)', 0)):
            answers = ask(graph, question)
            got = {(a.relation, a.args): frozenset(map(frozenset, a.support_sets)) for a in answers}
            expected = {key: label for key, label in full.items() if key[0] == "edge" and key[1][position] == entity
                        and ("RO:0002131" in question) <= (key[1][1] == "RO:0002131")}
            assert got == expected and len(expected) > 0, question
            assert all(a.complete and a.holds for a in answers)


@pytest.mark.parametrize("built", ["full.graph", "lazy.graph", "lazy.tables"])
def test_ask_with_every_argument_free_streams_every_fact_in_the_order_of_its_arguments(synthetic, built):
    """``answers`` reads the stored facts in batches (100, then 400, ...), merged with the lazy ones:
    every edge of the full build, each once, with its label, in the order of its arguments' text;
    on the command line ``--limit N`` prints the first N of them and says more match."""
    from polygraph_logic.graph.store.graph_file import Graph
    from polygraph_logic.graph.store.rows import fact_key
    from polygraph_logic.query.lazy_facts import answers
    full = {key: label for key, label in _facts(synthetic / "full.graph").items() if key[0] == "edge"}
    assert len(full) > 600  # more than two batches
    with Graph(synthetic / built) as graph:
        streamed = list(answers(graph, "edge(_, _, _)"))
    assert [a.args for a in streamed] == sorted((args for _, args in full), key=fact_key)
    assert {(a.relation, a.args): frozenset(map(frozenset, a.support_sets)) for a in streamed} == full
    assert any(a.lazy for a in streamed) == (built != "full.graph")
    run = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", "ask", str(synthetic / built), "edge(_, _, _)",
                          "--limit", "3"], capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert [line.rsplit(": ", 1)[0] for line in lines if line.startswith("edge(")] == \
        [f"edge({', '.join(json.dumps(v) for v in a.args)}){'  (lazy)' if a.lazy else ''}" for a in streamed[:3]]
    assert lines[-1] == "the first 3 fact(s) matching edge(_, _, _) (--limit 3); more match"


def test_ask_on_the_command_line_gives_the_verdict_of_a_recomputation(synthetic):
    """Each answer's verdict under a source's retraction is what the full build's label says."""
    from polygraph_logic.graph.store.graph_file import Graph
    with Graph(synthetic / "full.graph") as graph:
        target = next(f for f in graph.facts() if f.relation == "edge" and f.args[1] == "RO:0002131"
                      and len(f.support) >= 1)
        sources = dict(graph.query("SELECT id, source FROM assertions").fetchall())
    first = sorted(target.support[0])[0]
    retracted = sources[first]
    question = f'edge("{target.args[0]}", "RO:0002131", _)'
    run = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", "ask", str(synthetic / "lazy.graph"), question,
                          "--retract-source", retracted, "--json", "--sets", "100"],
                         capture_output=True, text=True, check=True)
    answers = json.loads(run.stdout)["answers"]
    full = _facts(synthetic / "full.graph")
    expected = {key: label for key, label in full.items()
                if key[0] == "edge" and key[1][0] == target.args[0] and key[1][1] == "RO:0002131"}
    assert {tuple(a["args"]) for a in answers} == {args for _, args in expected}
    for answer in answers:
        label = expected[("edge", tuple(answer["args"]))]
        holds = any(all(sources[a] != retracted for a in support) for support in label)
        assert answer["verdict"] == ("holds" if holds else "falls")
        assert answer["lazy"] and answer["support_set_count"] == len(label)


def test_a_lazy_graph_keeps_its_declaration_through_a_copy(synthetic, tmp_path):
    from polygraph_logic.graph.store.graph_file import Graph
    from polygraph_logic.query.lazy_facts import lazy_part
    shutil.copy(synthetic / "lazy.graph", tmp_path / "copy.graph")
    with Graph(tmp_path / "copy.graph") as graph:
        assert lazy_part(graph).declared == ['.lazy edge(_, "RO:0002131", _)', '.lazy edge(_, "RO:0002379", _)']
