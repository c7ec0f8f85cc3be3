"""`polygraph mcp GRAPH`: the MCP server run as a real subprocess over stdio, asked with the mcp
package's client, every answer compared with the command line's ``--json`` answer to the same
question (the CLI is the independent reference: its commands are what the tools must equal)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.graph.kinds import KINDS  # noqa: E402
from polygraph_logic.query.whatif import POLICIES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
READING_TOOLS = {"search", "show", "whatif", "why", "whynot", "robustness", "contradictions", "ask"}


def _env() -> dict[str, str]:
    """The server imports this checkout's package, whatever is installed."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


async def _ask(graph: Path, calls, flags) -> tuple[list, list]:
    server = StdioServerParameters(command=sys.executable, args=["-m", "polygraph_logic", "mcp", str(graph), *flags],
                                   env=_env(), cwd=str(graph.parent))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def serve(graph: Path, calls=(), *flags: str) -> tuple[dict, list]:
    """Starts `polygraph mcp GRAPH FLAGS`, lists its tools and makes the calls, in one session;
    returns ({name: tool}, [result, ...])."""
    tools, results = asyncio.run(asyncio.wait_for(_ask(graph, list(calls), flags), 120))
    return {tool.name: tool for tool in tools}, results


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def cli_json(*argv: str):
    status, out, err = cli(*argv, "--json")
    assert status == 0, err
    return json.loads(out)


def _answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content  # the text block is the same JSON
    return result.structured_content


def _timeless(data: dict) -> dict:
    return {key: value for key, value in data.items() if key != "elapsed_ms"}


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> Path:
    """Figure 1 built with the RO and contradiction rules, then grown by the contradicting
    assertions (version 2): five contradictions to ask about."""
    folder = tmp_path_factory.mktemp("mcp")
    path = folder / "figure1.graph"
    status, _, err = cli("build", "--assertions", FIGURE1 / "assertions.jsonl", "--receipts",
                         FIGURE1 / "receipts.jsonl", "--rules", "ro", "--rules", "contradictions", "-o", path)
    assert status == 0, err
    assert cli("add", path, "--assertions", FIGURE1 / "contradicting.jsonl")[0] == 0
    return path


def test_the_tools_and_their_schemas(graph):
    tools, _ = serve(graph)
    assert set(tools) == READING_TOOLS  # no add without --allow-add
    for tool in tools.values():
        schema = tool.input_schema
        assert tool.description and schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["why"].input_schema["required"] == ["artifact"]
    assert tools["ask"].input_schema["required"] == ["atom"]
    for name in ("search", "whatif", "whynot"):
        policy = tools[name].input_schema["properties"]["policy"]
        assert policy["enum"] == list(POLICIES) and policy["default"] == "trust-all"
    assert tools["whatif"].input_schema["properties"]["require"]["items"]["enum"] == list(KINDS)
    assert {"as_of", "stale_after", "scope", "retract_sources"} <= set(tools["search"].input_schema["properties"])
    assert "policy" not in tools["contradictions"].input_schema["properties"]  # as the command: no policy


def test_the_default_policy_is_the_servers(graph):
    tools, results = serve(graph, [("whatif", {"retract_sources": ["PMID:39973430"]})], "--policy", "deployed")
    assert tools["whatif"].input_schema["properties"]["policy"]["default"] == "deployed"
    assert _timeless(_answer(results[0])) == _timeless(
        cli_json("whatif", graph, "--retract-source", "PMID:39973430", "--policy", "deployed"))


