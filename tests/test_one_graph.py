"""One graph at every scale: a graph folder written by DuckDB answers every reading command as the
graph file written by the Python engine does.

The same inputs are built twice, independently: by the Python engine into a graph file, by
DuckDB into a folder of Parquet files (``build --engine duckdb --tables``).  Then each reading
command runs on both, and its output must be the same but for what names the graph itself
(its path, its bytes on disk, the build's time, elapsed milliseconds).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _build(tmp: Path, name: str, engine: str) -> Path:
    inputs = EXAMPLES / name
    out = tmp / (f"{name}.graph" if engine == "python" else f"{name}.tables")
    target = ["-o", str(out)] if engine == "python" else ["--tables", str(out)]
    args = ["build", "--assertions", str(inputs / "assertions.jsonl"), "--receipts", str(inputs / "receipts.jsonl"),
            "--rules", "ro", "--engine", engine, *target]
    assert main(args) == 0
    return out


# the synthetic graph's variants run with the slow tests (.ci/run): figure1's cover the same paths
@pytest.fixture(scope="module", params=["figure1", pytest.param("synthetic", marks=pytest.mark.slow)])
def pair(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param)
    return request.param, _build(tmp, request.param, "python"), _build(tmp, request.param, "duckdb")


_VOLATILE = re.compile(r'"(elapsed_ms|seconds|file|file_bytes|built|graph|time)": ("[^"]*"|[0-9.e+-]+)')


def _run(capsys, args: list[str], graph: Path) -> str:
    capsys.readouterr()
    code = main([*args[:1], str(graph), *args[1:]])
    out, err = capsys.readouterr()
    text = (out + err).replace(str(graph), "GRAPH")
    text = re.sub(r"\b[0-9]+(\.[0-9]+)? (ms|s)\b", "N ms", text)
    return f"exit {code}\n" + _VOLATILE.sub(r'"\1": "-"', text)


def _sources(graph: Path) -> list[str]:
    with Graph(graph) as opened:
        return opened.distinct("source")


def _some(graph: Path, layer: str, n: int) -> list[str]:
    with Graph(graph) as opened:
        ids = opened.layer_ids(layer)
    return ids[:: max(1, len(ids) // n)][:n]


POLICIES = ["trust-all", "deployed", "flat", "distrust:merge", "distrust:summary"]


def test_whatif_every_policy_and_exact(pair, capsys):
    name, file, folder = pair
    for source in _sources(file)[:6]:
        for policy in POLICIES:
            for extra in ([], ["--exact"]):
                args = ["whatif", "--retract-source", source, "--policy", policy, "--json", "--list", *extra]
                assert _run(capsys, args, folder) == _run(capsys, args, file), (source, policy, extra)


def test_whatif_kinds_relations_assertions_and_unknown_names(pair, capsys):
    name, file, folder = pair
    with Graph(file) as opened:
        assertion = next(iter(opened.assertions))
        relation = opened.distinct("predicate")[0]
    for args in (["whatif", "--revoke-relation", relation, "--json"],
                 ["whatif", "--assertion", assertion, "--list"],
                 ["whatif", "--distrust-kind", "model_hypothesis", "--json"],
                 ["whatif", "--retract-source", "no-such-source"],
                 ["whatif", "--retract-source-file", str(EXAMPLES / "synthetic" / "retracted.txt"), "--json"]):
        assert _run(capsys, args, folder) == _run(capsys, args, file), args


def test_why_whynot_robustness(pair, capsys):
    name, file, folder = pair
    source = _sources(file)[0]
    for layer in ("claim", "merge", "edge", "summary", "sentence"):
        for artifact in _some(file, layer, 3):
            for args in (["why", artifact, "--json"], ["why", artifact],
                         ["whynot", artifact, "--retract-source", source, "--json"],
                         ["robustness", artifact, "--json"]):
                assert _run(capsys, args, folder) == _run(capsys, args, file), args


def test_listing_and_summary_commands(pair, capsys):
    name, file, folder = pair
    for args in (["info", "--json"], ["show", "--limit", "25"], ["show", "--layer", "edge", "--limit", "10"],
                 ["top-sources", "--limit", "5", "--json"], ["contradictions", "--json"],
                 ["rests-on", "--kind", "source_claim", "--json"], ["log", "--json"]):
        assert _run(capsys, args, folder) == _run(capsys, args, file), args


def test_export_is_the_same_rdf(pair, tmp_path):
    """The N-Quads of both, line for line, but for the build's time (and the meta's build record, and
    the history digest: of each form's own stored content, graph/store/chain.py)."""
    name, file, folder = pair
    source = _sources(file)[0]
    lines = []
    for graph in (file, folder):
        out = tmp_path / f"{graph.name}.nq"
        assert main(["export", str(graph), "--retract-source", source, "-o", str(out)]) == 0
        text = re.sub(r'"[0-9T:-]+Z"', '"TIME"', out.read_text(encoding="utf-8"))
        lines.append(sorted(line for line in text.splitlines()
                            if "#graphMeta>" not in line and "#historyDigest>" not in line))
    assert len(lines[0]) > 100
    assert lines[0] == lines[1]


