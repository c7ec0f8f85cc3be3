"""GPAD, GAF and obographs importers: small inline files, then the real PomBase slice."""

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.records import load_assertions
from polygraph_logic.importers import (
    edges_to_datalog,
    read_gaf,
    read_gpad,
    read_obographs,
    write_assertions,
    write_background,
)
from polygraph_logic.importers.relations import ANNOTATION_RELATIONS
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.syntax import Fact

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
POMBASE = DATA / "go-pombase"
RO_OWL = DATA / "ro" / "ro.owl"


def write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def tabs(*fields: str) -> str:
    return "\t".join(fields)


def gpad11(db_id: str, qualifier: str, term: str, reference: str, evidence: str = "ECO:0000314", with_from: str = ""):
    db, _, local = db_id.partition(":")
    return tabs(db, local, qualifier, term, reference, evidence, with_from, "", "20200101", "UniProt", "", "")


# GPAD 1.1: line numbers are part of the expectations (ids are f"gpad{line}")
GPAD11 = [
    "!gpa-version: 1.1",  # 1
    "!generated-by: test",  # 2
    gpad11("UniProtKB:P1", "enables", "GO:0003674", "PMID:1|DOI:10.1/x", with_from="GO:0000001"),  # 3
    gpad11("UniProtKB:P1", "NOT|enables", "GO:0003675", "PMID:2"),  # 4: NOT, a negated assertion
    tabs("UniProtKB", "P2", "part_of", "GO:0005634", "GO_REF:0000024", "ECO:0000266", "", "", "20200101", "X"),  # 5
    gpad11("UniProtKB:P3", "binds", "GO:0000003", "PMID:3"),  # 6: unknown relation label
    tabs("UniProtKB", "P4", "enables", "GO:0000004", "PMID:4"),  # 7: wrong column count
    gpad11("UniProtKB:", "enables", "GO:0000005", "PMID:5"),  # 8: empty DB object ID
    "",  # 9: blank, counted with comments
    gpad11("UniProtKB:P6", "contributes_to|colocalizes_with", "GO:0000006", "PMID:6"),  # 10: two relations
    gpad11("UniProtKB:P7", "involved_in", "nucleus", "PMID:7"),  # 11: term not a CURIE
    gpad11("UniProtKB:P8", "NOT", "GO:0000008", "PMID:8"),  # 12: NOT without a relation
    gpad11("UniProtKB:P9", "colocalizes_with", "GO:0000009", "PMID:9"),  # 13
]
GPAD11_MALFORMED = {
    6: "unknown relation label 'binds'",
    7: "wrong column count: 5",
    8: "empty DB object ID (column 2)",
    10: "more than one relation",
    11: "'nucleus' is not a CURIE",
    12: "no relation in qualifier",
}


def test_gpad11_fields_land_in_place(tmp_path):
    assertions, report = read_gpad(write(tmp_path, "a.gpad", *GPAD11))
    assert [a.id for a in assertions] == ["gpad3", "gpad4", "gpad5", "gpad13"]
    assert [a.id for a in assertions if a.negated] == ["gpad4"]
    assert assertions[1] == Assertion("gpad4", "PMID:2", "UniProtKB:P1", "RO:0002327", "GO:0003675",
                                      "ECO:0000314", negated=True)
    assertions.pop(1)
    first = assertions[0]
    assert (first.source, first.subject, first.predicate, first.object) == (
        "PMID:1", "UniProtKB:P1", "RO:0002327", "GO:0003674")
    # the evidence code, with/from and the other reference stay in the short text
    assert first.text == "ECO:0000314 with GO:0000001; also DOI:10.1/x"
    assert assertions[1] == Assertion(
        "gpad5", "GO_REF:0000024", "UniProtKB:P2", "BFO:0000050", "GO:0005634", "ECO:0000266")
    assert assertions[2].predicate == "RO:0002325"
    assert report.format == "GPAD 1.1"


