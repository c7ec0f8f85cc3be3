"""The storage interface (graph/store/backend.py): both backends answer every Store question alike.

The same graph is held twice: the graph file the Python engine writes, and the folder
``export_tables`` writes from it.  Each question of the Store protocol is asked of both backends
directly, and the answers, decoded to the same values, must be equal; the writes that go through
the interface (a copy, a version, a digest, a comparison) are checked on both forms.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic.graph.store import backend  # noqa: E402
from polygraph_logic.graph.store.backend import Store, open_store, store_class  # noqa: E402
from polygraph_logic.graph.store.file_store import FileStore  # noqa: E402
from polygraph_logic.graph.store.folder_store import FolderStore  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.graph.store.label_codec import decode_label  # noqa: E402
from polygraph_logic.graph.tables.layout import export_tables  # noqa: E402


@pytest.fixture(scope="module")
def forms(figure1_graph, tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("backend") / "figure1.tables"
    export_tables(figure1_graph, folder)
    return figure1_graph, folder


def _label(value) -> list:
    """A label as either store returns it: a file's varints, a folder's JSON text."""
    return json.loads(value) if isinstance(value, str) else decode_label(value)


def test_each_path_opens_with_the_backend_that_recognizes_it(forms, tmp_path):
    file, folder = forms
    assert store_class(file) is FileStore and store_class(folder) is FolderStore
    with Graph(file) as a, Graph(folder) as b:
        assert isinstance(a.store, FileStore) and isinstance(b.store, FolderStore)
        assert a.store.form == "file" and b.store.form == "folder"
    with pytest.raises(PolygraphError, match="no graph file at"):
        store_class(tmp_path / "absent.graph")
    with pytest.raises(PolygraphError, match="no storage backend named 'nosuch'"):
        Graph(file, store="nosuch")


def test_a_registered_backend_is_found_by_name(forms):
    file, _ = forms
    backend.register("file-by-name", "polygraph_logic.graph.store.file_store:FileStore", by_name_only=True)
    try:
        assert store_class(file) is FileStore  # a backend chosen by name only is never chosen by itself
        with Graph(file, store="file-by-name") as graph:
            assert len(graph.assertions) == 6 and isinstance(graph.store, FileStore)
    finally:
        del backend._BACKENDS["file-by-name"]
        backend._BY_NAME_ONLY.discard("file-by-name")


def test_every_backend_implements_the_whole_protocol():
    abstract = {name for name, value in vars(Store).items() if getattr(value, "__isabstractmethod__", False)}
    assert {"execute", "artifact_rows", "label_kills", "version_rows", "write_version", "copy"} <= abstract
    for cls in (FileStore, FolderStore):
        assert not cls.__abstractmethods__, cls


def _answers(store: Store) -> dict:
    """Every read question of the protocol, decoded to plain values."""
    artifacts = [(i, layer, json.loads(content), _label(label), bool(exact))
                 for i, layer, content, label, exact in store.artifact_rows("TRUE", ordered=True)]
    numbers = {num: (relation, json.loads(args)) for num, relation, args in
               store.query("SELECT num, relation, args FROM facts")}
    claims = store.fact_prefix("edge", "A", 50)
    return {
        "artifacts": artifacts,
        "one": [row[0] for row in store.artifact_rows("a.num = ?", (3,))],
        "layer": [row[0] for row in store.artifact_rows("a.layer = ?", ("merge",), ordered=True)],
        "firsts": [(row[0], row[1], _label(row[3])) for row in store.first_artifact_rows(["edge", "claim", "merge"], 2)],
        "prefix": [numbers[n] for n in claims],
        "subjects": sorted(store.argument_names("edge", 0, "", 100)),
        "objects": sorted(store.argument_names("edge", 2, "o", 100)),
        "kills": store.label_kills(),
        "versions": [(v["version"], v["action"]) for v in store.version_rows()],
        "read": store.version_read(),
        "circuit": store.has_circuit(),
        "rules": store.rules_text(),
        "by_id": sorted(store.query(f"SELECT num, id FROM {store.assertions_by('id')} WHERE id = ?", ("a12",))),
        "key": store.query("SELECT count(*) FROM facts WHERE relation = 'edge' AND k0 = ?",
                           (store.key("AIM2"),)).fetchone(),
    }


def test_both_backends_answer_every_question_alike(forms):
    file, folder = forms
    a, b = open_store(file), open_store(folder)
    try:
        first, second = _answers(a), _answers(b)
        assert first["artifacts"] and first["prefix"] and first["subjects"] and first["objects"] and first["by_id"]
        assert first["key"][0] > 0 and len(first["one"]) == 1 and len(first["layer"]) == 1
        by_layer = {}  # the first two of each layer, in number order, as the whole listing has them
        for row in first["artifacts"]:
            by_layer.setdefault(row[1], []).append((row[0], row[1], row[3]))
        assert first["firsts"] == [row for layer in ("edge", "claim", "merge") for row in by_layer[layer][:2]]
        assert first["kills"] and first["rules"].strip()
        for name in first:
            assert first[name] == second[name], name
        assert a.size() == file.stat().st_size and b.size() > 0
    finally:
        a.close()
        b.close()


def test_a_damaged_read_is_a_bad_graph_error_naming_the_graph(forms, tmp_path):
    file, folder = forms
    for path in (file, folder):
        store = open_store(path)
        try:
            with pytest.raises(PolygraphError, match=f"bad_graph: {path}: cannot be read"):
                store.query("SELECT nosuchcolumn FROM facts").fetchall()
        finally:
            store.close()


def test_a_read_out_of_memory_says_so_and_bounded_memory_is_restored(forms):
    """A folder's reader out of memory is an out_of_memory error, not a damaged graph to rebuild;
    ``bounded`` lowers DuckDB's limit for what it holds and restores it after, error or not."""
    _, folder = forms
    store = open_store(folder)
    try:
        limit = "SELECT current_setting('memory_limit')"
        before = store.query(limit).fetchone()[0]
        with pytest.raises(PolygraphError, match=f"out_of_memory: {folder}: reading it ran out of memory"):
            with store.bounded("2MB"):
                assert store.query(limit).fetchone()[0] != before
                store.query("SELECT count(DISTINCT x::VARCHAR) FROM range(5000000) t(x)").fetchall()
        assert store.query(limit).fetchone()[0] == before
        # within_bounds runs it again under the reader's own limit when the bound is too small
        big = "SELECT count(DISTINCT x::VARCHAR) FROM range(5000000) t(x)"
        assert store.within_bounds(lambda: store.query(big).fetchall(), "2MB") == [(5_000_000,)]
        assert store.query(limit).fetchone()[0] == before
    finally:
        store.close()


