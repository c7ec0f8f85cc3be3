"""The graph queried in place: the disk path against a naive in-memory reference, every
policy, random deletions; demotion; the previous file format refused; odd file names."""

import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic import build_graph
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import POLICIES, Deletion, what_if

sys.path.insert(0, str(Path(__file__).resolve().parent))
from circuits import assert_settled_as_rederived, without_circuit  # noqa: E402
from reference_whatif import ReferenceGraph  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RO = ROOT / "rules" / "ro.dl"
#: policies composed per layer (query/policies.py), beside the named ones
COMPOSED = ("summary=distrust-flat,merge=distrust", "edge=distrust,sentence=distrust", "claim=distrust,edge=trust")


def build(tmp_path, directory, cap=8, rules=(RO,), name="g.graph") -> Path:
    assertions = load_assertions(directory / "assertions.jsonl")
    receipts = load_receipts(directory / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path / name
    build_graph(assertions, receipts, rules, cap=cap).write(path)
    return path


def random_deletions(reference: ReferenceGraph, rng: random.Random, count: int) -> list[Deletion]:
    sources = sorted({a.source for a in reference.assertions})
    relations = sorted({a.predicate for a in reference.assertions})
    ids = [a.id for a in reference.assertions]
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(Deletion(sources=tuple(rng.sample(sources, 1))))
        elif kind == 1:
            out.append(Deletion(sources=tuple(rng.sample(sources, min(len(sources), rng.randint(2, 8))))))
        elif kind == 2:
            out.append(Deletion(relations=tuple(rng.sample(relations, 1))))
        else:
            out.append(Deletion(sources=tuple(rng.sample(sources, 1)), assertions=tuple(rng.sample(ids, 3))))
    return out


def assert_same(graph: Graph, reference: ReferenceGraph, deletion: Deletion, policy: str) -> None:
    outcome = what_if(graph, deletion, policy)
    expected = reference.what_if(deletion, policy)
    where = (str(deletion), policy)
    assert set(outcome.touched) == expected.touched, where
    assert set(outcome.dead) == expected.dead, where
    assert set(outcome.kept) == expected.touched - expected.dead, where
    assert {d["artifact"] for d in outcome.demoted} == expected.demoted, where
    assert set(outcome.uncertain) == expected.uncertain, where
    assert outcome.summaries == expected.summaries, where
    assert outcome.deleted == frozenset(reference.deleted(deletion)), where


@pytest.mark.slow
@pytest.mark.parametrize("example, cap", [("figure1", 8), ("figure1", 1), ("synthetic", 8), ("synthetic", 1)])
def test_disk_path_equals_the_reference_for_every_policy(tmp_path, example, cap):
    """The label verdicts (a graph without a circuit) equal the naive reference's; the verdicts
    through the circuit equal those settled by re-derivation from the rules, under every policy."""
    path = build(tmp_path, ROOT / "examples" / example, cap)
    labels_only = without_circuit(path, tmp_path / "labels.graph")
    with Graph(labels_only) as graph, Graph(path) as circuit:
        reference = ReferenceGraph(graph)
        rng = random.Random(cap)
        for deletion in random_deletions(reference, rng, 8 if example == "synthetic" else 12):
            for policy in (*POLICIES, *COMPOSED):
                assert_same(graph, reference, deletion, policy)
                assert_settled_as_rederived(circuit, graph, deletion, policy)


def test_a_claim_whose_triple_is_still_entailed_is_demoted_not_dead(tmp_path):
    """x regulates y is stated by S1 only; S2 states x positively regulates y, a sub-property:
    retracting S1 leaves the triple entailed, so the claim is demoted to an edge."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "assertions.jsonl").write_text(
        '{"id": "a1", "source": "S1", "subject": "x", "predicate": "RO:0002211", "object": "y"}\n'
        '{"id": "a2", "source": "S2", "subject": "x", "predicate": "RO:0002213", "object": "y"}\n')
    (tmp_path / "in" / "receipts.jsonl").write_text("")
    with Graph(build(tmp_path, tmp_path / "in")) as graph:
        claim = next(a for a in graph.artifacts("claim") if a.content["predicate"] == "RO:0002211")
        for policy in ("trust-all", "deployed", "distrust:summary"):
            outcome = what_if(graph, Deletion(sources=("S1",)), policy)
            assert claim.id not in outcome.dead and claim.id in outcome.kept
            assert outcome.demoted == [{"artifact": claim.id, "triple": ["x", "RO:0002211", "y"],
                                        "support": [["a2"]], "rederived": False}]
            assert outcome.by_layer()["claim"]["demoted"] == 1
        assert claim.id in what_if(graph, Deletion(sources=("S1",)), "flat").dead
        assert claim.id in what_if(graph, Deletion(sources=("S1",)), "distrust:edge").dead
        both = what_if(graph, Deletion(sources=("S1", "S2")), "trust-all")
        assert claim.id in both.dead and not both.demoted


def test_uncertain_verdicts_are_the_dead_ones_on_capped_labels(tmp_path):
    """Without a circuit (a graph written before them), a dead verdict on a capped label is
    uncertain unless re-derivation settles it; with one, every verdict is settled through it,
    and the two settle alike."""
    path = build(tmp_path, ROOT / "examples" / "figure1", cap=1)
    deletion = Deletion(sources=("PMID:39973430",))
    with Graph(without_circuit(path, tmp_path / "old.graph")) as graph:
        outcome = what_if(graph, deletion, "trust-all")
        inexact = {a.id for a in graph.artifacts() if not a.exact}
        assert outcome.uncertain and set(outcome.uncertain) <= set(outcome.dead) & inexact
        exact = what_if(graph, deletion, "trust-all", exact=True).to_json()
        assert exact["uncertain"] == [] and exact["exact"]
    with Graph(path) as graph:
        circuit = what_if(graph, deletion, "trust-all").to_json()
    assert circuit["exact"] and circuit["uncertain"] == [] and circuit["revived_by_rederivation"] > 0
    for key in ("touched", "dead", "kept", "demoted", "summaries", "settled_by_rederivation",
                "revived_by_rederivation"):
        assert circuit[key] == exact[key], key


def test_a_graph_of_the_previous_format_is_refused_with_the_rebuild_command(tmp_path):
    path = tmp_path / "old.graph"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO meta VALUES ('format', 'polygraph-graph/1'), ('cap', '8');")
    db.commit()
    db.close()
    with pytest.raises(PolygraphError) as error:
        Graph(path)
    assert error.value.code == "old_graph" and "polygraph build" in str(error.value)


@pytest.mark.parametrize("name", ["g%41.graph", "g#1.graph", "g?x.graph"])
def test_graph_paths_with_uri_characters_open_that_file(tmp_path, name, figure1_records_graph):
    path = Path(shutil.copy(figure1_records_graph, tmp_path / "g.graph"))  # build(tmp_path, figure1), made once
    odd = tmp_path / name
    shutil.copy(path, odd)
    before = sorted(p.name for p in tmp_path.iterdir())
    with Graph(odd) as graph:
        assert graph.counts() == Graph(path).counts()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created beside it


def test_opening_reads_metadata_only_and_rules_come_without_the_parser(tmp_path, figure1_records_graph):
    path = Path(shutil.copy(figure1_records_graph, tmp_path / "g.graph"))  # build(tmp_path, figure1), made once
    with Graph(path) as graph:
        assert "rules" not in graph.meta
        stats = json.loads(graph.meta["stats"])
        assert stats["assertions"] == len(graph.assertions)
        rules = graph.rules()
        assert [str(r) for r in rules] == graph.rules_text().splitlines()


def test_a_damaged_rules_tree_is_a_bad_graph_error_not_code(tmp_path, figure1_records_graph):
    import pickle
    path = Path(shutil.copy(figure1_records_graph, tmp_path / "g.graph"))  # build(tmp_path, figure1), made once
    db = sqlite3.connect(path)
    db.execute("UPDATE rules SET tree = ?", (pickle.dumps(print),))
    db.commit()
    db.close()
    with Graph(path) as graph, pytest.raises(PolygraphError) as error:
        graph.rules()
    assert error.value.code == "bad_graph"


def test_listings_name_each_claim_and_edge_triple(tmp_path, capsys, figure1_records_graph):
    from polygraph_logic.cli import main
    path = Path(shutil.copy(figure1_records_graph, tmp_path / "g.graph"))  # build(tmp_path, figure1), made once
    assert main(["whatif", str(path), "--retract-source", "PMID:39973430", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    with Graph(path) as graph:
        for artifact_id in result["dead"]:
            artifact = graph.artifact(artifact_id)
            if artifact.layer in ("claim", "edge"):
                assert result["triples"][artifact_id] == list(artifact.fact[1])
        edge = next(a for a in result["dead"] if a.startswith("edge:"))
        triple = " ".join(result["triples"][edge])
    assert main(["whatif", str(path), "--retract-source", "PMID:39973430", "--list"]) == 0
    assert f"  - {edge}  {triple}" in capsys.readouterr().out
    assert main(["why", str(path), edge]) == 0
    assert capsys.readouterr().out.startswith(f"{edge} (edge {triple}):")


# --- the writer: every row as computed independently from the evaluated model ----------------

def _rows_from_model(build_) -> dict:
    """The rows a graph file must hold, computed from the model and the artifacts (not by the writer):
    facts by relation name, then arguments in tuple_key order (as every engine numbers them), then
    any artifact fact the model lacks; an artifact's label wins."""
    from polygraph_logic.datalog.evaluate import tuple_key
    number = {a.id: i for i, a in enumerate(build_.assertions, 1)}
    model, facts = build_.model, {}
    for name in sorted(model.relations()):
        for args, label in sorted(model.facts(name).items(), key=lambda item: tuple_key(item[0])):
            facts[(name, args)] = [len(facts) + 1, [[number[x] for x in g] for g in model.semiring.to_json(label)],
                                   label.exact]
    artifacts = []
    for i, artifact in enumerate(build_.artifacts, 1):
        relation, args = artifact.fact
        entry = facts.setdefault((relation, tuple(args)), [len(facts) + 1, None, None])
        entry[1:] = [[number[x] for x in g] for g in artifact.support], artifact.exact
        artifacts.append((i, artifact.id, artifact.layer, artifact.content, entry[0]))
    summaries = {a[1]: a[0] for a in artifacts if a[2] == "summary"}
    linked = {summaries[a[3]["summary"]] for a in artifacts if a[2] == "sentence"}
    return {
        "facts": sorted((num, relation, list(args), list(args[:3]) + [None] * (3 - len(args[:3])),
                         [sorted(g) for g in groups], int(exact))
                        for (relation, args), (num, groups, exact) in facts.items()),
        "mentions": sorted({(n, num) for num, groups, _ in facts.values() for g in groups for n in g}),
        "artifacts": [(num, id_, layer, content, fact,
                       summaries.get(content["summary"]) if layer == "sentence" else num if num in linked else None)
                      for num, id_, layer, content, fact in artifacts],
        "assertions": [(i, a.id, a.source, a.subject, a.predicate, a.object, a.text, a.kind, int(a.negated))
                       for i, a in enumerate(build_.assertions, 1)],
    }


def _rows_in_file(path: Path) -> dict:
    from polygraph_logic.graph.store.label_codec import decode_label
    db = sqlite3.connect(path)
    try:
        return {
            "facts": [(num, relation, json.loads(args), [k0, k1, k2], decode_label(label), exact)
                      for num, relation, args, k0, k1, k2, label, exact in
                      db.execute("SELECT num, relation, args, k0, k1, k2, label, exact FROM facts ORDER BY num")],
            "mentions": db.execute("SELECT assertion, fact FROM mentions ORDER BY assertion, fact").fetchall(),
            "artifacts": [(num, id_, layer, json.loads(content), fact, summary) for num, id_, layer, content, fact,
                          summary in db.execute("SELECT num, id, layer, content, fact, summary FROM artifacts "
                                                "ORDER BY num")],
            "assertions": db.execute("SELECT num, id, source, subject, predicate, object, text, kind, negated "
                                     "FROM assertions ORDER BY num").fetchall(),
        }
    finally:
        db.close()


@pytest.mark.parametrize("batch, cache", [(None, None), (3, 2)])
def test_the_writer_stores_the_rows_of_the_model_whatever_its_batch_and_cache_sizes(tmp_path, monkeypatch,
                                                                                  batch, cache):
    from polygraph_logic.graph.store import writer as store_write
    from polygraph_logic.graph.synthetic import generate
    if batch:  # every batch, cache and flush boundary crossed many times
        monkeypatch.setattr(store_write, "_BATCH", batch)
        monkeypatch.setattr(store_write, "_LABEL_CACHE", cache)
    synthetic = generate(documents=40, assertions=400, merges=12, summaries=5)  # numbers past 127: long varints
    built = build_graph(synthetic.assertions, synthetic.receipts, (RO,))
    built.write(tmp_path / "g.graph")
    expected = _rows_from_model(built)
    stored = _rows_in_file(tmp_path / "g.graph")
    assert stored["facts"] == [(n, r, a, k, g, e) for n, r, a, k, g, e in expected["facts"]]
    for table in ("mentions", "artifacts", "assertions"):
        assert [tuple(row) for row in stored[table]] == [tuple(row) for row in expected[table]], table
    assert any(n >= 128 for n, _ in stored["mentions"]) and len(expected["artifacts"]) > 3 * 3


def _assertion(i: int):
    from polygraph_logic.graph.assertions import Assertion
    return Assertion(f"a{i}", f"S{i % 2}", f"x{i}", "RO:0002211", f"y{i}")


def _write(path, facts, artifacts):
    from polygraph_logic.graph.store.rows import Artifact, StoredFact
    from polygraph_logic.graph.store.writer import write_graph
    write_graph(path, [_assertion(i) for i in range(1, 6)],
                [Artifact(id_, "edge", {"subject": s, "predicate": p, "object": o}, support, exact)
                 for id_, (s, p, o), support, exact in artifacts],
                {"cap": "8"}, [StoredFact(r, args, support, exact) for r, args, support, exact in facts])


def test_an_artifact_relabels_its_fact_or_adds_it_and_its_mentions_follow(tmp_path):
    facts = [("edge", ("x1", "p", "y1"), (("a1",), ("a2", "a3")), True),
             ("edge", ("x2", "p", "y2"), (("a4",),), True)]
    artifacts = [("e1", ("x1", "p", "y1"), (("a3", "a5"),), False),  # trimmed: the fact's label is replaced
                 ("e2", ("x2", "p", "y2"), (("a4",),), True),
                 ("e3", ("x3", "p", "y3"), (("a2",), ("a1",)), True)]  # not among the facts: added
    _write(tmp_path / "g.graph", facts, artifacts)
    stored = _rows_in_file(tmp_path / "g.graph")
    assert [(n, a, g, e) for n, _, a, _, g, e in stored["facts"]] == [
        (1, ["x1", "p", "y1"], [[3, 5]], 0), (2, ["x2", "p", "y2"], [[4]], 1), (3, ["x3", "p", "y3"], [[2], [1]], 1)]
    assert stored["mentions"] == [(1, 3), (2, 3), (3, 1), (4, 2), (5, 1)]
    assert [(n, i, f) for n, i, _, _, f, _ in stored["artifacts"]] == [(1, "e1", 1), (2, "e2", 2), (3, "e3", 3)]


@pytest.mark.parametrize("facts, artifacts, code", [
    ([("edge", ("x", "p", "y"), (("a1",),), True)] * 2, [], "duplicate_fact"),
    ([], [("e1", ("x", "p", "y"), (("a1",),), True), ("e1", ("x", "p", "z"), (("a1",),), True)],
     "duplicate_artifact"),
    ([], [("e1", ("x", "p", "y"), (("a1",),), True), ("e2", ("x", "p", "y"), (("a1",),), True)],
     "duplicate_artifact"),
    ([("edge", ("x", "p", "y"), (("a1", "a9"),), True)], [], "unknown_assertion"),
    ([], [("e1", ("x", "p", "y"), (("a9",),), True)], "unknown_assertion"),
])
def test_the_writer_refuses_what_a_graph_cannot_hold_and_leaves_no_file(tmp_path, facts, artifacts, code):
    with pytest.raises(PolygraphError) as error:
        _write(tmp_path / "g.graph", facts, artifacts)
    assert error.value.code == code
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", [
    [], (), {}, ["a", "b c"], ("x", 'say "hi"', "back\\slash", "tab\there", "nul\x00", "\u2028", "é漢字", "🧬", "\ud800"),
    {"subject": "S", "predicate": "RO:0002211", "object": 'o"\n'}, ["a", 1, 2.5, None, True, 2**70],
    {"summary": "s", "index": 1}, {"members": ["a", "b"]}, ("only", ["nested"]), 12, "text",
])
def test_json_text_is_what_json_dumps_writes(value):
    from polygraph_logic.graph.store.rows import fact_key
    from polygraph_logic.graph.store.writer import json_text
    assert json_text(value) == json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        assert json_text(value) == fact_key(value)  # the facts table's key, as readers compute it