def test_a_folder_is_read_only_and_has_one_version(pair, capsys):
    name, file, folder = pair
    text = _run(capsys, ["whatif", "--at", "2", "--retract-source", _sources(file)[0]], folder)
    assert "no_version" in text and "exit 2" in text
    with Graph(folder, at=1) as opened:
        assert [v["version"] for v in opened.version_rows()] == [1]
    assert json.loads(_run(capsys, ["info", "--json"], folder).split("\n", 1)[1])["artifacts"] > 0


def _rows(graph: Graph) -> dict[str, list]:
    """Every stored row of a graph, through the one reader: labels decoded, rules unpickled."""
    def read(sql: str) -> list:
        return [tuple(row) for row in graph.query(sql)]
    columns = ", ".join(c for c in ("num", "id", "source", "subject", "predicate", "object", "text", "kind", "negated")
                        if c in graph.assertion_columns)
    return {
        "assertions": read(f"SELECT {columns} FROM assertions ORDER BY num"),
        "facts": [(num, relation, args, graph.decode(label), bool(exact)) for num, relation, args, label, exact
                  in read("SELECT num, relation, args, label, exact FROM facts ORDER BY num")],
        "mentions": read("SELECT DISTINCT assertion, fact FROM mentions ORDER BY assertion, fact"),
        "artifacts": read("SELECT num, id, layer, content, fact, summary FROM artifacts ORDER BY num"),
        "rules": graph.rules(),
        "rule_heads": sorted((num, heads) for relation in {r.head.relation for r in graph.rules()}
                             for num, heads in graph.rule_heads(relation)),
    }


def test_the_engines_write_the_same_rows(pair):
    """Row for row: the Python engine's graph file and DuckDB's folder, every table."""
    name, file, folder = pair
    with Graph(file) as a, Graph(folder) as b:
        left, right = _rows(a), _rows(b)
    for table in left:
        assert len(left[table]) == len(right[table]) > 0, table
        assert left[table] == right[table], table


def test_top_sources_by_bounds_equals_a_what_if_per_source(pair):
    """top-sources under trust-all evaluates only the sources whose label bound can reach the
    ranking; the rows must be those of a what-if for every source (ties by name), file and folder."""
    from polygraph_logic.query.explain import top_sources
    from polygraph_logic.query.whatif import Deletion, what_if
    name, file, folder = pair
    for path in (file, folder):
        with Graph(path) as graph:
            everything = []
            for source in graph.distinct("source"):
                outcome = what_if(graph, Deletion(sources=(source,)), "trust-all")
                layers = {}
                for n in outcome.dead_ranks:
                    layers[outcome.layer(n)] = layers.get(outcome.layer(n), 0) + 1
                everything.append({"source": source, "dead": len(outcome.dead_ranks), "by_layer": layers})
                bound = graph.label_kills().get(source, 0) if len(everything) < 4 else None
                assert bound is None or bound >= everything[-1]["dead"]
            everything.sort(key=lambda r: (-r["dead"], r["source"]))
            for limit in (1, 3, 10, len(everything) + 5):
                assert top_sources(graph, limit) == everything[:limit], (path.name, limit)


def test_a_folder_is_checked_and_left_as_it_was(pair, capsys):
    """check reads every row of a folder and writes nothing (versions: test_folder_versions.py)."""
    name, file, folder = pair
    before = sorted((p.name, p.stat().st_size) for p in folder.iterdir())
    assert "ok (" in _run(capsys, ["check"], folder)
    assert sorted((p.name, p.stat().st_size) for p in folder.iterdir()) == before


def _why_everywhere(folder: Path, copy: Path, ids: list[str], trees: int = 3) -> int:
    """Explains each artifact on ``folder`` (from a scope) and on ``copy`` (without the look-up
    file that makes scopes: every look-up asks the whole graph); returns how many had trees."""
    from polygraph_logic.query.explain import Explainer, why
    shutil.copytree(folder, copy)
    (copy / "background_facts.parquet").unlink()
    with Graph(folder) as scoped, Graph(copy) as whole:
        by_scope, by_graph = Explainer(scoped), Explainer(whole)
        trees_seen = 0
        for artifact_id in ids:
            answer = why(scoped, artifact_id, by_scope, trees=trees)
            assert answer == why(whole, artifact_id, by_graph, trees=trees), artifact_id
            trees_seen += any(answer["derivations"])
        assert by_scope._scoped is not None and by_graph._scoped is None
    return trees_seen


