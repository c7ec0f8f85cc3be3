"""End to end: `polygraph serve` driven in headless Chromium (Debian's chromium and chromium-driver).

Figure 1 and the synthetic graph are built as the documentation does; the tests search an
artifact, switch sources off (a checkbox, a pasted list), check that exactly the artifacts
`polygraph whatif --list` names are marked dead, switch the policy and undo. Screenshots
go to tests/artifacts/ (ignored by git). The what-if round trip (click -> updated view) is
printed, never asserted. Skips only when chromium or its driver is not installed (.ci/run
installs both with apt-get).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from webdriver import Browser, find_chromium, free_port

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "tests" / "artifacts"
CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium and chromium-driver are not installed "
                                                         "(`apt-get install chromium chromium-driver`; .ci/run does)")


def polygraph(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", *args], capture_output=True, text=True,
                          check=True)
    return done.stdout


def build(tmp: Path, example: str) -> Path:
    graph = tmp / f"{example}.graph"
    folder = ROOT / "examples" / example
    polygraph("build", "--assertions", str(folder / "assertions.jsonl"), "--receipts", str(folder / "receipts.jsonl"),
              "--rules", "ro", "-o", str(graph))
    return graph


def dead_listed(graph: Path, *args: str) -> set[str]:
    """The ids `polygraph whatif --list` names as dead (lines `  - ID ...`)."""
    out = polygraph("whatif", str(graph), *args, "--list")
    return {line.split()[1] for line in out.splitlines() if line.startswith("  - ")}


class Server:
    """`polygraph serve GRAPH --port P` in a child process."""

    def __init__(self, graph: Path, *options: str):
        port = free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "polygraph_logic.cli", "serve", str(graph),
                                         "--port", str(port), *options], stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        assert "serving" in line, line + self.process.stderr.read()
        self.url = f"http://127.0.0.1:{port}/"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.process.stderr.close()


@pytest.fixture(scope="module")
def browser():
    b = Browser(*CHROMIUM)
    yield b
    b.quit()


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-browser")
    return {name: build(tmp, name) for name in ("figure1", "synthetic")}


def open_app(browser: Browser, url: str) -> None:
    browser.get(url)
    browser.wait("return document.body.dataset.updates >= 1")


def updates(browser: Browser) -> int:
    return int(browser.run("return document.body.dataset.updates"))


def act(browser: Browser, css: str) -> float:
    """Clicks and waits for the views to update; returns the page's click-to-view time in ms."""
    return act_timed(browser, css)[0]


def act_timed(browser: Browser, css: str) -> tuple[float, float, float]:
    """Clicks and waits for the views to update; returns the page's click-to-view time, the
    what-if request's and the drawing's (before layout and paint), in ms."""
    before = updates(browser)
    browser.click(css)
    browser.wait(f"return Number(document.body.dataset.updates) > {before}")
    data = browser.run("return [document.body.dataset.roundtrip, document.body.dataset.requestMs, "
                       "document.body.dataset.drawMs]")
    return tuple(float(x) for x in data)


def marked_dead(browser: Browser) -> set[str]:
    """The ids of the rows marked dead in the what-if view, after "show more" until every
    touched artifact is drawn (the view draws the first 200 up front)."""
    browser.click("#nav-whatif")
    browser.wait("return !document.getElementById('view-whatif').hidden && App.route.view === 'whatif'")
    rows = "return document.querySelectorAll('#touched tr[data-id]').length"
    while browser.run("return !document.getElementById('touched-more').hidden"):
        before = browser.run(rows)
        browser.click("#touched-more")
        browser.wait(f"{rows} > {before}")
    return set(browser.run("return [...document.querySelectorAll('#touched tr.dead')].map(r => r.dataset.id)"))


def search(browser: Browser, text: str, kind: str, value: str, shot: str | None = None) -> None:
    browser.type("#search", text)
    item = f'.completions .item[data-kind="{kind}"][data-value="{value}"]'
    browser.wait("return document.querySelector(arguments[0]) !== null", item)
    if shot:
        browser.screenshot(SHOTS / shot)
    browser.click(item)


