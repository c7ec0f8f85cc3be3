"""Evidence metadata (time, expiry, scope, status, verifies) and its questions: validated at
file:line, kept in both graph forms, `add` and the RDF export; --as-of, --stale-after and --scope
checked against a from-scratch Boolean evaluation of the evidence the test itself keeps (its own
reading of the records, not the package's); --require against brute force over support sets."""

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from recompute import truth
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.export import export_graph, vocabulary_path
from polygraph_logic.export.namespaces import PG, PROV
from polygraph_logic import build_graph
from polygraph_logic.graph.evidence import parse_duration, parse_time
from polygraph_logic.graph.records import LoadError, load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.evidence import EvidenceView, Requirement
from polygraph_logic.query.whatif import Deletion, what_if
from polygraph_logic.serve.api import GraphApi

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"
UTC = timezone.utc
YEARS = range(2019, 2026)


def day(year: int, month: int = 1, number: int = 1) -> str:
    return f"{year}-{month:02d}-{number:02d}"


def with_evidence(records: list[dict], seed: int) -> list[dict]:
    """Figure 1's records with random evidence metadata, two of them model hypotheses, and a
    verification (a new assertion) naming one of those."""
    rng = random.Random(seed)
    out = []
    for record in records:
        record = dict(record)
        if rng.random() < 0.8:
            record["time"] = day(rng.choice(YEARS), rng.randint(1, 12), rng.randint(1, 28))
        if "time" in record and rng.random() < 0.3:
            record["expires"] = day(int(record["time"][:4]) + rng.randint(1, 3))
        if rng.random() < 0.4:
            record["scope"] = rng.choice(["team:a", ["team:b"], ["team:a", "team:b"]])
        if rng.random() < 0.3:
            record["status"] = rng.choice(["superseded", "retracted"])
            if rng.random() < 0.8:
                start = int(record.get("time", "2019")[:4])
                record["invalidated_at"] = day(rng.randint(start + 1, 2026))
        out.append(record)
    hypotheses = rng.sample(range(len(out)), 2)
    for index in hypotheses:
        out[index]["kind"] = "model_hypothesis"
    named = out[hypotheses[0]]["id"]
    out.append({"id": "v1", "source": "lab:check", "subject": "MAPK", "predicate": "RO:0002211",
                "object": "check-only", "kind": "verification", "verifies": [named],
                "time": day(rng.choice(YEARS), 6, 1)})
    return out


def kept_by_hand(records: list[dict], as_of: datetime | None, stale: timedelta | None, scope: str | None,
                 now: datetime) -> set[str]:
    """The test's own reading of the view's rules (module docstring of query/evidence.py)."""
    def when(text):
        return datetime.fromisoformat(text).replace(tzinfo=UTC) if text else None

    at = as_of or now
    kept = set()
    for r in records:
        time, expires, invalidated = when(r.get("time")), when(r.get("expires")), when(r.get("invalidated_at"))
        scopes = [r["scope"]] if isinstance(r.get("scope"), str) else r.get("scope", [])
        if as_of is not None and time is not None and time > as_of:
            continue
        if r.get("status", "active") != "active" and (invalidated is None or invalidated <= at):
            continue
        if expires is not None and expires <= at:
            continue
        if stale is not None and time is not None and time < at - stale:
            continue
        if scope is not None and scopes and scope not in scopes:
            continue
        kept.add(r["id"])
    return kept


