"""The circuit's least fixpoint taken in a folder's store (graph/store/settling.py, round by round in
SQL) against the same fixpoint taken in Python over the same folder's rows (query/revival.py's
``revived_facts``), for random deletions of small generated graphs with witness labels (every
fact with more than one way to hold is open when its witness falls: many rounds, cycles through
hubs) and with capped labels."""

import json
import random

import pytest

pytest.importorskip("duckdb")

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.engines import sql_witness  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.graph.store.settling import by_numbers  # noqa: E402
from polygraph_logic.graph.synthetic import generate  # noqa: E402
from polygraph_logic.query import revival  # noqa: E402


@pytest.fixture(scope="module", params=[("capped", 0.0), ("witness", 0.0), ("witness", 1.5), ("marked", 1.5)],
                ids=["capped", "witness", "witness-hubs", "witness-hubs-marked"])
def folder(request, tmp_path_factory):
    """``marked``: witness labels whose every round marks the facts it derives again
    (sql_witness.KEPT_AGAIN 0), so that the store settles them by the rules."""
    labels, skew = request.param
    patch = pytest.MonkeyPatch()
    if labels == "marked":
        labels = "witness"
        patch.setattr(sql_witness, "KEPT_AGAIN", 0)
    made = generate(seed=5, documents=40, assertions=320, merges=10, summaries=6, hub_skew=skew)
    directory = tmp_path_factory.mktemp(f"settling-{labels}")
    assertions, receipts = directory / "a.jsonl", directory / "r.jsonl"
    assertions.write_text("".join(json.dumps(a.to_json()) + "\n" for a in made.assertions), encoding="utf-8")
    receipts.write_text("".join(json.dumps(r.to_json()) + "\n" for r in made.receipts), encoding="utf-8")
    out = directory / "g.tables"
    try:
        assert main(["build", "--assertions", str(assertions), "--receipts", str(receipts), "--rules", "ro",
                     "--engine", "duckdb", "--tables", str(out), "--labels", labels]) == 0
    finally:
        patch.undo()
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_store_settles_as_python_does(folder, seed):
    with Graph(folder) as graph:
        count = graph.query("SELECT count(*) FROM assertions").fetchone()[0]
        rng = random.Random(seed)
        deleted = frozenset(rng.sample(range(count), max(1, int(count * rng.choice([0.05, 0.2, 0.5])))))

        def killed(blob) -> bool:
            sets = graph.decode(blob)
            return bool(sets) and all(not deleted.isdisjoint(s) for s in sets)

        def survives(n: int) -> bool:
            return n not in deleted

        expected = revival.revived_facts(graph, killed, survives, None)
        held, opened = revival.revived_in_store(graph, by_numbers(deleted))
        assert held == expected
        assert opened >= len(held)
        left = graph.query("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'pg_settle_%'").fetchone()[0]
        assert left == 0  # the settling's tables are dropped
