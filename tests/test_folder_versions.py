"""Versions on a graph folder: ``add``, an applied deletion, ``--at``, ``log`` and ``replay`` answer
as they do on a graph file.

The same inputs, cut in three batches, are built twice, independently: by the Python engine into a
graph file, by DuckDB into a folder.  Each grows by the same two adds (one incremental, one
re-evaluated in full) and one applied deletion: versions 1 to 4.  At every version each reading
command's output must be the same on both, but for what names the graph itself (its path, its
bytes, times, hashes), and so must every stored row, numbers included; ``replay`` of the folder is
identical; the build's files are never rewritten.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ledger import batches, lines  # noqa: E402
from test_one_graph import _VOLATILE, _rows  # noqa: E402

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.query.replay import compare_labels, replay  # noqa: E402
from polygraph_logic.query.session import Session  # noqa: E402
from polygraph_logic.graph.tables.layout import import_tables  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VERSIONS = (1, 2, 3, 4)


def _grow(tmp: Path, engine: str, files, retracted: list[str]) -> tuple[Path, dict]:
    """Builds batch 1 with ``engine`` into ``tmp/engine/g``, adds batches 2 (incrementally) and 3 (in
    full), and applies the retraction of the sources ``retracted`` into ``tmp/engine/applied``; returns it and
    the size and time of each file of a built folder."""
    folder = tmp / engine
    folder.mkdir()
    graph = folder / "g"
    target = ["-o", str(graph)] if engine == "python" else ["--tables", str(graph)]
    assert main(["build", "--assertions", str(files[0][0]), "--receipts", str(files[0][1]), "--rules", "ro",
                 "--engine", engine, *target]) == 0
    base = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in graph.iterdir() if p.is_file()} \
        if graph.is_dir() else {}
    assert main(["add", str(graph), "--assertions", str(files[1][0]), "--receipts", str(files[1][1])]) == 0
    assert main(["add", str(graph), "--assertions", str(files[2][0]), "--receipts", str(files[2][1]),
                 "--full"]) == 0
    session = Session.open(graph, "trust-all")
    for source in retracted:
        session.retract(source)
    session.apply(folder / "applied")
    session.graph.close()
    return folder / "applied", base


# the synthetic graph's variants run with the slow tests (.ci/run): figure1's cover the same paths
@pytest.fixture(scope="module", params=["figure1", pytest.param("synthetic", marks=pytest.mark.slow)])
def grown(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param)
    inputs = EXAMPLES / request.param
    files = batches(lines(inputs / "assertions.jsonl"), lines(inputs / "receipts.jsonl"), 3, random.Random(7), tmp)
    sources = sorted({json.loads(line)["source"] for line in lines(inputs / "assertions.jsonl")})
    # in the synthetic graph, doc0008's retraction trims three sentence-level summaries
    retracted = [sources[0], *(["synthetic:doc0008"] if request.param == "synthetic" else [])]
    file, _ = _grow(tmp, "python", files, retracted)
    folder, base = _grow(tmp, "duckdb", files, retracted)
    return request.param, file, folder, sources, base


def _run(capsys, args: list[str], graph: Path) -> str:
    """A command's output, the graph's folder named DIR (so the file's and the folder's agree)."""
    capsys.readouterr()
    code = main([*args[:1], str(graph), *args[1:]])
    out, err = capsys.readouterr()
    text = (out + err).replace(str(graph.parent), "DIR")
    text = re.sub(r"\b[0-9]+(\.[0-9]+)? (ms|s)\b", "N ms", text)
    text = re.sub(r'"sha256": "[0-9a-f]+"', '"sha256": "-"', text)
    return f"exit {code}\n" + _VOLATILE.sub(r'"\1": "-"', text)


def _ids(graph: Path, version: int, count: int) -> list[str]:
    with Graph(graph, at=version) as opened:
        ids = [a.id for a in opened.artifacts()]
    return ids[:: max(1, len(ids) // count)][:count]


def test_every_stored_row_at_every_version(grown):
    """Row for row at each version: assertions, facts (numbers and labels), mentions, artifacts, rules."""
    name, file, folder, sources, base = grown
    for version in VERSIONS:
        with Graph(file, at=version) as a, Graph(folder, at=version) as b:
            left, right = _rows(a), _rows(b)
            assert a.info()["layers"] == b.info()["layers"], version
            assert a.info()["assertions"] == b.info()["assertions"] and a.info()["sources"] == b.info()["sources"]
        for table in left:
            assert left[table] == right[table], (version, table)
    assert len(left["facts"]) > 0
    trimmed = [row for row in right["artifacts"] if row[2] == "summary" and "sentences_kept" in row[3]]
    assert len(trimmed) == (3 if name == "synthetic" else 0)


def test_whatif_at_every_version(grown, capsys):
    name, file, folder, sources, base = grown
    for version in VERSIONS:
        for source in sources[:3]:
            for policy in ("trust-all", "deployed", "flat", "distrust:summary"):
                args = ["whatif", "--at", str(version), "--retract-source", source, "--policy", policy, "--json",
                        "--list"]
                assert _run(capsys, args, folder) == _run(capsys, args, file), (version, source, policy)
        args = ["whatif", "--at", str(version), "--retract-source", sources[1], "--exact", "--json"]
        assert _run(capsys, args, folder) == _run(capsys, args, file), version


def test_explanations_and_listings_at_every_version(grown, capsys):
    name, file, folder, sources, base = grown
    for version in VERSIONS:
        at = ["--at", str(version)]
        for artifact in _ids(file, version, 6):
            for args in (["why", artifact, *at, "--json"], ["robustness", artifact, *at, "--json"],
                         ["whynot", artifact, "--retract-source", sources[1], *at, "--json"]):
                assert _run(capsys, args, folder) == _run(capsys, args, file), (version, args)
        for args in (["info", *at, "--json"], ["show", *at, "--limit", "40"], ["contradictions", *at, "--json"],
                     ["top-sources", *at, "--limit", "5", "--json"],
                     ["rests-on", "--kind", "source_claim", *at, "--json"]):
            assert _run(capsys, args, folder) == _run(capsys, args, file), (version, args)
    log = _run(capsys, ["log", "--json"], folder)
    assert log == _run(capsys, ["log", "--json"], file)
    assert [v["action"] for v in json.loads(log.split("\n", 1)[1])] == ["build", "add", "add", "apply"]


def test_export_at_every_version(grown, tmp_path):
    name, file, folder, sources, base = grown
    for version in (1, 4):
        texts = []
        for graph in (file, folder):
            out = tmp_path / f"{graph.parent.name}-{version}.nq"
            assert main(["export", str(graph), "--at", str(version), "-o", str(out)]) == 0
            text = re.sub(r'"[0-9T:-]+Z"', '"TIME"', out.read_text(encoding="utf-8"))
            # the history digest is of each form's own stored content (graph/store/chain.py)
            texts.append(sorted(line for line in text.splitlines()
                                if "#graphMeta>" not in line and "#historyDigest>" not in line))
        assert len(texts[0]) > 20 and texts[0] == texts[1], version


def test_the_build_files_are_never_rewritten_and_replay_is_identical(grown, tmp_path):
    name, file, folder, sources, base = grown
    original = folder.parent / "g"
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in original.iterdir() if p.is_file()} == base
    assert sorted(p.name for p in (original / "versions").iterdir()) == ["2", "3"]
    assert sorted(p.name for p in (folder / "versions").iterdir()) == ["2", "3", "4"]
    report = replay(folder, tmp_path / "replayed")
    assert report.versions == 4 and report.changed == [] and report.identical, report
    assert compare_labels(folder, tmp_path / "replayed") == []
    assert compare_labels(folder, original) == ["versions: 4 against 3"]


def test_bad_adds_and_versions_leave_the_folder_as_it_was(grown, tmp_path, capsys):
    name, file, folder, sources, base = grown
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    before = sorted((str(p.relative_to(copy)), p.stat().st_size) for p in copy.rglob("*"))
    with Graph(copy) as opened:
        known = next(iter(opened.assertions.values()))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(known.to_json()) + "\n")
    text = _run(capsys, ["add", "--assertions", str(bad)], copy)
    assert "exit 2" in text and "duplicate_assertion" in text and "bad.jsonl:1" in text
    text = _run(capsys, ["show", "--at", "5"], copy)
    assert "exit 2" in text and "no_version" in text and "versions 1 to 4" in text
    assert sorted((str(p.relative_to(copy)), p.stat().st_size) for p in copy.rglob("*")) == before
    with pytest.raises(PolygraphError, match="versioned_folder") as raised:
        import_tables(copy, tmp_path / "g.graph")
    assert "keep the folder" in str(raised.value) and not (tmp_path / "g.graph").exists()
    (copy / "versions" / "3").rename(copy / "versions" / "5")
    text = _run(capsys, ["info"], copy)
    assert "exit 2" in text and "versions/3 is missing" in text


def test_the_kills_kept_at_every_version_are_those_counted_anew(grown):
    """What each source kills on its labels alone (top-sources' bounds), as the folder's writers keep
    it at every version (the build's count, then each version's changes to its parent's), equals a
    count made anew over the version's mentions and the graph file's count over its labels."""
    from polygraph_logic.graph.store.label_kills import KILLS_SQL, fitting_keys, kills_path, kills_sql
    _, file, folder, _, _ = grown
    seen = []
    for version in VERSIONS:
        assert kills_path(folder, version).is_file(), version
        with Graph(file, at=version) as a, Graph(folder, at=version) as b:
            kept, expected = b.store.label_kills(), a.store.label_kills()
            one = lambda sql: b.store.query(sql).fetchone()  # noqa: E731
            anew = dict(b.store.query(KILLS_SQL.format(**fitting_keys(one))).fetchall())
            listed = dict(b.store.query(kills_sql(one)).fetchall())  # label by label where it applies
        assert kept == anew == listed == expected, version
        seen.append(kept)
    assert seen[-1] and len({json.dumps(counts, sort_keys=True) for counts in seen}) > 1  # the versions change them
