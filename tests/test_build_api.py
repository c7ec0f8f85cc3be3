"""The one build of the public API, ``polygraph_logic.build_graph``, and the root's names.

Every engine and output form is built from the same inputs through the one function, and
their facts (relation, arguments, support sets, exact flag) must equal the Python engine's,
read back from what each wrote; Figure 1's merge label is checked against the value the
study's Figure 1 gives it (two support sets, one per source that states the merge), not
against our own output.  Records given as dicts must build the graph their file builds.
Refusals name the option and write nothing.  The docs page's table and the root's ``__all__``
must list the same names, every one importable.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

import polygraph_logic
from polygraph_logic import Assertion, PolygraphError, Receipt, build_graph
from polygraph_logic.errors import NotFound, Position
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.resources import rule_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spark_session import spark  # noqa: E402,F401  (the session-scoped fixture; skips without pyspark)

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
INPUTS = (FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl")
MERGE = {frozenset({"a12", "a13"}), frozenset({"a20", "a21"})}  # Figure 1: the abstract's pair, paper B's pair


def stored_facts(path: Path) -> dict:
    """Every stored fact of a graph file or folder: (relation, args) -> (support sets, exact)."""
    with Graph(path) as graph:
        return {(f.relation, tuple(f.args)): (frozenset(map(frozenset, f.support)), bool(f.exact))
                for f in graph.facts()}


def model_facts(build) -> dict:
    to_json = build.model.semiring.to_json
    return {(name, tuple(args)): (frozenset(map(frozenset, to_json(label))), bool(label.exact))
            for name in build.model.relations() for args, label in build.model.facts(name).items()}


def merge_label(path: Path) -> set:
    with Graph(path) as graph:
        return set(map(frozenset, graph.label("merge:mapk-erk").support_sets()))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The Python engine's graph file of Figure 1 with the RO rules, through the one function."""
    path = tmp_path_factory.mktemp("reference") / "python.graph"
    build = build_graph(*INPUTS, ["ro"], output=path)
    return path, stored_facts(path), build


def test_the_python_build_in_memory_and_written_hold_the_same_labels(reference):
    path, facts, build = reference
    assert len(facts) > 100 and model_facts(build) == facts
    assert merge_label(path) == MERGE
    in_memory = build_graph(*INPUTS, ["ro"])
    assert in_memory.model is not None and model_facts(in_memory) == facts


@pytest.mark.parametrize("tables", [False, True], ids=["file", "folder"])
def test_duckdb_through_the_one_function_equals_the_python_engine(reference, tmp_path, tables):
    pytest.importorskip("duckdb")
    _, facts, build = reference
    output = tmp_path / ("duck.tables" if tables else "duck.graph")
    built = build_graph(*INPUTS, ["ro"], engine="duckdb", memory_limit="500MB", output=output, tables=tables)
    assert stored_facts(output) == facts
    assert merge_label(output) == MERGE
    counts = built.layers if tables else built.counts()
    assert {k: v for k, v in counts.items() if v} == {k: v for k, v in build.counts().items() if v}


@pytest.mark.slow
@pytest.mark.parametrize("tables", [False, True], ids=["file", "folder"])
def test_spark_through_the_one_function_equals_the_python_engine(reference, tmp_path, spark, tables):
    _, facts, _ = reference
    output = tmp_path / ("spark.tables" if tables else "spark.graph")
    build_graph(*INPUTS, ["ro"], engine="spark", master="local[2]", output=output, tables=tables)
    assert stored_facts(output) == facts
    assert merge_label(output) == MERGE


def test_records_as_dicts_build_the_graph_of_their_files(reference, tmp_path):
    _, facts, _ = reference
    assertions = [json.loads(line) for line in INPUTS[0].read_text("utf-8").splitlines() if line.strip()]
    receipts = [json.loads(line) for line in INPUTS[1].read_text("utf-8").splitlines() if line.strip()]
    build = build_graph(assertions, receipts, ["ro"], output=tmp_path / "dicts.graph")
    assert stored_facts(tmp_path / "dicts.graph") == facts
    assert all(isinstance(a, Assertion) for a in build.assertions)
    assert all(isinstance(r, Receipt) for r in build.receipts)
    # objects and dicts mixed, in a tuple: the same
    mixed = (Assertion(**{k: v for k, v in assertions[0].items()}), *assertions[1:])
    assert model_facts(build_graph(mixed, receipts, ["ro"])) == facts


def test_bad_records_are_reported_as_a_files_lines_are():
    with pytest.raises(PolygraphError) as error:
        build_graph([{"id": "a1", "source": "S", "subject": "x", "predicate": "not a curie", "object": "y"},
                     "a2", {"id": "a3"}])
    problems = [(p.code, p.position) for p in error.value.problems]
    assert problems == [("bad_predicate", Position("<assertions>", 1, 1)),
                        ("invalid_record", Position("<assertions>", 2, 1)),
                        *[("missing_field", Position("<assertions>", 3, 1))] * 4]
    good = [{"id": "a1", "source": "S", "subject": "x", "predicate": "RO:0002211", "object": "y"}]
    with pytest.raises(PolygraphError) as error:
        build_graph(good, [{"artifact": "merge:m", "layer": "merge", "content": {"canonical": "x", "members": ["x"]},
                            "support": [["a9"]]}])
    assert error.value.code == "unknown_assertion" and error.value.position == Position("<receipts>", 1, 1)
    for bad in (42, {"id": "a1"}):
        with pytest.raises(PolygraphError) as error:
            build_graph(bad)
        assert error.value.code == "bad_argument" and "assertions must be" in error.value.message


