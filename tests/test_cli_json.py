"""Every command's --json: it parses, holds the documented top-level keys (cli/shapes.py,
docs/command-line.md's "JSON output"), numbers as JSON numbers and no absolute path; every
command and option has help."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from polygraph_logic.cli import build_parser, main
from polygraph_logic.cli.shapes import SHAPES, WITHOUT_JSON

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"

GPAD = "\n".join([
    "!gpa-version: 1.1",
    "\t".join(["UniProtKB", "P1", "enables", "GO:0003674", "PMID:1", "ECO:0000314", "", "", "20200101", "UniProt",
               "", ""]),
    "\t".join(["UniProtKB", "P2", "NOT|enables", "GO:0003675", "PMID:2", "ECO:0000314", "", "", "20200101",
               "UniProt", "", ""]),
    "\t".join(["UniProtKB", "P4", "enables", "GO:0000004", "PMID:4"]),  # malformed: too few columns
]) + "\n"

ONTOLOGY = """@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix obo: <http://purl.obolibrary.org/obo/> .
<http://example.org/mini.owl> a owl:Ontology .
obo:EX_0000001 a owl:ObjectProperty, owl:TransitiveProperty ; rdfs:label "part of" .
obo:EX_0000002 a owl:ObjectProperty ; rdfs:label "has part" ; owl:inverseOf obo:EX_0000001 .
obo:EX_0000003 a owl:ObjectProperty, owl:FunctionalProperty ; rdfs:label "regulates" .
"""

# one invocation per command, run in a folder holding the files the fixture writes; paths relative
CALLS = {
    "eval": ["eval", "figure1.dl"],
    "build": ["build", "--assertions", "figure1/assertions.jsonl", "--receipts", "figure1/receipts.jsonl",
              "--rules", "ro", "-o", "built.graph"],
    "info": ["info", "f1.graph"],
    "check": ["check", "f1.graph"],
    "show": ["show", "f1.graph", "--limit", "2"],
    "import": ["import", "gpad", "mini.gpad", "-o", "imported.jsonl"],
    "compile-ontology": ["compile-ontology", "mini.ttl", "-o", "mini.dl"],
    "generate": ["generate", "-o", "generated", "--documents", "10", "--assertions", "60", "--merges", "3",
                 "--summaries", "2"],
    "add": ["add", "grown.graph", "--assertions", "figure1/contradicting.jsonl"],
    "log": ["log", "f1.graph"],
    "replay": ["replay", "f1.graph", "-o", "replayed.graph"],
    "diff": ["diff", "f1.graph", "f1.graph"],
    "verify": ["verify", "f1.graph"],
    "purge": ["purge", "purged.graph", "--source", "example:paper-B"],
    "whatif": ["whatif", "f1.graph", "--retract-source", "PMID:39973430", "--retract-source", "PMID:40057077"],
    "why": ["why", "f1.graph", "merge:mapk-erk"],
    "whynot": ["whynot", "f1.graph", "summary:aim2", "--retract-source", "PMID:40057077"],
    "ask": ["ask", "f1.graph", 'edge("AIM2", p, _)', "--assertion", "a32"],
    "robustness": ["robustness", "f1.graph", "merge:mapk-erk"],
    "top-sources": ["top-sources", "f1.graph", "--limit", "3"],
    "rests-on": ["rests-on", "f1.graph", "--kind", "model_hypothesis"],
    "contradictions": ["contradictions", "f1.graph"],
    "export": ["export", "f1.graph", "-o", "f1.trig", "--retract-source", "PMID:39973430"],
    "construct": ["construct", "corpus", "--replay", "corpus/recorded/answers.jsonl", "-o", "constructed"],
    "audit": ["audit", "example.graph", "--retract-source", "example:doc-1", "--oracle",
              "replay:corpus/recorded/audit.jsonl"],
    "regenerate": ["regenerate", "f1.graph", "--retract-source", "PMID:40057077", "--dry-run"],
    "evaluate": ["evaluate", "f1.graph", "--queries", "queries.txt", "--limit", "5", "--retract-source",
                 "PMID:40057077"],
    "export-tables": ["export-tables", "f1.graph", "-o", "tables-out"],
    "import-tables": ["import-tables", "tables", "-o", "from-tables.graph"],
    "sql-whatif": ["sql-whatif", "tables", "--retract-source", "PMID:39973430"],
}
NEEDS_DUCKDB = {"export-tables", "import-tables", "sql-whatif"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A folder with the Figure 1 graph (and a copy to grow), the example corpus and its graph,
    small import inputs, a query file and, with DuckDB, a tables folder."""
    folder = tmp_path_factory.mktemp("json")
    shutil.copytree(FIGURE1, folder / "figure1")
    shutil.copytree(ROOT / "examples" / "corpus", folder / "corpus")
    shutil.copy(ROOT / "examples" / "figure1.dl", folder / "figure1.dl")
    (folder / "mini.gpad").write_text(GPAD)
    (folder / "mini.ttl").write_text(ONTOLOGY)
    (folder / "queries.txt").write_text("cytosol\nMAPK/ERK pathway\napoptosis\n")
    inputs = ["--assertions", "figure1/assertions.jsonl", "--receipts", "figure1/receipts.jsonl", "--rules", "ro"]
    here = os.getcwd()
    os.chdir(folder)  # every path relative, as a user in this folder would type them
    try:
        assert main(["build", *inputs, "-o", "f1.graph"]) == 0
        assert main(["build", *inputs, "-o", "grown.graph"]) == 0
        assert main(["build", *inputs, "-o", "purged.graph"]) == 0
        assert main(["construct", "corpus", "--replay", "corpus/recorded/answers.jsonl", "-o", "example-out"]) == 0
        assert main(["build", "--assertions", "example-out/assertions.jsonl", "--receipts",
                     "example-out/receipts.jsonl", "--rules", "ro", "-o", "example.graph"]) == 0
        if importlib.util.find_spec("duckdb"):
            assert main(["export-tables", "f1.graph", "-o", "tables"]) == 0
    finally:
        os.chdir(here)
    return folder


