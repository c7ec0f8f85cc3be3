"""An export's memory does not grow with the graph: the label text without interning every assertion id,
the entities labelled once remembered in bounded memory (export/once.py), a folder's facts no artifact
carries read a range at a time; the bytes written are the same as when everything was held."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main
from polygraph_logic.export import export_graph, model, once
from polygraph_logic.export.once import Once
from polygraph_logic.graph.store import folder_store
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.provenance.why import WhySemiring

# names whose natural order differs from their text order, and a tie the name itself breaks
NAMES = st.sampled_from(["a1", "a2", "a02", "a10", "a12", "b3", "x", "a1b2", "a1b10", "PMID:7", "PMID:30"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(NAMES, max_size=4), max_size=12), st.sampled_from([None, 1, 2, 3, 8]))
def test_the_label_text_is_the_polynomials(support_sets, cap):
    assert WhySemiring(cap).text(support_sets) == str(WhySemiring(cap).polynomial(support_sets))


def test_once_says_first_once_whether_it_holds_the_values_or_spilled_them(monkeypatch):
    monkeypatch.setattr(once, "RECENT", 3)
    values = [f"v{i % 37}" for i in range(0, 400, 7)] + [f"v{i}" for i in range(60)]
    seen, found = set(), Once(held=10)
    for value in values:
        assert found.first(value) == (value not in seen), value
        seen.add(value)
    assert found._db is not None  # it spilled to its file
    folder = Path(found._db.execute("PRAGMA database_list").fetchone()[2]).parent
    assert folder.is_dir()
    del found
    gc.collect()
    assert not folder.exists()


def _build(directory: Path, engine: str) -> Path:
    inputs = generate(seed=2, documents=40, assertions=400, merges=10, summaries=6).write(directory / "inputs")
    out = directory / ("g.graph" if engine == "python" else "g.tables")
    target = ["-o", str(out)] if engine == "python" else ["--tables", str(out)]
    assert main(["build", "--assertions", str(inputs / "assertions.jsonl"), "--receipts",
                 str(inputs / "receipts.jsonl"), "--rules", "ro", "--engine", engine, *target]) == 0
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("duckdb")
    directory = tmp_path_factory.mktemp("export-memory")
    return _build(directory, "python"), _build(directory, "duckdb")


def test_an_export_writes_the_same_bytes_whatever_it_holds(built, tmp_path, monkeypatch):
    for graph in built:
        whole = tmp_path / f"{graph.name}-whole.nq"
        export_graph(graph, whole, "nquads")
        spills = []
        monkeypatch.setattr(once, "HELD", 50)
        monkeypatch.setattr(once, "RECENT", 20)
        monkeypatch.setattr(model, "TERMS_HELD", 16)
        monkeypatch.setattr(Once, "_spill", lambda self, spill=Once._spill: spills.append(1) or spill(self))
        bounded = tmp_path / f"{graph.name}-bounded.nq"
        export_graph(graph, bounded, "nquads")
        monkeypatch.undo()
        assert spills and bounded.read_bytes() == whole.read_bytes(), graph.name
        assert whole.stat().st_size > 1_000_000


def test_a_folders_uncarried_facts_are_read_by_ranges_as_one_query_read_them(built, monkeypatch):
    file, folder = built
    monkeypatch.setattr(folder_store, "RANGE", 300)
    with Graph(file) as a, Graph(folder) as b:
        for carried in (False, True):
            where = "" if carried else " WHERE num NOT IN (SELECT fact FROM artifacts)"
            one_query = b.query(f"SELECT relation, args, label, exact FROM facts{where} ORDER BY num").fetchall()
            assert list(b.store.fact_rows(carried)) == one_query and len(one_query) > 500
            assert list(a.facts(carried)) == list(b.facts(carried))
        assert 0 < len(list(b.facts(carried=False))) < len(list(b.facts()))