# (tool, arguments, the command line asking the same)
SAME_QUESTIONS = [
    ("whatif", {"retract_sources": ["PMID:39973430"], "list": True},
     ["whatif", "--retract-source", "PMID:39973430", "--list"]),
    ("whatif", {"retract_sources": ["PMID:40057077"], "policy": "flat", "require": ["source_claim"]},
     ["whatif", "--retract-source", "PMID:40057077", "--policy", "flat", "--require", "source_claim"]),
    ("whatif", {"revoke_relations": ["RO:0002213"], "as_of": "2025-01-01", "scope": "team:oncology"},
     ["whatif", "--revoke-relation", "RO:0002213", "--as-of", "2025-01-01", "--scope", "team:oncology"]),
    ("why", {"artifact": "merge:mapk-erk"}, ["why", "merge:mapk-erk"]),
    ("why", {"artifact": "summary:aim2", "trees": 0, "require": ["verification"]},
     ["why", "summary:aim2", "--trees", "0", "--require", "verification"]),
    ("whynot", {"artifact": "merge:mapk-erk", "retract_sources": ["PMID:39973430"]},
     ["whynot", "merge:mapk-erk", "--retract-source", "PMID:39973430"]),
    ("robustness", {"artifact": "merge:mapk-erk"}, ["robustness", "merge:mapk-erk"]),
    ("contradictions", {"limit": 2}, ["contradictions", "--limit", "2"]),
    ("contradictions", {"retract_sources": ["example:paper-E"], "hitting": 1},
     ["contradictions", "--retract-source", "example:paper-E", "--hitting", "1"]),
    ("show", {"layers": ["merge", "summary", "contradiction"], "require": ["source_claim"]},
     ["show", "--layer", "merge", "--layer", "summary", "--layer", "contradiction", "--require", "source_claim"]),
    ("show", {"limit": 2}, ["show", "--limit", "2"]),
    ("ask", {"atom": 'edge("MAPK/ERK", _, "apoptosis")', "retract_sources": ["PMID:39973430"]},
     ["ask", 'edge("MAPK/ERK", _, "apoptosis")', "--retract-source", "PMID:39973430"]),
]


def test_every_answer_is_the_commands(graph):
    _, results = serve(graph, [(name, arguments) for name, arguments, _ in SAME_QUESTIONS])
    for (name, _, argv), result in zip(SAME_QUESTIONS, results):
        expected = cli_json(argv[0], graph, *argv[1:])
        assert _timeless(_answer(result)) == _timeless(expected), name
    dead = _answer(results[0])["dead"]
    assert dead and all(set(entry) >= {"id", "layer"} for entry in dead)  # --list's listing, not bare ids
    assert _answer(results[7])["listed"]  # the graph has contradictions to compare


def _dead(graph: Path, *argv: str) -> set[str]:
    return {entry["id"] for entry in cli_json("whatif", graph, *argv, "--list")["dead"]}


def test_search_serves_only_what_stands(graph):
    retract = ["PMID:39973430"]
    calls = [("search", {"query": "MAPK/ERK apoptosis", "limit": 100}),
             ("search", {"query": "MAPK/ERK apoptosis", "limit": 100, "retract_sources": retract}),
             ("search", {"query": "MAPK/ERK apoptosis", "limit": 100, "retract_sources": retract,
                         "policy": "deployed"}),
             ("search", {"query": "AIM2 cytosol", "retract_sources": ["PMID:40057077"], "layers": ["summary"]}),
             ("search", {"query": "MAPK/ERK", "require": ["verification"]}),
             ("search", {"query": "MAPK/ERK", "layers": ["merge"], "limit": 3})]
    _, results = serve(graph, calls)
    everything, standing, deployed, trimmed, verified, merges = (_answer(r) for r in results)
    dead = _dead(graph, "--retract-source", retract[0])
    found = [r["id"] for r in everything["results"]]
    assert dead & set(found), "the question must hit artifacts the retraction kills"
    # what stands ranks as it ranks with nothing deleted (one index, the whole graph's statistics)
    assert [r["id"] for r in standing["results"]] == [i for i in found if i not in dead]
    assert standing["left_out"] == {"dead": len(dead), "unqualified": 0}
    # deployed keeps every edge derived from the retracted claims: only the claims go
    dead_deployed = _dead(graph, "--retract-source", retract[0], "--policy", "deployed")
    assert [r["id"] for r in deployed["results"]] == [i for i in found if i not in dead_deployed]
    assert len(deployed["results"]) > len(standing["results"])
    # a summary one of whose sentences falls is served trimmed to the other
    aim2 = {r["id"]: r["text"] for r in trimmed["results"]}
    assert aim2["summary:aim2"] == "AIM2 is found in the cytosol."
    assert "summary:aim2#s1" in _dead(graph, "--retract-source", "PMID:40057077")
    # nothing in Figure 1 rests on a verification: under that requirement nothing is served
    unqualified = cli_json("whatif", graph, "--require", "verification")["require"]["unqualified"]
    assert verified["results"] == [] and verified["left_out"]["unqualified"] == len(unqualified) > 0
    assert [r["id"] for r in merges["results"]] == ["merge:mapk-erk"]


