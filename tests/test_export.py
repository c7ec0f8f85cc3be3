"""RDF export: every format re-parsed by rdflib and pyoxigraph, the PROV-O and nanopublication
structure checked against the graph's labels, statuses after a what-if against what_if."""

import io
import json
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.export import ExportModel, Literal, Minter, TripleTerm, export_graph, vocabulary_path
from polygraph_logic.export.namespaces import PG, PROV
from polygraph_logic import build_graph
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"
RDFLIB_FORMATS = {"trig": "trig", "nquads": "nquads", "turtle": "turtle", "jsonld": "json-ld"}
OX_FORMATS = {"trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS, "turtle": ox.RdfFormat.TURTLE,
              "jsonld": ox.RdfFormat.JSON_LD}
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
DCTERMS_ID = rdflib.URIRef("http://purl.org/dc/terms/identifier")


def build_figure1(directory: Path) -> Path:
    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    path = directory / "figure1.graph"
    build_graph(assertions, receipts, [RO]).write(path)
    return path


def build_synthetic(directory: Path, cap=8) -> Path:
    """A small graph shaped like the paper's: merges (some over the cap), sentence-level summaries."""
    inputs = generate(seed=1, documents=12, assertions=70, merges=5, summaries=3)
    path = directory / f"synthetic-{cap}.graph"
    build_graph(inputs.assertions, inputs.receipts, [RO], cap=cap).write(path)
    return path


@pytest.fixture(scope="module")
def graphs(tmp_path_factory, figure1_records_graph, shared_graph):
    """This module's copies of build_figure1's (conftest.py's figure1_records_graph) and build_synthetic's graphs."""
    directory = tmp_path_factory.mktemp("export")
    shutil.copy(figure1_records_graph, directory / "figure1.graph")
    return {"figure1": directory / "figure1.graph",
            "synthetic": shared_graph("export-synthetic-8", build_synthetic, directory / "synthetic-8.graph")}


def to_rdflib(term):
    if type(term) is str:
        return rdflib.URIRef(term)
    if isinstance(term, Literal):
        return rdflib.Literal(term.value, datatype=None if term.datatype == XSD_STRING else term.datatype)
    raise TypeError(term)


def to_oxigraph(term):
    if type(term) is str:
        return ox.NamedNode(term)
    if isinstance(term, Literal):
        return ox.Literal(term.value, datatype=ox.NamedNode(term.datatype))
    if isinstance(term, TripleTerm):
        return ox.Triple(*map(to_oxigraph, term))
    raise TypeError(term)


def expected_quads(graph_path, named=True, **options):
    with Graph(graph_path) as graph:
        quads = list(ExportModel(graph, **options).quads())
    rdflib_side = None if options.get("rdf12") else {  # rdflib has no triple terms
        (to_rdflib(s), to_rdflib(p), to_rdflib(o), rdflib.URIRef(g) if named else None) for s, p, o, g in quads}
    ox_side = {ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o),
                       ox.NamedNode(g) if named else ox.DefaultGraph()) for s, p, o, g in quads}
    return len(quads), rdflib_side, ox_side


def parsed_by_rdflib(path, format):
    dataset = rdflib.Dataset()
    dataset.parse(str(path), format=RDFLIB_FORMATS[format])
    named = format != "turtle"
    return {(s, p, o, g if named else None) for s, p, o, g in dataset.quads((None, None, None, None))}


@pytest.mark.parametrize("format", list(RDFLIB_FORMATS))
@pytest.mark.parametrize("name", ["figure1", "synthetic"])
def test_every_format_reparses_with_rdflib_and_pyoxigraph_to_the_model(graphs, tmp_path, name, format):
    path = tmp_path / f"export.{format}"
    report = export_graph(graphs[name], path, format)
    # N-Quads declare no prefix: each graph types the entities its PROV relations name (model.py)
    count, by_rdflib, by_oxigraph = expected_quads(graphs[name], named=format != "turtle",
                                                   declare=format == "nquads")
    assert report.quads == count
    assert len(by_rdflib) == count  # no quad written twice, nor a triple in Turtle, which merges the graphs
    assert report.bytes == path.stat().st_size
    assert parsed_by_rdflib(path, format) == by_rdflib
    assert set(ox.parse(path=str(path), format=OX_FORMATS[format])) == by_oxigraph


def test_curies_expand_with_obo_prefixes_and_pmids_resolve():
    minter = Minter()
    assert minter.term("RO:0002211", "relation") == "http://purl.obolibrary.org/obo/RO_0002211"
    assert minter.term("BFO:0000050", "relation") == "http://purl.obolibrary.org/obo/BFO_0000050"
    assert minter.term("GO:0005634") == "http://purl.obolibrary.org/obo/GO_0005634"
    assert minter.term("PMID:39973430", "source") == "https://pubmed.ncbi.nlm.nih.gov/39973430/"
    # look like CURIEs, but neither has an OBO PURL: minted, and still reversible
    assert minter.term("PomBase:SPAC1002.01") == "https://w3id.org/polygraph/id/entity/PomBase:SPAC1002.01"
    assert minter.term("example:paper-B", "source") == "https://w3id.org/polygraph/id/source/example:paper-B"
    for value in ("RO:0002211", "PMID:39973430", "PomBase:SPAC1002.01", "MAPK/ERK pathway"):
        assert minter.value(minter.term(value)) == value


