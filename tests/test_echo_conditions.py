"""The GraphEcho conditions as a graph: 1S5P, 5S5P and the conflicts C2, C3, C4 and C2R.

GraphEcho (papers/004, sections 3.1-3.3) separates paths (N_path) from distinct evidential
origins (N_prov): one study reached by five paths (1S5P) is not five studies (5S5P), and the
gold verdict of a conflict follows the balance of distinct origins, not of paths. Each
condition here is a claim of its own, built through the project's inputs: assertions (a NOT
is a negated assertion, the refuting side: rules/contradictions.dl derives "P vs not P"), a
receipt, and derived_from records saying which sources repeat one study. Every expected
count is worked out by hand in the comment beside it; nothing is computed by the code under
test to be compared with itself.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.graph.artifact_ids import triple_id
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.contradictions import contradictions
from polygraph_logic.query.explain import robustness
from polygraph_logic.query.whatif import Deletion, what_if

P = "RO:0002213"  # positively regulates; a NOT of it is its negation

#: condition -> (supporting sources, refuting sources); "news:X-i" derive from "study:X-for/against"
CONDITIONS = {
    "1S5P": ([f"news:1s5p-{i}" for i in range(1, 6)], []),
    "5S5P": ([f"study:5s5p-{i}" for i in range(1, 6)], []),
    "C2": ([f"news:c2-{i}" for i in range(1, 6)], ["study:c2-against"]),
    "C3": ([f"study:c3-{i}" for i in range(1, 6)], ["study:c3-against"]),
    "C4": ([f"news:c4-{i}" for i in range(1, 6)], ["study:c4-against-1", "study:c4-against-2"]),
    "C2R": (["study:c2r-for"], [f"news:c2r-{i}" for i in range(1, 6)]),
}
DERIVED = {  # the echoes: five news items each repeating one study
    **{f"news:1s5p-{i}": "study:1s5p" for i in range(1, 6)},
    **{f"news:c2-{i}": "study:c2-for" for i in range(1, 6)},
    **{f"news:c4-{i}": "study:c4-for" for i in range(1, 6)},
    **{f"news:c2r-{i}": "study:c2r-against" for i in range(1, 6)},
}


def subject(condition: str) -> str:
    return f"claim-{condition}"


def assertion_records() -> list[dict]:
    """One assertion per path: ``{condition}+{i}`` supporting, ``{condition}-{i}`` refuting (negated)."""
    records = []
    for condition, (supporting, refuting) in CONDITIONS.items():
        for sign, sources in (("+", supporting), ("-", refuting)):
            for i, source in enumerate(sources, 1):
                record = {"id": f"{condition}{sign}{i}", "source": source, "subject": subject(condition),
                          "predicate": P, "object": "target"}
                if sign == "-":
                    record["negated"] = True
                records.append(record)
    # C4's second refuting study is a model's hypothesis (for --distrust-kind)
    next(r for r in records if r["id"] == "C4-2")["kind"] = "model_hypothesis"
    return records


RECEIPTS = [
    # 1S5P as a receipt: five one-assertion paths, every one from a news item of study:1s5p
    {"artifact": "summary:1s5p", "layer": "summary", "support": [[f"1S5P+{i}"] for i in range(1, 6)]},
    # paths that are conjunctions: {5S5P+1, 5S5P+2}, {5S5P+2, 5S5P+3}, {5S5P+3, 5S5P+4}, {1S5P+1, 1S5P+2}
    {"artifact": "summary:mixed", "layer": "summary",
     "support": [["5S5P+1", "5S5P+2"], ["5S5P+2", "5S5P+3"], ["5S5P+3", "5S5P+4"], ["1S5P+1", "1S5P+2"]]},
]


def write_jsonl(path: Path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return str(path)


@pytest.fixture(scope="module")
def echo_graph(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("echo")
    inputs = ["--assertions", write_jsonl(folder / "assertions.jsonl", assertion_records()),
              "--receipts", write_jsonl(folder / "receipts.jsonl", RECEIPTS),
              "--origins", write_jsonl(folder / "origins.jsonl",
                                       [{"source": s, "derived_from": o} for s, o in DERIVED.items()]),
              "--rules", "contradictions"]
    # no cap: C4's contradiction has ten support sets, more than the default cap of 8
    assert main(["build", *inputs, "--cap", "none", "-o", str(folder / "echo.graph")]) == 0
    assert main(["build", *inputs, "--cap", "2", "-o", str(folder / "capped.graph")]) == 0
    assert main(["build", *inputs, "--cap", "2", "--no-circuit", "-o", str(folder / "bare.graph")]) == 0
    return folder


def claim(condition: str) -> str:
    return triple_id("claim", (subject(condition), P, "target"))


def counts(result: dict) -> tuple:
    return result["paths"], result["origins"], result["independent_supports"], result["echo"]


def test_1s5p_is_one_origin_by_five_paths_and_5s5p_five_origins(echo_graph):
    with Graph(echo_graph / "echo.graph") as graph:
        # 1S5P: five assertions, five news items, all derived from study:1s5p: paths 5, origins 1,
        # no two paths without an origin in common (1), and an echo (paths > 1, one origin)
        one = robustness(graph, claim("1S5P"))
        assert counts(one) == (5, 1, 1, True)
        assert one["paths_counted"] == "support_sets" and not one["lower_bounds"]
        # five sources, so five independent sources and five to retract; but one origin kills it
        assert (one["independent_sources"], len(one["fewest_sources_to_kill"])) == (5, 5)
        assert one["fewest_origins_to_kill"] == ["study:1s5p"]
        assert one["origin_clusters"] == {"study:1s5p": [f"news:1s5p-{i}" for i in range(1, 6)]}
        # 5S5P: the same five paths from five studies: five origins, five independent, no echo
        five = robustness(graph, claim("5S5P"))
        assert counts(five) == (5, 5, 5, False)
        assert len(five["fewest_origins_to_kill"]) == 5
        # the receipt of 1S5P: the same five paths as support sets of a summary
        assert counts(robustness(graph, "summary:1s5p")) == (5, 1, 1, True)


def test_conjunctive_paths_count_origins_apart_from_independent_supports(echo_graph):
    with Graph(echo_graph / "echo.graph") as graph:
        mixed = robustness(graph, "summary:mixed")
    # origin sets {5s5p-1, 5s5p-2}, {5s5p-2, 5s5p-3}, {5s5p-3, 5s5p-4}, {1s5p}: four paths over
    # five distinct origins; at most three share no origin ({1,2}, {3,4} and {1s5p}); no echo
    assert counts(mixed) == (4, 5, 3, False)
    # killing it takes study:1s5p and two of the chain (no one study meets {1,2}, {2,3} and {3,4})
    assert len(mixed["fewest_origins_to_kill"]) == 3 and "study:1s5p" in mixed["fewest_origins_to_kill"]
    assert mixed["independent_sources"] == 3  # the news items are two sources, in one set


def test_a_contradiction_with_several_origins_is_no_echo(echo_graph):
    """The issue's case: 'one with 3 origins, two of them refuting' was flagged an echo."""
    with Graph(echo_graph / "echo.graph") as graph:
        ids = {c.subject: c.id for c in contradictions(graph)}
        # C4: (C4+1 + ... + C4+5)·(C4-1 + C4-2): ten support sets over study:c4-for and the two
        # refuting studies: three origins, every set holding study:c4-for (independent 1)
        c4 = robustness(graph, ids[subject("C4")])
        assert counts(c4) == (10, 3, 1, False) and c4["exact"]
        # C2: (C2+1 + ... + C2+5)·C2-1: five sets, two origins, all sharing both
        assert counts(robustness(graph, ids[subject("C2")])) == (5, 2, 1, False)


