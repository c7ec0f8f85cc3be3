"""``rests-on`` read in bounded memory (query/rests_on.py) lists what one what-if held whole listed.

The reference here is the listing as it was computed before it streamed: one trust-all what-if
distrusting the kinds, held in memory (whatif.py), read as ``rests_on`` read it, and printed as
the command printed it.  Each graph (the bundled examples, a hand-made one, a small generated one
with capped labels) is built twice, by the Python engine into a file and by DuckDB into a folder,
and read with the store's chunks, the sorted runs and the claims' chunks as small as they go, so
that every path (the mentions index or every artifact read, runs merged from disk) is taken.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_kinds import HAND_MADE, HAND_MADE_RECEIPTS, KIND_OF  # noqa: E402

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.graph.kinds import check_kinds  # noqa: E402
from polygraph_logic.graph.store import backend  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate  # noqa: E402
from polygraph_logic.query import rests_on as streamed  # noqa: E402
from polygraph_logic.query import revival, sorted_runs  # noqa: E402
from polygraph_logic.query.rests_on import RestsOn, rests_on  # noqa: E402
from polygraph_logic.query.whatif import Deletion, what_if  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KINDS = [("model_hypothesis",), ("tool_observation",), ("source_claim",), ("model_hypothesis", "tool_observation")]


def reference(graph, kinds, exact: bool = False) -> dict:
    """rests_on as it was (commit 7284d09): the what-if held whole, its rows sorted in memory."""
    outcome = what_if(graph, Deletion(kinds=check_kinds(kinds)), "trust-all", exact=exact)
    rows, dead = outcome.rows, outcome.dead_ranks
    resting = {name for name, entry in outcome.summaries.items() if entry["dead_sentences"]}
    dead_sentences = {rows[n][0] for n in dead if rows[n][1] == "sentence"}
    summaries = {name: {"sentences": outcome.summaries[name]["sentences"],
                        "resting_sentences": [s for s in graph.sentence_ids(name) if s in dead_sentences],
                        "under_trust_all": outcome.summaries[name]["status"]}
                 for name in sorted(resting)}
    listed = [n for n in outcome._ordered
              if n in dead or n in outcome.demotions or (rows[n][1] == "summary" and rows[n][0] in resting)]
    artifacts = outcome.listing(listed)
    return {"kinds": list(outcome.deletion.kinds), "assertions": len(outcome.deleted), "artifacts": artifacts,
            "by_layer": dict(Counter(entry["layer"] for entry in artifacts)),
            "still_entailed": [dict(d) for d in outcome.demoted],
            "summaries": summaries, "uncertain": outcome.uncertain, "exact": exact}


def reference_text(result: dict) -> list[str]:
    """The command's text as it printed the reference."""
    kinds = ", ".join(result["kinds"])
    out = [f"{len(result['artifacts'])} artifacts rest only on {kinds} ({result['assertions']} assertions of "
           "that kind): every support set of each holds one"]
    entailed = {entry["artifact"] for entry in result["still_entailed"]}
    for entry in result["artifacts"]:
        triple = f"  {' '.join(map(str, entry['triple']))}" if "triple" in entry else ""
        note = "  [its triple is still entailed by other evidence: it stands as an edge]" \
            if entry["id"] in entailed else ""
        summary = result["summaries"].get(entry["id"])
        if summary is not None:
            note = (f"  [{len(summary['resting_sentences'])} of {summary['sentences']} sentences rest on {kinds}: "
                    + ("trust-all keeps it trimmed, without them]" if summary["under_trust_all"] == "trimmed"
                       else "trust-all removes it]"))
        out.append(f"  - {entry['id']} ({entry['layer']}){triple}{note}")
    if result["summaries"]:
        out.append("a summary with sentence-level receipts is the conjunction of its sentences: it rests on a kind "
                   "when any sentence does")
    if result["uncertain"]:
        out.append(f"{len(result['uncertain'])} of them rest on capped labels; --exact settles them")
    return out