def test_gpad11_report_accounts_for_every_line(tmp_path):
    _, report = read_gpad(write(tmp_path, "a.gpad", *GPAD11))
    assert report.read == len(GPAD11) == 13
    assert (report.imported, report.negated, report.comments) == (4, 1, 3)
    assert report.accounted == report.read
    assert report.short_lines == 1  # line 5 left off the two optional trailing columns
    assert [line for line, _ in report.malformed] == sorted(GPAD11_MALFORMED)
    for line, reason in report.malformed:
        assert GPAD11_MALFORMED[line] in reason
    assert report.relations == Counter({"RO:0002327": 2, "BFO:0000050": 1, "RO:0002325": 1})
    summary = report.summary()
    assert ("13 lines read: 4 imported (1 NOT-qualified, kept as negated assertions), 3 comment/header, "
            "6 malformed") in summary
    assert "malformed line 7: wrong column count" in summary
    assert "enables (RO:0002327): 2" in summary


def test_gpad_strict_raises_at_the_first_malformed_line(tmp_path):
    path = write(tmp_path, "a.gpad", *GPAD11)
    with pytest.raises(PolygraphError) as caught:
        read_gpad(path, strict=True)
    assert caught.value.code == "malformed_line"
    assert (caught.value.position.file, caught.value.position.line) == (str(path), 6)
    assert str(caught.value).startswith(f"{path}:6:1: malformed_line: unknown relation label 'binds'")


def test_gpad_ids_follow_physical_lines_and_prefix(tmp_path):
    path = write(tmp_path, "a.gpad", *GPAD11)
    assertions, _ = read_gpad(path, id_prefix="g")
    assert [a.id for a in assertions] == ["g3", "g4", "g5", "g13"]
    # one more comment line on top shifts every id by one: ids name lines, not counters
    shifted, _ = read_gpad(write(tmp_path, "b.gpad", "!extra", *GPAD11), id_prefix="g")
    assert [a.id for a in shifted] == ["g4", "g5", "g6", "g14"]
    assert [a.triple for a in shifted] == [a.triple for a in assertions]


def test_gpad11_every_relation_label(tmp_path):
    lines = ["!gpa-version: 1.1"] + [
        gpad11(f"DB:P{i}", label, f"GO:{i:07d}", f"PMID:{i}") for i, label in enumerate(ANNOTATION_RELATIONS)
    ]
    assertions, report = read_gpad(write(tmp_path, "a.gpad", *lines))
    assert not report.malformed
    assert [a.predicate for a in assertions] == list(ANNOTATION_RELATIONS.values())


@pytest.mark.skipif(not RO_OWL.is_file(), reason=f"{RO_OWL} not present")
def test_relation_curies_carry_their_labels_in_ro():
    rdf = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}about"
    label_tag = "{http://www.w3.org/2000/01/rdf-schema#}label"
    labels = {}
    for element in ET.parse(RO_OWL).getroot():
        iri, label = element.get(rdf), element.find(label_tag)
        if iri and label is not None and iri.startswith("http://purl.obolibrary.org/obo/"):
            labels[iri.rsplit("/", 1)[1].replace("_", ":", 1)] = label.text
    for go_label, curie in ANNOTATION_RELATIONS.items():
        # GO writes "acts upstream of, positive effect" as acts_upstream_of_positive_effect
        assert labels[curie].replace(",", "").replace(" ", "_") == go_label, curie


def gpad20(subject: str, negation: str, relation: str, term: str, reference: str, evidence: str = "ECO:0000314"):
    return tabs(subject, negation, relation, term, reference, evidence, "", "", "2020-01-01", "MGI", "", "")


