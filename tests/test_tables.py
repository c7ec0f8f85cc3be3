"""Label tables (Parquet): graph -> tables -> graph gives the same rows; the SQL what-if on DuckDB
equals a brute-force label verdict and the Python what-if's label-level verdicts.

Figure 1, the paper-scale synthetic graph and the GO slice (both marked slow, run by .ci/run; the GO slice skipped when the data is absent).
"""

import json
import pickle
import random
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.graph.store.sql_whatif import DuckDBTables, deletion_rows
from polygraph_logic.graph.tables.layout import export_tables, import_tables, table_path
from polygraph_logic.errors import PolygraphError
from polygraph_logic import build_graph
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.evidence import EvidenceView
from polygraph_logic.query.whatif import Deletion, what_if

duckdb = pytest.importorskip("duckdb")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from circuits import without_circuit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RO = ROOT / "rules" / "ro.dl"
GO_DATA = ROOT.parent / "shared" / "data" / "go-pombase"

# --- graphs, built once per module ---------------------------------------------------------


def build_figure1(directory: Path) -> Path:
    path = directory / "figure1.graph"
    build_graph(ROOT / "examples" / "figure1" / "assertions.jsonl", ROOT / "examples" / "figure1" / "receipts.jsonl",
                [RO]).write(path)
    return path


def build_synthetic(directory: Path) -> Path:
    """The paper-scale synthetic graph (seed 0: 2,800 assertions, about 27,000 artifacts)."""
    from polygraph_logic.graph.synthetic import generate
    generate(seed=0).write(directory / "inputs")
    path = directory / "synthetic.graph"
    build_graph(directory / "inputs" / "assertions.jsonl", directory / "inputs" / "receipts.jsonl", [RO]).write(path)
    return path


def build_go(directory: Path) -> Path:
    if not (GO_DATA / "truncated-pombase.gpad").exists():
        pytest.skip(f"the Gene Ontology slice is not at {GO_DATA}")
    from polygraph_logic.importers import read_gpad, read_obographs, write_background
    from polygraph_logic.resources import rule_file
    assertions, _ = read_gpad(GO_DATA / "truncated-pombase.gpad")
    edges, _, _ = read_obographs(GO_DATA / "go-truncated-pombase.json")
    write_background(directory / "background.dl", edges)
    path = directory / "go.graph"
    build_graph(assertions, [], [rule_file("ro-class"), rule_file("existential"), directory / "background.dl"]).write(path)
    return path


BUILDERS = {"figure1": build_figure1, "synthetic": build_synthetic, "go": build_go}


# the GO slice is a whole build of the slice: marked slow, as test_go_slice.py's builds are
@pytest.fixture(scope="module", params=["figure1", pytest.param("synthetic", marks=pytest.mark.slow), pytest.param("go", marks=pytest.mark.slow)])
def converted(request, tmp_path_factory):
    """(graph file, its tables folder, the graph file imported back from the tables)."""
    directory = tmp_path_factory.mktemp(request.param)
    if request.param == "figure1":  # build_figure1's graph, built once for every module (conftest.py)
        path = directory / "figure1.graph"
        shutil.copy(request.getfixturevalue("figure1_graph"), path)
    else:
        path = BUILDERS[request.param](directory)
    export_tables(path, directory / "tables")
    import_tables(directory / "tables", directory / "back.graph")
    return path, directory / "tables", directory / "back.graph"


# --- helpers shared with test_spark.py -----------------------------------------------------


def random_deletions(graph: Graph, rng: random.Random, count: int) -> list[Deletion]:
    """Retract-source (one or several), revoke-relation and explicit assertion ids, in turn."""
    sources, relations = graph.distinct("source"), graph.distinct("predicate")
    ids = list(graph.assertions)
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(Deletion(sources=(rng.choice(sources),)))
        elif kind == 1:
            out.append(Deletion(sources=tuple(rng.sample(sources, min(len(sources), rng.randint(2, 6))))))
        elif kind == 2:
            out.append(Deletion(relations=(rng.choice(relations),)))
        else:
            out.append(Deletion(sources=(rng.choice(sources),), assertions=tuple(rng.sample(ids, min(len(ids), 3)))))
    return out


def labels(graph: Graph) -> list[tuple[str, str, tuple, bool]]:
    """Every artifact as (id, layer, support sets of assertion ids, exact), read once."""
    return [(a.id, a.layer, a.support, a.exact) for a in graph.artifacts()]


def label_verdicts(graph: Graph, deletion: Deletion, artifacts=None) -> tuple[set, set, set]:
    """(touched, dead, uncertain) artifact ids by brute force over every artifact's label."""
    deleted = deletion.resolve(graph)
    touched, dead, uncertain = set(), set(), set()
    for id_, _, support, exact in artifacts if artifacts is not None else labels(graph):
        if any(x in deleted for group in support for x in group):
            touched.add(id_)
            if all(set(group) & deleted for group in support):
                dead.add(id_)
                if not exact:
                    uncertain.add(id_)
    return touched, dead, uncertain


# --- the round trip ------------------------------------------------------------------------