# seeds 2 and 3 run with the slow tests (.ci/run); seed 1 covers every path in the default run
@pytest.fixture(scope="module", params=[1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
def dated(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"evidence{request.param}")
    records = with_evidence([json.loads(line) for line in (FIGURE1 / "assertions.jsonl").read_text().splitlines()
                             if line.strip()], request.param)
    path = directory / "assertions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assertions = load_assertions(path)
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    graph = directory / "dated.graph"
    build_graph(assertions, receipts, [RO]).write(graph)
    return records, assertions, receipts, graph, directory


VIEWS = [(day(2021), None, None), (day(2023, 6), None, "team:a"), (None, "3y", None), (day(2024), "2y", "team:b"),
         ("now", None, None), (None, None, "team:b")]


@pytest.mark.parametrize("as_of, stale, scope", VIEWS)
def test_a_view_of_the_evidence_is_a_fresh_evaluation_of_what_it_keeps(dated, as_of, stale, scope):
    records, assertions, receipts, path, _ = dated
    view = EvidenceView.parse(as_of, stale, scope)
    kept = kept_by_hand(records, view.as_of, timedelta(days=365 * int(stale[:-1])) if stale else None, scope,
                        view.reference)
    deleted = {a.id for a in assertions} - kept
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(evidence=view))
        assert outcome.deleted == deleted
        standing = truth(assertions, receipts, deleted)
        dead = set(outcome.dead) | {d["artifact"] for d in outcome.demoted}
        for artifact in graph.artifacts():
            if artifact.id in outcome.summaries:
                continue
            assert (artifact.id in dead) == (artifact.fact not in standing), artifact.id
        left_out = {i for ids in outcome.to_json()["evidence"]["excluded"].values() for i in ids}
        assert left_out == deleted


def test_as_of_equals_a_build_of_the_evidence_known_then(dated, tmp_path):
    """--as-of T against a graph built from only the records a reader at T had and could use."""
    records, assertions, receipts, path, _ = dated
    for year in (2020, 2022, 2024):
        moment = datetime(year, 7, 1, tzinfo=UTC)
        kept = kept_by_hand(records, moment, None, None, moment)
        then = tmp_path / f"then{year}.jsonl"
        # a verification known then may name an assertion not usable then: it names nothing here
        then.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "verifies"}) + "\n"
                                for r in records if r["id"] in kept))
        known = load_assertions(then)
        usable = []
        for receipt in receipts:  # receipts keep the support sets whose assertions were known then
            if receipt.sentences:
                continue
            sets = tuple(s for s in receipt.support if s <= kept)
            if sets:
                usable.append(receipt.__class__(receipt.artifact, receipt.layer, receipt.content, sets))
        fresh = tmp_path / f"then{year}.graph"
        build_graph(known, usable, [RO]).write(fresh)
        with Graph(path) as graph, Graph(fresh) as built:
            outcome = what_if(graph, Deletion(evidence=EvidenceView(as_of=moment)))
            dead = set(outcome.dead) | {d["artifact"] for d in outcome.demoted}
            standing = {a.id for a in built.artifacts() if a.layer in ("claim", "edge", "merge")}
            for artifact in graph.artifacts():
                if artifact.layer in ("claim", "edge", "merge"):
                    assert (artifact.id not in dead) == (artifact.id in standing), (year, artifact.id)


@pytest.mark.parametrize("kinds", [("source_claim",), ("source_claim", "verification"), ("verification",)])
def test_require_marks_exactly_the_artifacts_with_no_set_of_the_kinds(dated, kinds):
    """Brute force: an artifact meets the requirement when some support set holds only assertions of
    the kinds or named by a verification (here every verification is usable)."""
    records, assertions, receipts, path, _ = dated
    # the raw view: the requirement alone, every stored assertion counting (test_stale_default.py: the default)
    kind = {a.id: a.kind for a in assertions}
    named = {n for r in records if r.get("kind") == "verification" for n in r.get("verifies", [])}
    acceptable = {a for a in kind if kind[a] in kinds or a in named}
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(raw=True), require=Requirement(kinds))
        unqualified = {u["id"] for u in outcome.unqualified}
        assert set(outcome.promoted) == {a for a in named if kind[a] not in kinds}
        standing = truth(assertions, receipts, set(kind) - acceptable)
        for artifact in graph.artifacts():
            if artifact.layer == "summary" or artifact.layer == "sentence":
                continue
            assert (artifact.id not in unqualified) == (artifact.fact in standing), artifact.id
            sets = graph.label(artifact).support_sets()
            assert Requirement(kinds).qualifying(graph, sets) == [s <= acceptable for s in sets]