@pytest.mark.slow
def test_figure1_search_retract_policy_undo(browser, graphs):
    graph = graphs["figure1"]
    server = Server(graph)
    try:
        open_app(browser, server.url)
        browser.screenshot(SHOTS / "figure1-start.png")
        search(browser, "merge:mapk", "artifacts", "merge:mapk-erk")
        browser.wait("return document.getElementById('artifact-id')?.textContent === 'merge:mapk-erk'")
        assert browser.run("return document.querySelectorAll('#support-sets .support-set').length") == 2
        assert browser.run("return document.querySelectorAll('#artifact-graph g.node.set.dead').length") == 0

        took = act(browser, 'input[data-source="PMID:39973430"]')
        print(f"\nfigure1: retract PMID:39973430, click -> updated artifact view: {took:.1f} ms")
        # the merge stands on its second support set; the first is broken and greyed in the graph
        assert browser.run("return document.querySelectorAll('#artifact-graph g.node.set.dead').length") == 1
        assert browser.run("return document.querySelector('#artifact-graph g.node.artifact.dead')") is None
        assert browser.run("return document.querySelectorAll('#artifact-graph g.node.source.deleted').length") == 1
        browser.screenshot(SHOTS / "figure1-artifact.png")

        expected = dead_listed(graph, "--retract-source", "PMID:39973430")
        assert len(expected) == 45
        assert marked_dead(browser) == expected
        browser.screenshot(SHOTS / "figure1-whatif.png")

        took = act(browser, '#policy option[value="deployed"]')
        print(f"figure1: switch to deployed, click -> updated what-if view: {took:.1f} ms")
        deployed = dead_listed(graph, "--retract-source", "PMID:39973430", "--policy", "deployed")
        assert marked_dead(browser) == deployed and len(deployed) == 2
        columns = browser.run("return [...document.querySelectorAll('#side-by-side .policy-column')]"
                              ".map(c => c.dataset.policy)")
        assert columns == ["deployed", "trust-all"]

        act(browser, "#undo")  # back to trust-all
        assert browser.run("return document.getElementById('policy').value") == "trust-all"
        assert marked_dead(browser) == expected
        act(browser, "#undo")  # the source is back
        assert marked_dead(browser) == set()
        assert browser.run("return document.querySelector('input[data-source=\"PMID:39973430\"]').checked") is False

        browser.click("#nav-top")
        browser.wait("return document.querySelectorAll('.top-row').length > 0")
        top = json.loads(polygraph("top-sources", str(graph), "--json"))
        shown = browser.run("return [...document.querySelectorAll('.top-row')].map(r => r.dataset.source)")
        assert shown == [row["source"] for row in top]
        browser.screenshot(SHOTS / "figure1-top-sources.png")
    finally:
        server.stop()


