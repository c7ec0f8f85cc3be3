"""Spark SQL on the Parquet label tables: it reads the labels DuckDB wrote, and its what-if equals
DuckDB's, a brute-force label verdict and the Python what-if's touched set.

Marked slow; skips when pyspark or Java is missing (pip install ".[spark]"); one local[2] session for every test.
"""

import random
import sys
from pathlib import Path

import pytest

from polygraph_logic.graph.store.sql_whatif import DuckDBTables, SparkTables
from polygraph_logic.graph.tables.layout import export_tables, table_path
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion, what_if

sys.path.insert(0, str(Path(__file__).resolve().parent))
from go_slice import GO_SKIP, go_inputs  # noqa: E402
from spark_session import spark  # noqa: E402,F401  (the session-scoped fixture)
from test_tables import build_figure1, build_synthetic, label_verdicts, labels, random_deletions  # noqa: E402

duckdb = pytest.importorskip("duckdb")
# a JVM start (about 25 s on the shared 2-core machine) and a Spark job per what-if: .ci/run runs them
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["figure1", "synthetic"])
def tables(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(request.param)
    path = (build_figure1 if request.param == "figure1" else build_synthetic)(directory)
    export_tables(path, directory / "tables")
    return path, directory / "tables"


def test_spark_reads_the_labels_duckdb_wrote(spark, tables):
    _, folder = tables
    facts = str(table_path(folder, "facts"))
    read = {row["num"]: ([list(s) for s in row["label"]], row["exact"], row["sets"])
            for row in spark.read.parquet(facts).select("num", "label", "exact", "sets").collect()}
    expected = {num: (label, exact, sets) for num, label, exact, sets in duckdb.connect().execute(
        f"SELECT num, label, exact, sets FROM read_parquet('{facts}')").fetchall()}
    assert read == expected and len(read) > 100


def test_spark_what_if_equals_duckdb_python_and_brute_force(spark, tables):
    path, folder = tables
    sql = SparkTables(folder, session=spark)
    with Graph(path) as graph, DuckDBTables(folder) as duck:
        artifacts = labels(graph)
        for deletion in random_deletions(graph, random.Random(11), 6):
            where = str(deletion)
            outcome = sql.what_if(deletion)
            assert outcome.rows == duck.what_if(deletion).rows, where
            touched, dead, uncertain = label_verdicts(graph, deletion, artifacts)
            assert (set(outcome.touched), set(outcome.dead), set(outcome.uncertain)) == (touched, dead, uncertain), where
            assert outcome.touched == what_if(graph, deletion, "trust-all").touched, where
            assert outcome.deleted == len(deletion.resolve(graph)), where


def test_spark_names_unknown_deletions(spark, tables):
    _, folder = tables
    with pytest.raises(PolygraphError) as error:
        SparkTables(folder, session=spark).what_if(Deletion(assertions=("no-such-assertion",)))
    assert error.value.code == "unknown_deletion" and "no-such-assertion" in str(error.value)


def test_sql_whatif_command_on_spark(spark, tables, capsys):
    import json

    from polygraph_logic.cli import main
    path, folder = tables
    with Graph(path) as graph:
        source = graph.distinct("source")[0]
        touched, dead, _ = label_verdicts(graph, Deletion(sources=(source,)))
    assert main(["sql-whatif", str(folder), "--engine", "spark", "--retract-source", source, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engine"] == "spark" and (set(report["touched"]), set(report["dead"])) == (touched, dead)


def _outcome(graph, deletion, policy, exact):
    from polygraph_logic.query.rederive import Rederiver
    outcome = what_if(graph, deletion, policy, exact=exact, rederiver=Rederiver(graph) if exact else None)
    report = outcome.to_json(listing=True, graph=graph)
    report.pop("elapsed_ms", None)
    return report


def test_whatif_read_by_spark_is_the_whatif(spark, tables):
    """``whatif --engine spark``: the one what-if, its rows read by Spark SQL, equals the what-if
    on the graph file under every policy, with and without re-derivation."""
    from polygraph_logic.graph.store.spark_store import SparkStore
    path, folder = tables
    with Graph(path) as file, Graph(folder, store=SparkStore(folder, session=spark)) as read:
        deletions = random_deletions(file, random.Random(5), 4) + [Deletion(kinds=("model_hypothesis",))]
        for deletion in deletions:
            for policy, exact in (("trust-all", True), ("trust-all", False), ("deployed", False), ("flat", False),
                                  ("distrust:summary", True)):
                assert _outcome(read, deletion, policy, exact) == _outcome(file, deletion, policy, exact), \
                    (str(deletion), policy, exact)


def test_whatif_engine_spark_command(spark, tables, capsys):
    import json

    from polygraph_logic.cli import main
    path, folder = tables
    with Graph(path) as graph:
        source = graph.distinct("source")[0]
    answers = []
    for target, engine in ((folder, ["--engine", "spark"]), (path, [])):
        assert main(["whatif", str(target), "--retract-source", source, "--policy", "deployed", "--json", *engine]) == 0
        report = json.loads(capsys.readouterr().out)
        report.pop("elapsed_ms")
        answers.append(report)
    assert answers[0] == answers[1]
    assert main(["whatif", str(path), "--retract-source", source, "--engine", "spark"]) == 2
    assert "reads graph folders" in capsys.readouterr().err


def test_a_spark_failure_is_one_error_line(spark, tables, tmp_path):
    import shutil
    _, folder = tables
    copy = tmp_path / "tables"
    shutil.copytree(folder, copy)
    sql = SparkTables(copy, session=spark)
    (copy / "mentions.parquet").unlink()  # after the views were registered: the query's scan fails
    with Graph(tables[0]) as graph:
        source = graph.distinct("source")[0]
    with pytest.raises(PolygraphError) as error:
        sql.what_if(Deletion(sources=(source,)))
    assert error.value.code == "spark_error" and "\n" not in str(error.value)


# --- build --engine spark: the plan of engines/plan.py run on Spark SQL (engines/spark_run.py)

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


def model_labels(model) -> dict:
    """Every fact of a model with its support sets (as sets of assertion ids) and exact flag."""
    to_json = model.semiring.to_json
    return {(name, tup): (frozenset(frozenset(s) for s in to_json(label)), label.exact)
            for name in model.relations() for tup, label in model.facts(name).items()}


def spark_equals_python(spark, assertions, receipts, cap, rules=None) -> int:
    """Builds with the Python engine and with Spark (in the shared session); the labels must be
    identical, fact for fact; returns the number of facts."""
    from polygraph_logic import build_graph
    from polygraph_logic.engines.spark_run import evaluate_spark
    from polygraph_logic.graph.build import prepare_build
    from polygraph_logic.resources import rule_file

    rules = rules or [rule_file("ro")]
    python = model_labels(build_graph(assertions, receipts, rules, cap=cap).model)
    prepared = prepare_build(assertions, receipts, rules, cap)
    model, rounds = evaluate_spark(prepared.program, cap, session=spark)
    assert model_labels(model) == python
    assert rounds and rounds[0].round == 1
    return len(python)


# Figure 1's labels at caps 2 and none: test_spark_tables.py's folder tests (the folder Spark
# writes from its evaluation equals the Python engine's graph exported), and cap 8: the CLI test below


def test_spark_build_of_a_small_synthetic_graph_equals_python(spark, tmp_path):
    from polygraph_logic.graph.synthetic import generate
    generate(seed=3, documents=40, assertions=400, merges=25, summaries=10).write(tmp_path / "inputs")
    assert spark_equals_python(spark, tmp_path / "inputs" / "assertions.jsonl",
                               tmp_path / "inputs" / "receipts.jsonl", 2) > 1000


@GO_SKIP
def test_spark_build_of_the_go_slice_equals_python(spark, tmp_path):
    """The GO slice (1,984 annotations, the GO graph as background, RO's class rules and the
    existential rules): 95,716 facts, 9 rounds on Spark, about 80 s on two cores."""
    assertions, rules = go_inputs(tmp_path)
    assert spark_equals_python(spark, assertions, [], 8, rules) > 50_000


def test_spark_rounds_are_duckdb_rounds(spark):
    """The loop is driver.py's for both engines: the same rounds with the same deltas."""
    from polygraph_logic.engines import evaluate_duckdb
    from polygraph_logic.engines.spark_run import evaluate_spark
    from polygraph_logic.datalog.program import parse_program

    text = ('s1 :: e("a", "b").\ns2 :: e("b", "c").\ns3 :: e("c", "d").\ne("d", "e").\n'
            "t(X, Y) :- e(X, Y).\nt(X, Z) :- t(X, Y), e(Y, Z).\nu(X) :- t(X, \"e\").\n")
    model, rounds = evaluate_spark(parse_program(text), None, session=spark)
    assert str(model.label("t", ("a", "d"))) == "s1·s2·s3" and str(model.label("u", ("d",))) == "1"
    _, duck = evaluate_duckdb(parse_program(text), None)
    assert [(r.stratum, r.round, r.delta_facts, r.monomials) for r in rounds] == \
        [(r.stratum, r.round, r.delta_facts, r.monomials) for r in duck]
    assert [(r.round, r.delta_facts) for r in rounds if r.stratum == 0] == [(1, 4), (2, 3), (3, 2), (4, 1), (5, 0)]


def test_cli_build_with_spark_writes_the_python_graph(spark, tmp_path, capsys):
    import json
    import sqlite3

    from polygraph_logic.cli import main

    def rows(path):
        with sqlite3.connect(path) as db:
            return sorted(db.execute("SELECT relation, args, label, exact FROM facts")), \
                sorted(db.execute("SELECT a.id, a.layer, f.label, f.exact FROM artifacts a JOIN facts f ON f.num = a.fact"))

    out = {}
    for engine in ("python", "spark"):
        graph = tmp_path / f"{engine}.graph"
        extra = ["--master", "local[2]"] if engine == "spark" else []
        assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                     str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", "--engine", engine, *extra,
                     "-o", str(graph), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["engine"] == engine
        assert main(["whatif", str(graph), "--assertion", "a12", "--json"]) == 0
        out[engine] = json.loads(capsys.readouterr().out)
        out[engine].pop("elapsed_ms", None)
    assert out["python"] == out["spark"] and rows(tmp_path / "python.graph") == rows(tmp_path / "spark.graph")


def test_spark_build_without_pyspark_names_the_extra(monkeypatch):
    from polygraph_logic.engines import spark as spark_module
    from polygraph_logic import build_graph
    monkeypatch.setattr(spark_module, "spark_available", lambda: 'pyspark is not installed: pip install "polygraph_logic[spark]"')
    with pytest.raises(PolygraphError) as error:  # a master whose session was never started: the check runs
        build_graph(FIGURE1 / "assertions.jsonl", None, [], engine="spark", master="local[1]")
    assert error.value.code == "missing_dependency" and "[spark]" in error.value.message


def test_spark_options_belong_to_their_engine():
    from polygraph_logic import build_graph
    for engine, options in (("python", {"master": "local[2]"}), ("duckdb", {"master": "local[2]"}),
                            ("spark", {"memory_limit": "4GB"})):
        with pytest.raises(PolygraphError) as error:
            build_graph(FIGURE1 / "assertions.jsonl", None, [], engine=engine, **options)
        assert error.value.code == "bad_argument"


def test_a_spark_build_failure_is_one_error_line(spark, monkeypatch):
    from polygraph_logic.engines.sql_plan import Plan
    from polygraph_logic.engines.spark_run import evaluate_spark
    from polygraph_logic.datalog.program import parse_program
    monkeypatch.setattr(Plan, "merge", lambda self, d, relation, contributions: "SELECT no_such_column FROM nowhere")
    with pytest.raises(PolygraphError) as error:
        evaluate_spark(parse_program('s1 :: e("a", "b").\nt(X, Y) :- e(X, Y).\n'), 8, session=spark)
    assert error.value.code == "spark_error" and "\n" not in str(error.value) and "nowhere" in str(error.value)


def test_local_masters_tuning_is_by_their_cores():
    """A local master's evaluation is tuned to its worker threads (shuffle partitions, coalesced
    unions); a cluster's is left to Spark."""
    import os

    from polygraph_logic.engines.spark_run import local_cores
    masters = ("local", "local[2]", "local[3,4]", "local[*]", "spark://host:7077", "local-cluster[2,1,1024]")
    assert [local_cores(m) for m in masters] == [1, 2, 3, os.cpu_count() or 1, None, None]
