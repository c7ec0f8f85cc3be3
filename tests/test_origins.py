"""Evidential origins: derived_from loading (transitive, cycles at file:line), paths, distinct
origins (the design's N_prov), independent supports, the fewest origins to kill, echo flags and
top-sources by origin, each checked against brute force over subsets (of support sets, of
origins) on Figure 1 variants with echoed sources and on seeded random graphs."""

import itertools
import json
import random
import shutil
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.query.explain import robustness, top_sources
from polygraph_logic.graph.artifact_ids import triple_id
from polygraph_logic import build_graph
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.origins import Origins, fewest_to_kill, graph_origins, load_origins, max_disjoint
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"
A, B, C, D = "PMID:39973430", "example:paper-B", "example:paper-C", "PMID:40057077"
#: paper B repeats paper A (an echo); paper C and PMID:40057077 both repeat one press release
ECHOES = [{"source": B, "derived_from": A}, {"source": C, "derived_from": "press:1"},
          {"source": D, "derived_from": ["press:1"]}]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def closure(records) -> dict[str, frozenset]:
    """The oracle: each source's origins by naive fixpoint over the derived_from pairs."""
    pairs = {(r["source"], p) for r in records
             for p in ([r["derived_from"]] if isinstance(r["derived_from"], str) else r["derived_from"])}
    nodes = {x for pair in pairs for x in pair}
    above = {n: {p for s, p in pairs if s == n} for n in nodes}
    changed = True
    while changed:
        changed = False
        for n in nodes:
            more = set().union(*(above[p] for p in above[n])) - above[n] if above[n] else set()
            if more:
                above[n] |= more
                changed = True
    return {n: frozenset(p for p in above[n] | {n} if not above[p]) for n in nodes}


def origins_of(table, source):
    return table.get(source, frozenset([source]))


@pytest.fixture(scope="module")
def echoed(tmp_path_factory, figure1_records_graph):
    """Figure 1 with the echoes as origins (echoed.graph) and without (plain.graph, a copy of figure1_records_graph)."""
    directory = tmp_path_factory.mktemp("origins")
    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    build = build_graph(assertions, receipts, [RO])
    build.origins = load_origins(write_jsonl(directory / "origins.jsonl", ECHOES))
    path = directory / "echoed.graph"
    build.write(path)
    plain = directory / "plain.graph"
    shutil.copy(figure1_records_graph, plain)  # build_graph(assertions, receipts, [RO]), made once (conftest.py)
    return path, plain, directory


def test_derived_from_is_transitive_and_many_parented(tmp_path):
    records = [{"source": "news:1", "derived_from": "press:7"}, {"source": "press:7", "derived_from": "study:3"},
               {"source": "review:2", "derived_from": ["trial:1", "news:1"]}]
    origins = load_origins(write_jsonl(tmp_path / "o.jsonl", records))
    assert origins.roots("news:1") == {"study:3"}
    assert origins.roots("review:2") == {"trial:1", "study:3"}
    assert origins.roots("unmapped") == {"unmapped"}
    assert origins.clusters(["news:1", "press:7", "review:2", "x"]) == {
        "study:3": ["news:1", "press:7", "review:2"], "trial:1": ["review:2"], "x": ["x"]}
    assert Origins.from_json(origins.to_json()).parents == origins.parents


def test_roots_match_a_fixpoint_oracle_on_random_dags():
    rng = random.Random(7)
    for _ in range(60):
        n = rng.randint(2, 12)
        records = [{"source": f"s{i}", "derived_from": [f"s{j}" for j in rng.sample(range(i), rng.randint(1, i))]}
                   for i in range(1, n) if rng.random() < 0.7]
        origins = Origins({r["source"]: tuple(r["derived_from"]) for r in records})
        table = closure(records) if records else {}
        for i in range(n):
            assert origins.roots(f"s{i}") == origins_of(table, f"s{i}")


@pytest.mark.parametrize("records, line, code", [
    ([{"source": "a", "derived_from": "b"}, {"source": "b", "derived_from": "c"},
      {"source": "c", "derived_from": "a"}], 3, "origin_cycle"),
    ([{"source": "a", "derived_from": "a"}], 1, "origin_cycle"),
    ([{"source": "a", "derived_from": ["b", "c"]}, {"source": "c", "derived_from": ["d", "a"]}], 2, "origin_cycle"),
    ([{"source": "a"}], 1, "bad_field"),
    ([{"source": "a", "derived_from": []}], 1, "bad_field"),
    ([{"source": 3, "derived_from": "b"}], 1, "bad_field"),
])
def test_cycles_and_bad_records_are_errors_at_their_line(tmp_path, records, line, code):
    path = write_jsonl(tmp_path / "o.jsonl", records)
    with pytest.raises(PolygraphError) as error:
        load_origins(path)
    assert (error.value.code, error.value.position.line, error.value.position.file) == (code, line, str(path))


