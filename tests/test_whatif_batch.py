"""What-ifs of one source each, their rows read at once (query/whatif_batch.py, for top-sources),
decide what ``what_if`` decides, retracting each source of a graph, file and folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_rests_on import _build, _inputs  # noqa: E402

from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.query import whatif_batch  # noqa: E402
from polygraph_logic.query.whatif import Deletion, what_if  # noqa: E402
from polygraph_logic.query.whatif_batch import SourceWhatIfs  # noqa: E402


def _verdicts(outcome) -> dict:
    return {"touched": outcome.touched, "dead": outcome.dead, "demoted": outcome.demoted,
            "uncertain": outcome.uncertain, "summaries": outcome.summaries, "by_layer": outcome.by_layer(),
            "deleted": sorted(outcome.deleted), "settled": (outcome.settled, outcome.revived, outcome.settled_by)}


@pytest.mark.parametrize("name", ["figure1", "hand-made", "generated"])
def test_each_sources_what_if_is_the_what_ifs(name, tmp_path, monkeypatch):
    monkeypatch.setattr(whatif_batch, "CHUNK", 7)  # the batch's rows read a few at a time
    inputs = _inputs(name, tmp_path / "inputs")
    graphs = [_build(inputs, tmp_path / "g.graph", "python"), _build(inputs, tmp_path / "g.tables", "duckdb")]
    if name == "generated":
        graphs.append(_build(inputs, tmp_path / "bare.graph", "python", "--no-circuit"))
    met = {"dead": 0, "demoted": 0, "settled": 0, "uncertain": 0}
    for path in graphs:
        with Graph(path) as graph:
            sources = graph.distinct("source")
            for start in range(0, len(sources), 5):
                batch = SourceWhatIfs(graph, sources[start:start + 5])
                for source in sources[start:start + 5]:
                    expected = _verdicts(what_if(graph, Deletion(sources=(source,)), "trust-all"))
                    assert _verdicts(batch.outcome(source)) == expected, (path.name, source)
                    for key in met:
                        met[key] += bool(expected[key]) if key != "settled" else expected[key][0] > 0
    assert met["dead"]
    if name == "hand-made":
        assert met["demoted"]
    if name == "generated":
        assert met["settled"] and met["uncertain"]
