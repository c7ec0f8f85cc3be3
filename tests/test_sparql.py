"""The SPARQL queries of docs/rdf.md, run with rdflib and with pyoxigraph over exports of Figure 1
and of a small synthetic graph, answer what the engine answers (Graph, what_if)."""

import json
import re
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from polygraph_logic.export import export_graph
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion, what_if

from test_export import build_synthetic

ROOT = Path(__file__).resolve().parent.parent

# The queries exactly as docs/rdf.md shows them (the default graph is the union of the named graphs).
RESTS_ONLY_ON = """\
PREFIX pg: <https://w3id.org/polygraph#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dcterms: <http://purl.org/dc/terms/>
# artifacts every assertion of which comes from one source
SELECT DISTINCT ?artifact WHERE {
  ?a pg:artifactId ?artifact ;
     prov:wasDerivedFrom/prov:hadPrimarySource/dcterms:identifier "PMID:39973430" .
  FILTER NOT EXISTS {
    ?a prov:wasDerivedFrom/prov:hadPrimarySource/dcterms:identifier ?other .
    FILTER (?other != "PMID:39973430")
  }
}"""

SUPPORT_SETS = """\
PREFIX pg: <https://w3id.org/polygraph#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dcterms: <http://purl.org/dc/terms/>
# the support sets of one artifact: each a collection of its assertions
SELECT ?index ?assertion ?source WHERE {
  ?a pg:artifactId "merge:mapk-erk" ;
     pg:supportSet ?set .
  ?set pg:index ?index ;
       prov:hadMember ?member .
  ?member pg:assertionId ?assertion ;
          prov:hadPrimarySource/dcterms:identifier ?source .
}
ORDER BY ?index ?assertion"""

DIES_IF_RETRACTED = """\
PREFIX pg: <https://w3id.org/polygraph#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dcterms: <http://purl.org/dc/terms/>
# what dies if a source is retracted (trusting every label, as the trust-all policy does)
SELECT DISTINCT ?artifact WHERE {
  ?a pg:artifactId ?artifact ;
     pg:supportSet ?any .
  # dead: no support set is free of the source
  FILTER NOT EXISTS {
    ?a pg:supportSet ?set .
    FILTER NOT EXISTS { ?set prov:hadMember/prov:hadPrimarySource/dcterms:identifier "PMID:39973430" }
  }
  # except a summary while one of its sentences stands: it is trimmed, not removed
  FILTER NOT EXISTS {
    ?sentence dcterms:isPartOf ?a ;
              pg:supportSet ?kept .
    FILTER NOT EXISTS { ?kept prov:hadMember/prov:hadPrimarySource/dcterms:identifier "PMID:39973430" }
  }
}"""

INVALIDATED = """\
PREFIX pg: <https://w3id.org/polygraph#>
PREFIX prov: <http://www.w3.org/ns/prov#>
# after `polygraph export --retract-source ...`: what the deletion invalidated, under its policy
SELECT ?artifact ?policy WHERE {
  ?deletion a pg:Deletion ;
            pg:policy ?policy ;
            prov:invalidated ?a .
  ?a pg:artifactId ?artifact .
}"""

QUERIES = (RESTS_ONLY_ON, SUPPORT_SETS, DIES_IF_RETRACTED, INVALIDATED)


def with_constant(query: str, old: str, new: str) -> str:
    """Returns the query asking about ``new`` instead of the documented ``old`` (docs/rdf.md)."""
    return query.replace(json.dumps(old), json.dumps(new))


class Engines:
    """One export loaded into rdflib and into pyoxigraph, queried with the union default graph."""

    def __init__(self, path: Path):
        self.dataset = rdflib.Dataset(default_union=True)
        self.dataset.parse(str(path), format="trig")
        self.store = ox.Store()
        self.store.bulk_load(path=str(path), format=ox.RdfFormat.TRIG)

    def answers(self, query: str) -> list[tuple[str, ...]]:
        """Returns the rows of both engines, after checking that they agree."""
        by_rdflib = [tuple(str(v) for v in row) for row in self.dataset.query(query)]
        by_oxigraph = [tuple(v.value for v in row) for row in self.store.query(query, use_default_graph_as_union=True)]
        ordered = "ORDER BY" in query
        assert (by_rdflib if ordered else sorted(by_rdflib)) == (by_oxigraph if ordered else sorted(by_oxigraph))
        return by_oxigraph