@pytest.mark.slow
def test_synthetic_pasted_retractions_summaries_and_entity(browser, graphs):
    graph = graphs["synthetic"]
    retracted = (ROOT / "examples" / "synthetic" / "retracted.txt").read_text().split()
    server = Server(graph)
    try:
        open_app(browser, server.url)
        search(browser, "KRAS", "entities", "KRAS", shot="synthetic-search.png")
        browser.wait("return document.getElementById('entity-name')?.textContent === 'KRAS'")
        assert browser.run("return document.querySelectorAll('#view-entity tr[data-id]').length") > 0

        browser.run("document.querySelector('#paste-box').open = true")
        browser.type("#paste", ", ".join(retracted) + "\nPMID:00000000")
        took = act(browser, "#paste-apply")
        print(f"\nsynthetic: paste {len(retracted)} retracted sources, click -> updated view: {took:.1f} ms")
        assert "PMID:00000000" in browser.run("return document.getElementById('paste-report').textContent")
        flags = [arg for source in retracted for arg in ("--retract-source", source)]
        assert marked_dead(browser) == dead_listed(graph, *flags)

        outcome = json.loads(polygraph("whatif", str(graph), *flags, "--json"))
        trimmed = browser.run("return Object.fromEntries([...document.querySelectorAll('#summaries .summary')]"
                              ".map(s => [s.dataset.id, s.querySelectorAll('li.dead').length]))")
        assert trimmed == {s: e["dead_sentences"] for s, e in outcome["summaries"].items()}
        assert trimmed  # the retracted sources touch some summaries
        browser.screenshot(SHOTS / "synthetic-whatif.png")

        act(browser, '#policy option[value="deployed"]')
        assert marked_dead(browser) == dead_listed(graph, *flags, "--policy", "deployed")
        act(browser, "#undo")
        browser.run("location.hash = arguments[0]", "#/artifact/summary:c04")
        browser.wait("return document.getElementById('artifact-id')?.textContent === 'summary:c04'")
        dead_sentences = browser.run("return [...document.querySelectorAll('#sentences li.dead')].map(l => l.dataset.id)")
        assert dead_sentences and set(dead_sentences) == set(outcome["dead"]) & {f"summary:c04#s{i}" for i in range(1, 20)}
        assert browser.run("return document.getElementById('artifact-status').textContent") == "trimmed"
        browser.screenshot(SHOTS / "synthetic-summary.png")
        act(browser, "#undo")
        assert marked_dead(browser) == set()
        browser.click("#nav-top")
        browser.wait("return document.querySelectorAll('.top-row').length > 0")
        browser.screenshot(SHOTS / "synthetic-top-sources.png")
    finally:
        server.stop()


def build_ledger(tmp: Path) -> Path:
    """examples/ledger grown in three batches, as docs/ledger.md's story does."""
    graph, folder = tmp / "ledger.graph", ROOT / "examples" / "ledger"
    polygraph("build", "--assertions", str(folder / "batch1.jsonl"), "--receipts",
              str(folder / "batch1-receipts.jsonl"), "--rules", "ro", "--rules", "contradictions",
              "--origins", str(folder / "origins.jsonl"), "-o", str(graph))
    polygraph("add", str(graph), "--assertions", str(folder / "batch2.jsonl"), "--receipts",
              str(folder / "batch2-receipts.jsonl"))
    polygraph("add", str(graph), "--assertions", str(folder / "batch3.jsonl"))
    return graph


def claim_id(graph: Path, triple: tuple[str, str, str]) -> str:
    from polygraph_logic.graph.store.graph_file import Graph
    with Graph(graph) as g:
        return next(a.id for a in g.artifacts("claim") if a.fact[1] == triple)


def show_artifact(browser: Browser, artifact: str) -> None:
    browser.run("location.hash = arguments[0]", f"#/artifact/{artifact}")
    browser.wait("return document.getElementById('artifact-id')?.textContent === arguments[0]", artifact)


@pytest.mark.slow
def test_ledger_versions_kinds_origins_and_a_contradiction_resolved(browser, tmp_path):
    graph = build_ledger(tmp_path)
    verified = claim_id(graph, ("HIF-1α", "RO:0002213", "MCT4"))
    echoed = claim_id(graph, ("HIF-1α", "RO:0002213", "glycolysis"))
    contradictions = json.loads(polygraph("contradictions", str(graph), "--json"))["listed"]
    server = Server(graph)
    try:
        open_app(browser, server.url)
        assert browser.run("return document.getElementById('graph-version').textContent") == "version 3 (latest)"
        show_artifact(browser, verified)
        kinds = browser.run("return [...document.querySelectorAll('#support-sets tr[data-assertion]')]"
                            ".map(r => [r.dataset.assertion, r.querySelector('.kind').textContent])")
        assert sorted(kinds) == [["h5", "model_hypothesis"], ["h8", "verification"]]
        show_artifact(browser, echoed)
        assert browser.run("return [document.getElementById('paths').textContent, "
                           "document.getElementById('origins').textContent]") == ["2", "1"]
        assert "origin example:paper-1: example:news-1, example:paper-1" in browser.run(
            "return document.getElementById('robustness').textContent")

        first = contradictions[0]
        show_artifact(browser, first["id"])
        text = browser.run("return document.getElementById('contradiction').textContent")
        assert "HIF-1α RO:0002213 glycolysis  vs  HIF-1α RO:0002212 glycolysis" in text
        assert browser.run("return document.getElementById('artifact-status').textContent") == "alive"
        browser.screenshot(SHOTS / "ledger-contradiction.png")
        took = act(browser, '#contradiction .resolving[data-kind="sources"] a')  # the first: {example:paper-5}
        print(f"\nledger: resolve a contradiction by its first resolving set, click -> updated view: {took:.1f} ms")
        assert first["resolve_by_sources"][0] == ["example:paper-5"]
        assert browser.run("return App.state.sources") == ["example:paper-5"]
        assert browser.run("return document.getElementById('artifact-status').textContent") == "dead"
        assert marked_dead(browser) == dead_listed(graph, "--retract-source", "example:paper-5")
        counts = browser.run("return document.querySelector('.policy-column.main .bar-row[data-layer=\"contradiction\"] "
                             ".counts').dataset")
        assert (counts["dead"], counts["touched"]) == ("2", "2")
        browser.screenshot(SHOTS / "ledger-whatif.png")
    finally:
        server.stop()
    server = Server(graph, "--at", "2")
    try:
        open_app(browser, server.url)
        assert browser.run("return document.getElementById('graph-version').textContent") == "version 2 of 3 (--at 2)"
        show_artifact(browser, verified)
        assert browser.run("return [...document.querySelectorAll('#support-sets tr[data-assertion]')]"
                           ".map(r => r.dataset.assertion)") == ["h5"]
    finally:
        server.stop()


