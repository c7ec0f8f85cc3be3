"""Spark SQL on the Parquet label tables: it reads the labels DuckDB wrote, and its what-if equals
DuckDB's, a brute-force label verdict and the Python what-if's touched set.

Marked slow; skips when pyspark or Java is missing (pip install ".[spark]"); one local[2] session for every test.
"""

import random
import sys
from pathlib import Path

import pytest

from polygraph_logic.engines.sql_whatif import DuckDBTables, SparkTables
from polygraph_logic.engines.tables import export_tables, table_path
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store import Graph
from polygraph_logic.whatif import Deletion, what_if

sys.path.insert(0, str(Path(__file__).resolve().parent))
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