def _write(directory: Path, assertions: list[dict], receipts: list[dict]) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = directory / "assertions.jsonl", directory / "receipts.jsonl"
    for path, records in zip(paths, (assertions, receipts)):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return paths


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _inputs(name: str, directory: Path) -> tuple[Path, Path]:
    """The inputs of one graph: a bundled example (with kinds where it has none), the hand-made
    graph of test_kinds, or a small generated graph whose sources each have a kind."""
    if name == "figure1":
        assertions = [{**r, **({"kind": KIND_OF[r["id"]]} if r["id"] in KIND_OF else {})}
                      for r in _lines(EXAMPLES / "figure1" / "assertions.jsonl")]
        return _write(directory, assertions, _lines(EXAMPLES / "figure1" / "receipts.jsonl"))
    if name == "ledger":  # its three batches as one graph: hypotheses, a verification
        ledger = EXAMPLES / "ledger"
        return _write(directory, [r for b in ("batch1", "batch2", "batch3") for r in _lines(ledger / f"{b}.jsonl")],
                      [r for b in ("batch1", "batch2") for r in _lines(ledger / f"{b}-receipts.jsonl")])
    if name == "hand-made":
        return _write(directory, HAND_MADE, HAND_MADE_RECEIPTS)
    generated = generate(seed=3, documents=30, assertions=240, merges=8, summaries=8) if name == "generated" \
        else None
    records = [a.to_json() for a in generated.assertions] if generated else \
        _lines(EXAMPLES / "synthetic" / "assertions.jsonl")
    receipts = [r.to_json() for r in generated.receipts] if generated else _lines(EXAMPLES / "synthetic" / "receipts.jsonl")
    rng, other = random.Random(3), random.Random(4)
    if generated:  # most assertions hypotheses: capped labels whose kept sets all fall, 11 facts revived
        kinds = ["model_hypothesis" if rng.random() < 0.85 else other.choice(["source_claim", "tool_observation"])
                 for _ in records]
        return _write(directory, [{**r, "kind": kind} for r, kind in zip(records, kinds)], receipts)
    kind_of = {s: rng.choice(["model_hypothesis", "source_claim", "source_claim", "tool_observation"])
               for s in sorted({r["source"] for r in records})}
    return _write(directory, [{**r, "kind": kind_of[r["source"]]} for r in records], receipts)


def _build(inputs: tuple[Path, Path], out: Path, engine: str, *extra: str) -> Path:
    target = ["-o", str(out)] if engine == "python" else ["--tables", str(out)]
    assert main(["build", "--assertions", str(inputs[0]), "--receipts", str(inputs[1]), "--rules", "ro",
                 "--engine", engine, *target, *extra]) == 0
    return out


@pytest.fixture(scope="module", params=["figure1", "ledger", "hand-made", "generated",
                                        pytest.param("synthetic", marks=pytest.mark.slow)])
def graphs(request, tmp_path_factory):
    """One graph as a file (the Python engine) and as a folder (DuckDB)."""
    tmp = tmp_path_factory.mktemp(request.param)
    inputs = _inputs(request.param, tmp / "inputs")
    return request.param, [_build(inputs, tmp / "g.graph", "python"), _build(inputs, tmp / "g.tables", "duckdb")]


@pytest.fixture(params=["default", "tight"])
def chunks(request, monkeypatch):
    """The sizes as shipped, or every one small: runs of 7 records, 5 claims or 3 open facts a query,
    100 artifacts a range, and every artifact read rather than the mentions index."""
    if request.param == "tight":
        monkeypatch.setattr(sorted_runs, "RUN", 7)
        monkeypatch.setattr(streamed, "CLAIMS_AT_ONCE", 5)
        monkeypatch.setattr(streamed, "TOUCHED_HELD", -1)
        monkeypatch.setattr(revival, "FACTS_AT_ONCE", 3)
        monkeypatch.setattr(backend, "ARTIFACTS_AT_ONCE", 100)
    return request.param