def test_every_bad_line_is_reported(tmp_path):
    path = write_jsonl(tmp_path / "o.jsonl", [{"source": "x", "derived_from": "x"}, {"source": "a"},
                                              {"source": "b", "derived_from": "c"}, {"source": "c",
                                                                                     "derived_from": "b"}])
    with pytest.raises(PolygraphError) as error:
        load_origins(path)
    assert [(p.code, p.position.line) for p in error.value.problems] == [
        ("origin_cycle", 1), ("bad_field", 2), ("origin_cycle", 4)]


def test_packing_and_hitting_match_brute_force_on_random_groups():
    rng = random.Random(11)
    for _ in range(300):
        universe = "abcdefg"[:rng.randint(1, 7)]
        groups = [frozenset(rng.sample(universe, rng.randint(1, min(3, len(universe)))))
                  for _ in range(rng.randint(0, 7))]
        packing = max((len(chosen) for size in range(len(groups) + 1)
                       for chosen in itertools.combinations(groups, size)
                       if all(x.isdisjoint(y) for x, y in itertools.combinations(chosen, 2))), default=0)
        assert max_disjoint(groups) == packing
        hit = fewest_to_kill(groups)
        smallest = next((size for size in range(len(universe) + 1)
                         for chosen in itertools.combinations(universe, size)
                         if all(g & set(chosen) for g in groups)), 0) if groups else 0
        assert len(hit) == smallest and all(g & set(hit) for g in groups)
        assert packing <= len(hit)


def test_the_graph_stores_its_origins_and_a_file_overrides_them(echoed, tmp_path):
    path, plain, _ = echoed
    with Graph(path) as graph:
        assert graph_origins(graph).roots(B) == {A}
        echo = robustness(graph, "merge:mapk-erk")
        assert (echo["paths"], echo["origins"], echo["independent_supports"], echo["echo"]) == (2, 1, 1, True)
        assert echo["paths_counted"] == "support_sets" and not echo["lower_bounds"]
        assert echo["independent_sources"] == 2  # two sources, but one origin
        assert echo["fewest_origins_to_kill"] == [A] and echo["origin_clusters"] == {A: [A, B]}
        empty = write_jsonl(tmp_path / "none.jsonl", [{"source": "unrelated", "derived_from": "other"}])
        alone = robustness(graph, "merge:mapk-erk", origins=empty)
        assert (alone["paths"], alone["origins"], alone["independent_supports"], alone["echo"]) == (2, 2, 2, False)
    with Graph(plain) as graph:
        assert not graph_origins(graph)
        assert robustness(graph, "merge:mapk-erk")["origins"] == 2


def test_origin_counts_and_fewest_origins_match_brute_force_for_every_artifact(echoed):
    path, _, _ = echoed
    table = closure(ECHOES)
    with Graph(path) as graph:
        source_of = {a.id: a.source for a in graph.assertions.values()}
        for artifact in graph.artifacts():
            result = robustness(graph, artifact.id)
            origin_sets = [frozenset().union(*(origins_of(table, source_of[x]) for x in support))
                           for support in artifact.support]
            packing = max(len(chosen) for size in range(len(origin_sets) + 1)
                          for chosen in itertools.combinations(origin_sets, size)
                          if all(x.isdisjoint(y) for x, y in itertools.combinations(chosen, 2)))
            distinct = {o for s in origin_sets for o in s}
            assert result["independent_supports"] == packing, artifact.id
            assert result["origins"] == len(distinct), artifact.id
            assert result["paths"] == len(artifact.support)
            assert result["echo"] == (len(artifact.support) >= 2 and len(distinct) == 1)
            # the fewest origins whose retraction (with every source derived from them) kills it, by what_if
            origins = sorted(set().union(*origin_sets))
            killing = None
            for size in range(1, len(origins) + 1):
                for chosen in itertools.combinations(origins, size):
                    sources = tuple(sorted({s for s in source_of.values() if origins_of(table, s) & set(chosen)}))
                    outcome = what_if(graph, Deletion(sources=sources))
                    if artifact.id in outcome.dead or artifact.id in {d["artifact"] for d in outcome.demoted}:
                        killing = size
                        break
                if killing:
                    break
            assert len(result["fewest_origins_to_kill"]) == killing, artifact.id
            assert result["independent_supports"] <= killing <= result["origins"]