ORDER = {"assertions": "num", "facts": "num", "mentions": "assertion, fact", "artifacts": "num", "meta": "key"}


def test_graph_to_tables_to_graph_keeps_every_row(converted):
    path, _, back = converted
    before, after = sqlite3.connect(path), sqlite3.connect(back)
    try:
        for table, order in ORDER.items():
            rows = before.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            assert rows, table
            assert after.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall() == rows, table
        # rules: the same rows; trees equal as syntax trees (pickling again may share strings differently)
        rules = before.execute("SELECT num, relation, c0, c1, c2, tree FROM rules ORDER BY num").fetchall()
        again = after.execute("SELECT num, relation, c0, c1, c2, tree FROM rules ORDER BY num").fetchall()
        assert [r[:5] for r in again] == [r[:5] for r in rules]
        assert [pickle.loads(r[5]) for r in again] == [pickle.loads(r[5]) for r in rules]
    finally:
        before.close()
        after.close()


def test_parquet_labels_are_the_graph_labels(converted):
    """Read back by DuckDB alone, each artifact's label names the assertions the Graph reader names."""
    path, tables, _ = converted
    con = duckdb.connect()
    rows = con.execute(f"""
        SELECT a.id, f.label, f.exact, f.sets
        FROM read_parquet('{table_path(tables, "artifacts")}') a
        JOIN read_parquet('{table_path(tables, "facts")}') f ON f.num = a.fact""").fetchall()
    ids = dict(con.execute(f"SELECT num, id FROM read_parquet('{table_path(tables, 'assertions')}')").fetchall())
    mentions = con.execute(f"SELECT COUNT(*) FROM read_parquet('{table_path(tables, 'mentions')}')").fetchone()[0]
    with Graph(path) as graph:
        expected = {a.id: (a.support, a.exact) for a in graph.artifacts()}
        facts = list(graph.facts())
    assert len(rows) == len(expected)
    for id_, label, exact, sets in rows:
        assert (tuple(tuple(ids[n] for n in group) for group in label), exact) == expected[id_], id_
        assert sets == len(label)
    assert mentions == sum(len(group) for fact in facts for group in fact.support)


def test_the_imported_graph_answers_what_ifs_as_the_original(converted):
    path, _, back = converted
    with Graph(path) as graph, Graph(back) as again:
        for deletion in random_deletions(graph, random.Random(7), 8):
            for policy in ("trust-all", "deployed", "flat"):
                first, second = what_if(graph, deletion, policy).to_json(), what_if(again, deletion, policy).to_json()
                first.pop("elapsed_ms"), second.pop("elapsed_ms")
                assert first == second, (str(deletion), policy)


# --- the SQL what-if on DuckDB -----------------------------------------------------------------


def test_sql_what_if_equals_brute_force_and_the_python_label_verdicts(converted):
    path, tables, _ = converted
    copy = without_circuit(path, path.parent / f"old-{path.name}")
    with Graph(path) as graph, DuckDBTables(tables) as sql, Graph(copy) as old:
        artifacts = labels(graph)
        layer = {id_: layer for id_, layer, _, _ in artifacts}
        for deletion in random_deletions(graph, random.Random(3), 20):
            where = str(deletion)
            outcome = sql.what_if(deletion)
            touched, dead, uncertain = label_verdicts(graph, deletion, artifacts)
            assert set(outcome.touched) == touched and len(outcome.touched) == len(touched), where
            assert set(outcome.dead) == dead and set(outcome.uncertain) == uncertain, where
            assert outcome.deleted == len(deletion.resolve(graph)), where
            python = what_if(graph, deletion, "trust-all")
            assert outcome.touched == python.touched, where  # the same order too: layer, then id
            # the Python what-if goes further: demoted claims stand, summaries are trimmed
            trimmed = set(python.summaries)
            demoted = {entry["artifact"] for entry in python.demoted}
            # the graph's circuit settles the uncertain verdicts: some of them revive, nothing else changes
            assert python.uncertain == [] and set(python.dead) - trimmed <= dead - demoted - trimmed, where
            assert (dead - demoted - trimmed) - (set(python.dead) - trimmed) <= uncertain, where
            # on edges and merges (neither demoted nor trimmed) the label verdicts are the same
            plain = {id_ for id_ in touched if layer[id_] in ("edge", "merge")}
            labels_only = what_if(old, deletion, "trust-all")
            assert set(labels_only.dead) & plain == dead & plain, where
            assert set(labels_only.uncertain) & plain == uncertain & plain, where
            layers = {layer: counts["touched"] for layer, counts in python.by_layer().items()}
            assert {layer: counts["touched"] for layer, counts in outcome.by_layer().items()} == layers, where


def test_few_facts_queries_give_the_one_query_rows(converted):
    """DuckDB answers a deletion that hits few facts in short queries (fact numbers as constants);
    their rows are the one query's, on the same random deletions (and one hitting nothing)."""
    path, tables, _ = converted
    from polygraph_logic.graph.store.sql_whatif import deletion_rows
    with Graph(path) as graph, DuckDBTables(tables) as sql:
        deletions = random_deletions(graph, random.Random(5), 15) + [Deletion(relations=("RO:0000000",))]
        for deletion in deletions:
            sql.register_deletion(deletion_rows(deletion))
            assert sorted(sql.rows()) == sorted(sql.rows(few=0)), str(deletion)