def _run(capsys, args: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(args)
    return code, capsys.readouterr().out


def test_the_listing_is_the_whatifs_listing_on_files_and_folders(graphs, chunks, capsys):
    name, paths = graphs
    met = Counter()  # the paths taken: each asserted below, else a comparison tests nothing new
    for path in paths:
        for kinds in KINDS:
            with Graph(path) as graph:
                expected = reference(graph, kinds)
                assert rests_on(graph, kinds) == expected, (name, path.suffix, kinds)
                with RestsOn(graph, kinds) as found:
                    assert found.total == len(expected["artifacts"]) and found.by_layer == expected["by_layer"]
                    met["spilled"] += found._runs.written > 1
                    met["revived"] += bool(found._revived)
                    met["revived in the store"] += bool(found._revived) and path.suffix == ".tables" \
                        and found._touched is None
                    met["touched route"] += found._touched is not None
                    met["every artifact read"] += found._touched is None and found.assertions > 0
            met["still entailed"] += bool(expected["still_entailed"])
            met["trimmed"] += any(s["under_trust_all"] == "trimmed" for s in expected["summaries"].values())
            met["removed"] += any(s["under_trust_all"] == "removed" for s in expected["summaries"].values())
            flags = [arg for kind in kinds for arg in ("--kind", kind)]
            code, out = _run(capsys, ["rests-on", str(path), *flags])
            assert code == 0 and out.splitlines() == reference_text(expected), (name, path.suffix, kinds)
            code, out = _run(capsys, ["rests-on", str(path), *flags, "--json"])
            assert code == 0 and json.loads(out) == expected
    cases = {"tight": ["every artifact read", "spilled"], "default": ["touched route"]}[chunks]
    cases += {"generated": ["revived"] + (["revived in the store"] if chunks == "tight" else []),
              "hand-made": ["still entailed", "trimmed", "removed"]}.get(name, [])
    assert all(met[case] for case in cases), (cases, met)


def test_limit_lists_the_first_artifacts_and_counts_them_all(graphs, chunks, capsys):
    """With ``--limit`` a folder counts in SQL and decides only the first artifacts (``counted_in_sql``):
    the same report as the what-if's, for every kind (summaries trimmed and removed, facts revived)."""
    name, paths = graphs
    for path in paths:
        for kinds in KINDS:
            with Graph(path) as graph:
                expected = reference(graph, kinds)
                total = len(expected["artifacts"])
                for limit in (1, 2, 5, total + 1):
                    with RestsOn(graph, kinds, limit=limit) as found:
                        assert found.counted_in_sql == (path.suffix == ".tables" and bool(found.assertions))
                        report = found.report(limit)
                    assert (report["artifacts"], report["by_layer"]) == (expected["artifacts"][:limit],
                                                                         expected["by_layer"]), (path, kinds, limit)
                    ids = {entry["id"] for entry in report["artifacts"]}
                    assert report["still_entailed"] == [d for d in expected["still_entailed"] if d["artifact"] in ids]
                    assert report["summaries"] == {k: v for k, v in expected["summaries"].items() if k in ids}
                    assert report["uncertain"] == [] == expected["uncertain"]
        with Graph(path) as graph:
            expected = reference(graph, ("source_claim",))
        total = len(expected["artifacts"])
        assert total > 3
        for limit in (1, 3, total, total + 5):
            code, out = _run(capsys, ["rests-on", str(path), "--kind", "source_claim", "--limit", str(limit)])
            lines, full = out.splitlines(), reference_text(expected)
            shown = min(limit, total)
            assert code == 0 and lines[:1 + shown] == full[:1 + shown]
            assert [line for line in lines if line.startswith("  - ")] == full[1:1 + shown]
            more = [line for line in lines if line.startswith("  ... and")]
            assert more == ([f"  ... and {total - limit} more (--limit {limit})"] if limit < total else [])
            code, out = _run(capsys, ["rests-on", str(path), "--kind", "source_claim", "--limit", str(limit), "--json"])
            report = json.loads(out)
            assert report["artifacts"] == expected["artifacts"][:limit] and report["limit"] == limit
            assert report["by_layer"] == expected["by_layer"] and report["assertions"] == expected["assertions"]
            ids = {entry["id"] for entry in report["artifacts"]}
            assert report["still_entailed"] == [d for d in expected["still_entailed"] if d["artifact"] in ids]
            assert report["summaries"] == {k: v for k, v in expected["summaries"].items() if k in ids}


def test_a_graph_without_a_circuit_is_uncertain_until_exact(tmp_path, monkeypatch, capsys):
    """Without a circuit a dead capped label is uncertain (listed, and counted), and ``exact`` settles
    it by re-derivation (held in memory, as the what-if holds it)."""
    monkeypatch.setattr(sorted_runs, "RUN", 3)
    inputs = _inputs("generated", tmp_path / "inputs")
    uncertain = 0
    for engine, out in (("python", tmp_path / "bare.graph"), ("duckdb", tmp_path / "bare.tables")):
        path = _build(inputs, out, engine, "--no-circuit")
        with Graph(path) as graph:
            assert not graph.has_circuit()
            for kinds in (KINDS[0], KINDS[3]):
                for exact in (False, True):
                    expected = reference(graph, kinds, exact)
                    assert rests_on(graph, kinds, exact) == expected, (engine, kinds, exact)
                    uncertain += len(expected["uncertain"])
                    if exact:
                        assert not expected["uncertain"]
        code, out = _run(capsys, ["rests-on", str(path), "--kind", "model_hypothesis"])
        with Graph(path) as graph:
            assert out.splitlines() == reference_text(reference(graph, ("model_hypothesis",)))
    assert uncertain


def test_sorted_runs_merge_what_they_spill(tmp_path):
    records = [(random.Random(i).randrange(50), f"id{i}") for i in range(1000)]
    runs = sorted_runs.SortedRuns(run=64)
    for record in records:
        runs.add(record)
    assert runs.written == 15 and runs.count == 1000
    assert list(runs) == sorted(records) and list(runs) == sorted(records)  # read twice
    assert list(zip(range(5), runs)) == list(enumerate(sorted(records)[:5]))
    folder = runs._folder
    assert folder.is_dir()
    runs.close()
    assert not folder.exists()