def test_nanopublication_and_prov_structure_matches_every_label(graphs):
    """Each artifact: a nanopublication whose provenance graph derives it from exactly the
    assertions of its label, one support set (a prov:Collection of its assertions) per monomial."""
    model_path = graphs["figure1"]
    dataset = rdflib.Dataset()
    buffer = io.BytesIO()
    export_graph(model_path, buffer, "nquads")
    dataset.parse(data=buffer.getvalue().decode(), format="nquads")
    minter = Minter()
    U = rdflib.URIRef
    with Graph(model_path) as graph:
        for artifact in graph.artifacts():
            a = U(minter.artifact(artifact.id))
            nanopub = minter.nanopub(artifact.id)
            provenance = dataset.graph(U(nanopub + "#provenance"))
            head = dataset.graph(U(nanopub + "#head"))
            assert set(head.objects(U(nanopub), U("http://www.nanopub.org/nschema#hasAssertion"))) == {a}
            derived = {str(x) for x in provenance.objects(a, U(PROV + "wasDerivedFrom"))}
            assert derived == {minter.assertion(x) for group in artifact.support for x in group}
            sets = list(provenance.objects(a, U(PG + "supportSet")))
            assert all((s, rdflib.RDF.type, U(PROV + "Collection")) in provenance for s in sets)
            members = {int(provenance.value(s, U(PG + "index"))):
                       frozenset(str(m) for m in provenance.objects(s, U(PROV + "hadMember"))) for s in sets}
            assert members == {i: frozenset(map(minter.assertion, group))
                               for i, group in enumerate(artifact.support, 1)}
            assert str(provenance.value(a, U(PG + "polynomial"))) == str(graph.label(artifact))
            assert provenance.value(a, U(PG + "exact")).toPython() is artifact.exact
            assert json.loads(str(provenance.value(a, U(PG + "content")))) == artifact.content
            if artifact.layer in ("claim", "edge"):
                statement = set(dataset.graph(a).triples((None, None, None)))
                content = artifact.content
                assert statement == {(U(minter.term(content["subject"])),
                                      U(minter.term(content["predicate"], "relation")),
                                      U(minter.term(content["object"])))}
        assertions, terms = dataset.graph(U(minter.graph("assertions"))), dataset.graph(U(minter.graph("terms")))
        for assertion in graph.assertions.values():
            node = U(minter.assertion(assertion.id))
            source = assertions.value(node, U(PROV + "hadPrimarySource"))
            assert str(terms.value(source, DCTERMS_ID)) == assertion.source
            if assertion.source.startswith("PMID:"):
                assert str(source) == f"https://pubmed.ncbi.nlm.nih.gov/{assertion.source[5:]}/"


def test_vocabulary_defines_every_term_an_export_uses(graphs, tmp_path):
    vocabulary = rdflib.Graph().parse(vocabulary_path(), format="turtle")
    assert len(list(ox.parse(path=str(vocabulary_path()), format=ox.RdfFormat.TURTLE))) == len(vocabulary)
    label, comment = rdflib.RDFS.label, rdflib.RDFS.comment
    defined = {s for s in vocabulary.subjects() if str(s).startswith(PG)}
    for term in defined:
        assert vocabulary.value(term, label) and vocabulary.value(term, comment), term
    path = tmp_path / "after.nq"
    export_graph(graphs["synthetic"], path, "nquads", deletion=Deletion(sources=("synthetic:doc0001",)))
    used = {t for quad in ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS)
            for t in (quad.subject, quad.predicate, quad.object)
            if isinstance(t, ox.NamedNode) and t.value.startswith(PG)}
    assert used and {rdflib.URIRef(t.value) for t in used} <= defined