def test_artifacts_are_numbered_in_tuple_key_order_whatever_the_strings():
    from polygraph_logic.datalog.evaluate import tuple_key
    from polygraph_logic.graph.build import _sorted
    rng = random.Random(7)
    alphabet = ["a", "b", "ab", "\x01", " ", "é", "🧬", ""]
    for nul, numbers in ((False, False), (True, False), (False, True)):  # joined strings; NUL; integers
        rows = {}
        for _ in range(400):
            args = tuple("".join(rng.choices(alphabet + ["\x00"] * nul, k=rng.randint(0, 3))) for _ in range(3))
            if numbers and rng.random() < 0.3:
                args = (rng.randint(-5, 5), *args[1:])
            rows[args] = object()
        assert _sorted(rows) == sorted(rows.items(), key=lambda item: tuple_key(item[0]))


def test_a_rule_stored_before_the_engine_moved_to_datalog_still_loads():
    """Graph files written before datalog/ existed pickled their rules as polygraph_logic.syntax.*."""
    import pickle
    from types import SimpleNamespace

    from polygraph_logic.datalog.reading.parser import parse_clauses
    from polygraph_logic.graph.store.stored_rules import load_rule

    (rule,) = parse_clauses('p(x) :- e(x, "a"), !q(x).')
    # protocol 2 names classes as text (GLOBAL "module\nname"), so the old module can be written in
    old = pickle.dumps(rule, protocol=2).replace(b"polygraph_logic.datalog.syntax\n", b"polygraph_logic.syntax\n")
    assert b"polygraph_logic.syntax\nRule" in old
    graph = SimpleNamespace(path="old.graph")
    assert load_rule(old, graph) == rule
    hostile = old.replace(b"polygraph_logic.syntax\nRule", b"polygraph_logic.errors\nPosition")
    with pytest.raises(PolygraphError, match="bad_graph|not a rule|damaged"):
        load_rule(hostile, graph)