def test_search_reads_the_evidence_view_and_the_requirement(tmp_path):
    """On the ledger's evidence example (times, scopes, a retraction, an expiry, a hypothesis and
    the assay that verifies it): search leaves out what the view leaves out, and what does not
    meet the requirement, as `whatif` names them."""
    ledger = ROOT / "examples" / "ledger"
    path = tmp_path / "evidence.graph"
    status, _, err = cli("build", "--assertions", ledger / "evidence.jsonl", "--receipts",
                         ledger / "evidence-receipts.jsonl", "-o", path)
    assert status == 0, err
    query = {"query": "HIF-1α MCT4 VEGF-A glycolysis lactate export", "limit": 100}
    view = {"as_of": "2024-06-01", "scope": "team:genomics"}
    _, results = serve(path, [("search", {**query, "raw": True}), ("search", {**query, **view}),
                              ("search", {**query, "require": ["source_claim"]}),
                              ("whatif", {"require": ["source_claim"], "as_of": "2024-03-01", "list": True})])
    everything, viewed, required, whatif = (_answer(r) for r in results)
    found = [r["id"] for r in everything["results"]]
    assert len(found) == 5  # the four claims and the summary (the raw view: the retracted one too)
    dead = _dead(path, "--as-of", "2024-06-01", "--scope", "team:genomics")
    assert dead and [r["id"] for r in viewed["results"]] == [i for i in found if i not in dead]
    unqualified = {entry["id"] for entry in cli_json("whatif", path, "--require", "source_claim")["require"]
                   ["unqualified"]}
    gone_now = _dead(path)  # the current view (the default) leaves out the retracted and the expired
    assert unqualified and [r["id"] for r in required["results"]] == \
        [i for i in found if i not in unqualified and i not in gone_now]
    assert required["left_out"] == {"dead": len(gone_now), "unqualified": len(unqualified)}
    assert _timeless(whatif) == _timeless(cli_json("whatif", path, "--require", "source_claim", "--as-of", "2024-03-01",
                                                   "--list"))


def test_bad_questions_are_tool_errors_with_the_commands_code(graph):
    calls = [("why", {"artifact": "merge:mapk"}),
             ("whatif", {"retract_sources": ["PMID:39973430"], "policy": "trust-some"}),
             ("whatif", {"retract_sources": ["PMID:3997343"]}),
             ("robustness", {"artifact": "merge:mapk-erk", "distrust_kinds": ["rumour"]}),
             ("search", {"query": "MAPK", "limit": "ten"}),
             ("search", {"query": "MAPK", "limits": 3}),
             ("why", {}),
             ("add", {"assertions_file": str(FIGURE1 / "contradicting.jsonl")}),
             ("whatif", {"stale_after": "soon"}),
             ("search", {"query": "MAPK", "limit": 0}),
             ("show", {"layers": ["claims"]}),
             ("why", {"artifact": "merge:mapk-erk", "trees": True}),
             ("why", {"artifact": "merge:mapk-erk", "trees": 0})]
    _, results = serve(graph, calls)
    codes = []
    for result in results[:-1]:
        assert result.is_error
        error = result.structured_content["error"]
        assert result.content[0].text == f"{error['code']}: {error['message']}"
        codes.append(error["code"])
    assert codes == ["unknown_artifact", "unknown_policy", "unknown_deletion", "unknown_kind", "bad_argument",
                     "bad_argument", "bad_argument", "unknown_tool", "bad_duration", "bad_argument", "bad_argument",
                     "bad_argument"]
    messages = [r.structured_content["error"]["message"] for r in results[9:12]]
    assert messages == ["limit must be between 1 and 100, not 0",
                        "unknown layer 'claims'; choose one of: claim, merge, edge, summary, sentence, contradiction",
                        "trees is an integer, not True"]
    # the same code and message as the command line's error line
    for result, argv in [(results[0], ["why", graph, "merge:mapk"]),
                         (results[1], ["whatif", graph, "--retract-source", "PMID:39973430", "--policy", "trust-some"]),
                         (results[2], ["whatif", graph, "--retract-source", "PMID:3997343"]),
                         (results[8], ["whatif", graph, "--stale-after", "soon"])]:
        status, _, err = cli(*argv)
        assert status == 2 and err.strip() == result.content[0].text
    assert "did you mean merge:mapk-erk" in results[0].structured_content["error"]["message"]
    assert not results[-1].is_error  # the server answers on after errors