@pytest.fixture(scope="module")
def exports(tmp_path_factory, figure1_records_graph, shared_graph):
    """Copies of test_export's build_figure1 (figure1_records_graph) and build_synthetic graphs, exported as TriG."""
    directory = tmp_path_factory.mktemp("sparql")
    out = {}
    shutil.copy(figure1_records_graph, directory / "figure1.graph")
    synthetic = shared_graph("export-synthetic-8", build_synthetic, directory / "synthetic-8.graph")
    for name, path in (("figure1", directory / "figure1.graph"), ("synthetic", synthetic)):
        export = directory / f"{name}.trig"
        export_graph(path, export, "trig")
        out[name] = (path, Engines(export))
    return out


@pytest.mark.parametrize("name", ["figure1", "synthetic"])
def test_artifacts_resting_only_on_a_source(exports, name):
    path, engines = exports[name]
    with Graph(path) as graph:
        artifacts = list(graph.artifacts())
        for source in sorted({a.source for a in graph.assertions.values()}):
            expected = {a.id for a in artifacts
                        if a.support and {graph.assertions[x].source for s in a.support for x in s} == {source}}
            rows = engines.answers(with_constant(RESTS_ONLY_ON, "PMID:39973430", source))
            assert {row[0] for row in rows} == expected
    if name == "figure1":  # hand-worked: a12, a13 state two claims, and through the merge ten edges
        rows = engines.answers(RESTS_ONLY_ON)
        assert len(rows) == 30 and not any("merge" in row[0] for row in rows)


@pytest.mark.parametrize("name", ["figure1", "synthetic"])
def test_support_sets_of_an_artifact(exports, name):
    path, engines = exports[name]
    if name == "figure1":
        assert engines.answers(SUPPORT_SETS) == [
            ("1", "a12", "PMID:39973430"), ("1", "a13", "PMID:39973430"),
            ("2", "a20", "example:paper-B"), ("2", "a21", "example:paper-B")]
    with Graph(path) as graph:
        chosen = [a for a in graph.artifacts() if a.layer != "edge"] + list(graph.artifacts("edge"))[::25]
        for artifact in chosen:
            rows = engines.answers(with_constant(SUPPORT_SETS, "merge:mapk-erk", artifact.id))
            expected = sorted((str(i), x, graph.assertions[x].source)
                              for i, group in enumerate(artifact.support, 1) for x in group)
            assert rows == sorted(rows, key=lambda r: (int(r[0]), r[1])) and sorted(rows) == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", ["figure1", "synthetic"])
def test_what_dies_if_a_source_is_retracted(exports, name):
    path, engines = exports[name]
    index = GraphIndex(Graph(path))
    trimmed = 0
    for source in sorted(index.sources):
        outcome = what_if(index, Deletion(sources=(source,)), "trust-all")
        rows = engines.answers(with_constant(DIES_IF_RETRACTED, "PMID:39973430", source))
        # the query trusts labels and knows no rules: a demoted claim (its triple still
        # entailed) is label-dead to it
        demoted = [entry["artifact"] for entry in outcome.demoted]
        assert sorted(row[0] for row in rows) == sorted(outcome.dead + demoted)
        trimmed += sum(s["status"] == "trimmed" for s in outcome.summaries.values())
    assert trimmed > 0  # the summary clause of the query mattered
    if name == "figure1":
        dead = {row[0] for row in engines.answers(with_constant(DIES_IF_RETRACTED, "PMID:39973430", "PMID:40057077"))}
        # the flat summary leaks through a32; the sentence-level one is trimmed to its second sentence
        assert {d for d in dead if d.startswith("summary")} == {"summary:aim2#s1"}
        assert len(dead) > 1 and "merge:mapk-erk" not in dead


@pytest.mark.parametrize("policy", ["trust-all", "deployed", "distrust:summary"])
def test_what_an_after_deletion_export_invalidated(exports, tmp_path, policy):
    path, _ = exports["synthetic"]
    deletion = Deletion(sources=("synthetic:doc0001", "synthetic:doc0010"))
    export = tmp_path / "after.trig"
    export_graph(path, export, "trig", deletion=deletion, policy=policy)
    rows = Engines(export).answers(INVALIDATED)
    outcome = what_if(GraphIndex(Graph(path)), deletion, policy)
    assert sorted(row[0] for row in rows) == sorted(outcome.dead) and {row[1] for row in rows} == {policy}


def test_docs_show_the_queries_verbatim():
    page = (ROOT / "docs" / "rdf.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sparql\n(.*?)\n```", page, re.S)
    assert blocks, "docs/rdf.md lost its SPARQL section (## SPARQL, four ```sparql blocks)"
    for query in QUERIES:
        assert query in blocks