def test_a_verification_promotes_only_while_it_is_usable(dated):
    records, assertions, _, path, _ = dated
    verification = next(r for r in records if r["id"] == "v1")
    named = verification["verifies"][0]
    with Graph(path) as graph:
        assert named in what_if(graph, Deletion(raw=True), require=Requirement(("source_claim",))).promoted
        gone = what_if(graph, Deletion(assertions=("v1",)), require=Requirement(("source_claim",)))
        assert gone.promoted == []
        before = datetime.fromisoformat(verification["time"]).replace(tzinfo=UTC) - timedelta(days=1)
        early = what_if(graph, Deletion(evidence=EvidenceView(as_of=before)), require=Requirement(("source_claim",)))
        assert early.promoted == []


def _more(tmp_path: Path) -> Path:
    """One more assertion, a verification of v1 with a time zone and a scope, for ``add``."""
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "v2", "source": "lab:2", "subject": "ERK", "predicate": "RO:0002211",
                                "object": "later", "kind": "verification", "verifies": "v1",
                                "time": "2026-01-02T03:04:05+01:00", "scope": "team:a"}) + "\n")
    return more


def _added_as_stated(graph) -> None:
    added = graph.assertions["v2"].to_json()
    assert added["time"] == "2026-01-02T02:04:05Z" and added["verifies"] == ["v1"]
    assert added["scope"] == ["team:a"]


def test_the_metadata_is_kept_by_the_folder_and_its_add(dated, tmp_path):
    pytest.importorskip("duckdb", reason="the graph folder is written by DuckDB (the [duckdb] extra)")
    records, assertions, receipts, path, directory = dated
    want = [a.to_json() for a in assertions]
    folder = tmp_path / "dated.tables"
    assert main(["build", "--assertions", str(directory / "assertions.jsonl"), "--receipts",
                 str(FIGURE1 / "receipts.jsonl"), "--rules", str(RO), "-o", str(folder), "--engine", "duckdb"]) == 0
    with Graph(folder) as graph:
        assert [a.to_json() for a in graph.assertions.values()] == want
        view = EvidenceView(as_of=datetime(2022, 1, 1, tzinfo=UTC), scope="team:a")
        with Graph(path) as file_graph:
            assert what_if(graph, Deletion(evidence=view)).dead == what_if(file_graph, Deletion(evidence=view)).dead
    assert main(["add", str(folder), "--assertions", str(_more(tmp_path))]) == 0
    with Graph(folder) as graph:
        _added_as_stated(graph)


def test_the_metadata_is_kept_by_the_file_add_and_rdf(dated, tmp_path):
    records, assertions, receipts, path, directory = dated
    want = [a.to_json() for a in assertions]
    with Graph(path) as graph:
        assert [a.to_json() for a in graph.assertions.values()] == want
    copy = tmp_path / (path.name + ".copy")
    copy.write_bytes(path.read_bytes())
    assert main(["add", str(copy), "--assertions", str(_more(tmp_path))]) == 0
    with Graph(copy) as graph:
        _added_as_stated(graph)
    out = tmp_path / "dated.trig"
    export_graph(path, out, "trig")
    data = rdflib.Dataset(default_union=True)
    data.parse(out, format="trig")
    vocabulary = rdflib.Graph().parse(vocabulary_path(), format="turtle")
    for term in ("evidence", "expires", "scope", "evidenceStatus", "verifies", "meetsRequirement", "requiredKinds"):
        assert (rdflib.URIRef(PG + term), rdflib.RDF.type, None) in vocabulary, term
    by_id = {str(data.value(n, rdflib.URIRef(PG + "assertionId"), any=True)): n
             for n in data.subjects(rdflib.URIRef(PG + "assertionId"), None)}
    for r in records:
        node = by_id[r["id"]]
        generated = data.value(node, rdflib.URIRef(PROV + "generatedAtTime"), any=True)
        assert (generated is not None) == ("time" in r)
        if "time" in r:
            assert generated.toPython() == datetime.fromisoformat(r["time"]).replace(tzinfo=UTC)
        invalidated = data.value(node, rdflib.URIRef(PROV + "invalidatedAtTime"), any=True)
        assert (invalidated is not None) == ("invalidated_at" in r)
        scopes = {str(s) for s in data.objects(node, rdflib.URIRef(PG + "scope"))}
        assert scopes == set([r["scope"]] if isinstance(r.get("scope"), str) else r.get("scope", []))
    quads = list(ox.parse(path=str(out), format=ox.RdfFormat.TRIG))
    assert any(q.predicate.value == PG + "verifies" for q in quads)
    back = tmp_path / "back.graph"
    assert main(["import", "rdf", str(out), "-o", str(back)]) == 0
    with Graph(back) as graph:
        assert [a.to_json() for a in graph.assertions.values()] == want