def test_explanations_from_a_scope_are_those_of_the_whole_graph(pair, tmp_path):
    """On a folder, ``why`` reads at once the facts a derivation from one support set may use (the
    facts it supports, and background facts) instead of one look-up per proof step: the
    derivation trees are the same as when every look-up asks the whole graph."""
    name, file, folder = pair
    ids = [a for layer in ("claim", "merge", "edge", "summary", "sentence", "contradiction")
           for a in _some(file, layer, 12)]
    assert _why_everywhere(folder, tmp_path / "whole", ids) > 10


RULES_WITH_BACKGROUND = """
known("C", "D").
known("E", "F").
blocked("X").
edge(x, "RO:0000001", y) :- claim(x, "RO:0002211", y), !blocked(x).
edge(x, "RO:0000002", z) :- edge(x, "RO:0000001", y), known(y, z).
edge(x, "RO:0000003", z) :- edge(x, "RO:0000002", z), n = count : { known(_, _) }, n > 1.
"""


def test_explanations_use_background_facts_negation_and_aggregates(tmp_path, capsys):
    """Background facts (label one) are in every scope; a rule with a negation or an aggregate sees
    the whole graph (the folder: the graph file's tables, export-tables) (its premises are not all in a support set's scope); the trees agree with the
    graph file's and with an unscoped reading."""
    assertions = tmp_path / "assertions.jsonl"
    rows = [("a1", "s1", "A", "C"), ("a2", "s2", "A", "C"), ("a3", "s1", "X", "C"), ("a4", "s3", "B", "E"),
            ("a5", "s3", "B", "G")]
    assertions.write_text("".join(json.dumps({"id": i, "source": s, "subject": x, "predicate": "RO:0002211",
                                              "object": y}) + "\n" for i, s, x, y in rows))
    rules = tmp_path / "rules.dl"
    rules.write_text(RULES_WITH_BACKGROUND)
    # the SQL engines plan positive rules only: the folder is the graph file's tables
    built = {"python": tmp_path / "g.graph", "duckdb": tmp_path / "g"}
    assert main(["build", "--assertions", str(assertions), "--rules", str(rules), "-o", str(built["python"])]) == 0
    assert main(["export-tables", str(built["python"]), "-o", str(built["duckdb"])]) == 0
    with Graph(built["python"]) as file:
        ids = [a.id for a in file.artifacts()]
    with Graph(built["duckdb"]) as folder:
        background = {row[0] for row in folder.query("SELECT relation FROM background_facts")}
    assert len(ids) >= 8 and background == {"known", "blocked"}
    assert _why_everywhere(built["duckdb"], tmp_path / "whole", ids) >= 4
    for artifact_id in ids:
        args = ["why", artifact_id, "--trees", "2", "--json"]
        assert _run(capsys, args, built["duckdb"]) == _run(capsys, args, built["python"]), artifact_id


def test_whatif_engine_names_who_reads_the_folder(pair, capsys):
    """``--engine duckdb`` is a folder's default reader; a graph file is SQLite's, and asking
    another engine to read it is a clear error."""
    name, file, folder = pair
    args = ["whatif", "--retract-source", _sources(file)[0], "--json"]
    assert _run(capsys, [*args, "--engine", "duckdb"], folder) == _run(capsys, args, folder)
    text = _run(capsys, [*args, "--engine", "duckdb"], file)
    assert "exit 2" in text and "bad_argument" in text and "reads graph folders" in text


def test_a_folder_written_before_the_newer_look_up_files_answers_the_same(pair, capsys, tmp_path):
    """Look-up files added since (assertions by id and by source, rules by head, background facts)
    are used when present; a folder without them is read by scans, with the same answers."""
    name, file, folder = pair
    older = tmp_path / "older"
    shutil.copytree(folder, older)
    for look_up in ("assertions_by_id", "assertions_by_source", "rules_by_head", "background_facts"):
        (older / f"{look_up}.parquet").unlink()
    source = _sources(file)[0]
    for artifact in _some(file, "edge", 3) + _some(file, "merge", 2):
        for args in (["why", artifact, "--trees", "2", "--json"], ["robustness", artifact, "--json"],
                     ["whynot", artifact, "--retract-source", source, "--json"]):
            assert _run(capsys, args, older) == _run(capsys, args, folder), args
    for args in (["whatif", "--retract-source", source, "--exact", "--json", "--list"], ["contradictions", "--json"],
                 ["top-sources", "--limit", "5", "--json"], ["show", "--limit", "20"]):
        assert _run(capsys, args, older) == _run(capsys, args, folder), args