def test_shipped_rule_names_are_accepted_and_unknown_ones_named(reference):
    _, facts, _ = reference
    assert model_facts(build_graph(*INPUTS, [rule_file("ro")])) == facts  # the path: the same labels
    with pytest.raises(PolygraphError) as error:
        build_graph(*INPUTS, ["no-such-rules"])
    assert error.value.code == "file_error" and "shipped rule files:" in error.value.message
    assert " ro," in error.value.message
    with pytest.raises(PolygraphError) as error:
        build_graph(*INPUTS, "ro")  # a string is not a list of files (it would read 'r', 'o')
    assert error.value.code == "bad_argument" and "rules=['ro']" in error.value.message


@pytest.mark.parametrize("options, named", [
    ({"engine": "souffle"}, "engine"),
    ({"memory_limit": "1GB"}, "memory_limit"),
    ({"engine": "spark", "memory_limit": "1GB"}, "memory_limit"),
    ({"engine": "duckdb", "master": "local[2]"}, "master"),
    ({"engine": "duckdb", "tables": True}, "tables"),
    ({"tables": True, "output": "x.tables"}, "tables"),
    ({"cap": 0}, "cap"),
    ({"cap": "8"}, "cap"),
    ({"output": ""}, "output"),
    ({"output": 3}, "output"),
])
def test_combinations_that_do_not_apply_are_refused_naming_the_option(tmp_path, monkeypatch, options, named):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PolygraphError) as error:
        build_graph(*INPUTS, ["ro"], **options)
    assert error.value.code == "bad_argument"
    assert re.match(rf"(unknown engine .* \()?{named}\b", error.value.message), error.value.message
    assert list(tmp_path.iterdir()) == []  # refused before anything was read or written


def test_the_cli_build_calls_the_one_function(tmp_path, monkeypatch):
    from polygraph_logic.cli import main
    from polygraph_logic.graph import engine_build  # the CLI imports it when build runs
    calls = []

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return build_graph(*args, **kwargs)

    monkeypatch.setattr(engine_build, "build_graph", recording)
    assert main(["build", "--assertions", str(INPUTS[0]), "--rules", "ro", "--cap", "3",
                 "-o", str(tmp_path / "g.graph")]) == 0
    (args, kwargs), = calls
    assert args == (str(INPUTS[0]), None, ["ro"]) and kwargs["cap"] == 3 and kwargs["engine"] == "python"
    assert kwargs["output"] == str(tmp_path / "g.graph") and kwargs["tables"] is False
    assert (tmp_path / "g.graph").is_file()
    # and nothing else builds: the CLI names no other build helper
    source = (ROOT / "polygraph_logic" / "cli" / "graph.py").read_text()
    imported = {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert imported.isdisjoint({"build_python", "build_tables", "build_spark_tables", "prepare_build"})


def test_errors_read_as_the_command_line_prints_them():
    error = PolygraphError("file_error", "cannot read ro")
    assert str(error) == "file_error: cannot read ro"
    assert repr(error) == "PolygraphError('file_error: cannot read ro')"
    placed = PolygraphError("syntax_error", "unexpected end\nof input", Position("p.dl", 2, 5))
    assert str(placed) == "p.dl:2:5: syntax_error: unexpected end\\x0aof input"
    assert repr(placed) == f"PolygraphError({str(placed)!r})"
    missing = NotFound("unknown_artifact", "no artifact 'x'")
    assert str(missing) == "unknown_artifact: no artifact 'x'" and repr(missing) == f"NotFound({str(missing)!r})"


def _page_names() -> set[str]:
    """The names of docs/python-api.md's table (the rows between its header and the first blank line)."""
    text = (ROOT / "docs" / "python-api.md").read_text("utf-8")
    table = text[text.index("| area | names |"):].split("\n\n", 1)[0]
    rows = table.splitlines()[2:]
    assert rows, "the table has no rows"
    return {name for row in rows for name in re.findall(r"`([A-Za-z_]+)`", row.split("|")[2])}


def test_the_pages_table_lists_every_root_name_and_each_imports():
    names = _page_names()
    assert {"ask", "Assertion", "Receipt", "EvidenceView", "Requirement", "build_graph"} <= names
    assert names == set(polygraph_logic.__all__) - {"__version__"}
    for name in sorted(names):
        value = getattr(polygraph_logic, name)
        assert value.__name__ == name, name
    code = (ROOT / "docs" / "python-api.md").read_text("utf-8")
    imported = {n.strip() for group in re.findall(r"from polygraph_logic import ([^\n]+)", code)
                for n in group.split(",")}
    assert imported <= names  # every example imports from the root only what the table lists
