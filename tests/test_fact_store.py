"""A FactStore that defers its look-ups (re-derivation's batches) answers as one that reads each at once.

Every look-up a proof can make of Figure 1's graph, as a file and as a folder: by the first
argument, the first two (a membership test's bucket), the third, all of them; and membership
of every fact and of facts the graph lacks.  Deferred, each raises ``Deferred`` and is recorded;
one ``fetch`` reads them all; the answers then equal those of a store that queried each alone
(an independent path: one query a look-up, graph/store/questions.bound_facts).
"""

from pathlib import Path

import pytest

from polygraph_logic.graph.store.fact_store import Deferred, FactStore
from polygraph_logic.graph.store.graph_file import Graph


def _value(relation, args):
    return True


@pytest.fixture(params=["file", "folder"])
def graph_path(request, figure1_graph, tmp_path) -> Path:
    if request.param == "file":
        return figure1_graph
    pytest.importorskip("duckdb")
    from polygraph_logic.graph.tables.layout import export_tables
    export_tables(figure1_graph, tmp_path / "folder")
    return tmp_path / "folder"


def _asked(graph: Graph) -> tuple[list, list]:
    facts = [(relation, graph.args(args)) for relation, args in
             graph.query("SELECT relation, args FROM facts ORDER BY num").fetchall()]
    lookups = set()
    for relation, tup in facts:
        for positions in ((0,), (0, 1), (2,), tuple(range(len(tup)))):
            if positions and max(positions) < len(tup):
                lookups.add((relation, positions, tuple(tup[p] for p in positions)))
    lookups.add(("edge", (0,), ("no such entity",)))
    members = facts + [("edge", ("no such entity", "RO:0002131", "x")), ("merge", ("merge:none",))]
    return sorted(lookups, key=repr), members


def test_deferred_look_ups_read_together_equal_those_read_alone(graph_path):
    with Graph(graph_path) as graph:
        lookups, members = _asked(graph)
        alone = FactStore(graph, _value)
        expected = [alone.lookup(*asked) for asked in lookups]
        expected_members = [alone.exists(relation, tup) for relation, tup in members]
        assert any(expected) and any(expected_members) and not all(expected_members)

        deferring = FactStore(graph, _value)
        deferring.deferring = True
        for asked in lookups:
            with pytest.raises(Deferred):
                deferring.lookup(*asked)
        deferred_members = 0
        for relation, tup in members:
            try:
                deferring.exists(relation, tup)
            except Deferred:
                deferred_members += 1
        assert deferred_members and deferring.wanted
        deferring.fetch()
        assert not deferring.wanted
        assert [deferring.lookup(*asked) for asked in lookups] == expected
        assert [deferring.exists(relation, tup) for relation, tup in members] == expected_members
