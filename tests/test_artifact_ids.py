"""Artifact ids that two artifacts of one layer would share: the one listed later takes the long digest.

A short id is 48 bits, so a graph of ten million edges holds a pair of edges of one short id
about once in ten builds (the x40 synthetic graph with hub cycles did: its build stopped at
``duplicate_artifact``).  Here the short digest is cut to one byte (256 ids a layer), so the
synthetic paper-scale graph's claims and edges share short ids by the hundred, and:

- the ids given in a listing equal a brute-force rule (short unless an earlier artifact of the
  layer had the same short digest);
- a graph file's artifacts have distinct ids, each the short or long id of its own triple, and
  ``graph_id`` finds each from its triple; the DuckDB folder equals the Python graph exported;
- a graph grown by adds keeps every id it gave, gives new ones by the same rule against what it
  holds, and equals in content a graph built at once.
"""

import random
import sqlite3
import sys
from pathlib import Path

import pytest

from polygraph_logic import build_graph
from polygraph_logic.cli import main
from polygraph_logic.graph import artifact_ids
from polygraph_logic.graph.artifact_ids import DIGESTED, IdsGiven, content_args, graph_id, long_id, triple_id
from polygraph_logic.graph.ledger import add
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.resources import rule_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ledger import batches, union  # noqa: E402




@pytest.fixture
def one_byte(monkeypatch):
    monkeypatch.setattr(artifact_ids, "DIGEST", 1)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    from polygraph_logic.graph.synthetic import generate
    directory = tmp_path_factory.mktemp("synthetic")
    generate(seed=0).write(directory)
    return directory / "assertions.jsonl", directory / "receipts.jsonl"


def test_ids_given_in_a_listing_follow_the_rule(one_byte):
    triples = [(f"gene{i}", "located_in", f"place{i % 7}") for i in range(900)]
    ids = IdsGiven()
    given = [ids.id("edge", t) for t in triples]
    assert len(set(given)) == len(given)
    earlier: set[str] = set()
    for triple, found in zip(triples, given):
        short = triple_id("edge", triple)
        assert found == (long_id("edge", triple) if short in earlier else short)
        earlier.add(short)
    assert ids.lengthened == len(triples) - len(earlier) > 600
    assert len(short) == len("edge:") + 2 and len(long_id("edge", triples[0])) == len("edge:") + 24


def _artifacts(path: Path) -> dict[str, tuple[str, tuple]]:
    """{id: (layer, triple)} of the digested layers' current artifacts, read from the file."""
    db = sqlite3.connect(path)
    rows = db.execute(f"SELECT id, layer, content FROM artifacts WHERE layer IN {DIGESTED}").fetchall()
    db.close()
    return {i: (layer, tuple(content_args(layer, content))) for i, layer, content in rows}


def _check_ids(path: Path) -> int:
    """Every digested artifact's id is its own triple's short or long id, each once; returns the long ones."""
    found = _artifacts(path)
    longs = 0
    for artifact_id, (layer, triple) in found.items():
        assert artifact_id in (triple_id(layer, triple), long_id(layer, triple))
        longs += artifact_id == long_id(layer, triple)
    with Graph(path) as graph:
        for artifact_id, (layer, triple) in random.Random(0).sample(sorted(found.items()), 200):
            assert graph_id(graph, layer, triple) == artifact_id
    return longs


def test_a_build_gives_each_artifact_its_own_id(tmp_path, inputs, one_byte):
    build_graph(*inputs, [rule_file("ro")]).write(tmp_path / "g.graph")
    found = _artifacts(tmp_path / "g.graph")
    assert len(found) > 2000
    assert _check_ids(tmp_path / "g.graph") > 1000
    # brute force: in the build's order (facts in tuple_key order) a long id follows the short one
    by_layer: dict[str, set] = {}
    with Graph(tmp_path / "g.graph") as graph:
        for artifact in graph.artifacts():
            if artifact.layer in DIGESTED:
                triple = tuple(content_args(artifact.layer, artifact.content))
                held = by_layer.setdefault(artifact.layer, set())
                short = triple_id(artifact.layer, triple)
                assert artifact.id == (long_id(artifact.layer, triple) if short in held else short)
                held.add(short)


def test_the_duckdb_folder_gives_the_python_builds_ids(tmp_path, inputs, one_byte):
    pytest.importorskip("duckdb")
    from polygraph_logic.graph.tables.compare import differences
    from polygraph_logic.graph.tables.layout import export_tables
    build_graph(*inputs, [rule_file("ro")]).write(tmp_path / "g.graph")
    export_tables(tmp_path / "g.graph", tmp_path / "reference")
    build_graph(*inputs, [rule_file("ro")], engine="duckdb", output=tmp_path / "direct", tables=True)
    assert differences(tmp_path / "reference", tmp_path / "direct") == []


@pytest.mark.parametrize("where", ["file", "folder"])
def test_adds_keep_the_ids_given_and_give_new_ones_by_the_rule(tmp_path, inputs, one_byte, where):
    assertions = inputs[0].read_text().splitlines()
    receipts = inputs[1].read_text().splitlines()
    files = batches(assertions, receipts, 3, random.Random(5), tmp_path)
    rules = [rule_file("ro")]
    path = tmp_path / ("grown" if where == "folder" else "grown.graph")
    where_to = ["--engine", "duckdb", "--tables", str(path)] if where == "folder" else ["-o", str(path)]
    if where == "folder":
        pytest.importorskip("duckdb")
    assert main(["build", "--assertions", str(files[0][0]), "--receipts", str(files[0][1]), "--rules", "ro",
                 *where_to]) == 0
    before = _ids_read(path)
    for a, r in files[1:]:
        add(path, a, r)
        after = _ids_read(path)
        kept = {i: v for i, v in before.items() if i in after}
        assert all(after[i] == v for i, v in kept.items())  # an id once given names the same artifact
        # a new artifact's id: short unless an artifact held before it has it
        held = {triple_id(layer, triple) for layer, triple in after.values()}
        for artifact_id, (layer, triple) in after.items():
            assert artifact_id in (triple_id(layer, triple), long_id(layer, triple))
            if artifact_id not in before and artifact_id == long_id(layer, triple):
                assert triple_id(layer, triple) in held
        before = after
    assert len(after) == len(set(after))
    # the same artifacts (by content) as the graph built at once
    build_graph(*union(files, tmp_path), rules).write(tmp_path / "once.graph")
    assert sorted(after.values()) == sorted(_artifacts(tmp_path / "once.graph").values())


def _ids_read(path: Path) -> dict[str, tuple[str, tuple]]:
    with Graph(path) as graph:
        return {a.id: (a.layer, tuple(content_args(a.layer, a.content))) for a in graph.artifacts()
                if a.layer in DIGESTED}
