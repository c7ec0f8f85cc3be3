"""purge: the content of assertions erased from every version of a graph, ids and hashes kept, on
both forms (a graph file; a graph folder, whose Parquet files are written again).
Checked against independent readings: the bytes of the file or of every file of the folder (and,
since a folder's Parquet pages are compressed, every value DuckDB decodes from each of them: no
file holds the text), a from-scratch Boolean evaluation of the assertions that remain
(recompute.truth), the what-ifs of an unpurged copy at every version, the chain recomputed by
verify, the graph file's purge (SQL updates) for the folder's (rewritten files), and writes that
fail or are killed half-way."""

import hashlib
import json
import shutil

import pytest

from recompute import truth
from polygraph_logic import build_graph
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.ledger import add
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store import erase
from polygraph_logic.graph.store.chain import verify
from polygraph_logic.graph.store.check import check_graph
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.purge import purge, record_hash
from polygraph_logic.query.replay import replay
from polygraph_logic.query.whatif import Deletion, what_if
from test_evidence import FIGURE1, RO

SOURCE = "example:paper-B"
FORMS = ["file", "folder"]


def _build(tmp_path, form, name="fig"):
    """Figure 1 as version 1 and one more assertion as version 2, as a graph file or folder."""
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"id": "n1", "source": "example:paper-N", "subject": "MAPK/ERK",
                                  "predicate": "RO:0002211", "object": "apoptosis", "text": "a later paper agrees"}) + "\n")
    if form == "folder":
        pytest.importorskip("duckdb")
        path = tmp_path / f"{name}.tables"
        build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", rules=[RO], engine="duckdb",
                    output=path, tables=True)
    else:
        path = tmp_path / f"{name}.graph"
        build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", rules=[RO], output=path)
    add(path, second)
    return path


@pytest.fixture(params=FORMS)
def grown(tmp_path, request):
    path = _build(tmp_path, request.param)
    assertions = [*load_assertions(FIGURE1 / "assertions.jsonl"), *load_assertions(tmp_path / "second.jsonl")]
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    return path, assertions, receipts


def _copy(source, target):
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
    return target


def _holding(path, text: str) -> list[str]:
    """The files of a graph (a file, or every file of a folder, hidden ones included) holding
    ``text``: in their bytes, or in any value of a Parquet file as DuckDB decodes it."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    found = [str(p) for p in files if text.encode() in p.read_bytes()]
    parquet = [p for p in files if p.suffix == ".parquet"]
    if parquet:
        import duckdb
        con = duckdb.connect()
        query = "SELECT count(*) FROM read_parquet(?) t WHERE contains(CAST(t AS VARCHAR), ?)"
        found += [str(p) for p in parquet if con.execute(query, (str(p), text)).fetchone()[0]]
        con.close()
    return sorted(set(found))


def _files(path) -> dict[str, str]:
    """Every file of a graph by its digest."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return {str(p.relative_to(path) if path.is_dir() else p.name): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files}


def _read(path) -> list:
    """What the graph holds at each version: its assertions' records, and its artifacts with
    their content and labels."""
    with Graph(path) as graph:
        newest = graph.version_read()
    out = []
    for at in range(1, newest + 1):
        with Graph(path, at=at) as graph:
            out.append((sorted(json.dumps(a.to_json(), sort_keys=True) for a in graph.assertions.values()),
                        sorted((a.id, json.dumps(a.content, sort_keys=True), sorted(map(sorted, a.support)), a.exact)
                               for a in graph.artifacts())))
    return out


def _dead(path, at, deletion):
    with Graph(path, at=at) as graph:
        outcome = what_if(graph, deletion)
        # a claim whose triple was purged cannot be demoted to the edge its triple is (the triple is
        # gone): it falls; what falls, demoted or dead, is the same set
        return sorted([*outcome.dead, *(d["artifact"] for d in outcome.demoted)]), sorted(outcome.touched)


