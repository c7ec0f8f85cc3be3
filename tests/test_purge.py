"""purge: the content of assertions erased from every version of a graph file, ids and hashes kept.
Checked against independent readings: the file's bytes (no page holds the text), a from-scratch
Boolean evaluation of the assertions that remain (recompute.truth), the what-ifs of an unpurged
copy at every version, the chain recomputed by verify, and a write that fails half-way."""

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
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.purge import purge, record_hash
from polygraph_logic.query.replay import replay
from polygraph_logic.query.whatif import Deletion, what_if
from test_evidence import FIGURE1, RO

SOURCE = "example:paper-B"


@pytest.fixture
def grown(tmp_path):
    """Figure 1 as version 1, and one more assertion added as version 2."""
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"id": "n1", "source": "example:paper-N", "subject": "MAPK/ERK",
                                  "predicate": "RO:0002211", "object": "apoptosis", "text": "a later paper agrees"}) + "\n")
    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path / "fig.graph"
    build_graph(assertions, receipts, [RO]).write(path)
    add(path, second)
    assertions = [*assertions, *load_assertions(second)]
    return path, assertions, receipts


def _dead(path, at, deletion):
    with Graph(path, at=at) as graph:
        outcome = what_if(graph, deletion)
        # a claim whose triple was purged cannot be demoted to the edge its triple is (the triple is
        # gone): it falls; what falls, demoted or dead, is the same set
        return sorted([*outcome.dead, *(d["artifact"] for d in outcome.demoted)]), sorted(outcome.touched)


def test_purge_erases_the_bytes_keeps_verdicts_and_the_chain(grown, tmp_path):
    path, assertions, receipts = grown
    before = tmp_path / "before.graph"
    shutil.copy(path, before)
    purged = [a for a in assertions if a.source == SOURCE]
    assert purged and all(a.text for a in purged)
    report = purge(path, sources=[SOURCE])
    assert report.purged == {a.id: record_hash(a.to_json()) for a in purged}
    data = path.read_bytes()
    for a in purged:  # the evidence spans are in no page of the file, used or free
        assert a.text.encode() not in data and a.text.encode() in before.read_bytes()
    assert [row["status"] for row in verify(path)] == ["ok"] * 3
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
    import sqlite3
    path, _, _ = grown
    purge(path, sources=[SOURCE])
    db = sqlite3.connect(path)
    db.execute("UPDATE assertions_history SET subject = 'forged' WHERE subject = ?", (erase.PURGED,))
    db.commit()
    db.close()
    assert "mismatch" in [row["status"] for row in verify(path)]


def test_purge_is_all_or_nothing(grown, monkeypatch):
    path, _, _ = grown
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    real = erase.erase_file

    def failing(*args):
        real(*args)  # every row erased, then the write fails before it commits
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("polygraph_logic.graph.store.version_write.erase_file", failing)
    with pytest.raises(PolygraphError) as error:
        purge(path, sources=[SOURCE])
    assert error.value.code == "io_error"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_replay_names_the_purge_and_matches(grown, tmp_path, capsys):
    # a graph built by the command line records its inputs, which replay rebuilds from
    path = tmp_path / "cli.graph"
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                 str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", "-o", str(path)]) == 0
    assert main(["add", str(path), "--assertions", str(grown[0].parent / "second.jsonl")]) == 0
    capsys.readouterr()
    assert main(["purge", str(path), "--source", SOURCE]) == 0
    assert "purged 2 assertions" in capsys.readouterr().out
    report = replay(path, tmp_path / "copy.graph")
    assert report.identical and list(report.purged.values()) == [["a20", "a21"]]
    assert main(["log", str(path)]) == 0
    assert "purged: a20, a21" in capsys.readouterr().out


def test_purge_errors(grown, tmp_path):
    path, _, _ = grown
    with pytest.raises(PolygraphError, match="name what to purge"):
        purge(path)
    with pytest.raises(PolygraphError, match="no source named"):
        purge(path, sources=["nobody"])
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"format": "polygraph-tables/1"}))
    with pytest.raises(PolygraphError):
        purge(folder, sources=[SOURCE])
