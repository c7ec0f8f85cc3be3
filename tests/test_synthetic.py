"""The synthetic graph generator, and soundness of built labels on a synthetic graph:
every support set of a sampled entailed edge re-derives it alone, and exact sets are minimal."""

import json
import random
from pathlib import Path

import pytest

from polygraph_logic import evaluate
from polygraph_logic.graph.build import build_graph
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.program import load_program
from polygraph_logic.resources import rule_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "synthetic"
SMALL = dict(documents=30, assertions=250, merges=15, summaries=6)


def test_same_seed_same_files_other_seed_other_files(tmp_path):
    generate(seed=5, **SMALL).write(tmp_path / "a")
    generate(seed=5, **SMALL).write(tmp_path / "b")
    generate(seed=6, **SMALL).write(tmp_path / "c")
    for name in ("assertions.jsonl", "receipts.jsonl", "retracted.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "assertions.jsonl").read_bytes() != (tmp_path / "c" / "assertions.jsonl").read_bytes()


def test_written_receipts_validate_and_counts_follow_parameters(tmp_path):
    generate(seed=1, **SMALL).write(tmp_path)
    assertions = load_assertions(tmp_path / "assertions.jsonl")
    receipts = load_receipts(tmp_path / "receipts.jsonl", {a.id for a in assertions})
    assert len(assertions) == 250 and len({a.source for a in assertions}) == 30
    assert sum(r.layer == "merge" for r in receipts) == 15
    assert sum(r.layer == "summary" for r in receipts) == 6
    assert all(r.sentences for r in receipts if r.layer == "summary")
    bigger = generate(seed=1, documents=60, assertions=500, merges=30, summaries=12)
    assert len(bigger.assertions) == 500 and bigger.counts()["merges"] == 30


def test_committed_example_equals_a_fresh_generation(tmp_path):
    parameters = json.loads((EXAMPLE / "generator.json").read_text())["parameters"]
    generate(**parameters).write(tmp_path)
    for name in ("assertions.jsonl", "receipts.jsonl", "retracted.txt", "generator.json"):
        assert (tmp_path / name).read_text() == (EXAMPLE / name).read_text(), name


@pytest.fixture(scope="module")
def small_build():
    assertions = load_assertions(EXAMPLE / "assertions.jsonl")
    receipts = load_receipts(EXAMPLE / "receipts.jsonl", {a.id for a in assertions})
    return assertions, receipts, build_graph(assertions, receipts, [rule_file("ro")])


def test_a_small_build_has_every_layer(small_build):
    counts = small_build[2].counts()
    assert set(counts) == {"claim", "merge", "edge", "summary", "sentence"}
    assert counts["edge"] > counts["claim"]


def test_every_support_set_rederives_its_edge_alone_and_exact_sets_are_minimal(small_build):
    assertions, receipts, build = small_build
    ro = load_program(rule_file("ro"))
    by_id = {a.id: a for a in assertions}
    rng = random.Random(0)
    edges = [a for a in build.artifacts if a.layer == "edge"]
    checked = minimal = 0
    for artifact in rng.sample(edges, 5):
        triple = (artifact.content["subject"], artifact.content["predicate"], artifact.content["object"])
        for support in artifact.support[:2]:
            program = compile_inputs([by_id[a] for a in support], receipts).program(ro)
            assert triple in evaluate(program, "boolean").boolean()["edge"], (artifact.id, support)
            checked += 1
            if artifact.exact and minimal < 3:  # without any one of its assertions the set fails
                for dropped in support:
                    fewer = compile_inputs([by_id[a] for a in support if a != dropped], receipts).program(ro)
                    assert triple not in evaluate(fewer, "boolean").boolean()["edge"]
                minimal += 1
    assert checked >= 5 and minimal >= 1