def test_purge_erases_the_bytes_keeps_verdicts_and_the_chain(grown, tmp_path):
    path, assertions, receipts = grown
    before = _copy(path, tmp_path / f"before{path.suffix}")
    purged = [a for a in assertions if a.source == SOURCE]
    assert purged and all(a.text for a in purged)
    report = purge(path, sources=[SOURCE])
    assert report.purged == {a.id: record_hash(a.to_json()) for a in purged}
    for a in purged:  # the evidence spans are in no page of the file (used or free), in no file of the folder
        assert _holding(before, a.text) and _holding(path, a.text) == []
    assert _holding(before, "cell proliferation") and _holding(path, "cell proliferation") == []  # their objects
    assert [row["status"] for row in verify(path)] == ["ok"] * 3
    assert check_graph(path).ok
    assert any(row.get("purged_by") == report.version for row in verify(path))
    # the latest version is the graph without them: alive exactly what a from-scratch evaluation derives
    standing = truth(assertions, receipts, {a.id for a in purged})
    with Graph(path) as graph:
        assert not {a.id for a in purged} & set(graph.assertion_numbers())
        for artifact in graph.artifacts():
            assert bool(artifact.support) == (artifact.fact in standing), artifact.id
    # every earlier version answers what-ifs as it did before the purge
    for at in (1, 2):
        for deletion in (Deletion(sources=("PMID:39973430",)), Deletion(assertions=(purged[0].id,))):
            try:
                expected = _dead(before, at, deletion)
            except PolygraphError:  # the assertion came at version 2
                continue
            assert _dead(path, at, deletion) == expected
    # the erased rows are at the earlier versions, read as purged
    with Graph(path, at=2) as graph:
        shown = graph.assertions[purged[0].id]
        assert (shown.subject, shown.text) == (erase.PURGED, None)


def test_a_tampered_erased_row_shows_in_verify(grown):
    path, _, _ = grown
    purge(path, sources=[SOURCE])
    if path.is_dir():  # the build's assertions file written again with the erased subject forged
        import duckdb
        con, target = duckdb.connect(), path / "assertions.parquet"
        con.execute(f"CREATE TABLE t AS SELECT * REPLACE (CASE WHEN subject = '{erase.PURGED}' THEN 'forged' "
                    f"ELSE subject END AS subject) FROM read_parquet('{target}')")
        con.execute(f"COPY t TO '{target}' (FORMAT parquet)")
        con.close()
    else:
        import sqlite3
        db = sqlite3.connect(path)
        db.execute("UPDATE assertions_history SET subject = 'forged' WHERE subject = ?", (erase.PURGED,))
        db.commit()
        db.close()
    assert [row["status"] for row in verify(path)][0] == "mismatch"


def test_purge_is_all_or_nothing(grown, monkeypatch):
    path, _, _ = grown
    before = _files(path)
    if path.is_dir():
        from polygraph_logic.graph.store import folder_version_write
        real = folder_version_write.erase_version
        name = "polygraph_logic.graph.store.folder_version_write.erase_version"
    else:
        real, name = erase.erase_file, "polygraph_logic.graph.store.version_write.erase_file"

    def failing(*args):
        real(*args)  # every row erased (on a folder: every file rewritten), then the write fails before it commits
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(name, failing)
    with pytest.raises(PolygraphError) as error:
        purge(path, sources=[SOURCE])
    assert error.value.code == "io_error"
    assert _files(path) == before  # to the byte, nothing left beside it


def test_a_folder_purge_stopped_after_its_commit_is_finished_by_the_next_reader(tmp_path, monkeypatch):
    """Killed between the version's rename and the last of its files moved into place: the folder
    holds the purge (the next open moves the rest), never a mix of old and new files."""
    reference = _build(tmp_path, "folder", "reference")
    path = _copy(reference, tmp_path / "stopped.tables")
    purge(reference, sources=[SOURCE])
    from polygraph_logic.graph.store import folder_versions
    moved = []

    def stopping(directory, staged):  # the first file moved, then the process "dies"
        first = sorted(staged.rglob("*.parquet"))[0]
        first.replace(directory / first.relative_to(staged))
        moved.append(first)
        raise KeyboardInterrupt

    monkeypatch.setattr(folder_versions, "place_staged", stopping)
    with pytest.raises(KeyboardInterrupt):
        purge(path, sources=[SOURCE])
    staged = path / "versions" / "3" / folder_versions.STAGED
    assert moved and len(list(staged.rglob("*.parquet"))) >= 1  # torn on disk: some files moved, some not
    monkeypatch.undo()
    assert [row["status"] for row in verify(path)] == ["ok"] * 3  # verify finishes the move first
    assert not staged.exists() and _read(path) == _read(reference)
    assert _holding(path, "cell proliferation") == [] and check_graph(path).ok
    assert [p for p in path.rglob(".*")] == []


