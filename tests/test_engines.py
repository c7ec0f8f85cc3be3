"""The DuckDB engine (polygraph_logic.engines) against the Python reference engine.

Labels (support sets) and exact flags must be identical: on Figure 1, the synthetic
paper-scale graph and the GO slice (the stored fact tables of both graph files compared
row for row), and on small random programs under caps 1, 2, 3 and none.  The GO slice
skips when ../shared/data is absent.
"""

import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("duckdb")

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.engines import evaluate_duckdb, make_plan  # noqa: E402
from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic.datalog.evaluate import evaluate  # noqa: E402
from polygraph_logic.datalog.program import parse_program  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from go_slice import GO_SKIP, go_inputs  # noqa: E402
from spark_session import spark  # noqa: E402,F401  (the session-scoped fixture; skips without pyspark)

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


def labels_of(model) -> dict:
    """Every fact of a model with its support sets (as sets of names) and exact flag."""
    to_json = model.semiring.to_json
    return {(name, tup): (frozenset(frozenset(s) for s in to_json(label)), label.exact)
            for name in model.relations() for tup, label in model.facts(name).items()}


def stored(path: Path) -> tuple[list, list]:
    """The fact table (relation, args, label, exact) and artifacts of a graph file, sorted."""
    with sqlite3.connect(path) as db:
        facts = sorted(db.execute("SELECT relation, args, label, exact FROM facts"))
        artifacts = sorted(db.execute(
            "SELECT a.id, a.layer, a.content, f.label, f.exact FROM artifacts a JOIN facts f ON f.num = a.fact"))
    return facts, artifacts


def assert_same_graph(tmp_path: Path, assertions, receipts, rules, cap=8, memory_limit=None) -> int:
    files = {}
    for engine in ("python", "duckdb"):
        build = build_graph(assertions, receipts, rules, cap=cap, engine=engine,
                            memory_limit=memory_limit if engine == "duckdb" else None)
        files[engine] = tmp_path / f"{engine}.graph"
        build.write(files[engine])
        if engine == "python":
            reference = labels_of(build.model)
        else:
            assert labels_of(build.model) == reference
    python, duckdb = stored(files["python"]), stored(files["duckdb"])
    assert python[0] == duckdb[0]  # the fact tables, row for row
    assert python[1] == duckdb[1]  # the artifacts with their labels
    return len(python[0])


def test_figure1_graph_file_under_a_memory_limit(tmp_path):
    """Under a limit a round's joins run two at a time: the same graph file."""
    assert assert_same_graph(tmp_path, FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl",
                             [rule_file("ro")], 2, memory_limit="200MB") > 100


@pytest.mark.slow
@pytest.mark.parametrize("cap", [1, 2, 8, None])
def test_figure1_identical_graph_files(tmp_path, cap):
    rows = assert_same_graph(tmp_path, FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl",
                             [rule_file("ro")], cap)
    assert rows > 100


@pytest.mark.slow
def test_synthetic_paper_scale_identical_graph_files(tmp_path):
    from polygraph_logic.graph.synthetic import generate
    generate().write(tmp_path / "inputs")
    rows = assert_same_graph(tmp_path, tmp_path / "inputs" / "assertions.jsonl",
                             tmp_path / "inputs" / "receipts.jsonl", [rule_file("ro")])
    assert rows > 30_000


@pytest.mark.slow
def test_small_synthetic_identical_graph_files(tmp_path):
    from polygraph_logic.graph.synthetic import generate
    generate(seed=3, documents=40, assertions=400, merges=25, summaries=10).write(tmp_path / "inputs")
    assert_same_graph(tmp_path, tmp_path / "inputs" / "assertions.jsonl",
                      tmp_path / "inputs" / "receipts.jsonl", [rule_file("ro")], cap=2)


@pytest.mark.slow
@GO_SKIP
def test_go_slice_identical_graph_files(tmp_path):
    assertions, rules = go_inputs(tmp_path)
    assert assert_same_graph(tmp_path, assertions, [], rules) > 50_000


# Random stratified programs: three binary relations over a few constants, facts tracked
# (an assertion id each, some shared) or background, rules of one to three body atoms.
NODES = ["a", "b", "c", "d"]
RELATIONS = ["e", "f", "g"]