@pytest.mark.slow
def test_a_negated_assertion_reads_not(browser, tmp_path):
    """The Figure 1 variant of docs/ledger.md's Contradictions: paper E's NOT is marked in the
    contradiction's support set and in the drawing, as `why` marks it."""
    folder = ROOT / "examples" / "figure1"
    variant = tmp_path / "variant.jsonl"
    variant.write_text((folder / "assertions.jsonl").read_text() + (folder / "contradicting.jsonl").read_text())
    graph = tmp_path / "variant.graph"
    polygraph("build", "--assertions", str(variant), "--receipts", str(folder / "receipts.jsonl"),
              "--rules", "ro", "--rules", "contradictions", "-o", str(graph))
    listed = json.loads(polygraph("contradictions", str(graph), "--json"))["listed"]
    denial = next(c for c in listed if c["sides"][1]["negated"])
    server = Server(graph)
    try:
        open_app(browser, server.url)
        show_artifact(browser, denial["id"])
        row = browser.run("return document.querySelector('#support-sets tr[data-assertion=\"a41\"] .triple')"
                          ".textContent")
        assert row == "AIM2 NOT RO:0001025 cytosol"
        assert browser.run("return document.querySelector('#support-sets tr[data-assertion=\"a32\"] .triple')"
                           ".textContent") == "AIM2 RO:0001025 cytosol"
        sides = browser.run("return document.getElementById('contradiction').textContent")
        assert "AIM2 RO:0001025 cytosol  vs  AIM2 NOT RO:0001025 cytosol" in sides
        drawn = browser.run("return document.getElementById('artifact-graph').textContent")
        assert "a41: AIM2 NOT RO:" in drawn and "AIM2 is not found in the cytosol (source_claim)" in drawn
        browser.screenshot(SHOTS / "variant-negated.png")
    finally:
        server.stop()


GO_DATA = ROOT.parent / "shared" / "data" / "go-pombase"


def build_go(tmp: Path) -> Path:
    polygraph("import", "gpad", str(GO_DATA / "truncated-pombase.gpad"), "-o", str(tmp / "assertions.jsonl"))
    polygraph("import", "obographs", str(GO_DATA / "go-truncated-pombase.json"), "-o", str(tmp / "background.dl"))
    graph = tmp / "go.graph"
    polygraph("build", "--assertions", str(tmp / "assertions.jsonl"), "--rules", "ro-class", "--rules", "existential",
              "--rules", str(tmp / "background.dl"), "-o", str(graph))
    return graph


