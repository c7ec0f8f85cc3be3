"""Compiling and building graphs: merges in the closure, summaries, persistence."""

import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from polygraph_logic import evaluate
from polygraph_logic.cli import main
from polygraph_logic import build_graph
from polygraph_logic.graph.artifact_ids import triple_id
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.label_codec import decode_label, encode_label
from polygraph_logic.graph.store.writer import write_graph
from polygraph_logic.datalog.program import parse_program

from reference import minimal_supports

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


@pytest.fixture(scope="module")
def inputs():
    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    return assertions, receipts


def test_compiled_program_prints_and_parses_back_to_itself(inputs):
    compiled = compile_inputs(*inputs)
    program = compiled.program()
    reparsed = parse_program(compiled.to_text())
    assert [str(c) for c in reparsed.facts] == [str(c) for c in program.facts]
    assert [str(r) for r in reparsed.rules] == [str(r) for r in program.rules]
    text = compiled.to_text()
    assert 'merge("merge:mapk-erk") :- assertion("a12"), assertion("a13").' in text
    assert 'summary("summary:aim2") :- sentence("summary:aim2#s1"), sentence("summary:aim2#s2").' in text


def test_labels_equal_brute_force_minimal_supports(inputs):
    program = compile_inputs(*inputs).program()
    model = evaluate(program, "why", cap=None)
    tracked = defaultdict(list)
    for fact in program.facts:
        tracked[fact.variable].append((fact.atom.relation, tuple(a.value for a in fact.atom.args)))
    expected = minimal_supports(dict(tracked), set(), program.rules)
    for name in ("edge", "merge", "member", "summary", "sentence"):
        for tup, label in model.facts(name).items():
            assert sorted(map(sorted, label.support_sets())) == sorted(map(sorted, expected[(name, tup)]))


def test_merges_carry_edges_to_the_canonical_entity(inputs):
    model = evaluate(compile_inputs(*inputs).program(), "why")
    label = model.label("edge", ("MAPK/ERK", "RO:0002211", "apoptosis"))
    assert str(label) == "a12·a13 + a12·a20·a21 + a13·a20·a21"
    # the edge dies with the merge's only evidence and the claims ...
    assert label.restrict({"a12", "a13"}).is_zero()
    # ... but survives through another member when that member's evidence stands
    assert str(label.restrict({"a12"})) == "a13·a20·a21"
    merge = model.label("merge", ("merge:mapk-erk",))
    assert str(merge.restrict({"a12", "a13"})) == "a20·a21"


def test_sentence_level_summary_is_the_product_of_its_sentences(inputs):
    model = evaluate(compile_inputs(*inputs).program(), "why")
    assert str(model.label("summary", ("summary:aim2",))) == "a31·a32"
    assert str(model.label("summary", ("summary:aim2-flat",))) == "a31 + a32"
    assert str(model.label("sentence", ("summary:aim2#s2",))) == "a32"


def test_build_reopen_gives_identical_artifacts(tmp_path, inputs):
    build = build_graph(*inputs, rules=[ROOT / "rules" / "ro.dl"])
    path = tmp_path / "f1.graph"
    build.write(path)
    with Graph(path) as graph:
        stored = list(graph.artifacts())
        assert stored == build.artifacts
        counts = graph.counts()
        assert counts["claim"] == 6 and counts["merge"] == 1 and counts["summary"] == 2
        assert counts["sentence"] == 2 and counts["edge"] > 50
        edge = graph.artifact(triple_id("edge", ("MAPK/ERK", "RO:0002411", "apoptosis")))
        assert str(graph.label(edge)) == "a12·a13 + a12·a20·a21 + a13·a20·a21"
        # the assertion -> artifact index agrees with the labels
        for assertion in ("a12", "a32"):
            expected = [a.id for a in stored if any(assertion in group for group in a.support)]
            assert graph.mentioning([assertion]) == expected
        info = graph.info()
        assert info["artifacts"] == len(stored) and info["label_bytes_per_artifact"] < 10