GPAD20 = [
    "!gpad-version: 2.0",  # 1
    "!generated-by: MGI",  # 2
    gpad20("MGI:MGI:1", "", "RO:0002331", "GO:0008150", "PMID:10"),  # 3
    gpad20("MGI:MGI:2", "NOT", "RO:0002327", "GO:0003674", "PMID:11"),  # 4: NOT, a negated assertion
    gpad20("MGI:MGI:3", "", "part_of", "GO:0005634", "PMID:12"),  # 5: a 1.x label
    gpad20("MGI:MGI:4", "not", "RO:0002327", "GO:0003674", "PMID:13"),  # 6: bad negation
    gpad20("MGI:MGI:5", "", "RO:0002327", "GO:0003674", ""),  # 7: empty reference
    gpad20("P12345", "", "RO:0002327", "GO:0003674", "PMID:14"),  # 8: subject not a CURIE
    gpad20("MGI:MGI:6", "", "BFO:0000050", "GO:0005634", "GO_REF:0000024") + "\textra",  # 9: 13 columns
]


def test_gpad20_layout(tmp_path):
    path = write(tmp_path, "b.gpad", *GPAD20)
    assertions, report = read_gpad(path)
    assert report.format == "GPAD 2.0"
    assert assertions == [Assertion("gpad3", "PMID:10", "MGI:MGI:1", "RO:0002331", "GO:0008150", "ECO:0000314"),
                          Assertion("gpad4", "PMID:11", "MGI:MGI:2", "RO:0002327", "GO:0003674", "ECO:0000314",
                                    negated=True)]
    assert (report.imported, report.negated, report.comments) == (2, 1, 2)
    reasons = dict(report.malformed)
    assert sorted(reasons) == [5, 6, 7, 8, 9]
    assert "GPAD 1.x label" in reasons[5] and "BFO:0000050" in reasons[5]
    assert "negation 'not'" in reasons[6]
    assert "empty reference (column 5)" in reasons[7]
    assert "'P12345' is not a CURIE" in reasons[8]
    assert "wrong column count: 13" in reasons[9]
    assert report.accounted == report.read == len(GPAD20)


def test_gpad_version_header_missing_or_unsupported(tmp_path):
    _, report = read_gpad(write(tmp_path, "a.gpad", *GPAD11[2:4]))
    assert report.format == "GPAD 1.1, assumed: no !gpa-version header"
    assert (report.imported, report.negated) == (2, 1)
    with pytest.raises(PolygraphError) as caught:
        read_gpad(write(tmp_path, "b.gpad", "!c", "!gpa-version: 3.0", GPAD11[2]))
    assert caught.value.code == "unsupported_version"
    assert caught.value.position.line == 2


def test_missing_file_is_an_error_value(tmp_path):
    with pytest.raises(PolygraphError) as caught:
        read_gpad(tmp_path / "absent.gpad")
    assert caught.value.code == "file_error" and "absent.gpad" in str(caught.value)


def gaf(db_id: str, qualifier: str, term: str, reference: str, aspect: str, evidence: str = "IDA",
        with_from: str = "", trailing: int = 2):
    db, _, local = db_id.partition(":")
    fields = [db, local, "sym", qualifier, term, reference, evidence, with_from, aspect,
              "name", "", "protein", "taxon:4896", "20200101", "PomBase", "", ""]
    return tabs(*fields[: 15 + trailing])


GAF21 = [
    "!gaf-version: 2.1",  # 1
    gaf("PomBase:S1", "", "GO:0005634", "PMID:1", "C"),  # 2: part_of from the aspect
    gaf("PomBase:S2", "", "GO:0003674", "PMID:2|GO_REF:9", "F", with_from="UniProt:Q1", trailing=0),  # 3: enables
    gaf("PomBase:S3", "", "GO:0008150", "GO_REF:0000024", "P", trailing=1),  # 4: involved_in
    gaf("PomBase:S4", "contributes_to", "GO:0003675", "PMID:4", "F"),  # 5
    gaf("PomBase:S5", "NOT", "GO:0005635", "PMID:5", "C"),  # 6: NOT, negated (part_of from the aspect)
    gaf("PomBase:S6", "NOT|colocalizes_with", "GO:0005636", "PMID:6", "C"),  # 7: NOT, negated
    gaf("PomBase:S7", "", "GO:0005637", "PMID:7", "X"),  # 8: unknown aspect
    gaf("PomBase:S8", "", "GO:0005638", "PMID:8", "C", trailing=0)[: -len("\tPomBase")],  # 9: 14 columns
    gaf("PomBase:S9", "", "GO:0005639", "PMID:9", "C", evidence=""),  # 10: empty evidence code
    gaf("PomBase:S10", "located_near", "GO:0005640", "PMID:10", "C"),  # 11: unknown label
]