def _strings(value):
    """Every string value of a JSON document (object keys are not values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


@pytest.mark.parametrize("command", sorted(SHAPES))
def test_json_has_the_documented_keys_numbers_and_no_absolute_path(workspace, command, monkeypatch, capsys):
    if command in NEEDS_DUCKDB:
        pytest.importorskip("duckdb", reason="the [duckdb] extra is not installed")
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    status = main([*CALLS[command], "--json"])
    out, err = capsys.readouterr()
    assert status in ((0, 1) if command == "audit" else (0,)), err  # audit: 1 is a finding, still reported
    data = json.loads(out)
    kind, keys = SHAPES[command]
    if kind == "object":
        assert isinstance(data, dict) and set(keys) <= set(data), set(keys) - set(data)
    elif kind == "list":
        assert isinstance(data, list) and data and all(set(keys) <= set(row) for row in data)
    else:  # one key per relation, each a list of facts
        assert isinstance(data, dict) and data and all(isinstance(rows, list) for rows in data.values())
    for text in _strings(data):
        assert not NUMBER.fullmatch(text), f"a number as a string: {text!r}"
        assert not text.startswith("/") and str(workspace) not in text and "site-packages" not in text, text


def test_every_command_has_json_or_a_reason_not_to(workspace):
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) == set(SHAPES) | set(WITHOUT_JSON) and not set(SHAPES) & set(WITHOUT_JSON)
    for name, command in commands.items():
        flags = {flag for action in command._actions for flag in action.option_strings}
        assert ("--json" in flags) == (name in SHAPES), name
    assert set(CALLS) == set(SHAPES)


def test_docs_list_each_commands_json_keys():
    text = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    section = text.split("## JSON output", 1)[1].split("\n## ", 1)[0]
    listed = {}
    for line in section.splitlines():
        match = re.match(r"\| `([a-z-]+)` \| (.*) \|$", line)
        if match:
            listed[match[1]] = re.findall(r"`(\w+)`", match[2])
    for command, (kind, keys) in SHAPES.items():
        assert command in listed, command
        if kind != "relations":  # the documented keys first, in order (top-sources then names its variants)
            assert listed[command][:len(keys)] == list(keys), command


def test_info_json_holds_the_cap_as_a_number_and_rule_files_by_shipped_name(workspace, monkeypatch, capsys):
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["info", "f1.graph", "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)["meta"]
    assert meta["cap"] == 8 and meta["rule_files"] == ["ro.dl"] and meta["receipts_over_cap"] == 0


def test_info_json_cap_none_is_null_and_a_rule_file_is_named_as_given(workspace, monkeypatch, capsys):
    monkeypatch.chdir(workspace)
    Path("extra.dl").write_text('edge("x", "RO:0002211", "y").\n')
    assert main(["build", "--assertions", "figure1/assertions.jsonl", "--rules", "ro", "--rules", "extra.dl",
                 "--cap", "none", "-o", "uncapped.graph"]) == 0
    capsys.readouterr()
    assert main(["info", "uncapped.graph", "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)["meta"]
    assert meta["cap"] is None and meta["rule_files"] == ["ro.dl", "extra.dl"]


def test_every_command_and_option_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = {choice.dest: choice.help for choice in sub._choices_actions}
    missing = [name for name in sub.choices if not lines.get(name)]
    for name, command in sub.choices.items():
        if not command.description:
            missing.append(f"{name}: description")
        for action in command._actions:
            if not isinstance(action, argparse._HelpAction) and action.help in (None, "", argparse.SUPPRESS):
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
    assert "rdf" in lines["import"]


def test_limits_are_positive_and_caps_refuse_zero(workspace, monkeypatch, capsys):
    monkeypatch.chdir(workspace)
    for argv in (["show", "f1.graph", "--limit", "0"], ["top-sources", "f1.graph", "--limit", "-1"],
                 ["contradictions", "f1.graph", "--limit", "0"], ["queries", "f1.graph", "--limit", "0"],
                 ["evaluate", "f1.graph", "--queries", "queries.txt", "--limit", "0", "--retract-source", "x"],
                 ["eval", "figure1.dl", "--cap", "0"], ["build", "--assertions", "a", "--cap", "0", "-o", "x"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        assert capsys.readouterr().err.startswith("bad_argument: argument --"), argv
    for argv in (["evaluate", "f1.graph", "--queries", "queries.txt", "-k", "5"], ["queries", "f1.graph", "-n", "5"]):
        with pytest.raises(SystemExit):  # the old spellings are gone, not aliases
            main(argv)
        assert "unrecognized arguments" in capsys.readouterr().err


def test_every_deletion_command_reads_a_source_file(workspace, monkeypatch, capsys):
    """--retract-source-file F means the same in every command: F's sources, with --retract-source, one deletion."""
    monkeypatch.chdir(workspace)
    from polygraph_logic.query.whatif import Deletion
    Path("sources.txt").write_text("# retracted\nPMID:39973430\n")
    for argv in (["whatif", "f1.graph"], ["whynot", "f1.graph", "merge:mapk-erk"],
                 ["export", "f1.graph", "-o", "from-file.trig"]):
        capsys.readouterr()
        assert main([*argv, "--retract-source-file", "sources.txt", "--retract-source", "PMID:40057077",
                     "--json"]) == 0
        deletion = json.loads(capsys.readouterr().out)["deletion"]
        assert deletion == str(Deletion(sources=("PMID:40057077", "PMID:39973430")))


