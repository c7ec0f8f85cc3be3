"""Retrieval consequences of cleanup: BM25 checked against the formula computed here,
tainted@k and recall@k on Figure 1 worked by hand, ground truth against a from-scratch
Boolean evaluation, the orderings between policies that must hold, query generation."""

import json
import math
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from polygraph_logic import evaluate
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic import build_graph
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.datalog.program import load_program
from polygraph_logic.retrieval.query_sets import Query, generate_queries, load_queries, write_queries
from polygraph_logic.retrieval.consequences import (
    EXTRA_LABELS,
    AuditVerdicts,
    Retriever,
    evaluate_retrieval,
    ground_truth,
    relation_labels,
    tokenize,
)
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"
RO_OWL = ROOT.parent / "shared" / "data" / "ro" / "ro.owl"
AIM2 = Deletion(sources=("PMID:40057077",))
QUERIES = ["cytosol", "oral carcinoma"]
# the artifacts of Figure 1 whose text holds "cytosol" (worked out from examples/figure1)
CLAIM = "claim:ddc81da0bfd5"  # AIM2 located in cytosol (a32)
EDGE = "edge:1ea061665dc4"  # cytosol location of AIM2 (a32, inverse)


def build(tmp_path, directory=FIGURE1, cap=8, name="g.graph"):
    assertions = load_assertions(directory / "assertions.jsonl")
    receipts = load_receipts(directory / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path / name
    build_graph(assertions, receipts, [RO], cap=cap).write(path)
    return path, assertions, receipts


@pytest.fixture(scope="module")
def figure1(tmp_path_factory, figure1_records_graph):
    """This module's copy of build()'s Figure 1 graph (conftest.py's figure1_records_graph), its index and retriever."""
    path = tmp_path_factory.mktemp("f1") / "g.graph"
    shutil.copy(figure1_records_graph, path)  # the graph of build(...) at its defaults, made once (conftest.py)
    index = GraphIndex(Graph(path))
    return path, index, Retriever(index)


def audit_file(path, verdicts, sources=("PMID:40057077",)):
    """An audit file in the polygraph-audit/1 contract, with one deletion."""
    rows = [{"artifact": a, "layer": a.split(":")[0], "label": "alive", "draws": [], "failed_draws": 0,
             "reproduced": 0, "verdict": v, "outcome": "agree"} for a, v in verdicts.items()]
    data = {"format": "polygraph-audit/1", "graph": "g", "draws": 5, "tau": 0.2, "oracle": "scripted",
            "prompt": "rederive", "edge_oracle": "ours",
            "deletions": [{"name": "retract-source " + ", ".join(sources),
                           "deletion": {"sources": list(reversed(sources)), "relations": [], "assertions": []},
                           "artifacts": rows, "edges": [], "table": []}],
            "pooled": [], "findings": []}
    path.write_text(json.dumps(data))
    return path


def test_tokens_are_lowercase_words_and_whole_curies():
    assert tokenize("GO:0005634 and IL-6, MAPK/ERK. PomBase:SPAC1002.01. canonical: X") == [
        "go:0005634", "and", "il", "6", "mapk", "erk", "pombase:spac1002.01", "canonical", "x"]


def test_relation_labels_equal_the_rdfs_labels_of_ro_owl():
    labels = relation_labels()
    assert labels["RO:0002211"] == "regulates" and labels["RO:0001015"] == "location of"
    if not RO_OWL.is_file():
        pytest.skip("shared/data/ro/ro.owl is absent")
    import pyoxigraph as ox
    store = ox.Store()
    store.bulk_load(path=str(RO_OWL), format=ox.RdfFormat.RDF_XML)
    label = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    checked = 0
    for curie, name in labels.items():
        if curie in EXTRA_LABELS:
            continue
        iri = ox.NamedNode("http://purl.obolibrary.org/obo/" + curie.replace(":", "_"))
        names = {" ".join(q.object.value.split()) for q in store.quads_for_pattern(iri, label, None)}
        assert name in names, curie
        checked += 1
    assert checked > 600


def bm25_by_formula(corpus, query, k1=1.5, b=0.75, epsilon=0.25):
    """Okapi BM25 with rank-bm25's idf floor, written out from the formula."""
    n = len(corpus)
    avgdl = sum(map(len, corpus)) / n
    df = Counter(word for doc in corpus for word in set(doc))
    idf = {w: math.log((n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
    floor = epsilon * sum(idf.values()) / len(idf)
    idf = {w: (v if v >= 0 else floor) for w, v in idf.items()}
    scores = []
    for doc in corpus:
        tf = Counter(doc)
        scores.append(sum(idf.get(q, 0) * tf[q] * (k1 + 1) / (tf[q] + k1 * (1 - b + b * len(doc) / avgdl))
                          for q in query))
    return scores


def test_bm25_ranking_equals_the_formula_with_ties_broken_by_id(tmp_path):
    triples = [("TP53", "RO:0002211", "apoptosis"), ("TP53", "RO:0002211", "apoptosis process"),
               ("KRAS", "RO:0002211", "apoptosis"), ("KRAS", "RO:0001025", "cytosol"),
               ("MYC", "RO:0002213", "cell proliferation"), ("TP53", "RO:0001025", "nucleus"),
               ("MYC", "RO:0001025", "nucleus")]
    assertions = [Assertion(f"a{i}", f"doc{i}", *t) for i, t in enumerate(triples)]
    build_graph(assertions, [], [], cap=8).write(tmp_path / "t.graph")
    index = GraphIndex(Graph(tmp_path / "t.graph"))
    retriever = Retriever(index)
    words = {"RO:0002211": "regulates", "RO:0002213": "positively regulates", "RO:0001025": "located in"}
    ids = index.ids
    texts = {a.id: f"{a.content['subject']} {words[a.content['predicate']]} {a.content['object']}"
             for a in index.graph.artifacts()}
    corpus = [re.findall(r"[a-z0-9]+", texts[i].lower()) for i in ids]
    for query in ["TP53 apoptosis", "nucleus", "regulates apoptosis", "located in cytosol", "zebrafish"]:
        expected = bm25_by_formula(corpus, re.findall(r"[a-z0-9]+", query.lower()))
        ranked = sorted((-s, ids[i]) for i, s in enumerate(expected) if any(
            w in corpus[i] for w in re.findall(r"[a-z0-9]+", query.lower())))
        found = retriever.search(query, k=len(ids))
        assert [a for a, _ in found] == [a for _, a in ranked], query
        assert [s for _, s in found] == pytest.approx([-s for s, _ in ranked]), query
    # "nucleus": two documents of equal length and score; the smaller id comes first
    assert len(retriever.search("nucleus", k=1)) == 1
    assert retriever.search("nucleus", k=1)[0][0] == min(a for a, t in texts.items() if "nucleus" in t)


def test_a_trimmed_summary_is_scored_as_its_kept_sentences(figure1):
    _, index, retriever = figure1
    corpus = [tokenize(t) for t in retriever.texts]
    assert retriever.texts[index.artifacts["summary:aim2"].rank] == \
        "AIM2 suppresses oral carcinoma. AIM2 is found in the cytosol."
    doc = retriever.document("summary:aim2", ["summary:aim2#s2"])
    assert doc >= len(corpus) and retriever.artifact_of[doc] == "summary:aim2"
    query = tokenize("AIM2 found cytosol")
    trimmed = tokenize("AIM2 is found in the cytosol.")
    # the corpus statistics stay those of the whole graph: score the trimmed text as an extra document
    n, avgdl = len(corpus), sum(map(len, corpus)) / len(corpus)
    df = Counter(w for d in corpus for w in set(d))
    idf = {w: math.log((n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
    assert min(idf[w] for w in query) > 0
    tf = Counter(trimmed)
    expected = sum(idf[q] * tf[q] * 2.5 / (tf[q] + 1.5 * (0.25 + 0.75 * len(trimmed) / avgdl)) for q in query)
    docs, scores = retriever.scores("AIM2 found cytosol")
    assert scores[list(docs).index(doc)] == pytest.approx(expected)
    assert retriever.document("summary:aim2", ["summary:aim2#s1", "summary:aim2#s2"]) == \
        index.artifacts["summary:aim2"].rank
    assert retriever.document("summary:aim2", []) is None


def rows(report, kind="retract-source"):
    return {view: (r[kind]["tainted"], r[kind]["recall"]) for view, r in report.rows.items()}


def test_figure1_tainted_and_recall_worked_by_hand(figure1):
    _, index, retriever = figure1
    report = evaluate_retrieval(index, QUERIES, {"retract-source": AIM2}, k=200, retriever=retriever)
    # "cytosol" hits the a32 claim and edge, both summaries and sentence 2; "oral carcinoma" hits the
    # a31 claim and edges (dead), the flat summary (label alive), summary:aim2 whole (sentence 1 is dead)
    # and sentence 1. The perfect maintainer keeps for "cytosol" all five, summary:aim2 trimmed to
    # sentence 2; for "oral carcinoma" only the flat summary (its trimmed summary:aim2 no longer matches).
    assert rows(report) == {
        "before cleanup": (1.0, 1.0),  # both queries see dead content
        "deployed": (1.0, 1.0),  # "cytosol": whole summary:aim2; "oral carcinoma": the a31 edges
        "trust-all": (0.0, 1.0),
        "distrust:summary": (0.0, (2 / 5 + 0 / 1) / 2),  # both summaries and sentence 2 are gone
        "flat": (0.0, (2 / 5 + 0 / 1) / 2),
    }
    truth = report.deletions["retract-source"]["truth"]
    assert truth["claim"]["dead"] == 1 and truth["edge"]["dead"] == 18 and truth["sentence"]["dead"] == 1
    assert truth["summary"]["truth"] == "labels" and truth["summary"]["dead"] == 0
    fresh = Retriever(index)
    cleaned = fresh.visible(what_if(index, AIM2, "trust-all").dead)  # adds summary:aim2 trimmed to sentence 2
    assert [a for a, _ in fresh.search("oral carcinoma", k=5, visible=cleaned)] == ["summary:aim2-flat"]
    assert {a for a, _ in fresh.search("cytosol", k=9, visible=cleaned)} == {
        CLAIM, EDGE, "summary:aim2", "summary:aim2-flat", "summary:aim2#s2"}
    assert len(retriever.search("oral carcinoma", k=50)) == 1 + 18 + 3  # claim, edges, summaries, sentence 1
    # k = 1: "cytosol" ties the claim and the edge (four tokens each); the claim's id is smaller
    assert retriever.search("cytosol", k=1)[0][0] == CLAIM < EDGE
    narrow = evaluate_retrieval(index, ["cytosol"], {"retract-source": AIM2}, k=1, retriever=retriever)
    assert rows(narrow) == {view: (0.0, 1.0) for view in report.rows}


def test_a_dead_verdict_on_the_leaky_flat_summary_taints_trust_all_not_distrust(figure1, tmp_path):
    _, index, retriever = figure1
    verdicts = AuditVerdicts.load(audit_file(tmp_path / "audit.json", {"summary:aim2-flat": "dead"}))
    report = evaluate_retrieval(index, QUERIES, {"retract-source": AIM2}, k=200, verdicts=verdicts,
                                retriever=retriever)
    result = rows(report)
    # the perfect top k of "oral carcinoma" is now empty: recall is measured on "cytosol" alone (4 artifacts)
    assert result["trust-all"] == (1.0, 1.0)
    assert result["distrust:summary"] == (0.0, 2 / 4)
    assert result["deployed"] == (1.0, 1.0) and result["flat"] == (0.0, 2 / 4)
    assert all(r["retract-source"]["recall_skipped"] == 1 for r in report.rows.values())
    entry = report.deletions["retract-source"]
    assert entry["audited_deletion"] == "retract-source PMID:40057077"
    assert entry["truth"]["summary"]["verdicts"] == 1 and entry["truth"]["summary"]["dead"] == 1
    # an undecided verdict falls back to the label and is counted
    verdicts = AuditVerdicts.load(audit_file(tmp_path / "u.json", {"summary:aim2-flat": "undecided"}))
    undecided = evaluate_retrieval(index, QUERIES, {"retract-source": AIM2}, k=200, verdicts=verdicts,
                                   retriever=retriever)
    assert rows(undecided)["trust-all"] == (0.0, 1.0)
    assert undecided.deletions["retract-source"]["truth"]["summary"]["undecided"] == 1
    # verdicts of another deletion do not apply
    other = AuditVerdicts.load(audit_file(tmp_path / "o.json", {"summary:aim2-flat": "dead"},
                                          sources=("PMID:40057077", "PMID:39973430")))
    unmatched = evaluate_retrieval(index, QUERIES, {"retract-source": AIM2}, k=200, verdicts=other,
                                   retriever=retriever)
    assert rows(unmatched)["trust-all"] == (0.0, 1.0)
    assert unmatched.deletions["retract-source"]["audited_deletion"] is None


def test_bad_verdict_files_are_errors(figure1, tmp_path):
    _, index, _ = figure1
    (tmp_path / "bad.json").write_text('{"format": "polygraph-audit/1",\n "deletions": [}')
    with pytest.raises(PolygraphError) as caught:
        AuditVerdicts.load(tmp_path / "bad.json")
    assert caught.value.position.line == 2
    (tmp_path / "other.json").write_text('{"format": "something-else"}')
    with pytest.raises(PolygraphError, match="not an audit file"):
        AuditVerdicts.load(tmp_path / "other.json")
    verdicts = AuditVerdicts.load(audit_file(tmp_path / "x.json", {"merge:elsewhere": "dead"}))
    with pytest.raises(PolygraphError, match="merge:elsewhere"):
        ground_truth(index, AIM2, verdicts)


@pytest.mark.slow
def test_ground_truth_equals_a_from_scratch_boolean_evaluation_on_capped_labels(tmp_path):
    path, assertions, receipts = build(tmp_path, cap=1)
    index = GraphIndex(Graph(path))
    program = load_program(str(RO))
    for deletion in (Deletion(sources=("PMID:39973430",)), Deletion(assertions=("a13", "a20")),
                     Deletion(relations=("RO:0002213",))):
        deleted = deletion.resolve(index)
        compiled = compile_inputs([a for a in assertions if a.id not in deleted], receipts)
        model = evaluate(compiled.program(program), "boolean").boolean()
        truth = ground_truth(index, deletion)
        for entry in index.ranked:
            if entry.layer in ("claim", "edge", "merge"):
                assert (entry.id in truth.dead) == (entry.fact[1] not in model.get(entry.fact[0], ())), entry.id


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    directory = tmp_path_factory.mktemp("syn")
    graph = generate(seed=3, documents=40, assertions=400, merges=20, summaries=8)
    graph.write(directory)
    path, _, _ = build(directory, directory)
    index = GraphIndex(Graph(path))
    queries = generate_queries(index.graph, 120, seed=1)
    return index, Retriever(index), queries, graph.retracted


@pytest.mark.slow
def test_orderings_between_policies_that_must_hold(synthetic):
    index, retriever, queries, retracted = synthetic
    relation = Counter(a.predicate for a in index.graph.assertions.values()).most_common(1)[0][0]
    deletions = {"retract-source": Deletion(sources=tuple(retracted)),
                 "revoke-relation": Deletion(relations=(relation,))}
    clean = evaluate_retrieval(index, queries, deletions, k=10, exact=True, retriever=retriever)
    for kind in deletions:
        flags = {view: clean.per_query[view][kind] for view in clean.rows}
        # without verdicts the labels, settled exactly, are the truth: trusting them is perfect
        assert all(t is False and r in (None, 1.0) for t, r in flags["trust-all"])
        for view in ("distrust:summary", "flat"):
            assert not any(t for t, _ in flags[view])
        for (_, flat), (_, distrust) in zip(flags["flat"], flags["distrust:summary"]):
            assert (flat is None) == (distrust is None) and (flat is None or flat <= distrust + 1e-12)
    assert clean.rows["deployed"]["retract-source"]["tainted"] > 0  # the leftovers of deployed cleanup
    # leaks: the audit says some touched sentences with live labels are dead
    outcome = what_if(index, deletions["retract-source"], "trust-all", exact=True)
    alive = [a for a in outcome.kept if index.artifacts[a].layer == "sentence"]
    rng = random.Random(0)
    leaks = {a: "dead" for a in rng.sample(alive, (len(alive) + 1) // 2)}
    assert leaks
    verdicts = AuditVerdicts({(frozenset(retracted), frozenset(), frozenset()): ("leaks", leaks)})
    leaky = evaluate_retrieval(index, queries, deletions, k=10, exact=True, verdicts=verdicts,
                               retriever=retriever)
    flags = {view: leaky.per_query[view]["retract-source"] for view in leaky.rows}
    # every artifact deployed keeps beyond trust-all (and before cleanup beyond deployed) is dead by
    # ground truth, so it can only push dead content into the top k, never push it out
    for more, fewer in (("before cleanup", "deployed"), ("deployed", "trust-all")):
        assert all(m or not f for (m, _), (f, _) in zip(flags[more], flags[fewer])), (more, fewer)
    assert leaky.rows["trust-all"]["retract-source"]["tainted"] > 0  # the leaks reach the top k
    # distrusting summaries removes every touched summary with its sentences, so no leak survives
    assert not any(t for t, _ in flags["distrust:summary"]) and not any(t for t, _ in flags["flat"])
    assert rows(leaky, "revoke-relation") == rows(clean, "revoke-relation")  # verdicts of another deletion


def test_queries_are_deterministic_and_drawn_from_the_graph(synthetic, figure1):
    index, _, queries, _ = synthetic
    graph = index.graph
    assert generate_queries(graph, 120, seed=1) == queries
    assert generate_queries(graph, 120, seed=2) != queries
    names = {n for a in graph.assertions.values() for n in (a.subject, a.object)}
    names |= {n for m in graph.artifacts("merge") for n in [m.content["canonical"], *m.content["members"]]}
    labels = relation_labels()
    assert len(queries) == 120 and len({tuple(tokenize(q.text)) for q in queries}) == 120
    for query in queries:
        assert query.entity in names
        expected = query.entity if query.relation is None else f"{query.entity} {labels[query.relation]}"
        assert query.text == expected
    # Figure 1 has 8 names; asking for more fills in with every distinct (name, relation) pair
    small = generate_queries(figure1[1].graph, 50, seed=0)
    pairs = {(n, a.predicate) for a in figure1[1].graph.assertions.values() for n in (a.subject, a.object)}
    texts = {tuple(tokenize(n)) for n in {n for n, _ in pairs} | {"MAPK/ERK pathway", "ERK1/2 cascade"}}
    texts |= {tuple(tokenize(f"{n} {labels[p]}")) for n, p in pairs}
    assert len(small) == len(texts) < 50


def test_query_files_round_trip_and_errors(tmp_path):
    queries = [Query("q1", "TP53 regulates", "TP53", "RO:0002211"), Query("q2", "apoptosis", "apoptosis")]
    write_queries(queries, tmp_path / "q.jsonl")
    assert load_queries(tmp_path / "q.jsonl") == queries
    (tmp_path / "plain.txt").write_text("# topics\nTP53\n\nKRAS apoptosis\n")
    assert load_queries(tmp_path / "plain.txt") == [Query("q2", "TP53"), Query("q4", "KRAS apoptosis")]
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    with pytest.raises(PolygraphError, match="duplicate") as caught:
        load_queries(tmp_path / "bad.jsonl")
    assert caught.value.position.line == 2
    (tmp_path / "bad2.jsonl").write_text('{"text": "x"}\n{"query": "y"}\n')
    with pytest.raises(PolygraphError, match='"text"'):
        load_queries(tmp_path / "bad2.jsonl")


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_queries_and_evaluate(figure1, tmp_path, capsys):
    path = figure1[0]
    status, out, _ = run(capsys, "queries", path, "--limit", "5", "--seed", "4")
    assert status == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [q["text"] for q in lines] == [q.text for q in generate_queries(Graph(path), 5, 4)]
    assert run(capsys, "queries", path, "--limit", "5", "--seed", "4", "-o", tmp_path / "q.jsonl")[0] == 0
    assert [q.text for q in load_queries(tmp_path / "q.jsonl")] == [q["text"] for q in lines]

    (tmp_path / "hand.txt").write_text("cytosol\noral carcinoma\n")
    (tmp_path / "sources.txt").write_text("PMID:40057077\n")
    audit = audit_file(tmp_path / "audit.json", {"summary:aim2-flat": "dead"})
    status, out, _ = run(capsys, "evaluate", path, "--queries", tmp_path / "hand.txt", "--limit", "200",
                         "--retract-source-file", tmp_path / "sources.txt", "--revoke-relation", "RO:0001025",
                         "--verdicts", audit, "--by-kind")
    assert status == 0
    table = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert table["policy"] == ["tainted@200", "recall@200", "tainted@200", "recall@200"]
    assert table["trust-all"][:2] == ["100.0%", "100.0%"] and table["distrust:summary"][:2] == ["0.0%", "50.0%"]
    assert "audit verdicts 1, labels 1" in out
    status, out, _ = run(capsys, "evaluate", path, "--queries", tmp_path / "hand.txt", "--limit", "200",
                         "--retract-source", "PMID:40057077", "--policy", "trust-all", "--json")
    data = json.loads(out)
    assert [row["view"] for row in data["rows"]] == ["before cleanup", "trust-all"]
    assert data["rows"][1]["results"]["retract-source"]["tainted"] == 0.0
    assert data["deletions"]["retract-source"]["deletion"]["sources"] == ["PMID:40057077"]

    # without --by-kind the flags name ONE deletion, as in every command: one column
    status, out, _ = run(capsys, "evaluate", path, "--queries", tmp_path / "hand.txt", "--limit", "200",
                         "--retract-source-file", tmp_path / "sources.txt", "--revoke-relation", "RO:0001025",
                         "--policy", "trust-all", "--json")
    data = json.loads(out)
    assert list(data["deletions"]) == ["deletion"]
    assert data["deletions"]["deletion"]["deletion"]["sources"] == ["PMID:40057077"]
    assert data["deletions"]["deletion"]["deletion"]["relations"] == ["RO:0001025"]
    assert data["deletions"]["deletion"]["deleted_assertions"] == len(
        Deletion(("PMID:40057077",), ("RO:0001025",)).resolve(Graph(path)))

    status, _, err = run(capsys, "evaluate", path, "--queries", tmp_path / "hand.txt")
    assert status == 2 and "--retract-source" in err
    status, _, err = run(capsys, "evaluate", path, "--queries", tmp_path / "hand.txt", "--retract-source", "PMID:4005707")
    assert status == 2 and "PMID:40057077" in err