def test_echo_with_hypotheses_counts_only_trusted_sets_over_origins(echoed):
    path, _, directory = echoed
    lines = [json.loads(line) for line in (FIGURE1 / "assertions.jsonl").read_text().splitlines()]
    for record in lines:
        if record["id"] == "a13":
            record["kind"] = "model_hypothesis"
    assertions = load_assertions(write_jsonl(directory / "hyp.jsonl", lines))
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    build = build_graph(assertions, receipts, [RO])
    build.origins = Origins({B: (A,)})
    build.write(directory / "hyp.graph")
    with Graph(directory / "hyp.graph") as graph:
        result = robustness(graph, "merge:mapk-erk", distrust=("model_hypothesis",))
        assert (result["paths"], result["origins"], result["echo"], result["distrusted_sets"]) == (1, 1, False, 1)
        assert result["sources"] == [B] and result["origin_clusters"] == {A: [B]}


def test_top_sources_by_origin_retracts_each_origin_with_what_derives_from_it(echoed):
    path, _, _ = echoed
    table = closure(ECHOES)
    with Graph(path) as graph:
        rows = top_sources(graph, limit=100, by="origin")
        source_of = {a.id: a.source for a in graph.assertions.values()}
        sources = set(source_of.values())
        expected = {}
        for origin in {o for s in sources for o in origins_of(table, s)}:
            cluster = {s for s in sources if origin in origins_of(table, s)}
            expected[origin] = sorted(cluster)
        assert {r["origin"]: r["sources"] for r in rows} == expected
        assert expected["press:1"] == sorted([C, D])
        for row in rows:
            cluster = set(row["sources"])
            label_dead = {a.id for a in graph.artifacts()
                          if all({source_of[x] for x in support} & cluster for support in a.support)}
            outcome = what_if(graph, Deletion(sources=tuple(row["sources"])))
            assert label_dead == set(outcome.dead) | {d["artifact"] for d in outcome.demoted}
            assert row["dead"] == len(outcome.dead)
        assert [r["dead"] for r in rows] == sorted((r["dead"] for r in rows), reverse=True)
        with pytest.raises(PolygraphError):
            top_sources(graph, by="document")


def test_cli_build_robustness_and_top_sources_with_origins(echoed, tmp_path, capsys):
    _, _, directory = echoed
    origins = write_jsonl(tmp_path / "o.jsonl", ECHOES)
    out = tmp_path / "cli.graph"
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                 str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", "--origins", str(origins), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["robustness", str(out), "merge:mapk-erk"]) == 0
    text = capsys.readouterr().out
    assert "paths: 2 (support sets); origins: 1 distinct" in text
    assert "with no origin in common (independent supports): 1" in text
    assert "ECHO: 2 paths, one origin" in text
    assert main(["robustness", str(out), "merge:mapk-erk", "--json", "--origins",
                 str(write_jsonl(tmp_path / "none.jsonl", [{"source": "x", "derived_from": "y"}]))]) == 0
    assert json.loads(capsys.readouterr().out)["origins"] == 2
    assert main(["top-sources", str(out), "--by", "origin", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["origin"] for r in rows} == {A, "press:1"}
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"source": A, "derived_from": B}, {"source": B, "derived_from": A}])
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--origins", str(bad),
                 "-o", str(tmp_path / "never.graph")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:2:1: origin_cycle: ") and not (tmp_path / "never.graph").exists()


def minimal(family) -> list[frozenset]:
    """The inclusion-minimal sets of a family, each once (absorption: x + x·y = x)."""
    unique = set(map(frozenset, family))
    return [s for s in unique if not any(o < s for o in unique)]


