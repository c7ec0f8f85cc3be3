"""Damaged graph files: refused on open with bad_graph naming the damage, found row by row by
`polygraph check`, never a traceback, and never changed by reading."""

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.check import check_graph
from polygraph_logic.graph.store.label_codec import encode_label
from polygraph_logic.graph.store.graph_file import Graph

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory, figure1_graph) -> Path:
    """This module's copy of Figure 1 built with rules/ro.dl (conftest.py's ``figure1_graph``)."""
    path = tmp_path_factory.mktemp("check") / "g.graph"
    shutil.copy(figure1_graph, path)
    return path


def damaged(graph_file: Path, tmp_path: Path, sql: str, parameters=()) -> Path:
    path = tmp_path / "damaged.graph"
    shutil.copy(graph_file, path)
    db = sqlite3.connect(path)
    db.execute(sql, parameters)
    db.commit()
    db.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_sound_graph_checks_ok(graph_file, capsys):
    report = check_graph(graph_file)
    assert report.ok and report.lines() == []
    with Graph(graph_file) as graph:
        assert report.rows["assertions"] == len(graph.assertions) == 6
        assert report.rows["artifacts"] == sum(graph.counts().values())
    assert main(["check", str(graph_file)]) == 0
    assert capsys.readouterr().out.startswith(f"{graph_file}: ok (6 assertions")


@pytest.mark.slow
@pytest.mark.parametrize("sql, parameters, kind", [
    ("UPDATE artifacts SET content = '{not json' WHERE num = 1", (), "artifacts whose content is not JSON"),
    ("UPDATE artifacts SET content = '[1]' WHERE num = 2", (), "artifacts whose content is not a JSON object"),
    ("UPDATE artifacts SET layer = 'bogus' WHERE num = 3", (), "artifacts of an unknown layer"),
    ("UPDATE artifacts SET fact = fact + 100000 WHERE num = 4", (), "artifacts whose fact is missing"),
    ("UPDATE facts SET label = ? WHERE num = 7", (encode_label([[99999]]),), "labels citing missing assertions"),
    ("UPDATE facts SET label = ? WHERE num = 8", (b"\x85",), "labels that do not decode"),
    ("UPDATE facts SET args = 'x' || num WHERE num = 9", (), "facts with damaged arguments"),
    ("DELETE FROM assertions WHERE num = 2", (), "mentions of missing assertions"),
    ("UPDATE meta SET value = '{' WHERE key = 'stats'", (), "damaged metadata"),
    ("UPDATE rules SET tree = x'00' WHERE num = 1", (), "damaged rules"),
    ("UPDATE assertions SET id = x'ff00' WHERE num = 1", (), "assertions with a value that is not text"),
])
def test_check_names_each_kind_of_damage_and_exits_2(graph_file, tmp_path, capsys, sql, parameters, kind):
    path = damaged(graph_file, tmp_path, sql, parameters)
    before = digest(path)
    report = check_graph(path)
    assert kind in report.problems, report.problems
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"bad_graph: {path}: " in err and kind in err and "Traceback" not in err
    assert err.splitlines()[-1].startswith(f"bad_graph: {path}: ")  # the last line is an error line too
    assert digest(path) == before


def test_check_runs_sqlites_integrity_check(graph_file, tmp_path):
    path = tmp_path / "flipped.graph"
    data = bytearray(graph_file.read_bytes())
    for offset in range(300_000, len(data) - 64, 50_000):  # past the schema, inside tables and indexes
        data[offset:offset + 64] = bytes(range(64))
    path.write_bytes(bytes(data))
    try:
        report = check_graph(path)
    except PolygraphError as error:  # damage SQLite meets before the check also counts as found
        assert error.code == "bad_graph"
        return
    assert not report.ok and "integrity check failures" in report.problems


@pytest.mark.parametrize("cut", [1, 4096])
def test_a_file_cut_short_is_refused_on_open(graph_file, tmp_path, cut):
    path = tmp_path / "cut.graph"
    path.write_bytes(graph_file.read_bytes()[:-cut])
    with pytest.raises(PolygraphError) as error:
        Graph(path)
    assert error.value.code == "bad_graph" and "cut short" in error.value.message


@pytest.mark.parametrize("content, expected", [(b"", "empty"), (b"hello\n" * 100, "not an SQLite database")])
def test_a_file_that_is_no_database_is_refused(tmp_path, content, expected):
    path = tmp_path / "x.graph"
    path.write_bytes(content)
    with pytest.raises(PolygraphError) as error:
        Graph(path)
    assert error.value.code == "bad_graph" and expected in error.value.message


