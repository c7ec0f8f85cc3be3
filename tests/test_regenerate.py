"""``regenerate``: the model-written artifacts a retraction kills or trims, rewritten from the
evidence that stands (llm/regenerate.py, query/regenerated.py, cli/regenerate.py).

The model is never called: answers come from recorded-answer files (the Figure 1 fixture, or
files these tests write for the prompts the plan renders). What is dead or trimmed is computed
here by brute force from the receipts file itself, not by the what-if machinery.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.graph.records import LoadError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.llm.cache import RECORDED_FORMAT, prompt_sha256
from polygraph_logic.llm.regenerate import plan_regeneration
from polygraph_logic.llm.templates import load_template
from polygraph_logic.query.regenerated import regenerate_version
from polygraph_logic.query.session import Session
from polygraph_logic.query.whatif import Deletion, what_if

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
FIXTURE = FIGURE1 / "regenerate-answers.jsonl"
RETRACTION = "PMID:40057077"  # a31: the first sentence of the AIM2 summary rests on it alone


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


ASSERTIONS = {a["id"]: a for a in _lines(FIGURE1 / "assertions.jsonl")}
RECEIPTS = _lines(FIGURE1 / "receipts.jsonl")


def _build(folder: Path, name: str = "figure1.graph", assertions: Path = FIGURE1 / "assertions.jsonl") -> Path:
    graph = folder / name
    assert main(["build", "--assertions", str(assertions), "--receipts", str(FIGURE1 / "receipts.jsonl"),
                 "--rules", "ro", "-o", str(graph)]) == 0
    return graph


@pytest.fixture()
def figure1(tmp_path) -> Path:
    return _build(tmp_path)


def _json(capsys, argv: list[str], status: int = 0):
    capsys.readouterr()
    assert main([*argv, "--json"]) == status
    return json.loads(capsys.readouterr().out)


def _versions(graph: Path) -> list[dict]:
    with Graph(graph) as opened:
        return opened.version_rows()


# --- what is rewritten: checked against a brute-force reading of the receipts ----------------
def _brute_force(deleted: set[str]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Returns {artifact: dead | trimmed} of the model-written artifacts, and each summary's dead
    sentences, read from receipts.jsonl alone: a support set survives when it holds no deleted id."""
    def alive(support) -> bool:
        return any(not deleted & set(group) for group in support)

    fates, sentences = {}, {}
    for receipt in RECEIPTS:
        if "sentences" in receipt:
            dead = {f"{receipt['artifact']}#s{i}" for i, s in enumerate(receipt["sentences"], 1)
                    if not alive(s["support"])}
            sentences[receipt["artifact"]] = dead
            if dead:
                fates[receipt["artifact"]] = "dead" if len(dead) == len(receipt["sentences"]) else "trimmed"
        elif not alive(receipt["support"]):
            fates[receipt["artifact"]] = "dead"
    return fates, sentences


def _surviving(receipt: dict, deleted: set[str]) -> set[str]:
    """The audit's surviving evidence of a receipt, recomputed: cited ids and every assertion about
    its entities, less the deleted ones."""
    groups = [g for s in receipt.get("sentences", [receipt]) for g in s["support"]]
    cited = {a for g in groups for a in g}
    if receipt["layer"] == "merge":
        entities = {*receipt["content"]["members"], receipt["content"]["canonical"]}
    else:
        entities = {ASSERTIONS[a][k] for a in cited for k in ("subject", "object")}
    about = {i for i, a in ASSERTIONS.items() if a["subject"] in entities or a["object"] in entities}
    return (cited | about) - deleted


SOURCES = sorted({a["source"] for a in ASSERTIONS.values()})
DELETIONS = [combo for n in (1, 2, 3) for combo in combinations(SOURCES, n)]


