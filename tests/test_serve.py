"""The explorer's JSON endpoints, over HTTP against a server on port 0 in a thread.

Each answer is checked against the Python API the CLI uses (what_if, why, robustness,
top_sources, export), and every bad request must be a 4xx with a JSON error.
"""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from polygraph_logic.cli import main as cli
from polygraph_logic.query.explain import robustness, top_sources
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.serve import ExplorerServer
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


#: the servers' threads look for a shutdown every 50 ms (at serve_forever's default, 0.5 s, each
#: shutdown waited up to half a second)
POLL = {"poll_interval": 0.05}


@pytest.fixture(scope="module", params=["file", "folder"])
def graph_path(tmp_path_factory, request) -> Path:
    """Figure 1 as a graph file (the Python engine) and as a folder (DuckDB): the explorer reads both."""
    if request.param == "folder":
        pytest.importorskip("duckdb")
        path = tmp_path_factory.mktemp("serve") / "figure1.tables"
        target = ["--engine", "duckdb", "--tables", str(path)]
    else:
        path = tmp_path_factory.mktemp("serve") / "figure1.graph"
        target = ["-o", str(path)]
    assert cli(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", *target]) == 0
    return path


@pytest.fixture(scope="module")
def server(graph_path):
    server = ExplorerServer(graph_path, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs=POLL, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


@pytest.fixture(scope="module")
def graph(graph_path):
    with Graph(graph_path) as g:
        yield g


def fetch(server, path: str, body: dict | None = None, method: str | None = None) -> tuple[int, dict, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url.rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def get(server, path: str, body: dict | None = None) -> dict:
    status, headers, data = fetch(server, path, body)
    assert status == 200, data
    assert headers["Content-Type"].startswith("application/json")
    return json.loads(data)


def refused(server, path: str, status: int, code: str, body: dict | None = None, method: str | None = None) -> str:
    got, headers, data = fetch(server, path, body, method)
    assert got == status, data
    assert headers["Content-Type"].startswith("application/json")
    error = json.loads(data)["error"]
    assert error["code"] == code
    assert "Traceback" not in error["message"]
    return error["message"]


def test_binds_localhost_and_serves_the_page_and_its_scripts(server):
    assert server.server_address[0] == "127.0.0.1"
    status, headers, page = fetch(server, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    scripts = [part.split('"')[0] for part in page.decode().split('src="')[1:]]
    assert scripts and all(s.startswith("/static/") for s in scripts)  # nothing from another host
    for script in scripts:
        status, headers, body = fetch(server, script)
        assert status == 200 and headers["Content-Type"].startswith("text/javascript") and body


def test_info_counts_every_layer(server, graph):
    info = get(server, "/api/info")
    assert info["layers"] == graph.counts()
    assert info["assertions"] == 6 and info["sources"] == 4
    assert "deployed" in info["policies"] and "trust-all" in info["policies"]


def test_search_completes_artifacts_entities_sources_and_relations(server):
    found = get(server, "/api/search?q=merge:mapk")
    assert [a["id"] for a in found["artifacts"]] == ["merge:mapk-erk"]
    found = get(server, "/api/search?q=aim")  # lower case finds AIM2 too
    assert "AIM2" in found["entities"]
    assert all(a["triple"][0] == "AIM2" for a in found["artifacts"])
    found = get(server, "/api/search?q=PMID:3")
    assert found["sources"] == [{"name": "PMID:39973430", "assertions": 2}]
    assert get(server, "/api/search?q=RO:00022")["relations"][0]["name"].startswith("RO:00022")
    assert get(server, "/api/search?q=")["artifacts"] == []


def test_names_and_resolve_sort_a_pasted_list(server):
    names = get(server, "/api/names?kind=source")
    assert [n["name"] for n in names["names"]] == ["PMID:39973430", "PMID:40057077", "example:paper-B",
                                                   "example:paper-C"]
    assert get(server, "/api/names?kind=relation&prefix=RO:0002212")["names"] == [
        {"name": "RO:0002212", "assertions": 1}]
    found = get(server, "/api/resolve", {"names": "PMID:39973430,\nPMID:1 a32; RO:0001025"})
    assert found == {"sources": ["PMID:39973430"], "relations": ["RO:0001025"], "assertions": ["a32"],
                     "unknown": ["PMID:1"]}


def test_artifact_has_support_sets_with_evidence_tree_and_robustness(server, graph):
    data = get(server, "/api/artifact?id=merge:mapk-erk")
    assert data["label"] == "a12·a13 + a20·a21"
    first = data["support_sets"][0]
    assert [a["id"] for a in first] == ["a12", "a13"]
    assert first[0]["source"] == "PMID:39973430" and first[0]["text"] == "the MAPK/ERK pathway regulates apoptosis"
    assert data["robustness"] == robustness(graph, "merge:mapk-erk")
    assert data["derivation"]["fact"] == "merge(merge:mapk-erk)"
    assert {p["assertion"] for p in data["derivation"]["premises"]} == {"a12", "a13"}
    assert data["entities"] == ["MAPK/ERK", "MAPK/ERK pathway", "ERK1/2 cascade"]
    summary = get(server, "/api/artifact?id=summary:aim2")
    assert [s["id"] for s in summary["sentences"]] == ["summary:aim2#s1", "summary:aim2#s2"]
    edge = get(server, "/api/artifact?id=" + urllib.request.quote(next(
        a.id for a in graph.artifacts("edge") if a.content["subject"] == "MAPK/ERK")))
    assert edge["derivation"]["rule"]  # an entailed edge is derived by a rule


def test_entity_lists_its_claims_edges_and_merges(server):
    data = get(server, "/api/entity?name=" + urllib.request.quote("ERK1/2 cascade"))
    assert [m["id"] for m in data["merge"]] == ["merge:mapk-erk"]
    assert {c["triple"][0] for c in data["claim"]} == {"ERK1/2 cascade"}
    assert all("ERK1/2 cascade" in (e["triple"][0], e["triple"][2]) for e in data["edge"])


@pytest.mark.parametrize("policy", ["trust-all", "deployed", "flat", "distrust:merge"])
def test_whatif_equals_the_python_api(server, graph, policy):
    data = get(server, "/api/whatif", {"source": ["PMID:39973430"], "policy": [policy, "deployed"]})
    assert [o["policy"] for o in data["outcomes"]] == list(dict.fromkeys([policy, "deployed"]))
    expected = what_if(graph, Deletion(sources=("PMID:39973430",)), policy).to_json()
    got = data["outcomes"][0]
    for key in ("touched", "dead", "kept", "by_layer", "summaries", "deleted_assertions", "demoted", "uncertain"):
        assert got[key] == expected[key], key
    assert set(got["described"]) == set(expected["touched"])
    side = data["outcomes"][-1]  # the side-by-side column: counts only
    deployed = what_if(graph, Deletion(sources=("PMID:39973430",)), "deployed")
    assert side["by_layer"] == deployed.by_layer() and side["policy"] == "deployed"


def test_whatif_trims_summaries_sentence_by_sentence(server):
    data = get(server, "/api/whatif?source=PMID:40057077&policy=trust-all")["outcomes"][0]
    assert data["summaries"]["summary:aim2"] == {"status": "trimmed", "sentences": 2, "dead_sentences": 1}
    assert data["summary_sentences"]["summary:aim2"] == [
        {"id": "summary:aim2#s1", "text": "AIM2 suppresses oral carcinoma.", "dead": True},
        {"id": "summary:aim2#s2", "text": "AIM2 is found in the cytosol.", "dead": False}]


def test_whatif_shown_describes_the_first_touched_dead_first_and_lean_leaves_out_triples(server, graph):
    expected = what_if(graph, Deletion(sources=("PMID:39973430",)), "trust-all").to_json()
    data = get(server, "/api/whatif", {"source": ["PMID:39973430"], "shown": "5", "lean": "1"})["outcomes"][0]
    dead = [n for n in expected["touched"] if n in set(expected["dead"])]
    assert list(data["described"]) == dead[:5]
    assert "triples" not in data and "kept" not in data
    assert data["dead"] == expected["dead"] and data["by_layer"] == expected["by_layer"]
    again = get(server, "/api/whatif", {"source": ["PMID:39973430"]})["outcomes"][0]  # the cached outcome, in full
    assert again["triples"] == expected["triples"] and again["kept"] == expected["kept"]


def test_describe_names_artifacts_in_the_order_asked(server, graph):
    ids = ["merge:mapk-erk", "nope", *what_if(graph, Deletion(sources=("PMID:39973430",))).touched[:3]]
    data = get(server, "/api/describe", {"id": ids})
    assert list(data["described"]) == [i for i in dict.fromkeys(ids) if i != "nope"]  # each once
    assert data["described"]["merge:mapk-erk"] == get(server, "/api/artifact?id=merge:mapk-erk")["text"]
    assert get(server, "/api/describe")["described"] == {}


def test_downloads_whatif_json_and_cleaned_rdf(server, graph, tmp_path):
    status, headers, body = fetch(server, "/api/whatif.json?source=PMID:39973430&policy=deployed")
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    expected = what_if(graph, Deletion(sources=("PMID:39973430",)), "deployed").to_json(listing=True)
    got = json.loads(body)
    assert {k: v for k, v in got.items() if k != "elapsed_ms"} == {
        k: v for k, v in expected.items() if k != "elapsed_ms"}
    status, headers, body = fetch(server, "/api/export?source=PMID:39973430&format=nquads")
    assert status == 200 and headers["Content-Type"] == "application/n-quads"
    assert "figure1-cleaned.nq" in headers["Content-Disposition"]
    written = tmp_path / "cli.nq"
    assert cli(["export", str(graph.path), "--retract-source", "PMID:39973430", "-o", str(written)]) == 0
    assert hashlib.sha256(body).digest() == hashlib.sha256(written.read_bytes()).digest()


def test_top_sources_equal_the_python_api(server, graph):
    data = get(server, "/api/top-sources?policy=trust-all&limit=3")
    assert data["sources"] == top_sources(graph, 3, "trust-all") and data["of"] == 4


def test_bad_requests_are_4xx_json(server):
    assert "nope" in refused(server, "/api/whatif?source=nope", 400, "unknown_deletion")
    refused(server, "/api/whatif?policy=bogus", 400, "unknown_policy")
    refused(server, "/api/whatif?exact=maybe", 400, "bad_parameter")
    refused(server, "/api/artifact", 400, "missing_parameter")
    assert "merge:mapk-erk" in refused(server, "/api/artifact?id=merge:mapk", 404, "not_found")
    refused(server, "/api/artifact?id=a&id=b", 400, "bad_parameter")
    refused(server, "/api/entity?name=nobody", 404, "not_found")
    refused(server, "/api/names?kind=colour", 400, "bad_parameter")
    refused(server, "/api/search?q=a&limit=100000", 400, "bad_parameter")
    refused(server, "/api/export?format=xml", 400, "bad_parameter")
    refused(server, "/api/top-sources?limit=x", 400, "bad_parameter")
    refused(server, "/static/../../etc/passwd", 404, "not_found")
    refused(server, "/api/whatif?source=%ff", 400, "bad_request")
    status, _, data = fetch(server, "/api/whatif", None, "PUT")
    assert status == 405 and json.loads(data)["error"]["code"] == "method_not_allowed"
    status, _, data = fetch(server, "/api/export", {"x": 1}, "POST")
    assert status == 405
    request = urllib.request.Request(server.url + "api/whatif", data=b"[1, 2", method="POST",
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=10)
    assert error.value.code == 400 and json.loads(error.value.read())["error"]["code"] == "bad_json"


def _digest(path: Path) -> str:
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    return hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files)).hexdigest()


def test_the_graph_file_is_never_changed(server, graph_path):
    before = _digest(graph_path)
    get(server, "/api/whatif", {"source": ["PMID:39973430", "example:paper-B"], "policy": ["flat"], "exact": True})
    fetch(server, "/api/export?source=PMID:39973430")
    assert _digest(graph_path) == before


def test_serve_is_a_registered_command():
    from polygraph_logic.cli import build_parser
    args = build_parser("serve").parse_args(["serve", "x.graph"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)


# --- what the ledger added: versions, kinds, negations, origins, contradictions ----------------------
LEDGER = ROOT / "examples" / "ledger"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def ledger_path(tmp_path_factory) -> Path:
    """examples/ledger grown over three batches: versions 1, 2 and 3 (docs/ledger.md, "A story in three batches")."""
    path = tmp_path_factory.mktemp("serve-ledger") / "ledger.graph"
    assert cli(["build", "--assertions", str(LEDGER / "batch1.jsonl"), "--receipts",
                str(LEDGER / "batch1-receipts.jsonl"), "--rules", "ro", "--rules", "contradictions",
                "--origins", str(LEDGER / "origins.jsonl"), "-o", str(path)]) == 0
    assert cli(["add", str(path), "--assertions", str(LEDGER / "batch2.jsonl"), "--receipts",
                str(LEDGER / "batch2-receipts.jsonl")]) == 0
    assert cli(["add", str(path), "--assertions", str(LEDGER / "batch3.jsonl")]) == 0
    return path


def _serving(path: Path, at: int | None = None):
    server = ExplorerServer(path, "127.0.0.1", 0, at=at)
    thread = threading.Thread(target=server.serve_forever, kwargs=POLL, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture(scope="module")
def ledger_servers(ledger_path):
    """The explorer over the grown graph, at its latest version and at version 2."""
    servers = {at: _serving(ledger_path, at) for at in (None, 2)}
    yield {at: server for at, (server, _) in servers.items()}
    for server, thread in servers.values():
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_info_says_which_version_it_reads(ledger_servers, ledger_path):
    latest = get(ledger_servers[None], "/api/info")
    assert (latest["version"], latest["latest"], latest["at"]) == (3, 3, None)
    assert [(v["version"], v["action"], v["parent"]) for v in latest["versions"]] == [
        (1, "build", None), (2, "add", 1), (3, "add", 2)]
    old = get(ledger_servers[2], "/api/info")
    assert (old["version"], old["latest"], old["at"]) == (2, 3, 2)
    with Graph(ledger_path, at=2) as at2, Graph(ledger_path) as now:
        assert old["layers"] == at2.counts() and latest["layers"] == now.counts()
    # batch 3 brought two assertions and the contradictions; version 2 has neither
    assert latest["assertions"] - old["assertions"] == len(_records(LEDGER / "batch3.jsonl"))
    assert latest["layers"]["contradiction"] == 2 and not old["layers"].get("contradiction")


def test_info_of_a_graph_without_additions_is_version_1(server):
    info = get(server, "/api/info")
    assert (info["version"], info["latest"], info["at"]) == (1, 1, None)
    assert [v["action"] for v in info["versions"]] == ["build"]


def test_support_sets_carry_each_assertion_kind_as_its_input_says(ledger_servers):
    stated = {r["id"]: r.get("kind", "source_claim") for name in ("batch1", "batch2", "batch3")
              for r in _records(LEDGER / f"{name}.jsonl")}
    found = get(ledger_servers[None], "/api/search?q=" + urllib.request.quote("HIF-1α") + "&limit=100")
    claim = next(a for a in found["artifacts"]
                 if a["layer"] == "claim" and a["triple"] == ["HIF-1α", "RO:0002213", "MCT4"])
    data = get(ledger_servers[None], "/api/artifact?id=" + claim["id"])
    sets = [[(a["id"], a["kind"], a["negated"]) for a in s] for s in data["support_sets"]]
    assert sorted(sets) == [[("h5", "model_hypothesis", False)], [("h8", "verification", False)]]
    assert all(a["kind"] == stated[a["id"]] for s in data["support_sets"] for a in s)
    # at version 2 the verification is not there yet: the hypothesis is the only support
    before = get(ledger_servers[2], "/api/artifact?id=" + claim["id"])
    assert [[(a["id"], a["kind"]) for a in s] for s in before["support_sets"]] == [[("h5", "model_hypothesis")]]
    assert [[a["id"] for a in s] for s in before["support_sets"]] == [["h5"]]


def test_robustness_reports_paths_and_origins_with_the_stored_origins(ledger_servers):
    found = get(ledger_servers[None], "/api/search?q=" + urllib.request.quote("HIF-1α") + "&limit=100")
    claim = next(a for a in found["artifacts"]
                 if a["layer"] == "claim" and a["triple"] == ["HIF-1α", "RO:0002213", "glycolysis"])
    r = get(ledger_servers[None], "/api/artifact?id=" + claim["id"])["robustness"]
    # by hand: h1 (paper-1) and h7 (news-1) state it, and origins.jsonl derives news-1 from paper-1
    origins = {o["source"]: o["derived_from"] for o in _records(LEDGER / "origins.jsonl")}
    assert origins == {"example:news-1": "example:paper-1"}
    assert (r["paths"], r["origins"], r["independent_supports"], r["echo"]) == (2, 1, 1, True)
    assert r["fewest_origins_to_kill"] == ["example:paper-1"] and len(r["fewest_sources_to_kill"]) == 2


def _brute_resolving(support_sets: list[list[dict]], field: str) -> list[list[str]]:
    """The minimal sets of sources (or assertion ids) meeting every support set, by brute force."""
    from itertools import combinations
    groups = [{a[field] for a in s} for s in support_sets]
    names = sorted(set().union(*groups))
    hitting = [set(c) for n in range(1, len(names) + 1) for c in combinations(names, n)
               if all(set(c) & g for g in groups)]
    return sorted(sorted(h) for h in hitting if not any(o < h for o in hitting))


def test_a_contradiction_shows_its_sides_and_what_resolves_it(ledger_servers, ledger_path):
    with Graph(ledger_path) as g:
        ids = [a.id for a in g.artifacts("contradiction")]
    assert len(ids) == 2
    for cid in ids:
        data = get(ledger_servers[None], "/api/artifact?id=" + cid)
        c = data["contradiction"]
        assert data["layer"] == "contradiction"
        assert [s["negated"] for s in c["sides"]] == [False, False]
        for side in c["sides"]:  # each side is the claim or edge of its triple
            other = get(ledger_servers[None], "/api/artifact?id=" + side["artifact"])
            assert other["triple"] == [side["subject"], side["predicate"], side["object"]]
        assert sorted(map(sorted, c["resolve_by_sources"])) == _brute_resolving(data["support_sets"], "source")
        assert sorted(map(sorted, c["resolve_by_assertions"])) == _brute_resolving(data["support_sets"], "id")
        assert " vs " in data["text"] and "{" not in data["text"]  # a line, not the JSON content
    first = get(ledger_servers[None], "/api/artifact?id=" + ids[0])
    assert first["text"] == ("HIF-1α RO:0002213 glycolysis  vs  HIF-1α RO:0002212 glycolysis  "
                             "(positively and negatively regulates)")
    assert sorted(map(sorted, first["contradiction"]["resolve_by_sources"])) == [
        ["example:news-1", "example:paper-1"], ["example:paper-5"]]
    assert get(ledger_servers[None], "/api/describe", {"id": ids})["described"][ids[0]] == first["text"]


def test_whatif_counts_the_contradiction_layer(ledger_servers, ledger_path):
    data = get(ledger_servers[None], "/api/whatif", {"source": ["example:paper-5"], "policy": ["trust-all"]})
    with Graph(ledger_path) as g:
        expected = what_if(g, Deletion(sources=("example:paper-5",)), "trust-all").to_json()
    got = data["outcomes"][0]
    assert got["by_layer"] == expected["by_layer"]
    assert got["by_layer"]["contradiction"] == {"touched": 2, "dead": 2, "kept": 0}
    assert get(ledger_servers[None], "/api/top-sources")["layers"][-1] == "contradiction"


def test_a_negated_assertion_is_marked_in_its_support_set(tmp_path):
    variant = tmp_path / "variant.jsonl"
    variant.write_text((FIGURE1 / "assertions.jsonl").read_text() + (FIGURE1 / "contradicting.jsonl").read_text())
    path = tmp_path / "variant.graph"
    assert cli(["build", "--assertions", str(variant), "--receipts", str(FIGURE1 / "receipts.jsonl"),
                "--rules", "ro", "--rules", "contradictions", "-o", str(path)]) == 0
    negated = {r["id"] for r in _records(FIGURE1 / "contradicting.jsonl") if r.get("negated")}
    assert negated == {"a41"}
    server, thread = _serving(path)
    try:
        with Graph(path) as g:
            cid = next(a.id for a in g.artifacts("contradiction") if a.content["sides"][1]["negated"])
        data = get(server, "/api/artifact?id=" + cid)
        marks = {a["id"]: a["negated"] for s in data["support_sets"] for a in s}
        assert marks == {"a32": False, "a41": True}
        assert data["text"] == "AIM2 RO:0001025 cytosol  vs  AIM2 NOT RO:0001025 cytosol  (stated and negated)"
        assert [s["negated"] for s in data["contradiction"]["sides"]] == [False, True]
        assert "artifact" not in data["contradiction"]["sides"][1]  # a denial is no claim or edge
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_the_listen_queue_holds_many_clients_at_once(server):
    """The kernel's queue of the listening socket (``ss`` shows it as Send-Q) holds 128
    connections: the standard library's 5 made a client beyond them wait a second for a retry."""
    import shutil
    import subprocess
    if shutil.which("ss") is None:
        pytest.skip("no ss (iproute2) to read the listening socket's queue")
    port = server.server_address[1]
    lines = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout.split("\n")
    queues = [int(line.split()[2]) for line in lines if line.startswith("LISTEN")]
    assert queues and min(queues) >= 128, lines
