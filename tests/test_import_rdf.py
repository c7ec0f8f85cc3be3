"""Round trip: build -> export -> import gives the same graph, in every format; damaged
exports are errors, not smaller graphs."""

import json
import re
import shutil
from pathlib import Path
import sqlite3

import pytest

from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.export import export_graph
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.importers import import_rdf, read_rdf
from polygraph_logic.query.whatif import Deletion, what_if

from test_export import build_synthetic

VARIANTS = [("trig", False), ("nquads", False), ("turtle", False), ("jsonld", False),
            ("trig", True), ("nquads", True), ("turtle", True)]
SUFFIX = {"trig": ".trig", "nquads": ".nq", "turtle": ".ttl", "jsonld": ".jsonld"}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory, figure1_records_graph, shared_graph):
    """This module's copies of test_export's build_figure1 (figure1_records_graph) and build_synthetic graphs."""
    directory = tmp_path_factory.mktemp("import")
    shutil.copy(figure1_records_graph, directory / "figure1.graph")
    # cap 1: many labels are truncated, so exact flags and re-derivation are exercised
    return {"figure1": directory / "figure1.graph",
            "synthetic": shared_graph("export-synthetic-1", lambda folder: build_synthetic(folder, cap=1),
                                      directory / "synthetic-1.graph")}


def contents(path):
    """Everything a graph file holds, independently of row order where order carries no meaning."""
    with Graph(path) as graph:
        return {
            "assertions": list(graph.assertions.values()),
            "artifacts": list(graph.artifacts()),
            "polynomials": [str(graph.label(a)) for a in graph.artifacts()],
            "facts": sorted(graph.facts(), key=repr),
            "rules": graph.rules_text(),
            "meta": shared(graph.meta),
        }


def shared(meta: dict) -> dict:
    """A graph's meta as an export shares it: rule files by name, no path of the machine."""
    if "rule_files" in meta:
        meta = {**meta, "rule_files": json.dumps([Path(f).name for f in json.loads(meta["rule_files"])])}
    return meta


@pytest.mark.slow
@pytest.mark.parametrize("format, rdf12", VARIANTS)
@pytest.mark.parametrize("name", ["figure1", "synthetic"])
def test_build_export_import_gives_the_same_graph(graphs, tmp_path, name, format, rdf12):
    exported = tmp_path / f"export{SUFFIX[format]}"
    export_graph(graphs[name], exported, format, rdf12=rdf12)
    imported = tmp_path / "imported.graph"
    report = import_rdf(exported, imported)
    original, back = contents(graphs[name]), contents(imported)
    assert back == original
    assert len(report.artifacts) == len(original["artifacts"]) and report.facts_included
    if name == "synthetic":
        assert any(not a.exact for a in back["artifacts"])  # the cap truncated some labels


def test_an_imported_graph_exports_byte_for_byte_the_same(graphs, tmp_path):
    """Byte for byte but for the history digest: an imported graph's history starts at its import."""
    first = tmp_path / "first.trig"
    export_graph(graphs["synthetic"], first, "trig")
    import_rdf(first, tmp_path / "again.graph")
    second = tmp_path / "second.trig"
    export_graph(tmp_path / "again.graph", second, "trig")
    digest = re.compile(rb'pg:historyDigest "[0-9a-f]{64}"')
    assert digest.search(first.read_bytes()) and digest.search(second.read_bytes())
    assert digest.sub(b"", first.read_bytes()) == digest.sub(b"", second.read_bytes())


def test_what_if_and_exact_rederivation_agree_after_import(graphs, tmp_path):
    exported = tmp_path / "export.nq"
    export_graph(graphs["synthetic"], exported, "nquads")
    import_rdf(exported, tmp_path / "back.graph")
    settled = revived = 0
    for source in ("synthetic:doc0001", "synthetic:doc0004", "synthetic:doc0010"):
        deletion = Deletion(sources=(source,))
        outcomes = []
        for path in (graphs["synthetic"], tmp_path / "back.graph"):
            with Graph(path) as graph:
                outcome = what_if(GraphIndex(graph), deletion, "trust-all", exact=True)
                outcomes.append((outcome.dead, outcome.kept, outcome.settled, outcome.revived))
        assert outcomes[0] == outcomes[1]
        settled, revived = settled + outcomes[0][2], revived + outcomes[0][3]
    assert settled > revived > 0  # re-derivation was needed, and works from the imported facts and rules