def test_many_what_ifs_keep_only_the_last_deletion_stored(converted):
    """Each what-if's deletion is a new table: DuckDB keeps a deleted row's storage, so a session
    that emptied one table by DELETE held (and scanned) every deletion it had been asked."""
    path, tables, _ = converted
    with Graph(path) as graph, DuckDBTables(tables) as sql:
        deletions = random_deletions(graph, random.Random(7), 12)
        for deletion in deletions:
            sql.what_if(deletion)
        stored = sql.run("SELECT estimated_size FROM duckdb_tables() WHERE table_name = 'deletion'")[0][0]
        live = sql.run("SELECT count(*) FROM deletion")[0][0]
    assert live == len(deletion_rows(deletions[-1])) and stored == live


def test_a_table_said_to_be_in_order_is_written_sorted_when_it_is_not(tmp_path):
    """copy_out writes a table stored in its file's order as it is scanned, reads the numbers
    back, and writes a file that is not in order again, sorted."""
    import duckdb
    from polygraph_logic.graph.tables.layout import _SCHEMA, copy_out
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = true")
    for name in ("facts", "artifacts"):
        con.execute(f"CREATE TABLE {name} ({_SCHEMA[name]})")
    con.execute("INSERT INTO facts VALUES (1, 'r', '[]', [[1]], TRUE, 1), (2, 'r', '[]', [[2]], TRUE, 1)")
    con.execute("INSERT INTO artifacts VALUES (2, 'b', 'claim', '{}', 2, NULL), (1, 'a', 'claim', '{}', 1, NULL), "
                "(3, 'c', 'claim', '{}', 1, NULL)")
    counts = copy_out(con, tmp_path, ["facts", "artifacts"], ordered={"facts", "artifacts"})
    assert counts == {"facts": 2, "artifacts": 3}
    for name, ids in (("facts", [1, 2]), ("artifacts", [1, 2, 3])):
        assert [row[0] for row in con.execute(f"SELECT num FROM '{table_path(tmp_path, name)}'").fetchall()] == ids


def test_sql_what_if_refuses_unknown_names_and_kinds(converted):
    _, tables, _ = converted
    with DuckDBTables(tables) as sql:
        with pytest.raises(PolygraphError) as error:
            sql.what_if(Deletion(sources=("no-such-source",), relations=("RO:none",)))
        assert error.value.code == "unknown_deletion"
        assert "no source named 'no-such-source'" in str(error.value) and "RO:none" in str(error.value)
        with pytest.raises(PolygraphError) as error:
            sql.what_if(Deletion(kinds=("model_hypothesis",)))
        assert error.value.code == "unsupported"
        with pytest.raises(PolygraphError) as error:  # nor evidence metadata: refused, never ignored
            sql.what_if(Deletion(sources=("PMID:39973430",), evidence=EvidenceView.parse("2024-01-01")))
        assert error.value.code == "unsupported" and "--as-of" in str(error.value)


def test_a_foreign_or_damaged_folder_is_refused(tmp_path, converted):
    path, tables, _ = converted
    with pytest.raises(PolygraphError) as error:
        DuckDBTables(tmp_path)
    assert error.value.code == "bad_tables"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(PolygraphError) as error:
        export_tables(path, tmp_path / "other")
    assert error.value.code == "file_exists" and (tmp_path / "other" / "notes.txt").read_text() == "mine"
    with pytest.raises(PolygraphError) as error:
        export_tables(path, tmp_path / "missing" / "tables")
    assert error.value.code == "io_error" and "does not exist" in str(error.value)
    meta = json.loads((tables / "meta.json").read_text())
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(PolygraphError) as error:
        import_tables(tmp_path / "broken", tmp_path / "g.graph")
    assert error.value.code == "bad_tables" and "assertions.parquet" in str(error.value)
    assert not (tmp_path / "g.graph").exists()


# --- the commands ----------------------------------------------------------------------------


def test_commands_convert_both_ways_and_answer_a_what_if(tmp_path, capsys, figure1_graph):
    path = tmp_path / "figure1.graph"
    shutil.copy(figure1_graph, path)  # build_figure1's graph (conftest.py), this test's own copy
    assert main(["export-tables", str(path), "-o", str(tmp_path / "t")]) == 0
    assert main(["import-tables", str(tmp_path / "t"), "-o", str(tmp_path / "back.graph")]) == 0
    capsys.readouterr()
    assert main(["sql-whatif", str(tmp_path / "t"), "--retract-source", "PMID:39973430", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    with Graph(tmp_path / "back.graph") as graph:
        touched, dead, _ = label_verdicts(graph, Deletion(sources=("PMID:39973430",)))
    assert set(report["touched"]) == touched and set(report["dead"]) == dead and report["engine"] == "duckdb"
    assert main(["sql-whatif", str(tmp_path / "t"), "--retract-source", "PMID:0"]) == 2
    assert capsys.readouterr().err.startswith("unknown_deletion: no source named 'PMID:0'")