def test_gaf21_relations_from_qualifier_or_aspect(tmp_path):
    assertions, report = read_gaf(write(tmp_path, "a.gaf", *GAF21))
    assert report.format == "GAF 2.1"
    assert [(a.id, a.predicate) for a in assertions] == [
        ("gaf2", "BFO:0000050"), ("gaf3", "RO:0002327"), ("gaf4", "RO:0002331"), ("gaf5", "RO:0002326"),
        ("gaf6", "BFO:0000050"), ("gaf7", "RO:0002325")]
    assert [a.id for a in assertions if a.negated] == ["gaf6", "gaf7"]
    second = assertions[1]
    assert (second.source, second.subject, second.object) == ("PMID:2", "PomBase:S2", "GO:0003674")
    assert second.text == "IDA with UniProt:Q1; also GO_REF:9"
    assert (report.imported, report.negated, report.comments, report.short_lines) == (6, 2, 1, 2)
    reasons = dict(report.malformed)
    assert sorted(reasons) == [8, 9, 10, 11]
    assert "aspect 'X'" in reasons[8]
    assert "wrong column count: 14" in reasons[9] and "15 to 17" in reasons[9]
    assert "empty evidence code (column 7)" in reasons[10]
    assert "unknown relation label 'located_near'" in reasons[11]
    assert report.accounted == report.read == len(GAF21)
    with pytest.raises(PolygraphError, match=r"a\.gaf:8:1: malformed_line: aspect 'X'"):
        read_gaf(tmp_path / "a.gaf", strict=True)


def test_gaf22_needs_the_relation_in_the_qualifier(tmp_path):
    lines = [
        "!gaf-version: 2.2",  # 1
        gaf("PomBase:S1", "located_in", "GO:0005634", "PMID:1", "C"),  # 2
        gaf("PomBase:S2", "NOT|enables", "GO:0003674", "PMID:2", "F"),  # 3: NOT, a negated assertion
        gaf("PomBase:S3", "", "GO:0008150", "PMID:3", "P"),  # 4: no relation
        gaf("PomBase:S4", "acts_upstream_of_or_within", "GO:0008150", "PMID:4", "P"),  # 5
    ]
    assertions, report = read_gaf(write(tmp_path, "a.gaf", *lines), id_prefix="a")
    assert [(a.id, a.predicate, a.negated) for a in assertions] == [
        ("a2", "RO:0001025", False), ("a3", "RO:0002327", True), ("a5", "RO:0002264", False)]
    assert report.negated == 1
    assert [line for line, _ in report.malformed] == [4]
    assert "GAF 2.2 needs a relation" in report.malformed[0][1]


def test_write_assertions_is_json_lines_and_round_trips(tmp_path):
    assertions, _ = read_gaf(write(tmp_path, "a.gaf", *GAF21))
    out = tmp_path / "assertions.jsonl"
    out.write_text("old content that must be replaced\n")
    assert write_assertions(out, assertions) == 6
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert records[0] == {"id": "gaf2", "source": "PMID:1", "subject": "PomBase:S1",
                          "predicate": "BFO:0000050", "object": "GO:0005634", "text": "IDA"}
    assert [Assertion(**record) for record in records] == assertions
    assert [r.get("negated") for r in records] == [None] * 4 + [True, True]  # NOT lines, written as negated
    assert load_assertions(out) == assertions  # and read back validated
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


