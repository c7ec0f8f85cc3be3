"""The Boolean closure a what-if settles marked facts by (query/closure_settle.py), against a
recomputation: the Python engine's Boolean evaluation of the program a build compiles from the
input files with the deleted sources' assertions left out.  Every fact of the graph the closure
holds is a fact of the recomputation, and every fact of the recomputation is held."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from polygraph_logic.datalog import evaluate  # noqa: E402
from polygraph_logic.graph.build import prepare_build  # noqa: E402
from polygraph_logic.graph.engine_build import build_graph  # noqa: E402
from polygraph_logic.graph.records import load_inputs  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.query.closure_settle import held_by_closure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RO = str(ROOT / "rules" / "ro.dl")


@pytest.fixture(scope="module", params=["figure1", "synthetic"])
def built(request, tmp_path_factory):
    example = ROOT / "examples" / request.param
    inputs = example / "assertions.jsonl", example / "receipts.jsonl"
    folder = tmp_path_factory.mktemp(request.param) / "g"
    build_graph(*inputs, [RO], engine="duckdb", output=folder, tables=True, labels="witness")
    return inputs, folder


@pytest.mark.parametrize("seed", range(4))
def test_the_closure_without_the_deleted_assertions_is_a_recomputation(built, seed):
    (assertions_path, receipts_path), folder = built
    assertions, receipts = load_inputs(assertions_path, receipts_path)
    sources = sorted({a.source for a in assertions})
    rng = random.Random(seed)
    chosen = set(rng.sample(sources, max(1, len(sources) // rng.choice([10, 3, 2]))))
    kept = [a for a in assertions if a.source not in chosen]
    model = evaluate(prepare_build(kept, receipts, [RO]).program, "boolean")
    expected = {(relation, tup) for relation in model.relations() for tup in model.facts(relation)}
    with Graph(folder) as graph:
        deleted = [num for num, a in graph.assertions.numbered(range(len(assertions) + 1)).items()
                   if a.source in chosen]
        facts = [(num, relation, graph.args(args))
                 for num, relation, args in graph.query("SELECT num, relation, args FROM facts").fetchall()]
        held = held_by_closure(graph, deleted, [facts[:7], facts[7:]])  # in batches
    assert deleted and len(held) < len(facts)
    assert {(relation, args) for num, relation, args in facts if num in held} == expected