@pytest.mark.parametrize("sql, expected", [
    ("DROP TABLE mentions", "the table 'mentions' is missing"),
    ("DROP TABLE rules", "the table 'rules' is missing"),
    ("ALTER TABLE assertions DROP COLUMN text", "the table 'assertions' lacks the column(s) text"),
    ("UPDATE meta SET value = 'eight' WHERE key = 'cap'", "meta.cap is 'eight', not a number"),
])
def test_a_damaged_schema_is_refused_on_open_by_every_reader(graph_file, tmp_path, capsys, sql, expected):
    path = damaged(graph_file, tmp_path, sql)
    before = digest(path)
    for argv in (["info", path], ["whatif", path, "--assertion", "a12"], ["why", path, "merge:mapk-erk"],
                 ["export", path, "-o", tmp_path / "out.trig"], ["top-sources", path], ["check", path]):
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"bad_graph: {path}: {expected}"), err
    assert digest(path) == before and not (tmp_path / "out.trig").exists()


# --- a folder: check asks DuckDB (checks_in_sql), and finds what the row-by-row reading finds ----------
@pytest.fixture(scope="module")
def graph_folder(graph_file, tmp_path_factory) -> Path:
    pytest.importorskip("duckdb")
    folder = tmp_path_factory.mktemp("check-folder") / "g.tables"
    assert main(["export-tables", str(graph_file), "-o", str(folder)]) == 0
    return folder


def damaged_folder(folder: Path, tmp_path: Path, table: str, select: str) -> Path:
    """A copy of ``folder`` whose ``table`` file is rewritten as ``select`` over it (``t``)."""
    import duckdb
    path = tmp_path / "damaged.tables"
    shutil.copytree(folder, path)
    file = path / f"{table}.parquet"
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS SELECT * FROM read_parquet('{file}')")
    con.execute(f"COPY ({select}) TO '{file}' (FORMAT parquet)")
    con.close()
    return path


def _row_by_row(path: Path, monkeypatch):
    """The report of reading every row in Python, as a graph file is checked (the reference)."""
    from polygraph_logic.graph.store.folder_store import FolderStore
    with monkeypatch.context() as patched:
        patched.setattr(FolderStore, "checks_in_sql", False)
        return check_graph(path)


@pytest.mark.parametrize("table, select, kind", [
    ("artifacts", "SELECT * REPLACE (CASE WHEN num = 1 THEN '{not json' ELSE content END AS content) FROM t",
     "artifacts whose content is not JSON"),
    ("artifacts", "SELECT * REPLACE (CASE WHEN num = 2 THEN '[1]' ELSE content END AS content) FROM t",
     "artifacts whose content is not a JSON object"),
    ("artifacts", "SELECT * REPLACE (CASE WHEN num = 3 THEN 'bogus' ELSE layer END AS layer) FROM t",
     "artifacts of an unknown layer"),
    ("artifacts", "SELECT * REPLACE (CASE WHEN num = 4 THEN fact + 100000 ELSE fact END AS fact) FROM t",
     "artifacts whose fact is missing"),
    ("artifacts", "SELECT * REPLACE (CASE WHEN layer = 'edge' THEN '{\"subject\": 1}' ELSE content END AS content) "
     "FROM t", "claims or edges without subject, predicate and object"),
    ("facts", "SELECT * REPLACE (CASE WHEN num = 7 THEN [[99999]] ELSE label END AS label) FROM t",
     "labels citing missing assertions"),
    ("facts", "SELECT * REPLACE (CASE WHEN num = 9 THEN 'x' || num ELSE args END AS args) FROM t",
     "facts with damaged arguments"),
])
def test_a_folder_is_checked_by_queries_that_find_what_reading_every_row_finds(graph_folder, tmp_path, monkeypatch,
                                                                             table, select, kind):
    path = damaged_folder(graph_folder, tmp_path, table, select)
    report, reference = check_graph(path), _row_by_row(path, monkeypatch)
    assert kind in report.problems, report.problems
    assert report.problems == reference.problems and report.examples == reference.examples
    assert report.rows == reference.rows


def test_a_sound_folder_checks_ok_as_row_by_row(graph_folder, monkeypatch, capsys):
    report = check_graph(graph_folder)
    assert report.ok and report.rows == _row_by_row(graph_folder, monkeypatch).rows
    assert main(["check", str(graph_folder)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{graph_folder}: ok (")


def test_kept_kill_counts_that_differ_from_the_labels_are_named(graph_folder, tmp_path, capsys):
    """The counts a folder keeps of what each source kills (top-sources' bounds) are checked against
    a count made anew over its labels: one count changed is named, with the source."""
    path = damaged_folder(graph_folder, tmp_path, "label_kills",
                          "SELECT source, CASE WHEN row_number() OVER (ORDER BY source) = 1 THEN n + 1 ELSE n END "
                          "AS n FROM t")
    report = check_graph(path)
    assert report.problems == {"kept kill counts that differ from the labels": 1}, report.problems
    assert main(["check", str(path)]) == 2