@pytest.mark.parametrize("policy", ["trust-all", "deployed", "flat", "distrust:merge"])
def test_after_deletion_statuses_and_invalidations_match_what_if(graphs, tmp_path, policy):
    path = tmp_path / "after.trig"
    deletion = Deletion(sources=("synthetic:doc0004",), relations=("RO:0002436",))
    export_graph(graphs["synthetic"], path, "trig", deletion=deletion, policy=policy)
    with Graph(graphs["synthetic"]) as graph:
        outcome = what_if(GraphIndex(graph), deletion, policy)
        every = {a.id for a in graph.artifacts()}
    store = ox.Store()
    store.bulk_load(path=str(path), format=ox.RdfFormat.TRIG)
    status = {row["id"].value: row["status"].value for row in store.query(
        f"SELECT ?id ?status WHERE {{ ?a <{PG}artifactId> ?id ; <{PG}status> ?status }}",
        use_default_graph_as_union=True)}
    invalidated = {row["id"].value for row in store.query(
        f"SELECT ?id WHERE {{ ?d a <{PG}Deletion> ; <{PROV}invalidated> ?a . ?a <{PG}artifactId> ?id }}",
        use_default_graph_as_union=True)}
    deleted = {row["id"].value for row in store.query(
        f"SELECT ?id WHERE {{ ?d <{PG}deletedAssertion> ?x . ?x <{PG}assertionId> ?id }}",
        use_default_graph_as_union=True)}
    assert set(status) == every
    assert {a for a, s in status.items() if s == "dead"} == invalidated == set(outcome.dead)
    assert outcome.dead and deleted == set(outcome.deleted)


def test_rdf12_writes_each_assertion_as_a_triple_term(graphs, tmp_path):
    path = tmp_path / "rdf12.nq"
    export_graph(graphs["figure1"], path, "nquads", rdf12=True)
    count, _, expected = expected_quads(graphs["figure1"], rdf12=True, declare=True)
    assert set(ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS)) == expected
    store = ox.Store()
    store.bulk_load(path=str(path), format=ox.RdfFormat.N_QUADS)
    query = (f"PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> SELECT ?id WHERE {{ "
             f"?a <{PG}assertionId> ?id ; rdf:reifies <<( ?s <http://purl.obolibrary.org/obo/RO_0002211> ?o )>> }}")
    found = {row["id"].value for row in store.query(query, use_default_graph_as_union=True)}
    with Graph(graphs["figure1"]) as graph:
        assert found == {a.id for a in graph.assertions.values() if a.predicate == "RO:0002211"} == {"a12", "a13"}
    with pytest.raises(PolygraphError, match="cannot carry"):
        export_graph(graphs["figure1"], tmp_path / "x.jsonld", "jsonld", rdf12=True)


def test_quads_stream_one_artifact_at_a_time(graphs):
    """The model reads the graph's artifacts lazily: quads flow before the last artifact is read."""
    with Graph(graphs["synthetic"]) as graph:
        read = []
        artifacts = graph.artifacts

        def counting(layer=None):
            for artifact in artifacts(layer):
                read.append(artifact.id)
                yield artifact

        graph.artifacts = counting
        nanopubs = Minter().nanopub("")
        for _, _, _, g in ExportModel(graph).quads():
            if g.startswith(nanopubs):  # the first artifact's first quad
                break
        assert read == [next(artifacts()).id] and sum(graph.counts().values()) > 500


def test_cli_export_infers_the_format_and_reports(graphs, tmp_path, capsys):
    path = tmp_path / "out.jsonld"
    assert main(["export", str(graphs["figure1"]), "-o", str(path), "--retract-source", "PMID:39973430"]) == 0
    err = capsys.readouterr().err
    assert "(jsonld)" in err and "112 artifacts" in err and "45 artifacts dead" in err
    document = json.loads(path.read_text(encoding="utf-8"))  # the base's prefix, then the graphs
    assert document["@context"] == {"pgid": "https://w3id.org/polygraph/id/"} and isinstance(document["@graph"], list)
    assert main(["export", str(graphs["figure1"]), "--format", "nquads", "--no-facts"]) == 0
    out = capsys.readouterr().out
    assert len(list(ox.parse(out.encode(), format=ox.RdfFormat.N_QUADS))) == len(out.splitlines())
    assert f"<{PG}fact>" not in out


@pytest.mark.parametrize("argv, message", [
    (["--base", "not an iri"], "--base must be"),
    (["--retract-source", "PMID:0"], "no source named 'PMID:0'"),
    (["--retract-source", "PMID:39973430", "--policy", "lenient"], "unknown policy"),
    (["--format", "jsonld", "--rdf12"], "cannot carry"),
    (["--policy", "flat"], "apply to a deletion"),
])
def test_cli_errors_exit_2_and_leave_no_file(graphs, tmp_path, capsys, argv, message):
    path = tmp_path / "out.trig"
    path.write_text("previous")
    assert main(["export", str(graphs["figure1"]), "-o", str(path), *argv]) == 2
    assert message in capsys.readouterr().err
    assert path.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["out.trig"]


def test_a_failure_midway_keeps_the_previous_file(graphs, tmp_path, monkeypatch):
    path = tmp_path / "out.nq"
    path.write_text("previous")
    original = ExportModel._artifact

    def failing(self, artifact, ordinal):
        if ordinal == 50:
            raise RuntimeError("disk on fire")
        return original(self, artifact, ordinal)

    monkeypatch.setattr(ExportModel, "_artifact", failing)
    with pytest.raises(RuntimeError):
        export_graph(graphs["figure1"], path, "nquads")
    assert path.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["out.nq"]