@st.composite
def programs(draw):
    lines = []
    for i in range(draw(st.integers(1, 9))):
        relation = draw(st.sampled_from(["e", "e", "f"]))
        x, y = draw(st.sampled_from(NODES)), draw(st.sampled_from(NODES))
        tracked = draw(st.integers(0, 6))
        lines.append(f'{relation}("{x}", "{y}").' if tracked == 0 else f's{tracked} :: {relation}("{x}", "{y}").')
    variables = ["X", "Y", "Z", "W"]
    for _ in range(draw(st.integers(1, 5))):
        body, used = [], []
        for _ in range(draw(st.integers(1, 3))):
            relation = draw(st.sampled_from(RELATIONS))
            args = []
            for _ in range(2):
                if draw(st.integers(0, 4)) == 0:
                    args.append(f'"{draw(st.sampled_from(NODES))}"')
                else:
                    name = draw(st.sampled_from(variables))
                    args.append(name)
                    used.append(name)
            body.append(f"{relation}({', '.join(args)})")
        if not used:
            continue
        head_args = [draw(st.sampled_from(used)) for _ in range(2)]
        head = draw(st.sampled_from(RELATIONS))
        lines.append(f"{head}({', '.join(head_args)}) :- {', '.join(body)}.")
    return "\n".join(lines)


def conservative_only(got: dict, expected: dict, complete: dict) -> bool:
    """Whether the SQL labels ``got`` differ from the Python engine's ``expected`` only where the
    Python engine marked a label inexact that lacks nothing: its sets are the whole label of
    the uncapped evaluation ``complete``, and the SQL engine gives those sets, exact.

    (The Python engine sums a round's derivations one at a time and caps as it goes: a
    monomial dropped before a later one absorbs it leaves the label marked inexact;
    test_capped_sum_does_not_depend_on_fact_order.)"""
    if got.keys() != expected.keys():
        return False
    for key, (sets, exact) in expected.items():
        if got[key] != (sets, exact) and not (
                not exact and got[key] == (sets, True) and complete[key][0] == sets):
            return False
    return True


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=programs(), cap=st.sampled_from([1, 2, 3, None]), limit=st.sampled_from([None, "200MB"]))
@example(text='s2 :: f("b", "b").\ns1 :: f("a", "c").\ns3 :: f("a", "a").\nf(X, X) :- f("a", X).\n'
              'e(X, X) :- f("a", X), f(Y, Y).', cap=1, limit=None)  # found by CI: e("c", "c")
@example(text='s1 :: e("a", "b").\ns2 :: e("a", "b").\ns1 :: f("b", "b").\nf(X, X) :- f("b", X), e(Y, "b").',
         cap=1, limit=None)  # found by CI: f("b", "b"), inexact by both label engines, exact off the circuit
def test_random_programs_identical_labels(text, cap, limit):
    """Also under a memory limit, where a round's joins run two at a time."""
    try:
        program = parse_program(text)
    except PolygraphError:
        return  # e.g. a rule that defines a relation with another arity; not what is tested here
    # the Python engine's label fixpoint, the algorithm the SQL plan runs (its default reads labels
    # off a circuit, which never multiplies in a derivation whose body holds the fact itself: there
    # a capped label in that body leaves the fact exact, where both label engines mark it inexact)
    expected = labels_of(evaluate(program, "why", cap=cap, circuit=False))
    model, _ = evaluate_duckdb(parse_program(text), cap, limit)
    got = labels_of(model)
    if got != expected and cap is not None:
        # under a cap the Python engine's labels can depend on the order its facts come in
        # (see test_capped_sum_does_not_depend_on_fact_order): where they do, compare nothing;
        # where its label is only marked inexact, the uncapped evaluation says what is missing
        if conservative_only(got, expected, labels_of(evaluate(parse_program(text), "why", cap=None))):
            return
        facts, rules = [line for line in text.splitlines() if ":-" not in line], \
            [line for line in text.splitlines() if ":-" in line]
        other = labels_of(evaluate(parse_program("\n".join(facts[::-1] + rules)), "why", cap=cap, circuit=False))
        if other != expected:
            return
    assert got == expected


def test_conservative_only_accepts_no_false_exact_claim():
    one, two = frozenset({frozenset({"a", "b"})}), frozenset({frozenset({"a", "b"}), frozenset({"c"})})
    key = ("t", ("x",))
    assert conservative_only({key: (one, True)}, {key: (one, False)}, {key: (one, True)})
    assert not conservative_only({key: (one, True)}, {key: (one, False)}, {key: (two, True)})  # c is missing
    assert not conservative_only({key: (one, False)}, {key: (one, True)}, {key: (one, True)})
    assert not conservative_only({}, {key: (one, False)}, {key: (one, True)})