@pytest.mark.parametrize("damage", [['["a"', '"b"]'], ['[1],[2', '3]'], ['[1],[2]', '[[3]', '[4]]'], [''], ['{}']])
def test_facts_read_in_bulk_are_those_read_one_by_one_and_damage_is_refused(tmp_path, figure1_records_graph,
                                                                             damage):
    """The circuit pass reads facts with their arguments decoded a batch at a time
    (``relation_facts``); damaged texts, alone or several that would join into valid ones, are
    a bad_graph error, not arguments."""
    with Graph(figure1_records_graph) as graph:
        relations = [row[0] for row in graph.query("SELECT DISTINCT relation FROM facts")]
        expected = {(relation, graph.args(args), num) for num, relation, args in
                    graph.query("SELECT num, relation, args FROM facts")}
        assert {row[:3] for row in graph.relation_facts(relations)} == expected
    path = Path(shutil.copy(figure1_records_graph, tmp_path / "g.graph"))
    db = sqlite3.connect(path)
    numbers = [row[0] for row in db.execute("SELECT num FROM facts ORDER BY num LIMIT ?", (len(damage),))]
    db.executemany("UPDATE facts SET args = ? WHERE num = ?", zip(damage, numbers))
    db.commit()
    db.close()
    with Graph(path) as graph, pytest.raises(PolygraphError) as error:
        list(graph.relation_facts(relations))
    assert error.value.code == "bad_graph"