def test_export_and_serve_mark_the_requirement(dated, tmp_path):
    _, _, _, path, _ = dated
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(), require=Requirement(("source_claim",)))
        unqualified = {u["id"] for u in outcome.unqualified}
        # under the current view (the default) what it kills or demotes meets nothing either
        fallen = set(outcome.dead) | {d["artifact"] for d in outcome.demoted}
    out = tmp_path / "required.trig"
    assert main(["export", str(path), "-o", str(out), "--require", "source_claim"]) == 0
    data = rdflib.Dataset(default_union=True)
    data.parse(out, format="trig")
    meets = {str(data.value(a, rdflib.URIRef(PG + "artifactId"), any=True)): o.toPython()
             for a, _, o in data.triples((None, rdflib.URIRef(PG + "meetsRequirement"), None))}
    assert meets and {i for i, ok in meets.items() if not ok} == unqualified | fallen
    api = GraphApi(path)
    try:
        answer = api.whatif({"require": ["source_claim"], "policy": ["trust-all"]})
        assert {u["id"] for u in answer["outcomes"][0]["require"]["unqualified"]} == unqualified
        dated_answer = api.whatif({"as_of": ["2021-01-01"], "scope": ["team:a"]})
        assert dated_answer["deletion"].startswith("evidence as-of 2021-01-01")
    finally:
        api.close()


BAD = [
    ({"time": "yesterday"}, "bad_time"),
    ({"expires": "2020-13-01"}, "bad_time"),
    ({"scope": []}, "bad_field"),
    ({"scope": ["ok", 3]}, "bad_field"),
    ({"status": "gone"}, "bad_field"),
    ({"invalidated_at": "2024-01-01"}, "bad_field"),  # an active item is not invalidated
    ({"status": "retracted", "invalidated_by": ""}, "bad_field"),
    ({"verifies": "a1"}, "bad_field"),  # only a verification verifies
    ({"kind": "verification", "verifies": "nobody"}, "unknown_assertion"),
    ({"time": "2024-01-01", "expires": "2023-01-01"}, "bad_field"),
]