def test_replay_names_the_purge_and_matches(grown, tmp_path, capsys):
    # a graph built by the command line records its inputs, which replay rebuilds from
    folder = grown[0].is_dir()
    path = tmp_path / ("cli.tables" if folder else "cli.graph")
    target = ["--engine", "duckdb", "--tables", str(path)] if folder else ["-o", str(path)]
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                 str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", *target]) == 0
    assert main(["add", str(path), "--assertions", str(grown[0].parent / "second.jsonl")]) == 0
    capsys.readouterr()
    assert main(["purge", str(path), "--source", SOURCE]) == 0
    assert "purged 2 assertions" in capsys.readouterr().out
    copy = tmp_path / ("copy.tables" if folder else "copy.graph")
    report = replay(path, copy)
    assert report.identical and list(report.purged.values()) == [["a20", "a21"]]
    assert _holding(copy, "cell proliferation") == []  # the copy is purged too
    assert main(["log", str(path)]) == 0
    assert "purged: a20, a21" in capsys.readouterr().out


def test_a_folder_purge_erases_what_the_file_purge_erases(tmp_path):
    """The two forms purged alike: the same report, and the same records, contents and labels at
    every version (the file's purge is SQL updates in one transaction, the folder's rewritten files)."""
    file, folder = _build(tmp_path, "file"), _build(tmp_path, "folder")
    reports = [purge(path, assertions=["a20"], sources=["example:paper-N"]).to_json() for path in (file, folder)]
    assert reports[0] == reports[1] and reports[0]["rewritten"] == [1, 2]
    assert _read(file) == _read(folder)
    reports = [purge(path, sources=[SOURCE]).to_json() for path in (file, folder)]  # a second purge
    assert reports[0] == reports[1] and _read(file) == _read(folder)
    assert [r["status"] for r in verify(folder)] == ["ok"] * 4 and _holding(folder, "proliferation") == []


def test_purge_errors(grown, tmp_path):
    path, _, _ = grown
    before = _files(path)
    with pytest.raises(PolygraphError, match="name what to purge"):
        purge(path)
    with pytest.raises(PolygraphError, match="no source named"):
        purge(path, sources=["nobody"])
    with pytest.raises(PolygraphError, match="nobody"):
        purge(path, assertions=["a20", "nobody"])
    assert _files(path) == before


@pytest.mark.slow
def test_a_folder_purge_killed_at_any_write_step_leaves_it_before_or_after(tmp_path):
    """A purge run in a child process killed (SIGKILL) at write step k, for every k (tests/faults.py:
    each Parquet file written, rename, replace, folder made or removed): the folder reads as before
    the purge or as after it at every version, verifies and checks, and holds the text only before."""
    from faults import run
    base = _build(tmp_path, "folder", "base")
    after = _copy(base, tmp_path / "after.tables")
    purge(after, sources=[SOURCE])
    expected = {"before": _read(base), "after": _read(after)}
    target, seen, k = tmp_path / "g.tables", {"before": 0, "after": 0}, 1
    while True:
        shutil.rmtree(target, ignore_errors=True)
        _copy(base, target)
        status, steps, output = run(["purge", str(target), "--source", SOURCE], k, "kill", tmp_path)
        if steps is not None:  # fewer steps than k: it finished, every step was tried
            assert status == 0, output
            assert _read(target) == expected["after"]
            break
        assert status == -9, output
        found = _read(target)  # the open finishes a purge whose files were not all moved
        state = next((name for name, rows in expected.items() if rows == found), None)
        assert state, f"killed at step {k}: the folder is neither before nor after the purge"
        seen[state] += 1
        assert all(row["status"] == "ok" for row in verify(target)) and check_graph(target).ok, k
        assert bool(_holding(target, "cell proliferation")) == (state == "before"), k
        if state == "before":  # the next purge is not blocked by what the killed one left
            purge(target, sources=[SOURCE])
            assert _read(target) == expected["after"] and list(target.rglob(".*")) == [], k
        k += 1
    assert seen["before"] > 3 and seen["after"] > 3, seen