def largest_source(graph: Path) -> str:
    from polygraph_logic.graph.store.graph_file import Graph
    with Graph(graph) as g:
        return g.query("SELECT source FROM assertions GROUP BY source ORDER BY COUNT(*) DESC, source LIMIT 1").fetchone()[0]


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["paper", "go"])
def test_round_trip_at_scale(browser, tmp_path, scale):
    """Prints the click -> updated view time of a what-if on the paper-scale synthetic graph and
    the GO slice (the issue's target is 200 ms; reported, not asserted) and checks the verdicts."""
    if scale == "go":
        if not GO_DATA.is_dir():
            pytest.skip(f"the GO slice is not at {GO_DATA}")
        graph = build_go(tmp_path)
        retracted = []
    else:
        polygraph("generate", "-o", str(tmp_path / "paper"))
        folder = tmp_path / "paper"
        graph = tmp_path / "paper.graph"
        polygraph("build", "--assertions", str(folder / "assertions.jsonl"), "--receipts",
                  str(folder / "receipts.jsonl"), "--rules", "ro", "-o", str(graph))
        retracted = (folder / "retracted.txt").read_text().split()
    source = largest_source(graph)
    server = Server(graph)
    try:
        open_app(browser, server.url)
        browser.type("#source-filter", source)
        checkbox = f'input[data-source="{source}"]'
        browser.wait("return document.querySelectorAll('#sources input').length === 1 && "
                     "document.querySelector(arguments[0]) !== null", checkbox)
        times = {f"retract {source}": act_timed(browser, checkbox)}
        assert marked_dead(browser) == dead_listed(graph, "--retract-source", source)
        times["switch to deployed"] = act_timed(browser, '#policy option[value="deployed"]')
        times["exact on"] = act_timed(browser, "#exact")
        times["undo"] = act_timed(browser, "#undo")
        if retracted:
            browser.run("document.querySelector('#paste-box').open = true")
            browser.type("#paste", "\n".join(retracted))
            times[f"paste {len(retracted)} retracted sources"] = act_timed(browser, "#paste-apply")
            browser.screenshot(SHOTS / f"{scale}-whatif.png")
        print(f"\n{scale} ({graph.stat().st_size / 1e6:.1f} MB): what-if round trip, click -> updated view "
              "(of which the request, and the drawing before layout and paint):")
        for what, (ms, request, draw) in times.items():
            print(f"  {what}: {ms:.0f} ms (request {request:.0f} ms, drawing {draw:.0f} ms)")
    finally:
        server.stop()


def test_the_evidence_read_as_of_a_time_for_a_scope_and_a_requirement(browser, tmp_path):
    """The sidebar's "Read the evidence": --require, --as-of and --scope as the page asks them, its
    dead rows and status the same as `polygraph whatif` with those flags."""
    graph = tmp_path / "evidence.graph"
    folder = ROOT / "examples" / "ledger"
    polygraph("build", "--assertions", str(folder / "evidence.jsonl"), "--receipts",
              str(folder / "evidence-receipts.jsonl"), "-o", str(graph))
    server = Server(graph)
    try:
        open_app(browser, server.url)
        browser.run("document.querySelector('#evidence-box').open = true")

        def enter(css: str, text: str) -> None:
            before = updates(browser)
            browser.run("const input = document.querySelector(arguments[0]); input.value = arguments[1]; "
                        "input.dispatchEvent(new Event('change'))", css, text)
            browser.wait(f"return Number(document.body.dataset.updates) > {before}")

        enter("#require", "source_claim")
        required = json.loads(polygraph("whatif", str(graph), "--require", "source_claim", "--json"))["require"]
        status = browser.run("return document.getElementById('status').textContent")
        assert f"{len(required['unqualified'])} standing artifact without a support set of only source_claim" in status
        enter("#as-of", "2024-06-01")
        enter("#scope", "team:genomics")
        assert marked_dead(browser) == dead_listed(graph, "--as-of", "2024-06-01", "--scope", "team:genomics")
        status = browser.run("return document.getElementById('status').textContent")
        assert status.startswith("evidence as-of 2024-06-01T00:00:00Z, scope team:genomics: 3 assertions deleted")
        browser.screenshot(SHOTS / "evidence-view.png")
    finally:
        server.stop()