def test_unknown_policy_is_the_api_code(workspace, monkeypatch, capsys):
    from polygraph_logic.errors import PolygraphError
    from polygraph_logic.graph.store.graph_file import Graph
    from polygraph_logic.query.whatif import Deletion, what_if
    monkeypatch.chdir(workspace)
    with pytest.raises(PolygraphError) as raised, Graph("f1.graph") as graph:
        what_if(graph, Deletion(sources=("PMID:39973430",)), "lenient")
    for argv in (["whatif", "f1.graph", "--retract-source", "PMID:39973430", "--policy", "lenient"],
                 ["top-sources", "f1.graph", "--policy", "lenient"]):
        assert main(argv) == 2
        assert capsys.readouterr().err.startswith(f"{raised.value.code}: unknown policy 'lenient'")


def _unknown_artifact(graph):
    graph.artifact("merge:mapk")


def _unknown_source(graph):
    from polygraph_logic.query.whatif import Deletion
    Deletion(sources=("PMID:0",)).resolve(graph)


def _unknown_relation(graph):
    from polygraph_logic import evaluate, load_program
    evaluate(load_program("figure1.dl")).facts("nosuch")


@pytest.mark.parametrize("cli, repl, call", [
    (["why", "f1.graph", "merge:mapk"], "why merge:mapk", _unknown_artifact),
    (["whatif", "f1.graph", "--retract-source", "PMID:0"], "retract PMID:0", _unknown_source),
    (["eval", "figure1.dl", "--relation", "nosuch"], None, _unknown_relation),
])
def test_a_name_not_found_has_one_code_in_the_cli_the_repl_and_the_api(workspace, monkeypatch, capsys, cli, repl,
                                                                       call):
    import io

    from polygraph_logic.errors import PolygraphError
    from polygraph_logic.graph.store.graph_file import Graph
    from polygraph_logic.cli.repl import run_repl
    monkeypatch.chdir(workspace)
    with Graph("f1.graph") as graph, pytest.raises(PolygraphError) as raised:
        call(graph)
    code = raised.value.code
    assert code.startswith("unknown_")
    capsys.readouterr()
    assert main(cli) == 2
    assert capsys.readouterr().err.startswith(f"{code}: ")
    if repl:
        out = io.StringIO()
        run_repl("f1.graph", stdin=io.StringIO(repl + "\n"), stdout=out)
        assert f"{code}: " in out.getvalue()
