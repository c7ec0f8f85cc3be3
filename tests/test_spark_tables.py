"""``build --engine spark --tables DIR``: the tables folder written by Spark from its own evaluation.

Two references the Spark writer shares no code with: the folder DuckDB's writer makes for
the same inputs (build_graph with engine duckdb, Spark must equal it table for table), and the
folder ``export-tables`` makes from the Python engine's graph file.  Checked on Figure 1
(caps 2, 8 and none), Figure 1 with contradictions and NOT assertions, and the synthetic
paper-scale graph; then the Spark folder read by sql-whatif (DuckDB and Spark) and
import-tables, the command line, and the errors (a bad target before any evaluation, a
failure while writing that leaves the earlier folder).

Every test evaluates on Spark (Figure 1: about a minute on two shared cores): marked slow,
skipped when pyspark or Java is missing.
"""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.graph.store.sql_whatif import open_tables  # noqa: E402
from polygraph_logic.graph.tables.layout import export_tables, import_tables  # noqa: E402
from polygraph_logic.graph.tables.compare import differences  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402
from polygraph_logic.query.whatif import Deletion, what_if  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spark_session import spark  # noqa: E402,F401  (the session-scoped fixture)
from test_contradictions import variant_inputs  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
INPUTS = (FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl")


def references(folder: Path, assertions, receipts, rules, cap=8) -> tuple[Path, Path]:
    """The DuckDB folder and the Python engine's graph file exported, for the same inputs."""
    build_graph(assertions, receipts, rules, engine="duckdb", cap=cap, output=folder / "duckdb", tables=True)
    build_graph(assertions, receipts, rules, cap=cap).write(folder / "python.graph")
    export_tables(folder / "python.graph", folder / "python")
    return folder / "duckdb", folder / "python"


def spark_equals_references(folder: Path, assertions, receipts, rules, cap=8) -> Path:
    duck, python = references(folder, assertions, receipts, rules, cap)
    built = build_graph(assertions, receipts, rules, engine="spark", cap=cap, output=folder / "spark", tables=True)
    assert differences(duck, folder / "spark") == []
    assert differences(python, folder / "spark") == []
    meta = json.loads((duck / "meta.json").read_text())
    assert built.rows == meta["rows"] and built.background_edges == int(meta["meta"]["background_edges"])
    layers = json.loads(meta["meta"]["stats"])["layers"]
    assert built.layers == {layer: entry["artifacts"] for layer, entry in layers.items()}
    assert built.truncated == sum(entry["inexact"] for entry in layers.values())
    return folder / "spark"


@pytest.mark.parametrize("cap", [2, None])  # cap 8: the command's build below
def test_figure1_folder_equals_duckdbs_and_the_python_export(spark, tmp_path, monkeypatch, cap):
    """The labels Spark evaluates (the Python engine's, which the export holds) and the folder it
    writes.  At cap 2 the inputs travel as for a cluster: a cluster's executors do not see this
    machine's files, so the evaluation's facts and the writer's values, assertions, receipts and
    sentences go through createDataFrame instead of files (spark_run.local_cores is None for a
    cluster master); the folder is the same."""
    if cap == 2:
        from polygraph_logic.engines import spark_run
        monkeypatch.setattr(spark_run, "local_cores", lambda master: None)
    spark_equals_references(tmp_path, *INPUTS, [rule_file("ro")], cap)


def test_contradictions_and_not_assertions(spark, tmp_path):
    assertions, receipts = variant_inputs(tmp_path)
    folder = spark_equals_references(tmp_path, assertions, receipts, [rule_file("ro"), rule_file("contradictions")])
    layers = json.loads(json.loads((folder / "meta.json").read_text())["meta"]["stats"])["layers"]
    assert layers["contradiction"]["artifacts"] > 0


def test_synthetic_paper_scale_folder_equals_duckdbs(spark, tmp_path):
    from polygraph_logic.graph.synthetic import generate
    generate(seed=0).write(tmp_path / "inputs")
    folder = spark_equals_references(tmp_path, tmp_path / "inputs" / "assertions.jsonl",
                                     tmp_path / "inputs" / "receipts.jsonl", [rule_file("ro")])
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["rows"]["facts"] > 30_000 and "sentence" in json.loads(meta["meta"]["stats"])["layers"]


@pytest.fixture(scope="module")
def command_folder(spark, tmp_path_factory):
    """Figure 1 at cap 8 written by the command (``build --engine spark --master local[2] --tables``)
    and its references; the command's --json report."""
    folder = tmp_path_factory.mktemp("command")
    duck, python = references(folder, *INPUTS, [rule_file("ro")])
    code = main(["build", "--assertions", str(INPUTS[0]), "--receipts", str(INPUTS[1]), "--rules", "ro",
                 "--engine", "spark", "--master", "local[2]", "--tables", str(folder / "spark"), "--json"])
    return folder / "spark", duck, python, code


def test_command_writes_the_folder(command_folder, capsys):
    spark_folder, duck, python, code = command_folder
    assert code == 0
    assert differences(duck, spark_folder) == [] and differences(python, spark_folder) == []
    assert sorted(p.name for p in spark_folder.iterdir()) == sorted(p.name for p in duck.iterdir())
    assert [p.name for p in spark_folder.parent.iterdir() if p.name.startswith(".")] == []  # no partial folder


def test_sql_whatif_on_the_spark_folder_gives_duckdbs_verdicts(command_folder, spark, capsys):
    """Every source retracted alone and all at once, read by DuckDB and by Spark SQL, against the
    DuckDB folder's verdicts; then the command on the Spark folder."""
    spark_folder, duck, _, _ = command_folder
    sources = sorted({json.loads(line)["source"] for line in INPUTS[0].read_text().splitlines() if line.strip()})
    deletions = [Deletion(sources=(source,)) for source in sources] + [Deletion(sources=tuple(sources))]
    with open_tables(duck, "duckdb") as expected, open_tables(spark_folder, "duckdb") as by_duckdb, \
            open_tables(spark_folder, "spark") as by_spark:
        for deletion in deletions:
            rows = expected.what_if(deletion).rows
            assert rows and by_duckdb.what_if(deletion).rows == rows, deletion
            assert by_spark.what_if(deletion).rows == rows, deletion
    capsys.readouterr()
    assert main(["sql-whatif", str(spark_folder), "--engine", "spark", "--retract-source", sources[0], "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    with open_tables(duck, "duckdb") as expected:
        outcome = expected.what_if(Deletion(sources=(sources[0],)))
    assert (report["touched"], report["dead"]) == (outcome.touched, outcome.dead)


def test_import_tables_of_the_spark_folder_answers_as_the_python_graph(command_folder, tmp_path):
    spark_folder, _, python, _ = command_folder
    import_tables(spark_folder, tmp_path / "imported.graph")
    deletion = Deletion(sources=("PMID:39973430",))
    with Graph(python.parent / "python.graph") as original, Graph(tmp_path / "imported.graph") as imported:
        expected, got = what_if(original, deletion), what_if(imported, deletion)
        assert expected.dead and (got.touched, got.dead, got.kept) == (expected.touched, expected.dead, expected.kept)


def test_a_bad_target_is_refused_before_evaluating(tmp_path, monkeypatch):
    from polygraph_logic.graph.tables import spark_build  # imported first: it binds spark_run's evaluation

    def evaluated(*args, **kwargs):
        raise AssertionError("evaluated before the target was checked")

    # patched where it is called, and so undone after: patching spark_run's name instead leaked into
    # every later Spark build when this test was the first to import spark_build (CI, by test order)
    monkeypatch.setattr(spark_build, "evaluation", evaluated)
    with pytest.raises(PolygraphError) as error:
        build_graph(*INPUTS, [rule_file("ro")], engine="spark", output=tmp_path / "missing" / "t", tables=True)
    assert error.value.code == "io_error"
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(PolygraphError) as error:
        build_graph(*INPUTS, [rule_file("ro")], engine="spark", output=tmp_path / "file", tables=True)
    assert error.value.code == "file_exists"
    with pytest.raises(PolygraphError) as error:
        build_graph(*INPUTS, [rule_file("ro")], engine="spark", output="", tables=True)
    assert error.value.code == "bad_argument"


def test_a_failure_while_writing_leaves_the_earlier_folder(spark, tmp_path, capsys):
    """A rule that derives a merge passes evaluation and fails while writing: the earlier folder
    stays as it was, no partial folder is left, and the command says it in one line."""
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "meta.json").write_text("{}")  # an earlier folder (any folder with meta.json is replaced)
    bad = tmp_path / "bad.dl"
    bad.write_text('merge("merge:from-a-rule") :- claim(X, "RO:0002211", Y).\n')
    code = main(["build", "--assertions", str(INPUTS[0]), "--receipts", str(INPUTS[1]), "--rules", "ro",
                 "--rules", str(bad), "--engine", "spark", "--tables", str(folder)])
    assert code != 0
    err = capsys.readouterr().err
    assert "bad_program: 1 merge facts come from no receipt" in err and "Traceback" not in err
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json"] and (folder / "meta.json").read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_memory_limit_is_duckdbs_alone(tmp_path, capsys):
    code = main(["build", "--assertions", str(INPUTS[0]), "--receipts", str(INPUTS[1]), "--rules", "ro",
                 "--engine", "spark", "--memory-limit", "1GB", "--tables", str(tmp_path / "t")])
    assert code == 2 and "bad_argument: memory_limit (--memory-limit) applies to engine duckdb only" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_texts_with_quotes_escapes_and_non_ascii_survive_the_transport(spark, tmp_path):
    """Values and assertions travel to Spark as JSON Lines: quotes, backslashes, commas, a newline,
    accents and a character outside the BMP come out as DuckDB's folder has them."""
    rows = [{"id": "q1", "source": "PMID:1", "subject": 'gene "A", \\ the first', "predicate": "RO:0002211",
             "object": "Zellteilung é", "text": "line one\nline two 😀"},
            {"id": "q2", "source": "PMID:2", "subject": "Zellteilung é", "predicate": "RO:0002211",
             "object": "apoptosis, 'late'"}]
    assertions = tmp_path / "assertions.jsonl"
    assertions.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    duck, python = references(tmp_path, assertions, None, [rule_file("ro")])
    build_graph(assertions, None, [rule_file("ro")], engine="spark", output=tmp_path / "spark", tables=True)
    assert differences(duck, tmp_path / "spark") == [] and differences(python, tmp_path / "spark") == []
    with open_tables(tmp_path / "spark", "duckdb") as tables:
        assert tables.run("SELECT text FROM assertions WHERE id = 'q1'") == [(rows[0]["text"],)]