@pytest.mark.parametrize("form", ["file", "folder"])
def test_writes_through_the_interface(forms, tmp_path, form):
    source = forms[0] if form == "file" else forms[1]
    copy = tmp_path / ("copy.graph" if form == "file" else "copy.tables")
    backend.copy_graph(source, copy)
    assert backend.compare_labels(source, copy) == []
    before = backend.graph_digest(copy)
    assert before is not None and len(before) == 64
    if form == "folder":  # its digest reads what a copy links unchanged (SQLite's backup may lay pages out anew)
        assert before == backend.graph_digest(source)

    with Graph(copy) as graph:
        claim = next(graph.artifacts("claim")).id

    def write(writer) -> None:  # a version that retires one claim artifact
        writer.retire_artifact(claim)

    version = backend.write_version(copy, "apply", "test", {"action": "apply"}, write)
    assert version == 2
    assert backend.graph_digest(copy) != before
    with Graph(copy) as graph, Graph(copy, at=1) as old:
        assert not graph.has_artifact(claim) and old.has_artifact(claim)
        assert [row["version"] for row in graph.version_rows()] == [1, 2]
    # a file's label tables are its facts and their history (an artifact retired changes neither);
    # a folder's are compared version by version
    assert backend.compare_labels(source, copy) == ([] if form == "file" else ["versions: 1 against 2"])
    shutil.rmtree(copy) if copy.is_dir() else copy.unlink()


def test_facts_among_many_keys_are_those_of_each_key_asked_alone(forms):
    """``bound_facts_among`` (one query for the keys a round of ``add`` looks up on a folder)
    returns every fact ``bound_facts`` returns for each key alone (and may return more: the
    caller filters)."""
    for path in forms:
        with Graph(path) as graph:
            edges = [graph.args(row[0]) for row in graph.bound_facts("edge", (), "args")]
            for positions in ((0,), (0, 1), (1, 2), (0, 2), (2,)):
                keys = sorted({tuple(edge[p] for p in positions) for edge in edges[::3]})
                alone = {graph.args(row[0]) for key in keys
                         for row in graph.bound_facts("edge", zip(positions, key), "args")}
                alone = {edge for edge in alone if tuple(edge[p] for p in positions) in keys}
                together = {graph.args(row[0]) for row in graph.bound_facts_among("edge", positions, keys, "args")}
                assert alone and alone <= together  # a superset the caller filters: nothing missed


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("bits", [True, False])
def test_every_form_of_the_label_kills_query_counts_alike(forms, packed, bits):
    """The folder's label kills counted by the query, keys packed or side by side, sets hit counted
    as bits or after a DISTINCT, or label by label (LIST_KILLS_SQL), equal the file's (counted over its
    labels in Python), and the counts the folder's writer kept."""
    from polygraph_logic.graph.store.label_kills import KILLS_SQL, LIST_KILLS_SQL, kill_keys
    file, folder = forms
    a, b = open_store(file), open_store(folder)
    try:
        expected = a.label_kills()
        counted = dict(b.query(KILLS_SQL.format(**kill_keys(packed=packed, bits=bits))).fetchall())
        listed = dict(b.query(LIST_KILLS_SQL).fetchall())
        assert expected and counted == listed == expected == b.label_kills()
    finally:
        a.close()
        b.close()