def random_graph(rng: random.Random, directory: Path, cap=None, circuit: bool = True) -> tuple[dict, dict, dict]:
    """A graph of random claims, receipts and derived_from records (sources derive from studies or
    from earlier sources: no cycle); returns each artifact's support sets worked out from the
    inputs (claims: the assertions stating them; summaries: their minimal bundles; no rules, no edge),
    each assertion's source, and the derived_from records."""
    studies = [f"study:{i}" for i in range(rng.randint(1, 4))]
    sources = [f"src:{i}" for i in range(rng.randint(2, 6))]
    records = []
    for i, source in enumerate(sources):
        if rng.random() < 0.6:
            parents = rng.sample(studies + sources[:i], rng.randint(1, min(2, len(studies) + i)))
            records.append({"source": source, "derived_from": parents})
    lines, source_of, stating = [], {}, {}
    for n in range(rng.randint(3, 12)):
        triple = (f"x{rng.randint(0, 2)}", "RO:0002213", "t")
        source_of[f"a{n}"] = rng.choice(sources)
        stating.setdefault(triple, []).append(f"a{n}")
        lines.append({"id": f"a{n}", "source": source_of[f"a{n}"], "subject": triple[0], "predicate": triple[1],
                      "object": triple[2]})
    expected = {}
    for triple, ids in stating.items():
        expected[triple_id("claim", triple)] = minimal([{a} for a in ids])
    receipts = []
    for k in range(rng.randint(1, 4)):
        bundles = [sorted(rng.sample(sorted(source_of), rng.randint(1, min(3, len(source_of)))))
                   for _ in range(rng.randint(1, 5))]
        receipts.append({"artifact": f"summary:s{k}", "layer": "summary", "support": bundles})
        expected[f"summary:s{k}"] = minimal(bundles)
    assertions = load_assertions(write_jsonl(directory / "a.jsonl", lines))
    build = build_graph(assertions, load_receipts(write_jsonl(directory / "r.jsonl", receipts),
                                                  {a.id for a in assertions}), [], cap=cap)
    build.origins = load_origins(write_jsonl(directory / "o.jsonl", records)) if records else Origins()
    build.circuit = circuit
    build.write(directory / "g.graph")
    return expected, source_of, records


def test_origin_counts_match_brute_force_on_random_graphs(tmp_path):
    """paths, origins (distinct), independent_supports (largest pairwise disjoint subfamily), echo and
    the fewest origins to kill, against brute force over the support sets worked out from the inputs
    and the origins by a naive fixpoint (closure)."""
    rng = random.Random(39)
    for trial in range(25):
        directory = tmp_path / str(trial)
        directory.mkdir()
        expected, source_of, records = random_graph(rng, directory)
        table = closure(records) if records else {}
        with Graph(directory / "g.graph") as graph:
            assert {a.id for a in graph.artifacts()} == set(expected)
            for artifact, sets in expected.items():
                origin_sets = [frozenset().union(*(origins_of(table, source_of[a]) for a in s)) for s in sets]
                distinct = set().union(*origin_sets)
                packing = max(len(chosen) for size in range(len(origin_sets) + 1)
                              for chosen in itertools.combinations(origin_sets, size)
                              if all(x.isdisjoint(y) for x, y in itertools.combinations(chosen, 2)))
                hitting = next(size for size in range(len(distinct) + 1)
                               for chosen in itertools.combinations(sorted(distinct), size)
                               if all(s & set(chosen) for s in origin_sets))
                result = robustness(graph, artifact)
                assert (result["paths"], result["origins"], result["independent_supports"], result["echo"]) == (
                    len(sets), len(distinct), packing, len(sets) > 1 and len(distinct) == 1), (trial, artifact)
                assert len(result["fewest_origins_to_kill"]) == hitting, (trial, artifact)
                assert result["exact"] and not result["lower_bounds"]


def test_capped_counts_are_lower_bounds_on_random_graphs(tmp_path):
    """Under a cap of 1 without a circuit, every count is at most the uncapped one and says it is a
    lower bound; with the circuit, the support sets are expanded and every count is the uncapped one."""
    for trial in range(10):
        counts = {}
        for cap, circuit in ((None, True), (1, False), (1, True)):
            directory = tmp_path / f"{trial}-{cap}-{circuit}"
            directory.mkdir()
            expected, _, _ = random_graph(random.Random(100 + trial), directory, cap=cap, circuit=circuit)
            with Graph(directory / "g.graph") as graph:
                counts[cap, circuit] = {a: robustness(graph, a) for a in expected}
        assert counts[1, True] == counts[None, True]
        for artifact, exact in counts[None, True].items():
            bound = counts[1, False][artifact]
            assert bound["lower_bounds"] == (not bound["exact"])
            assert bound["lower_bounds"] or exact["paths"] == 1  # two sets cannot fit under a cap of 1
            for key in ("paths", "origins", "independent_supports"):
                assert bound[key] <= exact[key], (trial, artifact, key)