def test_capped_sum_does_not_depend_on_fact_order():
    """t("x") has the support sets a·b, a·c, a·d and a: minimal, only {a} remains.

    The Python engine sums a round's derivations one at a time and caps as it goes: when
    a·b, a·c, a·d come first, cap 2 drops one of them before a absorbs all three, and the
    label is marked inexact though nothing is missing; in the other order it is exact.
    The SQL plan sums a round's derivations as a set, then caps: exact in both orders.
    """
    results = []
    for order in ([1, 2, 3, 4], [4, 3, 2, 1]):
        names = {1: "b", 2: "c", 3: "d", 4: None}
        lines = []
        for i in order:
            lines.append(f'a :: e("x", "{i}").')
            lines.append(f'{names[i]} :: g("{i}").' if names[i] else f'g("{i}").')
        text = "\n".join(lines + ["t(X) :- e(X, Y), g(Y)."])
        label = evaluate_duckdb(parse_program(text), 2)[0].label("t", ("x",))
        python = evaluate(parse_program(text), "why", cap=2).label("t", ("x",))
        assert python.support_sets() == label.support_sets() == [frozenset({"a"})]
        results.append(label.exact)
    assert results == [True, True]


def test_uncovered_rule_is_refused_by_name():
    program = parse_program('s1 :: e("a", "b").\nf(X, Y) :- e(X, Y), X != Y.\n')
    with pytest.raises(PolygraphError) as error:
        make_plan(program, 8)
    assert error.value.code == "engine_unsupported"
    assert "f(X, Y) :- e(X, Y), X != Y" in error.value.message


def test_choice_domain_is_refused_by_name():
    program = parse_program('.decl e(x: symbol, y: symbol)\n.decl f(x: symbol, y: symbol) choice-domain x\n'
                            'e("a", "b").\nf(x, y) :- e(x, y).\n')
    with pytest.raises(PolygraphError) as error:
        make_plan(program, 8)
    assert error.value.code == "engine_unsupported" and "choice-domain" in error.value.message


def test_round_statistics_count_the_delta():
    program = parse_program('s1 :: e("a", "b").\ns2 :: e("b", "c").\ns3 :: e("c", "d").\n'
                            "t(X, Y) :- e(X, Y).\nt(X, Z) :- t(X, Y), e(Y, Z).\n")
    model, stats = evaluate_duckdb(program, None)
    assert [(s.round, s.delta_facts) for s in stats] == [(1, 3), (2, 2), (3, 1), (4, 0)]
    assert sum(s.monomials for s in stats) == 6
    assert str(model.label("t", ("a", "d"))) == "s1·s2·s3"


def test_delta_tables_keep_no_rows_of_earlier_rounds():
    """A round's delta is a new table, not the last one with its rows deleted: DuckDB keeps a
    deleted row's storage in an in-memory table, and every later round scanned it again."""
    from polygraph_logic.engines.duckdb_run import evaluation
    facts = "".join(f's{i} :: e("n{i}", "n{i + 1}").\n' for i in range(40))
    program = parse_program(facts + "t(X, Y) :- e(X, Y).\nt(X, Z) :- t(X, Y), e(Y, Z).\n")
    with evaluation(program, 8) as runner:
        assert len(runner.stats) > 10  # many rounds, each with a delta
        stored = dict(runner.con.execute("SELECT table_name, estimated_size FROM duckdb_tables()").fetchall())
        live = {name: runner.con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0] for name in stored}
    deltas = [name for name in stored if name.startswith("d")]
    assert deltas and all(stored[name] == live[name] == 0 for name in deltas)
    assert live[runner.plan.table("t")] == 40 * 41 // 2


def test_rounds_with_small_deltas_unite_more_joins_under_a_limit(monkeypatch):
    """Under a memory limit the first round, and a round whose deltas hold more than
    SMALL_DELTA facts, unite JOINS_UNDER_LIMIT joins a statement; the other rounds one per
    JOIN_MEMORY of the limit; the labels stay the Python engine's."""
    from polygraph_logic.engines import duckdb_run
    from polygraph_logic.engines.sql_plan import Plan
    facts = "".join(f's{i} :: e("n{i}", "n{i + 1}").\n' for i in range(12))
    text = facts + "t(X, Y) :- e(X, Y).\nt(X, Z) :- t(X, Y), e(Y, Z).\nt(X, Z) :- e(X, Y), t(Y, Z).\n"
    bounds, contributions = [], Plan.contributions

    def recorded(self, d, shapes, relation, deltas, joins=None, present=None):
        bounds.append((deltas is None, joins))
        return contributions(self, d, shapes, relation, deltas, joins, present)
    monkeypatch.setattr(Plan, "contributions", recorded)
    monkeypatch.setattr(duckdb_run, "SMALL_DELTA", 5)  # rounds of t: 12, 11, 10, ... new facts
    model, stats = evaluate_duckdb(parse_program(text), 8, "200MB")
    assert labels_of(model) == labels_of(evaluate(parse_program(text), "why", cap=8))
    limited = duckdb_run.connect("200MB")
    small = duckdb_run.memory_limit_bytes(limited) // duckdb_run.JOIN_MEMORY
    limited.close()
    assert small > duckdb_run.JOINS_UNDER_LIMIT
    assert bounds[0] == (True, duckdb_run.JOINS_UNDER_LIMIT)
    # a round is planned with the bound the round before's delta gives (the last found none)
    deltas = [r.delta_facts for r in stats]
    assert deltas[-1] == 0 and min(deltas[:-1]) <= 5 < max(deltas[:-1])
    assert [joins for first, joins in bounds[1:]] == [
        duckdb_run.JOINS_UNDER_LIMIT if facts > 5 else small for facts in deltas[:-1]]