def test_without_facts_the_report_says_what_the_graph_lacks(graphs, tmp_path):
    exported = tmp_path / "export.trig"
    export_graph(graphs["synthetic"], exported, "trig", facts=False)
    report = import_rdf(exported, tmp_path / "back.graph")
    assert not report.facts and "lacks: the program's facts" in report.summary()
    original, back = contents(graphs["synthetic"]), contents(tmp_path / "back.graph")
    # every artifact is a fact of the file; the program's other facts are what it lacks
    assert back["artifacts"] == original["artifacts"]
    assert {(f.relation, f.args) for f in back["facts"]} == {a.fact for a in back["artifacts"]}
    assert len(back["facts"]) < len(original["facts"])


def test_cli_import_rdf_requires_output_and_reports(graphs, tmp_path, capsys):
    exported = tmp_path / "export.ttl"
    assert main(["export", str(graphs["figure1"]), "-o", str(exported), "--retract-source", "PMID:40057077"]) == 0
    capsys.readouterr()
    assert main(["import", "rdf", str(exported)]) == 2
    assert "needs -o GRAPH" in capsys.readouterr().err
    assert main(["import", "rdf", str(exported), "-o", str(tmp_path / "back.graph")]) == 0
    err = capsys.readouterr().err
    assert "6 assertions, 112 artifacts" in err and "not imported: the what-if" in err
    assert contents(tmp_path / "back.graph") == contents(graphs["figure1"])


def test_format_is_sniffed_when_the_extension_says_nothing(graphs, tmp_path):
    for format in ("nquads", "trig", "jsonld"):
        exported = tmp_path / f"export-{format}.rdfdata"
        export_graph(graphs["figure1"], exported, format)
        assert len(read_rdf(exported).artifacts) == 112


def test_a_truncated_export_is_an_error(graphs, tmp_path):
    exported = tmp_path / "export.nq"
    export_graph(graphs["figure1"], exported, "nquads")
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    for keep in (len(lines) * 6 // 10, len(lines) - 40):  # cut at a line boundary: still valid N-Quads
        exported.write_text("".join(lines[:keep]), encoding="utf-8")
        with pytest.raises(PolygraphError) as error:
            read_rdf(exported)
        # the last artifact read is incomplete, or whole artifacts are missing from the count
        assert error.value.code == "bad_rdf"
        assert ("has no pg:" in error.value.message or "declares 112 artifacts but holds" in error.value.message
                or "its support sets make" in error.value.message)  # an artifact cut among its support sets


def test_a_tampered_polynomial_is_an_error(graphs, tmp_path):
    exported = tmp_path / "export.nq"
    export_graph(graphs["figure1"], exported, "nquads")
    text = exported.read_text(encoding="utf-8").replace('"a12\u00b7a13 + a20\u00b7a21"', '"a20\u00b7a21"')
    exported.write_text(text, encoding="utf-8")
    with pytest.raises(PolygraphError, match="pg:polynomial says 'a20·a21'"):
        read_rdf(exported)


def test_two_exports_in_one_file_and_non_rdf_are_errors(graphs, tmp_path, capsys):
    one, two = tmp_path / "one.nq", tmp_path / "two.nq"
    export_graph(graphs["figure1"], one, "nquads")
    export_graph(graphs["figure1"], two, "nquads", base="https://example.org/other/")
    both = tmp_path / "both.nq"
    both.write_bytes(one.read_bytes() + two.read_bytes())
    with pytest.raises(PolygraphError, match="holds 2 polygraph exports"):
        read_rdf(both)
    broken = tmp_path / "broken.trig"
    broken.write_text("<a> <b> <c .\n")
    assert main(["import", "rdf", str(broken), "-o", str(tmp_path / "x.graph")]) == 2
    assert "bad_rdf" in capsys.readouterr().err and not (tmp_path / "x.graph").exists()


def test_the_imported_file_is_a_graph_the_engine_opens(graphs, tmp_path):
    exported = tmp_path / "export.jsonld"
    export_graph(graphs["figure1"], exported, "jsonld")
    import_rdf(exported, tmp_path / "back.graph")
    with sqlite3.connect(tmp_path / "back.graph") as db:
        assert db.execute("SELECT COUNT(*) FROM mentions").fetchone() == \
               sqlite3.connect(graphs["figure1"]).execute("SELECT COUNT(*) FROM mentions").fetchone()
    with Graph(tmp_path / "back.graph") as graph:
        outcome = what_if(GraphIndex(graph), Deletion(sources=("PMID:39973430",)))
        assert "merge:mapk-erk" in outcome.kept and len(outcome.dead) == 45
