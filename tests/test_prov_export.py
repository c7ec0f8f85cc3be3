"""Exports that PROV tools read: the W3C ``prov`` library loads every format and finds each
assertion and artifact as an entity with its derivations, each support set as a collection of its
assertions, each invalidation as an activity that used the erratum; the shipped SHACL shapes hold
(pyshacl); bad literals are a named error on import; no machine path leaves the machine.

The references are independent of the exporter: the graph file read through the Graph API, the
``prov`` library's own reading, pyshacl's validation.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
import rdflib

prov_model = pytest.importorskip("prov.model")
pyshacl = pytest.importorskip("pyshacl")

from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic.export import Minter, export_graph, shapes_path  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.importers import import_rdf  # noqa: E402
from polygraph_logic.query.whatif import Deletion  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FORMATS = {"trig": "trig", "turtle": "turtle", "nquads": "nquads", "jsonld": "json-ld"}
SUFFIX = {"trig": ".trig", "turtle": ".ttl", "nquads": ".nq", "jsonld": ".jsonld"}


@pytest.fixture(scope="module")
def evidence_graph(tmp_path_factory) -> Path:
    """The ledger example with evidence metadata: a retracted assertion invalidated by an erratum."""
    path = tmp_path_factory.mktemp("evidence") / "evidence.graph"
    build_graph(EXAMPLES / "ledger" / "evidence.jsonl", EXAMPLES / "ledger" / "evidence-receipts.jsonl",
                [rule_file("ro")]).write(path)
    return path


def _prov(path: Path, format: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the library warns of every attribute outside PROV
        document = prov_model.ProvDocument.deserialize(str(path), format="rdf", rdf_format=FORMATS[format])
    return [*document.get_records(), *(r for bundle in document.bundles for r in bundle.get_records())]


def _uri(value) -> str | None:
    return None if value is None else value.uri


def _element_types(records) -> dict[str, set]:
    """IRI -> the names of the PROV element classes the library read it as (ProvEntity, ProvActivity, ...)."""
    found: dict[str, set] = {}
    for record in records:
        if isinstance(record, prov_model.ProvElement):
            found.setdefault(_uri(record.identifier), set()).add(type(record).__name__)
    return found


def _formal(record) -> dict:
    return {attribute.localpart: _uri(value) for attribute, value in record.formal_attributes}


@pytest.mark.parametrize("format", list(FORMATS))
@pytest.mark.parametrize("which", ["figure1", "evidence"])
def test_the_prov_library_reads_every_format(figure1_graph, evidence_graph, tmp_path, format, which):
    graph_path = figure1_graph if which == "figure1" else evidence_graph
    source = "PMID:39973430" if which == "figure1" else "example:paper-12"
    path = tmp_path / f"export{SUFFIX[format]}"
    export_graph(graph_path, path, format, deletion=Deletion(sources=(source,)))
    records = _prov(path, format)
    m = Minter()
    kinds = _element_types(records)
    entities = {iri for iri, found in kinds.items() if found & {"ProvEntity"}}
    activities = {iri for iri, found in kinds.items() if found & {"ProvActivity"}}
    assert not entities & activities  # disjoint in PROV-O
    derived = {(f["generatedEntity"], f["usedEntity"]) for r in records if isinstance(r, prov_model.ProvDerivation)
               for f in [_formal(r)]}
    members: dict[str, set] = {}
    for r in records:
        if isinstance(r, prov_model.ProvMembership):
            f = _formal(r)
            members.setdefault(f["collection"], set()).add(f["entity"])
    with Graph(graph_path) as graph:
        assert {m.assertion(a) for a in graph.assertions} <= entities
        for artifact in graph.artifacts():
            a = m.artifact(artifact.id)
            assert a in entities
            cited = {m.assertion(x) for group in artifact.support for x in group}
            assert {used for made, used in derived if made == a and used in cited} == cited
            for i, group in enumerate(artifact.support, 1):
                assert members[m.support_set(artifact.id, i)] == {m.assertion(x) for x in group}
        invalidated = {a.id: a.evidence.invalidated_by for a in graph.assertions.values()
                       if a.evidence is not None and a.evidence.invalidated_by is not None}
    invalidations = {_formal(r)["entity"]: _formal(r)["activity"] for r in records
                     if isinstance(r, prov_model.ProvInvalidation)}
    uses = {(_formal(r)["activity"], _formal(r)["entity"]) for r in records if isinstance(r, prov_model.ProvUsage)}
    assert set(invalidations) == {m.assertion(x) for x in invalidated}
    for assertion, erratum in invalidated.items():
        activity = invalidations[m.assertion(assertion)]
        assert activity in activities and activity not in entities
        assert any(used == activity and re.search(re.escape(erratum.split(":")[-1]), entity)
                   for used, entity in uses)
    if which == "evidence":
        assert invalidated  # the example exercises an invalidation


def _union(path: Path, format: str) -> rdflib.Graph:
    dataset = rdflib.Dataset()
    dataset.parse(str(path), format=FORMATS[format])
    union = rdflib.Graph()
    for s, p, o, _ in dataset.quads((None, None, None, None)):
        union.add((s, p, o))
    return union


def _conforms(data: rdflib.Graph) -> tuple[bool, str]:
    shapes = rdflib.Graph().parse(str(shapes_path()), format="turtle")
    conforms, _, text = pyshacl.validate(data, shacl_graph=shapes, inference="none")
    return conforms, text


@pytest.mark.parametrize("format", ["turtle", "nquads"])
def test_exports_conform_to_the_shipped_shapes_and_a_broken_one_does_not(figure1_graph, evidence_graph,
                                                                         tmp_path, format):
    for name, graph_path, source in (("figure1", figure1_graph, "PMID:39973430"),
                                     ("evidence", evidence_graph, "example:paper-12")):
        path = tmp_path / f"{name}{SUFFIX[format]}"
        export_graph(graph_path, path, format, deletion=Deletion(sources=(source,)))
        data = _union(path, format)
        conforms, text = _conforms(data)
        assert conforms, text
    PG, PROV = rdflib.Namespace("https://w3id.org/polygraph#"), rdflib.Namespace("http://www.w3.org/ns/prov#")
    some_set = next(data.subjects(rdflib.RDF.type, PG.SupportSet))
    broken = rdflib.Graph()
    for triple in data:
        broken.add(triple)
    broken.remove((some_set, PG["index"], None))
    broken.add((some_set, PG["index"], rdflib.Literal("first")))
    conforms, text = _conforms(broken)
    assert not conforms and "index" in text
    unmembered = rdflib.Graph()
    for triple in data:
        if not (triple[0] == some_set and triple[1] == PROV.hadMember):
            unmembered.add(triple)
    assert not _conforms(unmembered)[0]


def test_every_quad_written_is_read_once_in_every_format(figure1_graph, tmp_path):
    for format in FORMATS:
        path = tmp_path / f"f{SUFFIX[format]}"
        report = export_graph(figure1_graph, path, format)
        dataset = rdflib.Dataset()
        dataset.parse(str(path), format=FORMATS[format])
        assert report.quads == len(set(dataset.quads((None, None, None, None)))), format


def test_no_path_of_the_machine_in_an_export(figure1_graph, tmp_path):
    path = tmp_path / "f.trig"
    export_graph(figure1_graph, path, "trig")
    text = path.read_text(encoding="utf-8")
    with Graph(figure1_graph) as graph:
        files = json.loads(graph.meta["rule_files"])
    assert files and all(Path(f).is_absolute() for f in files)  # the graph keeps where its rules were
    assert not any(str(Path(f).parent) in text for f in files)
    dataset = rdflib.Dataset()
    dataset.parse(str(path), format="trig")
    meta = json.loads(next(o for _, p, o, _ in dataset.quads((None, None, None, None))
                           if str(p) == "https://w3id.org/polygraph#graphMeta"))
    assert json.loads(meta["rule_files"]) == ["ro.dl"]


def _rewrite(path: Path, target: Path, pattern: str, replacement: str) -> Path:
    text = path.read_text(encoding="utf-8")
    changed = re.sub(pattern, replacement, text)
    assert changed != text
    target.write_text(changed, encoding="utf-8")
    return target


@pytest.mark.parametrize("pattern, replacement, message", [
    (r'(<https://w3id.org/polygraph#index> )"1"\^\^<http://www.w3.org/2001/XMLSchema#integer>',
     r'\1"one"^^<http://www.w3.org/2001/XMLSchema#integer>', "not an integer"),
    (r'(<https://w3id.org/polygraph#ordinal> )"1"\^\^<http://www.w3.org/2001/XMLSchema#integer>',
     r'\1"1.5"^^<http://www.w3.org/2001/XMLSchema#integer>', "not an integer"),
    (r'(<https://w3id.org/polygraph#content> )"\{', r'\1"{oops', "not JSON"),
])
def test_bad_literals_are_bad_rdf_on_import(figure1_graph, tmp_path, capsys, pattern, replacement, message):
    good = tmp_path / "good.nq"
    export_graph(figure1_graph, good, "nquads")
    bad = _rewrite(good, tmp_path / "bad.nq", pattern, replacement)
    with pytest.raises(PolygraphError, match=message) as raised:
        import_rdf(bad, tmp_path / "back.graph")
    assert raised.value.code == "bad_rdf"
    assert main(["import", "rdf", str(bad), "-o", str(tmp_path / "back.graph")]) == 2
    assert "bad_rdf" in capsys.readouterr().err and not (tmp_path / "back.graph").exists()


def test_exports_written_before_the_collections_still_import(figure1_graph, tmp_path):
    """Support sets as qualified derivations listing pg:member (the earlier form) read as before."""
    new = tmp_path / "new.nq"
    export_graph(figure1_graph, new, "nquads")
    old = _rewrite(new, tmp_path / "old.nq", "<https://w3id.org/polygraph#supportSet>",
                   "<http://www.w3.org/ns/prov#qualifiedDerivation>")
    old = _rewrite(old, old, "<http://www.w3.org/ns/prov#hadMember>", "<https://w3id.org/polygraph#member>")
    for name, path in (("new", new), ("old", old)):
        import_rdf(path, tmp_path / f"{name}.graph")
    with Graph(tmp_path / "new.graph") as a, Graph(tmp_path / "old.graph") as b, Graph(figure1_graph) as c:
        assert list(a.artifacts()) == list(b.artifacts()) == list(c.artifacts())


@pytest.fixture(scope="module")
def agents_graph(tmp_path_factory) -> Path:
    """examples/ledger/agents.jsonl: assertions naming a model, a reviewer, a tool and no agent."""
    path = tmp_path_factory.mktemp("agents") / "agents.graph"
    build_graph(EXAMPLES / "ledger" / "agents.jsonl", output=path)
    return path


@pytest.mark.parametrize("format", list(FORMATS))
def test_the_prov_library_finds_each_agent_and_acquisition(agents_graph, tmp_path, format):
    """Against the input file read as JSON: each agent a prov:Agent the assertion is attributed to,
    each acquisition an activity that generated it, with its start time, its inputs and its agent."""
    path = tmp_path / f"agents{SUFFIX[format]}"
    report = export_graph(agents_graph, path, format)
    records = _prov(path, format)
    m = Minter()
    elements = _element_types(records)

    def related(name: str, *keys: str) -> set[tuple]:
        return {tuple(_formal(r)[k] for k in keys) for r in records if type(r).__name__ == name}

    lines = [json.loads(line) for line in (EXAMPLES / "ledger" / "agents.jsonl").read_text("utf-8").splitlines()]
    ids = {line["id"] for line in lines}
    attributed, generated, used, associated = set(), set(), set(), set()
    for line in lines:
        node = m.assertion(line["id"])
        agent = line.get("agent")
        agent_id = agent if isinstance(agent, str) else (agent or {}).get("id")
        iri = None if agent_id is None else f"{m.base}agent/{agent_id.replace('/', '%2F').replace('@', '%40')}"
        if iri is not None:
            assert "ProvAgent" in elements[iri]
            attributed.add((node, iri))
        acquisition = line.get("acquisition")
        if acquisition is not None:
            generated.add(node)
            used |= {m.assertion(v) if v in ids else m.term(v, "source") for v in acquisition.get("used", ())}
            if iri is not None:
                associated.add(iri)
    assert related("ProvAttribution", "entity", "agent") == attributed
    generations = related("ProvGeneration", "entity", "activity")
    assert {entity for entity, _ in generations} == generated
    activities = {activity for _, activity in generations}
    assert len(activities) == 4 and all("ProvActivity" in elements[a] and "ProvEntity" not in elements[a]
                                        for a in activities)  # call 1, call 2, the review, the tool run
    assert {entity for activity, entity in related("ProvUsage", "activity", "entity") if activity in activities} == used
    assert all("ProvEntity" in elements.get(entity, ()) for entity in used)
    assert {agent for activity, agent in related("ProvAssociation", "activity", "agent")} == associated
    starts = {str(r.get_startTime()) for r in records if isinstance(r, prov_model.ProvActivity) and r.get_startTime()}
    assert {"2024-03-01 10:00:00+00:00", "2024-03-02 10:00:00+00:00", "2024-04-01 08:00:00+00:00",
            "2024-04-02 00:00:00+00:00"} == starts
    dataset = rdflib.Dataset()
    dataset.parse(str(path), format=FORMATS[format])
    assert report.quads == len(set(dataset.quads((None, None, None, None))))
    if format in ("turtle", "nquads"):
        conforms, text = _conforms(_union(path, format))
        assert conforms, text


def test_agent_shapes_catch_a_broken_agent_and_acquisition(agents_graph, tmp_path):
    path = tmp_path / "agents.ttl"
    export_graph(agents_graph, path, "turtle")
    data = _union(path, "turtle")
    PG, PROV = rdflib.Namespace("https://w3id.org/polygraph#"), rdflib.Namespace("http://www.w3.org/ns/prov#")
    assert _conforms(data)[0]
    agent = next(data.subjects(rdflib.RDF.type, PROV.Agent))
    twice = rdflib.Graph()
    for triple in data:
        twice.add(triple)
    twice.add((agent, PG.agentId, rdflib.Literal("another id")))
    conforms, text = _conforms(twice)
    assert not conforms and "agentId" in text
    activity = next(data.subjects(rdflib.RDF.type, PG.Acquisition))
    untimed = rdflib.Graph()
    for triple in data:
        untimed.add(triple)
    untimed.add((activity, PROV.startedAtTime, rdflib.Literal("yesterday")))
    assert not _conforms(untimed)[0]
    unattributed = rdflib.Graph()
    for s, p, o in data:
        unattributed.add((s, p, o) if p != PROV.wasAttributedTo else (s, p, activity))  # an activity is no agent
    assert not _conforms(unattributed)[0]
