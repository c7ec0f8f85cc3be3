"""The hash chain of a graph's versions: ``polygraph verify`` accepts what the writers committed and
names the first version whose stored content changed afterwards, on both forms.

Independent references: the chain recomputed here by hand from its definition (a folder's
digests from its files' bytes), and tampering done here with sqlite3 and DuckDB directly.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.graph.store.chain import verify

LEDGER = Path(__file__).resolve().parent.parent / "examples" / "ledger"


def _grow(tmp_path: Path, engine: str) -> Path:
    graph = tmp_path / ("g.graph" if engine == "python" else "g.tables")
    target = ["-o", str(graph)] if engine == "python" else ["--tables", str(graph)]
    assert main(["build", "--assertions", str(LEDGER / "batch1.jsonl"), "--receipts", str(LEDGER / "batch1-receipts.jsonl"),
                 "--rules", "ro", "--engine", engine, *target]) == 0
    assert main(["add", str(graph), "--assertions", str(LEDGER / "batch2.jsonl"), "--receipts",
                 str(LEDGER / "batch2-receipts.jsonl")]) == 0
    assert main(["add", str(graph), "--assertions", str(LEDGER / "batch3.jsonl")]) == 0
    return graph


def _statuses(path: Path) -> list[str]:
    return [row["status"] for row in verify(path)]


@pytest.mark.parametrize("engine", ["python", "duckdb"])
def test_every_version_written_verifies_and_an_applied_deletion_continues_the_chain(tmp_path, engine):
    if engine == "duckdb":
        pytest.importorskip("duckdb")
    graph = _grow(tmp_path, engine)
    assert _statuses(graph) == ["ok", "ok", "ok"]
    from polygraph_logic.query.session import Session
    session = Session.open(graph)
    session.retract("example:paper-5")
    applied = tmp_path / ("applied.graph" if engine == "python" else "applied.tables")
    session.apply(applied)
    session.graph.close()
    assert _statuses(applied) == ["ok", "ok", "ok", "ok"]
    assert [r["digest"] for r in verify(applied)][:3] == [r["digest"] for r in verify(graph)]


def test_a_folders_chain_is_the_documented_digest_of_its_files(tmp_path):
    pytest.importorskip("duckdb")
    graph = _grow(tmp_path, "duckdb")

    def content(base: Path, names: list[Path]) -> str:
        digest = hashlib.sha256()
        for path in names:
            if path.is_file():
                digest.update(path.name.encode() + b"\n" + path.read_bytes() + b"\n")
        return digest.hexdigest()

    tables = ["assertions", "facts", "mentions", "artifacts", "rules"]
    parent = ""
    for version in (1, 2, 3):
        base = graph if version == 1 else graph / "versions" / str(version)
        names = ([base / f"{t}.parquet" for t in tables] + [base / "meta.json", base / "rules.dl"] if version == 1
                 else sorted(p for p in base.iterdir() if p.name != "chain.json"))
        expected = hashlib.sha256(f"polygraph-chain/1\n{parent}\n{version}\n{content(base, names)}".encode()).hexdigest()
        recorded = json.loads((base / "chain.json").read_text())["digest"]
        assert recorded == expected, version
        parent = expected


def _tamper_file(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()


@pytest.mark.parametrize("sql, first", [
    ("UPDATE assertions SET text = 'tampered' WHERE id = 'h7'", 2),  # a row of version 2
    ("UPDATE artifacts SET content = '{}' WHERE since = 1 AND layer = 'merge'", 1),
    ("DELETE FROM facts_history WHERE since = 2", 2),  # a row version 3 superseded
    ("UPDATE versions SET command = 'polygraph build (rewritten)' WHERE num = 1", 1),
    ("INSERT INTO rules(relation, c0, c1, c2, tree, since) SELECT relation, c0, c1, c2, tree, 3 FROM rules LIMIT 1", 3),
])
def test_tampering_with_a_file_names_the_first_version_changed(tmp_path, sql, first, capsys):
    graph = _grow(tmp_path, "python")
    _tamper_file(graph, sql)
    rows = verify(graph)
    assert next(r["version"] for r in rows if r["status"] == "mismatch") == first
    capsys.readouterr()
    assert main(["verify", str(graph), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["first_mismatch"] == first


def test_tampering_with_a_folder_names_the_version_whose_files_changed(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    graph = _grow(tmp_path, "duckdb")
    target = graph / "versions" / "2" / "assertions.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * REPLACE ('tampered' AS text) FROM read_parquet('{target}')) "
                f"TO '{tmp_path / 'a.parquet'}' (FORMAT parquet)")
    shutil.move(tmp_path / "a.parquet", target)
    assert _statuses(graph) == ["ok", "mismatch", "ok"]
    (graph / "versions" / "3" / "chain.json").unlink()
    assert _statuses(graph) == ["ok", "mismatch", "unchained"]


def test_a_graph_written_before_chains_is_unchained_until_its_next_version(tmp_path, capsys):
    graph = _grow(tmp_path, "python")
    _tamper_file(graph, "DROP TABLE chain")
    assert _statuses(graph) == ["unchained"] * 3
    assert main(["add", str(graph), "--assertions", str(LEDGER / "evidence.jsonl")]) == 0
    assert _statuses(graph) == ["unchained"] * 3 + ["ok"]
    capsys.readouterr()
    assert main(["verify", str(graph)]) == 0
    assert "1 of 4 versions verified" in capsys.readouterr().out