def test_add_is_offered_only_when_allowed_and_writes_what_the_command_writes(graph, tmp_path):
    by_mcp, by_cli = tmp_path / "mcp.graph", tmp_path / "cli.graph"
    base = tmp_path / "base.graph"
    status, _, err = cli("build", "--assertions", FIGURE1 / "assertions.jsonl", "--receipts",
                         FIGURE1 / "receipts.jsonl", "--rules", "ro", "--rules", "contradictions", "-o", base)
    assert status == 0, err
    shutil.copy(base, by_mcp)
    shutil.copy(base, by_cli)
    new = FIGURE1 / "contradicting.jsonl"
    tools, results = serve(by_mcp, [("add", {"assertions_file": str(new)}), ("contradictions", {}),
                                    ("add", {"assertions_file": str(new)})], "--allow-add")
    assert set(tools) == READING_TOOLS | {"add"}
    assert set(tools["add"].input_schema["properties"]) == {"assertions_file", "receipts_file", "full"}
    added = _answer(results[0])
    assert added == cli_json("add", by_cli, "--assertions", new)
    assert added["version"] == 2 and added["assertions"] == 2
    # the same version: the same artifacts, labels and versions' counts
    assert cli_json("show", by_mcp) == cli_json("show", by_cli)
    mine, theirs = cli_json("log", by_mcp), cli_json("log", by_cli)
    assert [(v["version"], v["action"], v["stats"]) for v in mine] == [(v["version"], v["action"], v["stats"])
                                                                       for v in theirs]
    # the server reads the version it wrote
    assert _answer(results[1]) == cli_json("contradictions", by_cli) and _answer(results[1])["contradictions"] == 5
    # adding the same assertions again is refused, at the file and line, and writes nothing
    again = results[2]
    assert again.is_error and again.structured_content["error"]["code"] == "duplicate_assertion"
    assert again.structured_content["error"]["file"] == str(new) and again.structured_content["error"]["line"] == 1
    assert len(cli_json("log", by_mcp)) == 2


def test_a_graph_that_does_not_open_is_refused_at_start(tmp_path):
    broken = tmp_path / "broken.graph"
    broken.write_text("not a graph")
    for path in (broken, tmp_path / "missing.graph"):
        done = subprocess.run([sys.executable, "-m", "polygraph_logic", "mcp", str(path)], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, env={**os.environ, **_env()}, timeout=60)
        status, _, err = cli("show", path)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == err and status == 2  # the usual error line, as any command gives it


def test_under_an_authorization_policy_add_refuses_and_require_counts_as_the_command(tmp_path):
    """`mcp --authorization POLICY`: the add tool refuses the lines `add --authorization` refuses,
    writing nothing, and a require counts what `whatif --require --authorization` counts."""
    ledger = ROOT / "examples" / "ledger"
    policy, agents = ledger / "policy.jsonl", ledger / "agents.jsonl"
    lines = agents.read_text(encoding="utf-8").splitlines()
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"  # g1 authorized, g2 not (no text read)
    good.write_text(lines[0] + "\n", encoding="utf-8")
    bad.write_text(lines[1] + "\n", encoding="utf-8")
    small, whole = tmp_path / "small.graph", tmp_path / "whole.graph"
    for inputs, path in ((good, small), (agents, whole)):
        status, _, err = cli("build", "--assertions", inputs, "-o", path)
        assert status == 0, err
    refused = cli("add", small, "--assertions", bad, "--authorization", policy)
    assert refused[0] == 2 and f"{bad}:1:1" in refused[2] and "unauthorized" in refused[2]
    _, results = serve(small, [("add", {"assertions_file": str(bad)})], "--allow-add", "--authorization", str(policy))
    error = results[0].structured_content["error"]
    assert results[0].is_error and (error["code"], error["file"], error["line"]) == ("unauthorized", str(bad), 1)
    assert len(cli_json("log", small)) == 1  # nothing written
    require = {"require": ["source_claim", "verification"]}
    _, results = serve(whole, [("whatif", require)], "--authorization", str(policy))
    expected = cli_json("whatif", whole, "--require", "source_claim,verification", "--authorization", policy)
    unguarded = cli_json("whatif", whole, "--require", "source_claim,verification")
    assert _timeless(_answer(results[0])) == _timeless(expected) != _timeless(unguarded)
