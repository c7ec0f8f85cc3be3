"""A graph file under crashes and concurrent writers (issue 51, the file form).

- A write killed midway leaves SQLite's hot journal: the next reader rolls it back and reads the
  graph as it was, rather than calling the file damaged.
- Two ``add`` commands at once give the graph the same two adds give one after the other: the
  second waits for the first's write lock, finds a version it did not read, and computes again.
- A version computed against a superseded one is refused by name (``concurrent_write``).
The reference is always the same commands run one after the other.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.store.backend import write_version
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.synthetic import generate

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A graph of 300 generated assertions (RO rules) and two batches of 100 more."""
    folder = tmp_path_factory.mktemp("acid")
    generate(documents=40, assertions=500, merges=0, summaries=0).write(folder / "gen")
    lines = (folder / "gen" / "assertions.jsonl").read_text().splitlines(keepends=True)
    for name, part in (("base", lines[:300]), ("a", lines[300:400]), ("b", lines[400:500])):
        (folder / f"{name}.jsonl").write_text("".join(part))
    build_graph(folder / "base.jsonl", rules=["ro"], output=folder / "base.graph")
    return folder / "base.graph", folder / "a.jsonl", folder / "b.jsonl"


def _folder(base: Path) -> Path:
    """The graph folder of the same inputs as the graph file ``base`` (DuckDB builds it once)."""
    folder = base.with_suffix(".tables")
    if not folder.exists():
        build_graph(base.parent / "base.jsonl", rules=["ro"], output=folder, engine="duckdb", tables=True)
    return folder


def _contents(path: Path) -> tuple:
    """What a graph holds, whatever the order its versions were written in."""
    with Graph(path) as graph:
        artifacts = sorted((a.id, a.layer, tuple(sorted(tuple(sorted(s)) for s in a.support))) for a in graph.artifacts())
        return sorted(graph.assertions), artifacts


def _polygraph(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "polygraph_logic", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=ROOT)


@pytest.mark.parametrize("form", ["file", "folder"])
def test_two_adds_at_once_equal_the_two_in_turn(batches, tmp_path, form):
    """A file's second writer waits for the first's lock; a folder's is optimistic: the version it
    computed against is superseded (or its number taken), so it computes again."""
    base, a, b = batches
    together, apart = tmp_path / "together.graph", tmp_path / "apart.graph"
    if form == "folder":
        pytest.importorskip("duckdb")
        base = _folder(base)
        shutil.copytree(base, together)
        shutil.copytree(base, apart)
    else:
        shutil.copy(base, together)
        shutil.copy(base, apart)
    for batch in (a, b):
        assert _polygraph("add", str(apart), "--assertions", str(batch)).wait() == 0
    runs = [_polygraph("add", str(together), "--assertions", str(batch)) for batch in (a, b)]
    outputs = [run.communicate()[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert _contents(together) == _contents(apart)
    with Graph(together) as graph:
        assert [row["version"] for row in graph.version_rows()] == [1, 2, 3]
    check = _polygraph("check", str(together))
    assert check.wait() == 0, check.stdout.read()


def test_a_version_computed_against_a_superseded_one_is_refused(batches, tmp_path):
    base, a, _ = batches
    path = tmp_path / "g.graph"
    shutil.copy(base, path)
    assert _polygraph("add", str(path), "--assertions", str(a)).wait() == 0  # version 2
    before = path.read_bytes()
    with pytest.raises(PolygraphError) as error:
        write_version(path, "add", "test", {}, lambda writer: writer.retire_artifact("nothing"), expected=1)
    assert error.value.code == "concurrent_write" and "version 2" in error.value.message
    assert path.read_bytes() == before  # nothing of it written


_KILLED_WRITER = textwrap.dedent('''
    import sqlite3, sys, time
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA cache_size = 10")  # pages spill to the file before the commit
    db.execute("BEGIN IMMEDIATE")
    db.execute("DELETE FROM artifacts")
    db.executemany("INSERT INTO meta VALUES (?, ?)", ((f"x{i}", "y" * 1000) for i in range(20000)))
    print("written", flush=True)
    time.sleep(60)
''')


def test_a_write_killed_midway_is_rolled_back_by_the_next_reader(batches, tmp_path):
    base, _, _ = batches
    path = tmp_path / "killed.graph"
    shutil.copy(base, path)
    writer = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "written"
    writer.kill()
    writer.wait()
    journal = path.with_name(path.name + "-journal")
    assert journal.is_file() and journal.stat().st_size > 0  # a hot journal: the write did not finish
    assert path.stat().st_size > base.stat().st_size  # the file holds pages of the unfinished write
    assert _contents(path) == _contents(base)
    assert not journal.exists() or journal.stat().st_size == 0


def test_a_folder_written_over_an_old_one_never_leaves_it_missing(batches, tmp_path, monkeypatch):
    """A graph folder written over an existing one swaps names with it in one step: stopped before
    the swap, the old folder is whole at its name; after it, the new one; no leftover either way."""
    pytest.importorskip("duckdb")
    from polygraph_logic.graph.store import folder_layout
    from polygraph_logic.graph.tables.layout import export_tables
    base, a, _ = batches
    grown = tmp_path / "grown.graph"
    shutil.copy(base, grown)
    assert _polygraph("add", str(grown), "--assertions", str(a)).wait() == 0
    folder = tmp_path / "g.tables"
    export_tables(base, folder)
    old = _contents(folder)

    def killed(first, second):  # the process stops where the swap would be
        assert second == folder and (folder / "meta.json").is_file() and (first / "meta.json").is_file()
        raise KeyboardInterrupt

    monkeypatch.setattr(folder_layout, "exchange", killed)
    with pytest.raises(KeyboardInterrupt):
        export_tables(base, folder)
    assert _contents(folder) == old
    monkeypatch.undo()
    export_tables(grown, folder)  # swapped
    assert _contents(folder) == _contents(grown) != old
    monkeypatch.setattr(folder_layout, "exchange", lambda first, second: False)  # a system that cannot swap
    export_tables(base, folder)
    assert _contents(folder) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.tables", "grown.graph"]


def test_a_disk_that_refuses_a_write_is_an_io_error_and_changes_nothing(batches, tmp_path, capsys, monkeypatch):
    import errno
    import hashlib

    from polygraph_logic.cli import main
    base, a, _ = batches
    target = tmp_path / "g.graph"
    shutil.copy(base, target)
    before = hashlib.sha256(target.read_bytes()).hexdigest()

    def refused(writer):
        writer.assertion  # the writer is open: the refusal comes midway through the version
        raise OSError(errno.EROFS, "Read-only file system", str(target))

    with pytest.raises(PolygraphError) as raised:  # the API: a named error
        write_version(target, "add", "test", {}, refused)
    assert raised.value.code == "io_error" and "Read-only file system" in str(raised.value)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr("polygraph_logic.graph.ledger._add", full)  # the command: exit 2, one line
    assert main(["add", str(target), "--assertions", str(a)]) == 2
    said = capsys.readouterr().err
    assert said.startswith("io_error: ") and "No space left on device" in said and "Traceback" not in said