#: condition -> (supporting origins, refuting origins, verdict), by hand from CONDITIONS and DERIVED
BALANCE = {
    "C2": (["study:c2-for"], ["study:c2-against"], "undecided"),  # five paths, one origin: 1 vs 1
    "C3": ([f"study:c3-{i}" for i in range(1, 6)], ["study:c3-against"], "support"),  # 5 vs 1
    "C4": (["study:c4-for"], ["study:c4-against-1", "study:c4-against-2"], "refute"),  # 1 (five paths) vs 2
    "C2R": (["study:c2r-for"], ["study:c2r-against"], "undecided"),  # 1 vs five paths of one origin
}


def test_the_balance_of_origins_of_each_conflict(echo_graph):
    with Graph(echo_graph / "echo.graph") as graph:
        found = {c.subject: c for c in contradictions(graph)}
    assert set(found) == {subject(c) for c in BALANCE}  # 1S5P and 5S5P have no NOT: no conflict
    for condition, (supporting, refuting, verdict) in BALANCE.items():
        balance = found[subject(condition)].balance
        assert (list(balance.supporting), list(balance.refuting), balance.verdict) == (supporting, refuting,
                                                                                       verdict), condition
        assert balance.exact and balance.resolved is None and not balance.shared


def run_json(capsys, *arguments) -> dict:
    capsys.readouterr()
    assert main(["contradictions", *arguments, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def by_subject(listing: dict) -> dict:
    return {c["subject"]: c for c in listing["listed"]}


def test_the_balance_after_a_deletion_beside_the_one_before(echo_graph, capsys):
    graph = str(echo_graph / "echo.graph")
    retract = [f"--retract-source={s}" for s in
               [f"news:c2-{i}" for i in range(1, 5)] + [f"study:c3-{i}" for i in range(1, 5)] + ["study:c4-against-1"]]
    listing = run_json(capsys, graph, *retract)
    assert listing["deletion"].startswith("retract-source news:c2-1, ")
    found = by_subject(listing)
    expected = {
        # four of C2's five echo paths retracted: one path of study:c2-for is left, still 1 vs 1
        "C2": (1, 1, "undecided", "undecided"),
        # four of C3's five supporting studies retracted: 1 vs 1, the verdict changes
        "C3": (5, 1, "support", "undecided"),
        # one of C4's two refuting studies retracted: 1 vs 1
        "C4": (1, 2, "refute", "undecided"),
        "C2R": (1, 1, "undecided", "undecided"),  # untouched
    }
    for condition, (supporting, refuting, before, after) in expected.items():
        entry = found[subject(condition)]
        assert (entry["balance"]["supporting"], entry["balance"]["refuting"]) == (supporting, refuting)
        assert (entry["balance"]["verdict"], entry["balance_after"]["verdict"]) == (before, after), condition
        assert entry["balance_after"]["resolved"] is False
    assert found[subject("C3")]["balance_after"]["supporting_origins"] == ["study:c3-5"]
    assert found[subject("C4")]["balance_after"]["refuting_origins"] == ["study:c4-against-2"]
    # retracting the refuting side resolves the conflict: what is left supports the claim
    found = by_subject(run_json(capsys, graph, "--retract-source", "study:c3-against",
                                *[f"--retract-source=news:c2r-{i}" for i in range(1, 6)]))
    for condition, supporting in (("C3", 5), ("C2R", 1)):
        after = found[subject(condition)]["balance_after"]
        assert (after["supporting"], after["refuting"], after["verdict"], after["resolved"]) == (
            supporting, 0, "support", True)
    # a distrusted kind is a deletion too: C4's second refuting study is a model's hypothesis
    after = by_subject(run_json(capsys, graph, "--distrust-kind", "model_hypothesis"))[subject("C4")]
    assert (after["balance_after"]["refuting_origins"], after["balance_after"]["verdict"]) == (
        ["study:c4-against-1"], "undecided")
    # without a deletion, no after and no deletion key
    plain = run_json(capsys, graph)
    assert "deletion" not in plain and all("balance_after" not in c for c in plain["listed"])


def test_the_text_says_the_balance_and_the_echo(echo_graph, capsys):
    graph = str(echo_graph / "echo.graph")
    capsys.readouterr()
    assert main(["contradictions", graph, "--retract-source", "study:c4-against-1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("4 contradictions; after retract-source study:c4-against-1: 0 resolved, "
                           "1 verdicts changed\n")
    assert ("  origins: 1 supporting (study:c4-for) vs 2 refuting (study:c4-against-1, study:c4-against-2): "
            "refute\n  after retract-source study:c4-against-1: 1 supporting (study:c4-for) vs 1 refuting "
            "(study:c4-against-2): undecided\n") in text
    assert main(["robustness", graph, claim("1S5P")]) == 0
    text = capsys.readouterr().out
    assert "paths: 5 (support sets); origins: 1 distinct" in text
    # five sources, one origin: the sources are not called independent beside the echo
    assert "with no source in common: 5; with no origin in common (independent supports): 1" in text
    assert "independent sources" not in text
    assert "ECHO: 5 paths, one origin" in text and "lower bound" not in text


def test_under_the_cap_the_counts_are_lower_bounds(echo_graph, capsys):
    with Graph(echo_graph / "echo.graph") as full, Graph(echo_graph / "bare.graph") as capped, \
            Graph(echo_graph / "capped.graph") as circuit:
        for condition in ("1S5P", "5S5P"):
            exact, bound = robustness(full, claim(condition)), robustness(capped, claim(condition))
            assert bound["lower_bounds"] and not bound["exact"] and not exact["lower_bounds"]
            for key in ("paths", "origins", "independent_supports", "independent_sources"):
                assert bound[key] <= exact[key], (condition, key)
            assert bound["paths"] == 2  # the cap kept two of the five support sets
            # with its circuit, the capped graph's support sets are expanded: the counts are the full ones
            assert robustness(circuit, claim(condition)) == exact, condition
        # C3 capped: two of five supporting sets kept, so at most two of its five origins are seen
        (c3,) = [c for c in contradictions(capped) if c.subject == subject("C3")]
        assert not c3.balance.exact and len(c3.balance.supporting) <= 5
    capsys.readouterr()
    assert main(["robustness", str(echo_graph / "bare.graph"), claim("5S5P")]) == 0
    assert "every count above is a lower bound" in capsys.readouterr().out
    assert main(["contradictions", str(echo_graph / "capped.graph")]) == 0
    assert "(capped: counts are lower bounds)" in capsys.readouterr().out


def test_what_if_deletions_resolve_as_the_balance_says(echo_graph):
    """``resolved`` after a deletion agrees with the what-if's own count of resolved contradictions."""
    deletions = [Deletion(sources=("study:c2-against",)), Deletion(sources=tuple(f"news:c2-{i}" for i in range(1, 6))),
                 Deletion(sources=("study:c4-against-1", "study:c4-against-2")), Deletion(kinds=("model_hypothesis",))]
    with Graph(echo_graph / "echo.graph") as graph:
        for deletion in deletions:
            resolved = set(what_if(graph, deletion).contradictions(graph)["resolved_ids"])
            listed = list(contradictions(graph, deletion=deletion))
            assert {c.id for c in listed if c.balance_after.resolved} == resolved, str(deletion)
            assert all(c.deletion == str(deletion) for c in listed)


# --- the balance against brute force on generated graphs -----------------------------------

NEG = "RO:0002212"  # negatively regulates: "RO:0002213 vs RO:0002212" is a conflict of its own


def roots(derived: dict[str, list[str]], source: str) -> frozenset[str]:
    """A source's origins by walking derived_from up to the sources deriving from nothing."""
    parents = derived.get(source, [])
    return frozenset([source]) if not parents else frozenset().union(*(roots(derived, p) for p in parents))


def test_balance_matches_brute_force_on_generated_graphs(tmp_path):
    """Random claims, NOTs and negative regulations over a few subjects, sources deriving from
    studies: each conflict's supporting and refuting origins are those of the assertions stating
    (or denying) each side's triple, read from the inputs, and after retracting random sources
    those of the assertions left; resolved when a side has none left."""
    rng = random.Random(7)
    checked = changed = resolved = 0
    for trial in range(30):
        studies = [f"study:{i}" for i in range(rng.randint(1, 4))]
        sources = [f"src:{i}" for i in range(rng.randint(2, 7))]
        derived = {s: rng.sample(studies, rng.randint(1, min(2, len(studies)))) for s in sources if rng.random() < .6}
        records = []
        for n in range(rng.randint(2, 14)):
            predicate, negated = rng.choice([(P, False), (P, False), (P, True), (NEG, False)])
            record = {"id": f"a{n}", "source": rng.choice(sources), "subject": f"x{rng.randint(0, 2)}",
                      "predicate": predicate, "object": "t"}
            records.append({**record, "negated": True} if negated else record)
        folder = tmp_path / str(trial)
        folder.mkdir()
        origins = write_jsonl(folder / "o.jsonl", [{"source": s, "derived_from": p} for s, p in derived.items()])
        assert main(["build", "--assertions", write_jsonl(folder / "a.jsonl", records), "--rules", "contradictions",
                     "--cap", "none", "--origins", origins, "-o", str(folder / "g.graph")]) == 0
        used = sorted({r["source"] for r in records})  # retracting a source no assertion names is an error
        retracted = set(rng.sample(used, rng.randint(1, len(used))))

        def side_origins(side: dict, gone: set) -> list[str]:
            stating = [r for r in records if (r["subject"], r["predicate"], r["object"]) == (
                side["subject"], side["predicate"], side["object"]) and r.get("negated", False) == side["negated"]
                and r["source"] not in gone]
            return sorted(frozenset().union(*(roots(derived, r["source"]) for r in stating)))

        with Graph(folder / "g.graph") as graph:
            listed = list(contradictions(graph, deletion=Deletion(sources=tuple(sorted(retracted)))))
        # the conflicts: per subject, a claim and its NOT, and a positive and a negative regulation
        stated = {(r["subject"], r["predicate"], r.get("negated", False)) for r in records}
        expected = {(x, kind) for x in {r["subject"] for r in records}
                    for kind, other in (("not", (x, P, True)), ("negative", (x, NEG, False)))
                    if (x, P, False) in stated and other in stated}
        assert {(c.subject, "not" if c.reason == P else "negative") for c in listed} == expected, trial
        for found in listed:
            before = [side_origins(side, set()) for side in found.sides]
            after = [side_origins(side, retracted) for side in found.sides]
            assert [list(found.balance.supporting), list(found.balance.refuting)] == before, trial
            assert [list(found.balance_after.supporting), list(found.balance_after.refuting)] == after, trial
            for balance, (supporting, refuting) in ((found.balance, before), (found.balance_after, after)):
                verdict = ("support" if len(supporting) > len(refuting) else
                           "refute" if len(supporting) < len(refuting) else "undecided")
                assert balance.verdict == verdict and balance.exact
            assert found.balance_after.resolved == (not after[0] or not after[1])
            checked += 1
            changed += found.balance.verdict != found.balance_after.verdict
            resolved += found.balance_after.resolved
    assert checked >= 20 and changed and resolved  # the generator reaches every case