def test_delta_variants_no_rule_of_which_matches_the_delta_are_left_out(monkeypatch):
    """A chain of sub-properties (one shape, its constants in a parameter table), a chain rule
    and an inverse rule: a round's delta holds one predicate, and a shape none of whose rules'
    constants the delta holds is not joined at all.  The labels are the Python
    engine's, and those of the same evaluation with nothing left out."""
    from polygraph_logic.engines import driver, duckdb_run
    from polygraph_logic.engines.sql_plan import Shape, feasible
    rules = "".join(f'e(X, "p{i + 1}", Y) :- e(X, "p{i}", Y).\n' for i in range(6))
    # in e's stratum too: a chain and an inverse, each matched by one predicate of the chain
    text = ('s1 :: e("a", "p0", "b").\ns2 :: e("b", "p0", "c").\n' + rules
            + 'e(X, "q", Z) :- e(X, "p2", Y), e(Y, "p2", Z).\ne(Y, "inv", X) :- e(X, "p5", Y).\n')
    expected = labels_of(evaluate(parse_program(text), "why", cap=8))
    asked, statements = [], []  # the delta atoms joined
    found, derive = driver.Runner.present, duckdb_run.DuckDBRunner.derive
    monkeypatch.setattr(driver.Runner, "present", lambda self, *key: asked.append(key) or found(self, *key))
    monkeypatch.setattr(duckdb_run.DuckDBRunner, "derive",
                        lambda self, relation, parts: (
                            statements.append(len(re.findall(r"\bd\d+ AS t", " ".join(parts)))),
                            derive(self, relation, parts)))
    counts, default = {}, driver.Runner.present_limit
    for limit in (default, 0):  # 0: every column has "too many" values
        monkeypatch.setattr(driver.Runner, "present_limit", limit)
        statements.clear()
        model, _ = evaluate_duckdb(parse_program(text), 8)
        assert labels_of(model) == expected
        counts[limit] = sum(statements)
    assert ("e", 1) in asked and counts[default] < counts[0]
    shape = Shape(0, ("e", (("v", 0), ("p", 0), ("v", 1))), (("e", (("v", 0), ("p", 1), ("v", 1))),),
                  params=[(7, 5), (8, 6)])
    assert feasible(shape, 0, lambda relation, k: frozenset({6}))
    assert not feasible(shape, 0, lambda relation, k: frozenset({7, 8}))  # the head's constants: not asked
    assert feasible(shape, 0, lambda relation, k: None)  # not known: nothing ruled out


def test_memory_limit_bytes_read_back():
    from polygraph_logic.engines.duckdb_run import connect, memory_limit_bytes
    for limit, mib in (("48MB", 45.7), ("2GiB", 2048.0)):
        con = connect(limit)
        assert abs(memory_limit_bytes(con) / 2 ** 20 - mib) < 0.1
        con.close()


def test_cli_build_with_duckdb_is_read_by_whatif(tmp_path, capsys):
    out = {}
    for engine in ("python", "duckdb"):
        graph = tmp_path / f"{engine}.graph"
        assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                     str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", "--engine", engine, "-o", str(graph)]) == 0
        capsys.readouterr()
        assert main(["whatif", str(graph), "--assertion", "a12", "--json"]) == 0
        out[engine] = json.loads(capsys.readouterr().out)
        out[engine].pop("elapsed_ms", None)
    assert out["python"] == out["duckdb"]
    assert "a12" in json.dumps(out["duckdb"])


def test_memory_limit_is_checked(tmp_path):
    with pytest.raises(PolygraphError) as error:
        build_graph(FIGURE1 / "assertions.jsonl", None, [], engine="duckdb", memory_limit="lots")
    assert error.value.code == "bad_argument"
    with pytest.raises(PolygraphError):
        build_graph(FIGURE1 / "assertions.jsonl", None, [], engine="python", memory_limit="4GB")