def test_every_bad_field_is_an_error_at_its_line_all_at_once(tmp_path):
    lines = [{"id": "a1", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y"}]
    lines += [{"id": f"b{i}", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y", **fields}
              for i, (fields, _) in enumerate(BAD)]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(LoadError) as raised:
        load_assertions(path)
    found = {(p.position.line, p.code) for p in raised.value.problems}
    assert found == {(i + 2, code) for i, (_, code) in enumerate(BAD)}
    assert main(["build", "--assertions", str(path), "--receipts", str(FIGURE1 / "receipts.jsonl"),
                 "-o", str(tmp_path / "x.graph")]) == 2


@pytest.mark.parametrize("text, seconds", [("90d", 90 * 86400), ("12h", 43200), ("2w", 14 * 86400), ("30m", 1800),
                                           ("45s", 45), ("1y", 365 * 86400), ("P30D", 30 * 86400),
                                           ("PT12H", 43200), ("P1W", 7 * 86400), ("P1DT6H", 30 * 3600)])
def test_durations(text, seconds):
    assert parse_duration(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "12", "P", "PT", "P1M", "0d", "-3d", "3 days", "P1Y"])
def test_bad_durations_are_refused(text):
    with pytest.raises(PolygraphError) as raised:
        parse_duration(text)
    assert raised.value.code == "bad_duration"


def test_times_are_utc():
    assert parse_time("2024-05-01") == datetime(2024, 5, 1, tzinfo=UTC)
    assert parse_time("2024-05-01T10:00:00+02:00") == datetime(2024, 5, 1, 8, tzinfo=UTC)
    assert parse_time("2024-05-01T10:00:00Z") == datetime(2024, 5, 1, 10, tzinfo=UTC)


def test_cli_flags_and_their_errors(dated, capsys):
    _, _, _, path, _ = dated
    assert main(["whatif", str(path), "--as-of", "2022-01-01", "--scope", "team:a", "--require", "source_claim",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["evidence"]["as_of"] == "2022-01-01T00:00:00Z" and report["evidence"]["scope"] == "team:a"
    assert set(report["require"]) == {"kinds", "promoted", "unqualified", "unqualified_by_layer"}
    assert main(["whatif", str(path), "--stale-after", "2y", "--list"]) == 0
    assert "assertions left out" in capsys.readouterr().out
    for flags, code in ((["--as-of", "soon"], "bad_time"), (["--stale-after", "forever"], "bad_duration"),
                        (["--require", "hunch"], "unknown_kind")):
        assert main(["whatif", str(path), *flags]) == 2
        assert capsys.readouterr().err.startswith(code + ": ")
    assert main(["show", str(path), "--require", "source_claim", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["required_kinds"] == ["source_claim"]
    assert all("meets_requirement" in a and "qualifying_sets" in a for a in shown["artifacts"])
    assert main(["why", str(path), "merge:mapk-erk", "--require", "source_claim,verification", "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert explained["meets_requirement"] == any(explained["qualifies"])


@pytest.mark.parametrize("kinds", [("source_claim",), ("verification",)])
def test_a_summary_meets_a_requirement_only_when_each_sentence_standing_does(dated, kinds):
    """A summary with sentence-level receipts stands while one sentence does, but meets a requirement
    only when every sentence standing meets it (brute force over the sentences' own marks)."""
    _, _, _, path, _ = dated
    with Graph(path) as graph:
        outcome = what_if(graph, Deletion(raw=True), require=Requirement(kinds))
        unqualified = {u["id"] for u in outcome.unqualified}
        checked = 0
        for artifact in graph.artifacts("summary"):
            sentences = graph.sentence_ids(artifact.id)
            if not sentences:
                continue
            checked += 1
            assert (artifact.id in unqualified) == any(s in unqualified for s in sentences), artifact.id
        assert checked


def test_show_whatif_why_and_export_agree_on_a_summary_with_one_sentence_of_another_kind(tmp_path, capsys):
    """Figure 1's AIM2 summary, its first sentence cited by a model's hypothesis: the summary does not
    meet --require source_claim, whichever command asks; once that sentence is retracted it does."""
    variant = tmp_path / "kinds.jsonl"
    variant.write_text((FIGURE1 / "assertions.jsonl").read_text().replace(
        '"id": "a31",', '"id": "a31", "kind": "model_hypothesis",'))
    path = tmp_path / "kinds.graph"
    build_graph(variant, FIGURE1 / "receipts.jsonl", [RO]).write(path)
    require = Requirement(("source_claim",))
    with Graph(path) as graph:
        assert "summary:aim2" in {u["id"] for u in what_if(graph, Deletion(), require=require).unqualified}
        after = what_if(graph, Deletion(sources=("PMID:40057077",)), require=require)
        assert after.summaries["summary:aim2"]["status"] == "trimmed"
        assert "summary:aim2" not in {u["id"] for u in after.unqualified}
    capsys.readouterr()
    assert main(["why", str(path), "summary:aim2", "--require", "source_claim", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meets_requirement"] is False
    assert main(["show", str(path), "--layer", "summary", "--require", "source_claim"]) == 0
    shown = capsys.readouterr().out
    assert "summary:aim2  " in shown and "no support set of only source_claim" in shown.split("summary:aim2-flat")[0]
    export_graph(path, tmp_path / "k.nq", "nquads", require=require)
    dataset = rdflib.Dataset()
    dataset.parse(str(tmp_path / "k.nq"), format="nquads")
    meets = {str(s): o.toPython() for s, p, o, _ in dataset.quads((None, rdflib.URIRef(PG + "meetsRequirement"), None))}
    assert meets["https://w3id.org/polygraph/id/artifact/summary:aim2"] is False
    assert meets["https://w3id.org/polygraph/id/artifact/summary:aim2-flat"] is True