def test_interrupted_write_leaves_the_previous_graph_intact(tmp_path, inputs):
    build = build_graph(*inputs)
    path = tmp_path / "g.graph"
    build.write(path)
    before = path.read_bytes()

    def failing():
        yield build.artifacts[0]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_graph(path, build.assertions, failing(), {})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["g.graph"]
    with Graph(path) as graph:
        assert list(graph.artifacts()) == build.artifacts


def test_label_encoding_round_trips_and_is_compact():
    groups = [[1, 5, 300], [2], [70000, 70001]]
    blob = encode_label(groups)
    assert decode_label(blob) == groups
    assert len(blob) == 1 + 3 + 1 + 1 + 1 + 3 + 1 + 3 - 2  # varints: sizes and gaps


def test_reopening_a_non_graph_file_is_a_clear_error(tmp_path):
    from polygraph_logic.errors import PolygraphError
    bogus = tmp_path / "x.graph"
    bogus.write_text("not sqlite")
    with pytest.raises(PolygraphError, match="not a polygraph graph file"):
        Graph(bogus)
    empty = tmp_path / "e.graph"
    sqlite3.connect(empty).close()
    with pytest.raises(PolygraphError):
        Graph(empty)


def test_cli_compile_build_info_show(tmp_path, capsys):
    args = ["--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(FIGURE1 / "receipts.jsonl")]
    assert main(["compile", *args]) == 0
    assert 'a12 :: claim("MAPK/ERK pathway", "RO:0002211", "apoptosis").' in capsys.readouterr().out
    out = tmp_path / "f1.graph"
    assert main(["build", *args, "--rules", "ro", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().err
    assert main(["info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "merge" in text and "bytes per artifact" in text
    assert main(["show", str(out), "--layer", "merge"]) == 0
    text = capsys.readouterr().out
    assert "merge:mapk-erk  MAPK/ERK == MAPK/ERK pathway, ERK1/2 cascade" in text
    assert "a12·a13 + a20·a21" in text
    assert main(["build", *args, "--rules", "nosuchrules", "-o", str(out)]) == 2
    assert "shipped rule files" in capsys.readouterr().err


def test_cli_build_reports_bad_receipts_with_file_and_line(tmp_path, capsys):
    receipts = tmp_path / "r.jsonl"
    receipts.write_text('{"artifact": "merge:m", "layer": "merge", '
                        '"content": {"canonical": "x", "members": ["y"]}, "support": [["a99"]]}\n')
    status = main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(receipts),
                   "-o", str(tmp_path / "g.graph")])
    assert status == 2
    assert capsys.readouterr().err.startswith(f"{receipts}:1:1: unknown_assertion")
    assert not (tmp_path / "g.graph").exists()


def test_graph_keeps_every_fact_and_the_rules_for_re_derivation(tmp_path, inputs):
    build = build_graph(*inputs, rules=[ROOT / "rules" / "ro.dl"])
    path = tmp_path / "f.graph"
    build.write(path)
    with Graph(path) as graph:
        facts = {(f.relation, f.args): f for f in graph.facts()}
        model = build.model
        assert len(facts) == sum(len(model.facts(name)) for name in model.relations())
        for artifact in graph.artifacts():
            stored = facts[artifact.fact]
            assert stored.support == artifact.support and stored.exact == artifact.exact
        reparsed = parse_program(graph.rules_text())
        assert [str(r) for r in reparsed.rules] == [str(r) for r in model.program.rules]
        assert facts[("assertion", ("a12",))].support == (("a12",),)


def test_cli_generate_then_build(tmp_path, capsys):
    out = tmp_path / "syn"
    assert main(["generate", "-o", str(out), "--documents", "20", "--assertions", "160", "--merges", "8",
                 "--summaries", "4", "--seed", "3"]) == 0
    assert "20 documents" in capsys.readouterr().err
    assert main(["build", "--assertions", str(out / "assertions.jsonl"), "--receipts", str(out / "receipts.jsonl"),
                 "--rules", "ro", "-o", str(tmp_path / "s.graph")]) == 0
    with Graph(tmp_path / "s.graph") as graph:
        counts = graph.counts()
    assert counts["merge"] == 8 and counts["summary"] == 4 and counts["edge"] > counts["claim"]
    assert main(["generate", "-o", str(out), "--documents", "30", "--assertions", "20"]) == 2