def _normalized(monomials: list[tuple[int, ...]], exact: bool, cap: int | None):
    """The definition, by brute force: the monomials no other one is a proper subset of, by
    (size, numbers), the first ``cap``; exact unless the cap dropped one (1 is always exact)."""
    sets = set(monomials)
    kept = sorted((m for m in sets if not any(set(o) < set(m) for o in sets)), key=lambda m: (len(m), m))
    label = kept if cap is None else kept[:cap]
    return [list(m) for m in label], label == [()] or (exact and len(label) == len(kept))


_MONOMIAL = st.lists(st.integers(0, 11), max_size=4, unique=True).map(lambda m: tuple(sorted(m)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(_MONOMIAL, min_size=1, max_size=40, unique=True), st.booleans()),
                min_size=1, max_size=30),
       st.sampled_from([1, 2, 3, 8, None]))
def test_duckdb_normalize_is_the_definition(rows, cap):
    """labels.normalize in DuckDB (ordering first, then minimising only the first 2 * cap
    monomials when that settles the label) against the definition, on lists of up to 40
    monomials: longer than 2 * cap, with more or fewer than ``cap`` minimal ones, with 1."""
    import duckdb

    from polygraph_logic.engines import sql_labels as labels
    from polygraph_logic.engines.dialect import DUCKDB

    def duck_list(label):
        return "[" + ", ".join(f"[{', '.join(map(str, m))}]::INTEGER[]" for m in label) + "]"

    con = duckdb.connect()
    values = ", ".join(f"({i}, {duck_list(p)}, {e})" for i, (p, e) in enumerate(rows))
    got = con.execute(labels.normalize(DUCKDB, f"SELECT * FROM (VALUES {values}) v(k0, p, e)", ["k0"], cap)
                      + " ORDER BY k0").fetchall()
    assert [(label, exact) for _, label, exact in got] == [_normalized(p, e, cap) for p, e in rows]


def _random_label(rng) -> list[list[int]]:
    monomials = {tuple(sorted(rng.sample(range(6), rng.randint(0, 3)))) for _ in range(rng.randint(1, 4))}
    return [list(m) for m in monomials]


@pytest.mark.slow
def test_spark_dialect_labels_equal_duckdb(spark):
    """The label SQL in the Spark dialect (transform, filter, array_sort, ...) gives DuckDB's
    products and sums, on random labels under caps 1, 2 and none."""
    import random

    import duckdb

    from polygraph_logic.engines import sql_labels as labels
    from polygraph_logic.engines.dialect import DUCKDB, SPARK

    rng = random.Random(1)
    rows = [(i, _random_label(rng), rng.random() < 0.8, _random_label(rng), rng.random() < 0.8) for i in range(200)]

    def spark_list(label):
        return "array(" + ", ".join(f"cast(array({', '.join(map(str, m))}) AS ARRAY<INT>)" for m in label) + ")"

    def duck_list(label):
        return "[" + ", ".join(f"[{', '.join(map(str, m))}]::INTEGER[]" for m in label) + "]"

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES " + ", ".join(
        f"({i}, {duck_list(l)}, {le}, {duck_list(r)}, {re})" for i, l, le, r, re in rows) + ") v(k0, l, le, r, re)")
    spark.sql("SELECT * FROM VALUES " + ", ".join(
        f"({i}, {spark_list(l)}, {le}, {spark_list(r)}, {re})" for i, l, le, r, re in rows)
        + " AS v(k0, l, le, r, re)").createOrReplaceTempView("engines_labels")

    def rows_of(result):
        return sorted((k, [list(m) for m in label], exact) for k, label, exact in result)

    summed = "SELECT k0 % 40 AS k0, l AS label, le AS exact FROM {}"
    for cap in (1, 2, None):
        for make, source in ((labels.times, "SELECT * FROM {}"), (labels.plus_group, summed)):
            duck = rows_of(con.execute(make(DUCKDB, source.format("t"), ["k0"], cap)).fetchall())
            sparked = rows_of(tuple(r) for r in spark.sql(make(SPARK, source.format("engines_labels"), ["k0"], cap)).collect())
            assert duck == sparked and duck


def test_duckdb_build_records_its_inputs_as_the_python_build():
    builds = [build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [], engine=engine)
              for engine in ("python", "duckdb")]
    assert builds[0].inputs == builds[1].inputs and len(builds[1].inputs) == 2
    assert set(builds[1].seconds) == {"load", "compile", "evaluate"}
    assert builds[1].rounds and builds[1].rounds[0].round == 1