@pytest.mark.parametrize("sources", DELETIONS, ids=["+".join(d) for d in DELETIONS])
def test_the_dry_run_lists_exactly_the_dead_or_trimmed_model_written_artifacts(figure1, capsys, sources):
    deleted = {i for i, a in ASSERTIONS.items() if a["source"] in sources}
    fates, dead_sentences = _brute_force(deleted)
    argv = ["regenerate", str(figure1), *(f"--retract-source={s}" for s in sources), "--dry-run"]
    plan = _json(capsys, argv)
    listed = {r["artifact"]: r["status"] for r in plan["rewrites"]}
    listed.update({r["artifact"]: r["status"] for r in plan["not_asked"]})
    assert listed == fates
    assert set(plan["deleted_assertions"]) == deleted and plan["requests"] == len(plan["rewrites"])
    by_id = {r["artifact"]: r for r in RECEIPTS}
    for rewrite in plan["rewrites"]:
        receipt = by_id[rewrite["artifact"]]
        assert set(rewrite["evidence"]) == _surviving(receipt, deleted) != set()
        assert set(rewrite["covers"]) == dead_sentences.get(rewrite["artifact"], set())
        assert rewrite["input_tokens_estimate"] == -(-rewrite["prompt_characters"] // 4)
    for entry in plan["not_asked"]:
        assert _surviving(by_id[entry["artifact"]], deleted) == set()
    assert plan["prompt_characters"] == sum(r["prompt_characters"] for r in plan["rewrites"])
    assert len(_versions(figure1)) == 1  # a dry run writes nothing


def test_the_dry_run_shows_the_aim2_prompt_with_paper_c_only(figure1, capsys):
    assert main(["regenerate", str(figure1), "--retract-source", RETRACTION, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "summary:aim2 (summary, trimmed; with its dead sentences summary:aim2#s1) -> summary:aim2-regenerated" in out
    assert "evidence shown: a32\n" in out and "1 requests" in out and "nothing asked, nothing written" in out
    prompt = plan_regeneration(figure1, Deletion(sources=(RETRACTION,))).rewrites[0].prompt
    assert "[a32] AIM2 | RO:0001025 | cytosol" in prompt and "[a31]" not in prompt
    assert f"{len(prompt):,} characters, ~{-(-len(prompt) // 4):,} input tokens" in out


# --- the replayed run ---------------------------------------------------------------------
def test_replaying_the_fixture_rebuilds_the_aim2_summary_from_paper_c_alone(figure1, capsys, tmp_path):
    report = _json(capsys, ["regenerate", str(figure1), "--retract-source", RETRACTION, "--replay", str(FIXTURE)])
    assert report["usage"]["calls"] == 0 and report["usage"]["cached"] == 1
    versions = _versions(figure1)
    assert [v["action"] for v in versions] == ["build", "regenerate"]  # ONE new version
    assert versions[1]["record"]["deletion"] == {"sources": [RETRACTION]}
    assert versions[1]["record"]["replaced"] == ["summary:aim2"]
    with Graph(figure1) as graph:
        standing = set(graph.assertions)
        summary = graph.artifact("summary:aim2-regenerated")
        sentences = [graph.artifact(s) for s in graph.sentence_ids("summary:aim2-regenerated")]
        assert not graph.has_artifact("summary:aim2") and not graph.has_artifact("summary:aim2#s2")
    assert summary.content["regenerated_from"] == "summary:aim2" and summary.support == (("a32",),)
    cited = {a for s in sentences for group in s.support for a in group}
    assert cited == {"a32"} and cited <= standing
    assert {ASSERTIONS[a]["source"] for a in cited} == {"example:paper-C"}
    assert "a31" not in standing
    with Graph(figure1, at=1) as before:  # the history keeps what was rewritten
        assert before.has_artifact("summary:aim2") and "a31" in before.assertions
    assert main(["check", str(figure1)]) == 0
    assert main(["replay", str(figure1), "-o", str(tmp_path / "replayed.graph")]) == 0
    assert "identical" in capsys.readouterr().out


def test_whatif_on_the_new_version_shows_the_regenerated_summary_standing(figure1, capsys):
    assert main(["regenerate", str(figure1), "--retract-source", RETRACTION, "--replay", str(FIXTURE)]) == 0
    other = _json(capsys, ["whatif", str(figure1), "--retract-source", "PMID:39973430"])
    assert "summary:aim2-regenerated" not in other["touched"] and "summary:aim2-regenerated" not in other["dead"]
    shown = _json(capsys, ["show", str(figure1), "--layer", "summary"])
    assert "summary:aim2-regenerated" in {a["id"] for a in shown["artifacts"]}
    paper_c = _json(capsys, ["whatif", str(figure1), "--retract-source", "example:paper-C"])
    assert {"summary:aim2-regenerated", "summary:aim2-regenerated#s1"} <= set(paper_c["dead"])


def test_the_same_after_an_applied_deletion(figure1, capsys, tmp_path):
    applied = tmp_path / "applied.graph"
    session = Session.open(figure1)
    session.retract(RETRACTION)
    session.apply(applied)
    plan = _json(capsys, ["regenerate", str(applied), "--after-deletion", "--dry-run"])
    assert [(r["artifact"], r["status"], r["evidence"]) for r in plan["rewrites"]] == \
        [("summary:aim2", "trimmed", ["a32"])]
    assert main(["regenerate", str(applied), "--after-deletion", "--replay", str(FIXTURE)]) == 0
    assert [v["action"] for v in _versions(applied)] == ["build", "apply", "regenerate"]
    with Graph(applied) as graph:
        assert graph.layer_ids("sentence") == ["summary:aim2-regenerated#s1"]
    assert main(["check", str(applied)]) == 0
    assert main(["replay", str(applied), "-o", str(tmp_path / "again.graph")]) == 0
    capsys.readouterr()
    assert main(["regenerate", str(figure1), "--after-deletion", "--dry-run"]) == 2
    assert "not_after_deletion" in capsys.readouterr().err


# --- refused answers and receipts: nothing written ----------------------------------------
def _recorded(path: Path, graph: Path, answers: dict[str, dict], deletion: Deletion) -> Path:
    """Writes recorded answers for the prompts the plan renders (``answers`` by artifact)."""
    lines = [{"format": RECORDED_FORMAT, "fixture": "written by tests/test_regenerate.py"}]
    for rewrite in plan_regeneration(graph, deletion).rewrites:
        lines.append({"model": "test-fixture", "template": rewrite.template,
                      "version": load_template(rewrite.template).version,
                      "prompt_sha256": prompt_sha256(rewrite.prompt), "draw": 0,
                      "text": json.dumps(answers[rewrite.artifact])})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("cited, why", [("a31", "a31"), ("a99", "a99"), ("summary:aim2#s2", "summary:aim2#s2")])
def test_an_answer_citing_evidence_not_shown_is_refused_and_nothing_is_written(figure1, capsys, tmp_path, cited, why):
    fabricated = {"summary:aim2": {"sentences": [{"text": "AIM2 suppresses oral carcinoma.", "support": [[cited]]}]}}
    answers = _recorded(tmp_path / "answers.jsonl", figure1, fabricated, Deletion(sources=(RETRACTION,)))
    capsys.readouterr()
    assert main(["regenerate", str(figure1), "--retract-source", RETRACTION, "--replay", str(answers)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regeneration_refused:") and "unknown_citation" in err and why in err
    assert len(_versions(figure1)) == 1 and not list(tmp_path.glob("*.regenerated-*"))


@pytest.mark.parametrize("cited", ["a31", "a99"])
def test_one_sentence_left_out_for_an_unshown_citation_refuses_the_whole_rewrite(figure1, capsys, tmp_path, cited):
    # the client keeps the good sentence and reports the other (Completion.rejected): a summary
    # rewritten without one of its sentences is not written either
    sentences = [{"text": "AIM2 localises to the cytosol.", "support": [["a32"]]},
                 {"text": "AIM2 suppresses oral carcinoma.", "support": [["a32"], [cited]]}]
    answers = _recorded(tmp_path / "answers.jsonl", figure1, {"summary:aim2": {"sentences": sentences}},
                        Deletion(sources=(RETRACTION,)))
    capsys.readouterr()
    assert main(["regenerate", str(figure1), "--retract-source", RETRACTION, "--replay", str(answers)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regeneration_refused: 1 answer(s) refused, nothing written:")
    assert f"summary:aim2: unknown_citation: sentences[1] cites id(s) {cited}" in err
    assert len(_versions(figure1)) == 1 and not list(tmp_path.glob("*.regenerated-*"))


def test_a_missing_answer_stops_without_writing(figure1, capsys, tmp_path):
    empty = tmp_path / "none.jsonl"
    empty.write_text(json.dumps({"format": RECORDED_FORMAT}) + "\n")
    assert main(["regenerate", str(figure1), "--retract-source", RETRACTION, "--replay", str(empty)]) == 2
    assert "replay_missing" in capsys.readouterr().err and len(_versions(figure1)) == 1


def test_without_a_key_or_answers_it_stops_at_once(figure1, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["regenerate", str(figure1), "--retract-source", RETRACTION]) == 2
    assert capsys.readouterr().err.startswith("missing_api_key:")
    assert len(_versions(figure1)) == 1 and not (figure1.parent / "figure1.graph.cache.sqlite").exists()


def _receipt(path: Path, cited: str) -> Path:
    path.write_text(json.dumps({"artifact": "summary:x", "layer": "summary", "content": {"community": "aim2"},
                                "sentences": [{"text": "AIM2 is in the cytosol.", "support": [["a32"]]}]}) + "\n"
                    + json.dumps({"artifact": "summary:y", "layer": "summary", "content": {"community": "aim2"},
                                  "sentences": [{"text": "AIM2 suppresses oral carcinoma.",
                                                 "support": [[cited]]}]}) + "\n")
    return path


def test_receipts_are_checked_as_add_checks_them_and_a_retracted_citation_is_refused(figure1, tmp_path, capsys):
    with Graph(figure1) as graph:
        outcome = what_if(graph, Deletion(sources=(RETRACTION,)))
    retracted = _receipt(tmp_path / "retracted.jsonl", "a31")
    with pytest.raises(LoadError) as caught:
        regenerate_version(figure1, retracted, outcome, ("summary:aim2",))
    assert caught.value.code == "retracted_citation" and caught.value.position.line == 2
    assert str(caught.value).startswith(f"{retracted}:2:1: retracted_citation: receipt 'summary:y' cites a31")
    unknown = _receipt(tmp_path / "unknown.jsonl", "a99")
    with pytest.raises(LoadError) as refused:
        regenerate_version(figure1, unknown, outcome, ("summary:aim2",))
    capsys.readouterr()
    assert main(["add", str(figure1), "--receipts", str(unknown)]) == 2  # add's own error, the same line
    assert capsys.readouterr().err.strip() == str(refused.value)
    assert len(_versions(figure1)) == 1


# --- a merge rewritten: its labels kept to the evidence that stands ------------------------
def test_a_dead_merge_is_rebuilt_from_a_standing_source(tmp_path, capsys):
    assertions = tmp_path / "assertions.jsonl"
    extra = {"id": "a40", "source": "example:paper-D", "subject": "ERK1/2 cascade", "predicate": "RO:0002213",
             "object": "MAPK/ERK", "text": "the ERK1/2 cascade, also called MAPK/ERK"}
    assertions.write_text((FIGURE1 / "assertions.jsonl").read_text() + json.dumps(extra) + "\n")
    graph = _build(tmp_path, "merged.graph", assertions)
    deletion = Deletion(sources=("PMID:39973430", "example:paper-B"))
    plan = plan_regeneration(graph, deletion)
    assert [(r.artifact, r.status, [a.id for a in r.evidence]) for r in plan.rewrites] == \
        [("merge:mapk-erk", "dead", ["a40"])]
    answer = {"merges": [{"canonical": "MAPK/ERK", "members": ["MAPK/ERK", "ERK1/2 cascade"], "support": [["a40"]]}]}
    answers = _recorded(tmp_path / "answers.jsonl", graph, {"merge:mapk-erk": answer}, deletion)
    report = _json(capsys, ["regenerate", str(graph), "--retract-source", "PMID:39973430", "--retract-source",
                            "example:paper-B", "--replay", str(answers)])
    assert report["version"]["replaced"] == [] and "merge:mapk-erk" in report["version"]["dropped"]
    with Graph(graph) as opened:
        merge = opened.artifact("merge:mapk-erk-regenerated")
        assert merge.support == (("a40",),) and merge.content["members"] == ["MAPK/ERK", "ERK1/2 cascade"]
        gone = {"a12", "a13", "a20", "a21"}
        for fact in opened.facts():  # no label of the new version names a deleted assertion
            assert not gone & {a for group in fact.support for a in group}, fact
    assert main(["check", str(graph)]) == 0
    assert main(["replay", str(graph), "-o", str(tmp_path / "replayed.graph")]) == 0
    assert "identical" in capsys.readouterr().out


def test_the_fixture_is_what_its_script_writes(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("record_regenerate", FIGURE1 / "record_regenerate.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    written = script.record(tmp_path / "answers.jsonl")
    assert written.read_text() == FIXTURE.read_text(), "run python examples/figure1/record_regenerate.py"


# --- the live path (the real SDK over a mock transport: no network) and a graph folder -------
def test_the_live_path_asks_once_caches_and_sends_only_standing_evidence(tmp_path, monkeypatch):
    pytest.importorskip("httpx2")
    from test_llm_client import ScriptedAPI  # the Messages API scripted as Sonnet 5.5 answers: JSON text
    from polygraph_logic.llm import ModelClient
    from polygraph_logic.llm.regenerate import regenerate

    monkeypatch.delenv("POLYGRAPH_MODEL", raising=False)
    answer = json.dumps({"sentences": [{"text": "AIM2 localises to the cytosol.", "support": [["a32"]]}]})
    api = ScriptedAPI(lambda template, prompt: answer if template == "regenerate-summary" else "wrong template")
    deletion = Deletion(sources=(RETRACTION,))
    first, second = _build(tmp_path, "first.graph"), _build(tmp_path, "second.graph")
    for graph in (first, second):
        with ModelClient(cache=tmp_path / "cache.sqlite", api_key="sk-test", http_client=api.http()) as client:
            report = regenerate(graph, client, deletion)
        assert report.written is not None and report.written.replaced == ["summary:aim2"]
    [prompt] = api.prompts
    assert "[a32] AIM2" in prompt and "[a31]" not in prompt
    body = json.loads(api.requests[0].content)
    assert "tool_choice" not in body and "tools" not in body  # a forced tool is a 400 on the default model
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert "sentences" in body["output_config"]["format"]["schema"]["properties"]
    assert body["system"][0]["text"] == load_template("regenerate-summary").system  # the fixed part, cached
    assert "[a32] AIM2" in body["messages"][0]["content"]  # the evidence is in the user turn
    assert report.usage["calls"] == 0 and report.usage["cached"] == 1  # the second run: from the cache
    with Graph(second) as opened:
        assert opened.artifact("summary:aim2-regenerated").support == (("a32",),)


def test_a_sentence_the_client_leaves_out_refuses_the_rewrite_from_the_api_too(tmp_path):
    pytest.importorskip("httpx2")
    from test_llm_client import ScriptedAPI
    from polygraph_logic.errors import PolygraphError
    from polygraph_logic.llm import ModelClient
    from polygraph_logic.llm.regenerate import regenerate

    answer = json.dumps({"sentences": [{"text": "AIM2 localises to the cytosol.", "support": [["a32"]]},
                                       {"text": "AIM2 suppresses oral carcinoma.", "support": [["a31"]]}]})
    api = ScriptedAPI(lambda template, prompt: answer)
    graph = _build(tmp_path)
    with ModelClient(cache=tmp_path / "cache.sqlite", api_key="sk-test", http_client=api.http()) as client:
        with pytest.raises(PolygraphError) as refused:
            regenerate(graph, client, Deletion(sources=(RETRACTION,)))
        assert client.usage.rejected_items == {"unknown_citation": 1}
    assert refused.value.code == "regeneration_refused" and "sentences[1] cites id(s) a31" in str(refused.value)
    assert len(_versions(graph)) == 1 and not list(tmp_path.glob("*.regenerated-*"))


def test_the_rewrites_go_as_one_message_batch_with_batch_on(tmp_path, monkeypatch):
    pytest.importorskip("httpx2")
    from test_llm_batches import BatchAPI
    from polygraph_logic.llm import ModelClient
    from polygraph_logic.llm.regenerate import regenerate

    monkeypatch.delenv("POLYGRAPH_MODEL", raising=False)
    answer = json.dumps({"sentences": [{"text": "AIM2 localises to the cytosol.", "support": [["a32"]]}]})
    api = BatchAPI(lambda params, round_number: ("succeeded", answer), polls_in_progress=1)
    graph = _build(tmp_path)
    with ModelClient(cache=tmp_path / "cache.sqlite", api_key="sk-test", http_client=api.http(), mode="batch",
                     poll_interval=1.0, sleep=lambda seconds: None) as client:
        report = regenerate(graph, client, Deletion(sources=(RETRACTION,)))
    assert api.creates() == 1 and len(api.batches["msgbatch_001"]["requests"]) == 1
    assert report.usage["batches"] == 1 and report.usage["by_mode"]["batch"]["cache_read_tokens"] == 300
    assert report.written is not None and report.written.replaced == ["summary:aim2"]


# --- the dry run's price ------------------------------------------------------------------
def test_the_dry_run_prices_the_estimated_input_and_bounds_the_output(figure1, capsys, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"m-test": {"input": 1000, "output": 100, "cache_write": 1250, "cache_read": 100}}))
    argv = ["regenerate", str(figure1), "--retract-source", RETRACTION, "--dry-run", "--model", "m-test",
            "--prices", str(prices)]
    cost = _json(capsys, argv)["cost"]
    # by hand: the AIM2 prompt is 1,479 characters -> 370 tokens (rounded up) at $1,000 a million = $0.370; the
    # output is at most 4,096 tokens (max_tokens) at $100 a million = $0.4096
    assert cost["input_tokens_estimate"] == 370 and cost["input_dollars"] == pytest.approx(0.370)
    assert cost["output_tokens_at_most"] == 4096 and cost["output_dollars_at_most"] == pytest.approx(0.4096)
    assert _json(capsys, [*argv, "--batch"])["cost"]["input_dollars"] == pytest.approx(0.185)  # half price
    capsys.readouterr()
    assert main(argv) == 0
    assert ("cost on m-test: ~$0.3700 for the ~370 input tokens estimated (the prompt's text; the answer's JSON "
            "schema each request carries is not counted), plus at most $0.4096 for output (not estimated: bounded by "
            f"max_tokens, 4,096 tokens in all); prices from {prices}") in capsys.readouterr().out
    assert main(argv[:-4] + ["--model", "claude-unpriced-9"]) == 0
    assert "cost: no price for model claude-unpriced-9 in the built-in table" in capsys.readouterr().out
    assert len(_versions(figure1)) == 1


def test_a_graph_folder_is_regenerated_the_same_way(tmp_path, capsys):
    pytest.importorskip("duckdb", reason="the [duckdb] extra is not installed")
    folder = tmp_path / "folder"
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts",
                 str(FIGURE1 / "receipts.jsonl"), "--rules", "ro", "--engine", "duckdb", "--tables", str(folder)]) == 0
    assert main(["regenerate", str(folder), "--retract-source", RETRACTION, "--replay", str(FIXTURE)]) == 0
    with Graph(folder) as opened:
        assert opened.layer_ids("sentence") == ["summary:aim2-regenerated#s1"]
        assert opened.artifact("summary:aim2-regenerated").support == (("a32",),)
    assert main(["check", str(folder)]) == 0
    assert main(["replay", str(folder), "-o", str(tmp_path / "again")]) == 0
    assert "identical" in capsys.readouterr().out
