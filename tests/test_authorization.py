"""Authorization policies (graph/authorization.py): which agents may assert which kinds.

Every decision is checked against an independent brute-force reading of the policy written
here from docs/ledger.md's rules (agent id patterns by a regular expression, not fnmatch),
over random policies and random assertions; ``build``/``add`` refuse exactly the lines that
reading refuses, at their file and line; ``--require`` counts exactly the support sets it
accepts. Bad policy lines are named errors at the policy's file and line.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from polygraph_logic import build_graph
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.authorization import load_policy
from polygraph_logic.graph.kinds import KINDS as KIND_NAMES
from polygraph_logic.graph.ledger import add
from polygraph_logic.graph.records import LoadError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.evidence import Requirement
from polygraph_logic.query.whatif import Deletion, what_if

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ledger"
KINDS = tuple(KIND_NAMES)
TYPES = ("model", "person", "tool", "organization")
IDS = ("reviewer-1", "reviewer-2", "model:m/extract@1", "model:m/extract@2", "assay-reader", "lab")
PATTERNS = ("reviewer-*", "reviewer-?", "model:*", "*@2", "assay-reader", "lab", "*", "*-*", "nobody")


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# --- the independent reading -------------------------------------------------------------
def _pattern(pattern: str) -> re.Pattern:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.DOTALL)


def brute_allows(rules: list[dict], record: dict) -> bool:
    """docs/ledger.md#authorization, read literally: some rule names the agent (or, for an
    assertion naming none, is for unattributed ones), lists the kind (or "*"), and every field it
    requires is on the record."""
    agent = record.get("agent")
    agent = {"id": agent} if isinstance(agent, str) else agent
    kind = record.get("kind", "source_claim")
    for rule in rules:
        if agent is None:
            who = rule.get("unattributed") is True
        else:
            who = not rule.get("unattributed") and \
                ("agents" not in rule or any(_pattern(p).fullmatch(agent["id"]) for p in rule["agents"])) and \
                ("agent_types" not in rule or agent.get("type") in rule["agent_types"])
        what = "*" in rule["kinds"] or kind in rule["kinds"]
        carries = all(record.get(field) not in (None, "") for field in rule.get("requires", ()))
        if who and what and carries:
            return True
    return False


def random_rule(rng: random.Random) -> dict:
    rule: dict = {"kinds": rng.sample([*KINDS, "*"], rng.randint(2, 6))}
    if rng.random() < 0.2:
        rule["unattributed"] = True
    else:
        if rng.random() < 0.7:
            rule["agents"] = rng.sample(PATTERNS, rng.randint(1, 2))
        if "agents" not in rule or rng.random() < 0.4:
            rule["agent_types"] = rng.sample(TYPES, rng.randint(1, 2))
    if rng.random() < 0.35:
        rule["requires"] = rng.sample(["text", "acquisition", "time"], rng.randint(1, 2))
    return rule


def random_assertion(rng: random.Random, n: int, triples, described: dict) -> dict:
    """A random assertion; ``described``: each agent id's description so far (an id names one
    description in a file: the first drawn for it, with or without a type, is kept)."""
    s, p, o = rng.choice(triples)
    record = {"id": f"x{n}", "source": f"example:doc-{n % 5}", "subject": s, "predicate": p, "object": o,
              "kind": rng.choice(KINDS)}
    roll = rng.random()
    if roll < 0.2:
        pass  # no agent
    elif roll < 0.4:
        record["agent"] = rng.choice(IDS)
    else:
        agent = {"id": rng.choice(IDS)}
        if rng.random() < 0.8:
            agent["type"] = rng.choice(TYPES)
        record["agent"] = described.setdefault(agent["id"], agent)
    if rng.random() < 0.5:
        record["text"] = "a span"
    if rng.random() < 0.5:
        record["acquisition"] = {"type": "query", "query": "q"}
    if rng.random() < 0.4:
        record["time"] = "2024-01-0%d" % rng.randint(1, 9)
    return record


def _scenario(seed: int):
    rng = random.Random(seed)
    triples = [("A", "RO:0002211", "B"), ("B", "RO:0002211", "C"), ("A", "RO:0002213", "C")]
    described: dict = {}
    records = [random_assertion(rng, n, triples, described) for n in range(1, 16)]
    for record in records:  # a verification may name an earlier assertion
        if record["kind"] == "verification" and rng.random() < 0.7:
            record["verifies"] = rng.choice(records)["id"]
    rules = [random_rule(rng) for _ in range(rng.randint(2, 7))]
    return records, rules


@pytest.mark.parametrize("seed", range(30))
def test_build_refuses_exactly_what_the_brute_force_reading_refuses(tmp_path, seed):
    records, rules = _scenario(seed)
    assertions, policy = _write(tmp_path / "a.jsonl", records), _write(tmp_path / "policy.jsonl", rules)
    refused = {n for n, record in enumerate(records, 1) if not brute_allows(rules, record)}
    if refused:
        with pytest.raises(LoadError) as raised:
            build_graph(assertions, authorization=policy, output=tmp_path / "g.graph")
        assert {p.position.line for p in raised.value.problems} == refused
        assert all(p.code == "unauthorized" and p.position.file == str(assertions) for p in raised.value.problems)
        assert not (tmp_path / "g.graph").exists()
    else:
        build_graph(assertions, authorization=policy, output=tmp_path / "g.graph")
    # records in memory are read as a file's lines are
    if refused:
        with pytest.raises(LoadError) as raised:
            build_graph(records, authorization=load_policy(policy))
        assert {p.position.line for p in raised.value.problems} == refused


def _qualifying_by_brute_force(records, rules, required) -> dict[tuple, bool]:
    """Per triple: whether some assertion of it is authorized and of a required kind, or named by an
    authorized verification (itself any triple); the graph has no rules, so each triple's claim has
    one support set per assertion stating it."""
    ok = {r["id"]: brute_allows(rules, r) for r in records}
    named = {v for r in records if r.get("kind") == "verification" and ok[r["id"]] and "verifies" in r
             for v in ([r["verifies"]] if isinstance(r["verifies"], str) else r["verifies"])}
    out: dict[tuple, bool] = {}
    for r in records:
        triple = (r["subject"], r["predicate"], r["object"])
        good = ok[r["id"]] and (r.get("kind", "source_claim") in required or r["id"] in named)
        out[triple] = out.get(triple, False) or good
    return out


@pytest.mark.parametrize("seed", range(30))
def test_require_counts_only_what_the_brute_force_reading_authorizes(tmp_path, seed):
    records, rules = _scenario(seed)
    path = tmp_path / "g.graph"
    build_graph(_write(tmp_path / "a.jsonl", records), output=path)  # no policy: nothing refused
    policy = _write(tmp_path / "policy.jsonl", rules)
    required = ("source_claim", "verification")
    expected = _qualifying_by_brute_force(records, rules, required)
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(), require=Requirement(required, load_policy(policy)))
        unqualified = {entry["id"] for entry in outcome.unqualified}
        claims = {(a.content["subject"], a.content["predicate"], a.content["object"]): a.id
                  for a in graph.artifacts() if a.layer == "claim"}
        assert {claims[t] for t, good in expected.items() if not good} == unqualified
        # without the policy every assertion counts
        free = _qualifying_by_brute_force(records, [{"kinds": ["*"], "agents": ["*"]}, {"kinds": ["*"],
                                                                                        "unattributed": True}],
                                          required)
        outcome = what_if(graph, Deletion(), require=Requirement(required))
        assert {claims[t] for t, good in free.items() if not good} == {e["id"] for e in outcome.unqualified}


def test_the_example_policy_refuses_three_lines_and_the_graph_folder_counts_the_same(tmp_path, capsys):
    policy = EXAMPLES / "policy.jsonl"
    agents = EXAMPLES / "agents.jsonl"
    code = main(["build", "--assertions", str(agents), "--authorization", str(policy), "-o", str(tmp_path / "g")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "g").exists()
    assert [line.split(": ")[0] for line in err.splitlines() if "unauthorized" in line] == \
        [f"{agents}:{n}:1" for n in (2, 5, 7)]
    records = [json.loads(line) for line in agents.read_text(encoding="utf-8").splitlines()]
    rules = [json.loads(line) for line in policy.read_text(encoding="utf-8").splitlines()]
    assert [n for n, r in enumerate(records, 1) if not brute_allows(rules, r)] == [2, 5, 7]
    expected = _qualifying_by_brute_force(records, rules, ("source_claim", "verification"))
    assert main(["build", "--assertions", str(agents), "-o", str(tmp_path / "g.graph")]) == 0
    folder = tmp_path / "folder"
    build_graph(agents, engine="duckdb", tables=True, output=folder)
    for path in (tmp_path / "g.graph", folder):
        capsys.readouterr()
        assert main(["whatif", str(path), "--require", "source_claim,verification", "--authorization", str(policy),
                     "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        with Graph(path) as graph:
            claims = {(a.content["subject"], a.content["predicate"], a.content["object"]): a.id
                      for a in graph.artifacts() if a.layer == "claim"}
        assert {e["id"] for e in result["require"]["unqualified"]} == \
            {claims[t] for t, good in expected.items() if not good}


def test_add_refuses_unauthorized_lines_with_the_files_other_problems_and_changes_nothing(tmp_path):
    policy = _write(tmp_path / "policy.jsonl", [{"agents": ["reviewer-*"], "kinds": ["verification"]},
                                                {"unattributed": True, "kinds": ["source_claim"]}])
    base = _write(tmp_path / "a.jsonl", [{"id": "a1", "source": "S", "subject": "A", "predicate": "RO:0002211",
                                          "object": "B"}])
    path = tmp_path / "g.graph"
    build_graph(base, authorization=policy, output=path)
    new = _write(tmp_path / "new.jsonl", [
        {"id": "v1", "source": "R", "subject": "A", "predicate": "RO:0002211", "object": "B", "kind": "verification",
         "agent": "reviewer-1", "verifies": "a1"},
        {"id": "v2", "source": "R", "subject": "A", "predicate": "RO:0002211", "object": "B", "kind": "verification",
         "agent": "intern-1"},
        {"id": "a1", "source": "S", "subject": "A", "predicate": "RO:0002211", "object": "B"},
        {"id": "h1", "source": "M", "subject": "A", "predicate": "RO:0002211", "object": "C",
         "kind": "model_hypothesis"}])
    before = path.read_bytes()
    with pytest.raises(LoadError) as raised:
        add(path, new, authorization=policy)
    assert [(p.position.line, p.code) for p in raised.value.problems] == \
        [(2, "unauthorized"), (3, "duplicate_assertion"), (4, "unauthorized")]
    assert path.read_bytes() == before
    good = _write(tmp_path / "good.jsonl", [json.loads(new.read_text().splitlines()[0])])
    report = add(path, good, authorization=policy)
    with Graph(path) as graph:
        [row] = [r for r in graph.version_rows() if r["version"] == report.version]
    roles = {entry["role"]: entry for entry in row["record"]["inputs"]}
    assert roles["authorization"]["records"] == 2 and roles["authorization"]["file"] == str(policy.resolve())
    # without a policy nothing is refused
    assert add(path, _write(tmp_path / "h.jsonl", [json.loads(new.read_text().splitlines()[3])])).version == 3


@pytest.mark.parametrize("line, code, words", [
    ({"agents": ["reviewer-*"]}, "bad_policy", "needs 'kinds'"),
    ({"agents": ["reviewer-*"], "kinds": ["verdict"]}, "unknown_kind", "'verdict'"),
    ({"kinds": ["verification"]}, "bad_policy", "says whom it authorizes"),
    ({"unattributed": True, "agents": ["x"], "kinds": ["source_claim"]}, "bad_policy", "names no agents"),
    ({"agent_types": ["robot"], "kinds": ["source_claim"]}, "bad_policy", "'robot'"),
    ({"agents": [], "kinds": ["source_claim"]}, "bad_policy", "non-empty list"),
    ({"agents": ["x"], "kinds": ["source_claim"], "requires": ["signature"]}, "bad_policy", "'signature'"),
    ({"agents": ["x"], "kinds": ["source_claim"], "allow": True}, "bad_policy", "unknown key 'allow'"),
    ({"unattributed": "yes", "kinds": ["source_claim"]}, "bad_policy", "true or false"),
])
def test_a_bad_policy_line_is_a_named_error_at_its_line(tmp_path, capsys, line, code, words):
    policy = _write(tmp_path / "policy.jsonl", [{"unattributed": True, "kinds": ["*"]}, line])
    with pytest.raises(PolygraphError) as raised:
        load_policy(policy)
    assert raised.value.code == code and raised.value.position.line == 2 and words in raised.value.message
    assertions = _write(tmp_path / "a.jsonl", [{"id": "a1", "source": "S", "subject": "A", "predicate": "RO:0002211",
                                                "object": "B"}])
    assert main(["build", "--assertions", str(assertions), "--authorization", str(policy),
                 "-o", str(tmp_path / "g.graph")]) == 2
    assert f"{policy}:2:1: {code}" in capsys.readouterr().err


def test_an_empty_policy_is_refused_rather_than_refusing_everything(tmp_path):
    policy = tmp_path / "empty.jsonl"
    policy.write_text("\n", encoding="utf-8")
    with pytest.raises(PolygraphError, match="no rule") as raised:
        load_policy(policy)
    assert raised.value.code == "bad_policy"


def test_authorization_without_require_is_refused_on_a_query(tmp_path, capsys):
    path = tmp_path / "g.graph"
    build_graph(EXAMPLES / "agents.jsonl", output=path)
    assert main(["whatif", str(path), "--authorization", str(EXAMPLES / "policy.jsonl")]) == 2
    assert "give --require" in capsys.readouterr().err


def test_a_graph_without_evidence_metadata_reads_every_assertion_as_unattributed(tmp_path):
    """A graph file written before evidence metadata (no ``evidence`` column): every assertion names no
    agent, so only rules for unattributed assertions authorize it."""
    records = [{"id": "a1", "source": "S", "subject": "A", "predicate": "RO:0002211", "object": "B"},
               {"id": "a2", "source": "S", "subject": "B", "predicate": "RO:0002211", "object": "C",
                "kind": "model_hypothesis"}]
    path = tmp_path / "old.graph"
    build_graph(_write(tmp_path / "a.jsonl", records), output=path)
    with sqlite3.connect(path) as db:
        for table in ("assertions", "assertions_history"):
            db.execute(f"ALTER TABLE {table} DROP COLUMN evidence")
    policy = load_policy(_write(tmp_path / "p.jsonl", [{"unattributed": True, "kinds": ["source_claim"]}]))
    with Graph(path) as graph:
        assert not graph.has_evidence
        outcome = what_if(graph, Deletion(), require=Requirement(("source_claim", "model_hypothesis"), policy))
        assert [e["id"] for e in outcome.unqualified] == [
            a.id for a in graph.artifacts() if a.layer == "claim" and a.content["object"] == "C"]


@pytest.mark.parametrize("form", ["file", "folder"])
def test_version_one_of_a_build_records_the_policy_among_its_inputs(tmp_path, form):
    policy = _write(tmp_path / "policy.jsonl", [{"unattributed": True, "kinds": ["source_claim"]}])
    base = _write(tmp_path / "a.jsonl", [{"id": "a1", "source": "S", "subject": "A", "predicate": "RO:0002211",
                                          "object": "B"}])
    path = tmp_path / ("g.graph" if form == "file" else "g.tables")
    build_graph(base, authorization=policy, output=path, **({"engine": "duckdb", "tables": True} if form == "folder" else {}))
    with Graph(path) as graph:
        [row] = [r for r in graph.version_rows() if r["version"] == 1]
    roles = {entry["role"]: entry for entry in row["record"]["inputs"]}
    assert roles["authorization"]["records"] == 1 and roles["authorization"]["file"] == str(policy.resolve())
    assert roles["assertions"]["records"] == 1


def test_the_explorer_under_a_policy_counts_a_requirement_as_the_command(tmp_path, capsys):
    """`serve --authorization POLICY`: a what-if's require counts only what the policy authorizes,
    as `whatif --require --authorization` does (and not as without the policy); a bad policy is
    refused before the server starts."""
    from polygraph_logic.serve.api import GraphApi

    policy, agents = EXAMPLES / "policy.jsonl", EXAMPLES / "agents.jsonl"
    path = tmp_path / "g.graph"
    assert main(["build", "--assertions", str(agents), "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["whatif", str(path), "--require", "source_claim,verification", "--authorization", str(policy),
                 "--json"]) == 0
    expected = {e["id"] for e in json.loads(capsys.readouterr().out)["require"]["unqualified"]}
    unguarded = GraphApi(path)
    guarded = GraphApi(path, authorization=policy)
    try:
        question = {"require": ["source_claim,verification"], "policy": ["trust-all"]}
        found = {u["id"] for u in guarded.whatif(question)["outcomes"][0]["require"]["unqualified"]}
        without = {u["id"] for u in unguarded.whatif(question)["outcomes"][0]["require"]["unqualified"]}
        assert found == expected != without
        assert "require" not in guarded.whatif({"policy": ["trust-all"]})["outcomes"][0] or \
            guarded.whatif({"policy": ["trust-all"]})["outcomes"][0]["require"] is None
    finally:
        unguarded.close()
        guarded.close()
    bad = _write(tmp_path / "bad.jsonl", [{"agents": ["reviewer-*"]}])
    with pytest.raises(PolygraphError) as raised:
        GraphApi(path, authorization=bad)
    assert raised.value.code == "bad_policy"


def test_an_agent_described_otherwise_on_another_line_is_refused_there(tmp_path):
    """An agent id names one description: a second description that differs is `conflicting_agent` at
    its line (the export would otherwise state the first and drop the second); the id alone, or the
    same description again, is fine."""
    model = {"id": "model:m/p@1", "type": "model", "model": "m", "prompt": "p", "prompt_version": "1"}
    base = {"source": "S", "predicate": "RO:0002211", "object": "B"}
    path = _write(tmp_path / "a.jsonl", [
        {"id": "a1", "subject": "A1", "agent": model, **base},
        {"id": "a2", "subject": "A2", "agent": "model:m/p@1", **base},
        {"id": "a3", "subject": "A3", "agent": dict(model), **base},
        {"id": "a4", "subject": "A4", "agent": {**model, "prompt_version": "2"}, **base},
        {"id": "a5", "subject": "A5", "agent": {"id": "model:m/p@1", "type": "tool"}, **base}])
    with pytest.raises(LoadError) as raised:
        build_graph(path, output=tmp_path / "g.graph")
    assert [(p.position.line, p.code) for p in raised.value.problems] == [(4, "conflicting_agent"),
                                                                          (5, "conflicting_agent")]
    assert "line 1" in raised.value.problems[0].message