OBOGRAPHS = {
    "graphs": [{
        "nodes": [
            {"id": "http://purl.obolibrary.org/obo/GO_0000001", "type": "CLASS", "lbl": "a \"quoted\" process"},
            {"id": "http://purl.obolibrary.org/obo/GO_0000002", "type": "CLASS", "lbl": "parent"},
            {"id": "http://purl.obolibrary.org/obo/GO_0000003", "type": "CLASS"},
        ],
        "edges": [
            {"sub": "http://purl.obolibrary.org/obo/GO_0000001", "pred": "is_a",
             "obj": "http://purl.obolibrary.org/obo/GO_0000002"},
            {"sub": "http://purl.obolibrary.org/obo/GO_0000001", "pred": "http://purl.obolibrary.org/obo/BFO_0000050",
             "obj": "http://purl.obolibrary.org/obo/GO_0000003"},
            {"sub": "http://purl.obolibrary.org/obo/GO_0000003", "pred": "http://example.org/rel#x",
             "obj": "http://purl.obolibrary.org/obo/NCBITaxon_4896"},
            {"sub": "http://purl.obolibrary.org/obo/GO_0000003", "obj": "http://purl.obolibrary.org/obo/GO_0000002"},
        ],
    }]
}


def test_obographs_edges_labels_and_report(tmp_path):
    path = tmp_path / "go.json"
    path.write_text(json.dumps(OBOGRAPHS))
    edges, labels, report = read_obographs(path)
    assert edges == [
        ("GO:0000001", "rdfs:subClassOf", "GO:0000002"),
        ("GO:0000001", "BFO:0000050", "GO:0000003"),
        ("GO:0000003", "http://example.org/rel#x", "NCBITaxon:4896"),
    ]
    assert labels == {"GO:0000001": 'a "quoted" process', "GO:0000002": "parent"}
    assert (report.read, report.imported) == (4, 3)
    assert report.malformed == [(None, "graph 0 edge 3: no pred")]
    assert "4 edges read: 3 imported, 1 malformed" in report.summary()


def test_edges_to_datalog_parses_back_as_background_facts(tmp_path):
    edges = [("GO:1", "rdfs:subClassOf", "GO:2"), ('odd "name"\\', "BFO:0000050", "GO:3")]
    text = edges_to_datalog(edges, source="go.json")
    assert text.startswith("// 2 background edges from go.json")
    assert 'edge("GO:1", "rdfs:subClassOf", "GO:2").' in text.splitlines()
    clauses = parse_clauses(text, "background.dl")
    assert all(isinstance(c, Fact) and c.variable is None for c in clauses)
    assert [tuple(arg.value for arg in c.atom.args) for c in clauses] == edges
    out = tmp_path / "background.dl"
    assert write_background(out, edges, source="go.json") == 2
    assert out.read_text("utf-8") == text


def test_obographs_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"graphs": [\n  {"edges": [}\n]}')
    with pytest.raises(PolygraphError) as caught:
        read_obographs(path)
    assert caught.value.code == "malformed_json" and caught.value.position.line == 2


# --- the real PomBase slice (data/SOURCES.md) -------------------------------------------

needs_pombase = pytest.mark.skipif(not POMBASE.is_dir(), reason=f"{POMBASE} not present (shared data)")


def data_rows(path: Path) -> list[tuple[int, list[str]]]:
    """Independent count: (line number, columns) of each non-comment, non-blank line."""
    lines = path.read_text("utf-8").split("\n")
    return [(n, line.split("\t")) for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("!")]


@needs_pombase
def test_real_gpad():
    path = POMBASE / "truncated-pombase.gpad"
    rows = data_rows(path)
    negated = [n for n, columns in rows if "NOT" in columns[2].split("|")]
    assertions, report = read_gpad(path)
    assert len(rows) == len(assertions) == 1984
    # the slice has no NOT-qualified line (a NOT would be kept as a negated assertion)
    assert report.negated == len(negated) == sum(a.negated for a in assertions) == 0 and report.malformed == []
    assert len({a.source for a in assertions}) == len({columns[4] for _, columns in rows}) == 523
    five = {"part_of": "BFO:0000050", "enables": "RO:0002327", "involved_in": "RO:0002331",
            "contributes_to": "RO:0002326", "colocalizes_with": "RO:0002325"}
    expected = Counter(five[columns[2]] for _, columns in rows)
    assert report.relations == expected and set(expected) == set(five.values())
    by_line = dict(rows)
    for a in assertions:  # each id names the line its triple came from
        columns = by_line[int(a.id.removeprefix("gpad"))]
        assert (a.subject, a.object, a.source) == (f"{columns[0]}:{columns[1]}", columns[3], columns[4])


@needs_pombase
def test_real_gaf_accounts_for_every_annotation_line_and_agrees_with_the_gpad():
    path = POMBASE / "truncated-pombase.gaf"
    rows = data_rows(path)
    assertions, report = read_gaf(path)
    assert len(rows) == 370
    assert report.imported + len(report.malformed) == 370 and report.negated == 0
    assert report.malformed == [] and len(assertions) == 370
    assert report.read == len(path.read_text("utf-8").splitlines())
    # the GPAD states the same annotations; the aspect-derived relations must match it
    # (except lines naming a gene product form in column 17, which the GPAD uses as subject)
    gpad, _ = read_gpad(POMBASE / "truncated-pombase.gpad")
    stated = {(a.source, a.subject, a.predicate, a.object) for a in gpad}
    plain = {n for n, columns in rows if len(columns) < 17 or not columns[16]}
    for a in assertions:
        if int(a.id.removeprefix("gaf")) in plain:
            assert (a.source, a.subject, a.predicate, a.object) in stated, a


@needs_pombase
def test_real_obographs():
    path = POMBASE / "go-truncated-pombase.json"
    raw = json.loads(path.read_text("utf-8"))["graphs"][0]
    edges, labels, report = read_obographs(path)
    obo = "http://purl.obolibrary.org/obo/"
    assert Counter(edge["pred"] for edge in raw["edges"]) == {
        "is_a": 803, obo + "BFO_0000050": 102, obo + "RO_0002211": 50, obo + "RO_0002212": 36,
        obo + "RO_0002213": 24, obo + "BFO_0000051": 12, obo + "BFO_0000066": 4}
    assert len(edges) == report.imported == 1031
    assert Counter(predicate for _, predicate, _ in edges) == {
        "rdfs:subClassOf": 803, "BFO:0000050": 102, "RO:0002211": 50, "RO:0002212": 36,
        "RO:0002213": 24, "BFO:0000051": 12, "BFO:0000066": 4}
    assert len(labels) == len(raw["nodes"]) == 493
    assert all(s.startswith("GO:") and o.startswith("GO:") for s, _, o in edges)
    assert len(parse_clauses(edges_to_datalog(edges), "background.dl")) == 1031


def test_damaged_obographs_and_non_utf8_annotation_files_are_errors_with_positions(tmp_path):
    from polygraph_logic.errors import PolygraphError
    from polygraph_logic.importers import read_gpad, read_obographs
    listed = tmp_path / "listed.json"
    listed.write_text('{"graphs": [[1, 2]]}')
    with pytest.raises(PolygraphError) as error:
        read_obographs(listed)
    assert error.value.code == "malformed_file"
    typed = tmp_path / "typed.json"
    typed.write_text('{"graphs": [{"nodes": [{"id": 1, "lbl": 2}], "edges": [{"sub": 1, "pred": "is_a", "obj": "x"}]}]}')
    edges, labels, report = read_obographs(typed)
    assert edges == [] and labels == {} and len(report.malformed) == 1
    latin = tmp_path / "latin.gpad"
    latin.write_bytes(b"!gpa-version: 1.2\nPomBase\tSPAC\t\xff\n")
    with pytest.raises(PolygraphError) as error:
        read_gpad(latin)
    assert error.value.code == "encoding_error" and (error.value.position.line, error.value.position.column) == (2, 14)
