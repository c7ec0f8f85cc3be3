"""The re-derivation audit: the verdict rule, Wilson intervals against hand-worked values and
the study's own figures, an end-to-end audit of examples/figure1 whose scripted oracle
follows the example README, replay of recorded answers, pooling, the model oracle through a
fake client and through ModelClient over an httpx2 MockTransport, and the CLI."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import sympy

from polygraph_logic.audit import (
    FailedDraw,
    ModelOracle,
    NamedDeletion,
    ReplayOracle,
    ScriptedOracle,
    audit,
    load_audit,
    outcome,
    random_retractions,
    verdict,
    wilson,
)
from polygraph_logic.audit.verdicts import Row, check_rule, pool
from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RETRACTED_ABSTRACT = "PMID:39973430"  # a12, a13: the merge's first evidence group
AIM2_ABSTRACT = "PMID:40057077"  # a31: the AIM2 finding


def figure1_answer(task) -> bool:
    """The example README's expectations: the merge re-derives from either evidence group
    (paper B's a20 and a21 suffice); the flat AIM2 summary does not re-derive without a31;
    each sentence re-derives from the assertion it states."""
    shown = task.evidence_ids
    if task.layer == "merge":
        return {"a20", "a21"} <= shown or {"a12", "a13"} <= shown
    if task.layer == "summary":
        return "a31" in shown
    return ("a31" if task.artifact.endswith("#s1") else "a32") in shown


@pytest.fixture(scope="module")
def graph_path(tmp_path_factory, figure1_graph) -> Path:
    """This module's copy of Figure 1 built with rules/ro.dl (conftest.py's ``figure1_graph``)."""
    path = tmp_path_factory.mktemp("figure1") / "figure1.graph"
    shutil.copy(figure1_graph, path)
    return path


@pytest.fixture(scope="module")
def index(graph_path) -> GraphIndex:
    return GraphIndex(Graph(graph_path))


def by_artifact(entry) -> dict:
    return {a.artifact: a for a in entry.artifacts}


# --- the verdict rule and the intervals -------------------------------------------------


def test_verdict_thresholds_at_the_boundaries():
    draws = lambda k, n=5: [True] * k + [False] * (n - k)  # noqa: E731
    assert [verdict(draws(k), 0.2) for k in range(6)] == ["dead", "dead", "undecided", "undecided", "alive", "alive"]
    # failed draws are not "not reproduced": 4 of 4 valid is alive, 3 of 4 (0.75 < 0.8) undecided
    assert verdict([True] * 4 + [None], 0.2) == "alive"
    assert verdict([True, True, True, False, None], 0.2) == "undecided"
    assert verdict([True, False, False, False, None], 0.2) == "undecided"  # 1/4 > 0.2
    assert verdict([None] * 5, 0.2) == "undecided"
    assert verdict([], 0.2) == "undecided"
    # exactly on the thresholds (0.75 * 4 = 3, 0.25 * 4 = 1), and tau = 0 needs unanimity
    assert verdict([True, True, True, False], 0.25) == "alive"
    assert verdict([True, False, False, False], 0.25) == "dead"
    assert verdict(draws(9, 10), 0.0) == "undecided" and verdict(draws(10, 10), 0.0) == "alive"
    assert verdict(draws(7, 10), 0.3) == "alive" and verdict(draws(3, 10), 0.3) == "dead"
    assert [outcome("alive", v) for v in ("alive", "dead", "undecided")] == ["agree", "leaky", "undecided"]
    assert [outcome("dead", v) for v in ("alive", "dead", "undecided")] == ["over-deleted", "agree", "undecided"]
    for draws_, tau in ((0, 0.2), (5, 0.5), (5, -0.1)):
        with pytest.raises(PolygraphError):
            check_rule(draws_, tau)


def test_wilson_interval_against_hand_worked_values_and_the_paper():
    assert wilson(0, 0) is None
    # textbook values: 5 of 10 -> [0.2366, 0.7634]; 0 of 10 -> [0, z^2 / (n + z^2)]
    assert [round(x, 4) for x in wilson(5, 10)] == [0.2366, 0.7634]
    low, high = wilson(0, 10)
    assert low == 0 and high == pytest.approx(1.96 ** 2 / (10 + 1.96 ** 2))
    # the study's intervals (percent, one decimal) and the counts behind them: revoke-relation
    # merges 22 of 26 agree and summaries 8 of 22; pooled leaks 43 of 238 merges, 45 of 109 summaries
    paper = {(22, 26): (84.6, (66.5, 93.9)), (8, 22): (36.4, (19.7, 57.0)),
             (43, 238): (18.1, (13.7, 23.5)), (45, 109): (41.3, (32.5, 50.7))}
    for (k, n), (share, interval) in paper.items():
        assert round(100 * k / n, 1) == share
        assert tuple(round(100 * x, 1) for x in wilson(k, n)) == interval, (k, n)


@pytest.mark.parametrize("k,n", [(1, 3), (7, 9), (13, 40)])
def test_wilson_bounds_solve_the_score_equation(k, n):
    """Independent of the closed form: the bounds are the roots of (k/n - p)^2 = z^2 p (1 - p) / n."""
    p = sympy.symbols("p")
    z = sympy.Rational(196, 100)
    roots = sorted(float(r) for r in sympy.solve((sympy.Rational(k, n) - p) ** 2 - z ** 2 * p * (1 - p) / n, p))
    assert wilson(k, n) == pytest.approx(tuple(roots), abs=1e-12)


def test_rows_count_decided_artifacts_and_pool_by_layer():
    row = Row("merge")
    for result in ["agree"] * 13 + ["leaky"] * 4 + ["over-deleted"] * 2 + ["undecided"] * 2:
        row.add(result)
    data = row.to_json()
    assert (data["n"], data["decided"], data["undecided"]) == (21, 19, 2)
    assert (data["agreement"], data["leaky"], data["over_deleted"]) == (0.6842, 0.2105, 0.1053)  # Table 2's first row
    assert Row.from_json(data) == row
    pooled = pool([[Row("merge", 1, 2, 3, 4), Row("summary", 0, 5)], [Row("merge", 10, 20, 30, 40)]])
    assert pooled == [Row("merge", 11, 22, 33, 44), Row("summary", 0, 5, 0, 0)]


# --- end to end on examples/figure1 ------------------------------------------------------


def test_retracting_the_aim2_abstract_shows_the_flat_summary_leaking(index):
    report = audit(index, [Deletion(sources=(AIM2_ABSTRACT,))], ScriptedOracle(figure1_answer))
    entry = report.deletions[0]
    artifacts = by_artifact(entry)
    assert set(artifacts) == {"summary:aim2-flat", "summary:aim2#s1"}  # the merge is not touched
    flat = artifacts["summary:aim2-flat"]
    assert (flat.label, flat.draws, flat.verdict, flat.outcome) == ("alive", [False] * 5, "dead", "leaky")
    sentence = artifacts["summary:aim2#s1"]
    assert (sentence.layer, sentence.label, sentence.verdict, sentence.outcome) == ("sentence", "dead", "dead", "agree")
    [fate] = entry.summaries
    assert (fate.summary, fate.label_status, fate.status, fate.dead, fate.sentences) == ("summary:aim2", "trimmed",
                                                                                       "trimmed", 1, 2)
    table = {row.layer: row for row in entry.table}
    assert (table["summary"].n, table["summary"].leaky, table["sentence"].agree, table["merge"].n) == (1, 1, 1, 0)


def test_retracting_the_mapk_abstract_keeps_the_merge_alive(index):
    shown = {}

    def answer(task):
        shown[task.artifact, task.draw] = [a.id for a in task.evidence]
        return figure1_answer(task)

    report = audit(index, [Deletion(sources=(RETRACTED_ABSTRACT,))], ScriptedOracle(answer))
    merge = by_artifact(report.deletions[0])["merge:mapk-erk"]
    assert (merge.label, merge.reproduced, merge.verdict, merge.outcome) == ("alive", 5, "alive", "agree")
    # surviving evidence: the merge's cited a20, a21 (a12, a13 are deleted); no other assertion
    # mentions a member; five distinct draws
    assert shown == {("merge:mapk-erk", d): ["a20", "a21"] for d in range(5)}


def test_printed_table_has_the_shape_of_table_2(index):
    deletions = [Deletion(sources=(AIM2_ABSTRACT,)), Deletion(sources=(RETRACTED_ABSTRACT,))]
    text = audit(index, deletions, ScriptedOracle(figure1_answer)).table_text()
    rows = [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()]
    assert ["operation", "layer", "n", "agreement", "leaky", "over-deleted", "undecided"] in rows
    assert ["retract-source PMID:40057077", "summaries", "1", "0.0% [0.0, 79.3]", "100.0% [20.7, 100.0]",
            "0.0% [0.0, 79.3]", "0"] in rows
    assert ["retract-source PMID:39973430", "merges", "1", "100.0% [20.7, 100.0]", "0.0% [0.0, 79.3]",
            "0.0% [0.0, 79.3]", "0"] in rows
    assert ["pooled over 2 deletions", "summaries", "1", "0.0% [0.0, 79.3]", "100.0% [20.7, 100.0]",
            "0.0% [0.0, 79.3]", "0"] in rows
    assert "summary:aim2: label trimmed, re-derivation trimmed (1 of 2 sentences dead): agree" in text
    assert "61 touched, 61 agree with their labels" in text  # the edges under the MAPK retraction


@pytest.mark.slow
def test_pooling_over_several_deletions_sums_every_adjudication(index):
    deletions = [Deletion(sources=(AIM2_ABSTRACT,)), Deletion(sources=(RETRACTED_ABSTRACT,)),
                 Deletion(relations=("RO:0002211",)), *random_retractions(index, 0.5, 0, repeat=3)]
    report = audit(index, deletions, ScriptedOracle(figure1_answer))
    document = report.to_json()
    counted: dict[str, dict[str, int]] = {}
    for entry in document["deletions"]:
        for artifact in entry["artifacts"]:
            cell = counted.setdefault(artifact["layer"], {})
            cell[artifact["outcome"]] = cell.get(artifact["outcome"], 0) + 1
    pooled = {row["layer"]: row for row in document["pooled"]}
    for layer, cell in counted.items():
        row = pooled[layer]
        assert row["n"] == sum(cell.values())
        assert row["counts"] == {"agree": cell.get("agree", 0), "leaky": cell.get("leaky", 0),
                                 "over_deleted": cell.get("over-deleted", 0)}
        assert row["leaky"] == round(cell.get("leaky", 0) / row["decided"], 4)
    # the fixed deletions alone: the merge agrees twice (paper B survives both), the summary leaks once
    assert pooled["merge"]["counts"]["agree"] >= 2 and pooled["summary"]["counts"]["leaky"] >= 1
    assert f"pooled over {len(deletions)} deletions" in report.table_text()


def test_random_retractions_are_seeded_samples_of_the_sources(index):
    sources = sorted(index.sources)
    deletions = random_retractions(index, 0.5, 7, repeat=3)
    assert [d.name for d in deletions] == [f"random-retraction 0.5 seed {s}" for s in (7, 8, 9)]
    for seed, entry in zip((7, 8, 9), deletions):
        assert entry.deletion.sources == tuple(sorted(random.Random(seed).sample(sources, 2)))
    assert random_retractions(index, 0.5, 7, repeat=3) == deletions
    assert len(random_retractions(index, 0.01, 0)[0].deletion.sources) == 1  # at least one source
    with pytest.raises(PolygraphError, match="fraction"):
        random_retractions(index, 0, 0)


def test_unknown_names_fail_before_any_draw(index):
    asked = []
    with pytest.raises(PolygraphError) as caught:
        audit(index, [Deletion(sources=(AIM2_ABSTRACT,)), Deletion(sources=("PMID:4005707",))],
              ScriptedOracle(lambda task: asked.append(task) or True))
    assert caught.value.code == "unknown_deletion" and "PMID:40057077" in caught.value.message
    assert asked == []
    with pytest.raises(PolygraphError, match="distinct names"):
        audit(index, [Deletion(sources=(AIM2_ABSTRACT,))] * 2, ScriptedOracle(figure1_answer))


# --- recorded answers ---------------------------------------------------------------------


def flaky_answer(task) -> bool:
    """The README's answers, except that draw 2 of the merge fails and draw 0 of the flat summary says yes."""
    if task.layer == "merge" and task.draw == 2:
        raise FailedDraw("refusal", "scripted refusal")
    if task.layer == "summary" and task.draw == 0:
        return True
    return figure1_answer(task)


def test_audit_json_round_trips_through_the_replay_oracle(index, tmp_path):
    deletions = [Deletion(sources=(AIM2_ABSTRACT,)), NamedDeletion("mapk", Deletion(sources=(RETRACTED_ABSTRACT,)))]
    first = audit(index, deletions, ScriptedOracle(flaky_answer))
    merge = by_artifact(first.deletions[1])["merge:mapk-erk"]
    assert (merge.draws, merge.failed_draws, merge.verdict) == ([True, True, None, True, True], 1, "alive")
    flat = by_artifact(first.deletions[0])["summary:aim2-flat"]
    assert (flat.reproduced, flat.verdict) == (1, "dead")  # 1 of 5 is at most tau
    path = tmp_path / "AUDIT.json"
    first.write(path)
    recorded = load_audit(path)
    assert recorded == json.loads(json.dumps(first.to_json()))
    assert recorded["deletions"][1]["deletion"] == {"sources": [RETRACTED_ABSTRACT], "relations": [],
                                                    "assertions": []}
    replay = ReplayOracle(path)
    again = audit(index, deletions, replay)
    assert again.oracle == f"replay:{path}"
    assert {**again.to_json(), "oracle": "scripted"} == first.to_json()
    # a deletion is also found by its sets under another name
    renamed = audit(index, [NamedDeletion("other name", Deletion(sources=(RETRACTED_ABSTRACT,)))], replay)
    assert renamed.deletions[0].artifacts == first.deletions[1].artifacts


def test_replay_from_json_lines_and_missing_answers(index, tmp_path):
    lines = [{"deletion": f"retract-source {AIM2_ABSTRACT}", "artifact": "summary:aim2-flat", "draw": d,
              "verdict": d < 4} for d in range(5)]
    lines += [{"deletion": {"sources": [AIM2_ABSTRACT]}, "artifact": "summary:aim2#s1", "draw": d,
               "verdict": None if d == 0 else False} for d in range(5)]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    report = audit(index, [Deletion(sources=(AIM2_ABSTRACT,))], ReplayOracle(path))
    artifacts = by_artifact(report.deletions[0])
    assert (artifacts["summary:aim2-flat"].verdict, artifacts["summary:aim2-flat"].outcome) == ("alive", "agree")
    assert (artifacts["summary:aim2#s1"].failed_draws, artifacts["summary:aim2#s1"].verdict) == (1, "dead")
    with pytest.raises(PolygraphError) as caught:
        audit(index, [Deletion(sources=(AIM2_ABSTRACT,))], ReplayOracle(path), draws=6)
    assert caught.value.code == "replay_missing"
    assert "summary:aim2-flat" in caught.value.message and "draw 5" in caught.value.message
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"deletion": "x", "artifact": "y", "draw": 0, "verdict": true}\n{"draw": "one"}\n')
    with pytest.raises(PolygraphError) as caught:
        ReplayOracle(bad)
    assert caught.value.code == "invalid_replay" and caught.value.position.line == 2


def test_replaying_under_another_prompt_family_is_an_error(index, tmp_path):
    path = tmp_path / "AUDIT.json"
    audit(index, [Deletion(sources=(AIM2_ABSTRACT,))], ScriptedOracle(figure1_answer)).write(path)
    with pytest.raises(PolygraphError, match="'rederive' prompt"):
        audit(index, [Deletion(sources=(AIM2_ABSTRACT,))], ReplayOracle(path), prompt="blind")


# --- the model oracle ---------------------------------------------------------------------


class FakeClient:
    """Has ModelClient.complete's signature; answers like figure1_answer, with scripted failures."""

    model = "fake-model"

    def __init__(self, fail=None):
        self.calls = []
        self.fail = fail or {}

    def complete(self, template_name, variables, draw=0, schema="rederivation"):
        self.calls.append((template_name, dict(variables), draw, schema))
        if (template_name, draw) in self.fail:
            raise self.fail[template_name, draw]
        shown = set(re.findall(r"^\[(\w+)\]", variables["evidence"], re.MULTILINE))
        if "merge" in template_name:
            verdict_ = {"a20", "a21"} <= shown
        else:
            verdict_ = "a31" in shown
        return SimpleNamespace(data={"verdict": verdict_, "reason": "scripted"})


def test_model_oracle_renders_templates_and_records_guard_failures(index):
    from polygraph_logic.llm import ModelUnavailable, Refusal

    client = FakeClient({("rederive-merge", 1): Refusal("scripted refusal", template="rederive-merge", draw=1)})
    oracle = ModelOracle(client)
    assert oracle.name == "anthropic:fake-model"
    report = audit(index, [Deletion(sources=(RETRACTED_ABSTRACT,)), Deletion(sources=(AIM2_ABSTRACT,))], oracle)
    merge = by_artifact(report.deletions[0])["merge:mapk-erk"]
    assert (merge.draws, merge.failures, merge.verdict) == ([True, None, True, True, True],
                                                            [{"draw": 1, "code": "refusal"}], "alive")
    merge_calls = [c for c in client.calls if c[0] == "rederive-merge"]
    assert [c[2] for c in merge_calls] == [0, 1, 2, 3, 4] and {c[3] for c in merge_calls} == {"rederivation"}
    assert merge_calls[0][1] == {
        "artifact": "canonical: MAPK/ERK; members: MAPK/ERK, MAPK/ERK pathway, ERK1/2 cascade",
        "evidence": "[a20] MAPK/ERK | RO:0002213 | cell proliferation | MAPK/ERK activation drives proliferation\n"
                    "[a21] ERK1/2 cascade | RO:0002213 | cell proliferation | the ERK1/2 cascade (MAPK/ERK) "
                    "promotes proliferation"}
    templates = {c[0]: c[1]["artifact"] for c in client.calls}
    assert templates["rederive-summary"] == "AIM2 suppresses oral carcinoma. AIM2 is found in the cytosol."
    assert templates["rederive-sentence"] == "AIM2 suppresses oral carcinoma."
    blind = FakeClient()
    audit(index, [Deletion(sources=(RETRACTED_ABSTRACT,)), Deletion(sources=(AIM2_ABSTRACT,))],
          ModelOracle(blind), prompt="blind", draws=1)
    assert [(c[0], c[1]["artifact"]) for c in blind.calls] == [
        ("blind-merge", "MAPK/ERK, MAPK/ERK pathway, ERK1/2 cascade"),  # the names only, no conclusion
        ("blind-sentence", "AIM2 suppresses oral carcinoma. AIM2 is found in the cytosol."),  # the flat summary
        ("blind-sentence", "AIM2 suppresses oral carcinoma.")]
    # an API that stays unavailable is no answer to record: the audit stops
    down = FakeClient({("rederive-merge", 0): ModelUnavailable("gave up", template="rederive-merge", draw=0)})
    with pytest.raises(ModelUnavailable):
        audit(index, [Deletion(sources=(RETRACTED_ABSTRACT,))], ModelOracle(down))


def test_model_oracle_through_model_client_over_a_mock_transport(index):
    import httpx2

    from polygraph_logic.llm import ModelClient

    prompts = []

    def handler(request):
        body = json.loads(request.content)
        prompt = body["messages"][0]["content"]
        prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]  # a repeated prompt: a cached block
        prompts.append(prompt)
        if len(prompts) == 3:  # a content-filter refusal on the third draw
            return httpx2.Response(200, json=_message("", body["model"], "refusal"))
        verdict_ = "[a20]" in prompt and "[a21]" in prompt
        return httpx2.Response(200, json=_message(json.dumps({"verdict": verdict_, "reason": "scripted"}),
                                                  body["model"]))

    client = ModelClient(model="claude-sonnet-5-5", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
                         max_retries=0, api_key="test-key-not-real", concurrency=1)  # the third request: draw 2
    report = audit(index, [Deletion(sources=(RETRACTED_ABSTRACT,))], ModelOracle(client))
    merge = by_artifact(report.deletions[0])["merge:mapk-erk"]
    assert (merge.draws, merge.verdict, merge.outcome) == ([True, True, None, True, True], "alive", "agree")
    assert merge.failures == [{"draw": 2, "code": "refusal"}]
    assert report.oracle == "anthropic:claude-sonnet-5-5" and len(prompts) == 5
    assert all("canonical: MAPK/ERK" in p and "[a20]" in p and "[a12]" not in p for p in prompts)
    assert client.usage.calls == 5


def _message(text, model, stop_reason="end_turn"):
    """A Messages API body as a structured-output answer comes: the answer as one text block."""
    content = [{"type": "text", "text": text}] if text else []
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 10}}


# --- the command line ---------------------------------------------------------------------


def test_cli_replays_a_recorded_audit(index, graph_path, tmp_path, capsys):
    recorded = tmp_path / "recorded.json"
    deletions = [Deletion(sources=(AIM2_ABSTRACT,)), Deletion(sources=(RETRACTED_ABSTRACT,)),
                 *random_retractions(index, 0.5, 3, repeat=2)]
    audit(index, deletions, ScriptedOracle(figure1_answer)).write(recorded)
    out = tmp_path / "AUDIT.json"
    status = main(["audit", str(graph_path), "--retract-source", AIM2_ABSTRACT, "--retract-source",
                   RETRACTED_ABSTRACT, "--separately", "--random-retraction", "0.5", "--seed", "3", "--repeat",
                   "2", "--oracle", f"replay:{recorded}", "-o", str(out)])
    printed = capsys.readouterr().out
    assert status == 0
    assert "pooled over 4 deletions" in printed and "random-retraction 0.5 seed 4" in printed
    mine, theirs = load_audit(out), load_audit(recorded)
    assert mine["deletions"] == theirs["deletions"] and mine["pooled"] == theirs["pooled"]
    assert mine["oracle"] == f"replay:{recorded}"
    assert main(["audit", str(graph_path), "--retract-source", AIM2_ABSTRACT, "--oracle", f"replay:{recorded}",
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["deletions"][0]["artifacts"] == theirs["deletions"][0]["artifacts"]


def test_cli_sources_named_together_are_one_deletion_unless_separately(index, graph_path, tmp_path, capsys):
    """--retract-source S repeated is ONE deletion, as in every command; --separately audits each."""
    recorded = tmp_path / "recorded.json"
    both = Deletion(sources=(AIM2_ABSTRACT, RETRACTED_ABSTRACT))
    each = [Deletion(sources=(AIM2_ABSTRACT,)), Deletion(sources=(RETRACTED_ABSTRACT,))]
    audit(index, [both, *each], ScriptedOracle(figure1_answer)).write(recorded)
    argv = ["audit", str(graph_path), "--retract-source", AIM2_ABSTRACT, "--retract-source", RETRACTED_ABSTRACT,
            "--oracle", f"replay:{recorded}", "--json"]
    assert main(argv) == 0
    together = json.loads(capsys.readouterr().out)["deletions"]
    assert [d["deleted_assertions"] for d in together] == [len(both.resolve(index.graph))]
    assert main([*argv, "--separately"]) == 0
    separate = json.loads(capsys.readouterr().out)["deletions"]
    assert [d["deleted_assertions"] for d in separate] == [len(d.resolve(index.graph)) for d in each]
    assert main(["audit", str(graph_path), "--separately", "--oracle", f"replay:{recorded}"]) == 2
    assert capsys.readouterr().err.startswith("bad_argument: --separately")


def test_cli_errors_say_what_to_do(graph_path, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    graph = str(graph_path)
    assert main(["audit", graph, "--retract-source", AIM2_ABSTRACT]) == 2
    assert "needs ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert main(["audit", graph, "--oracle", "replay:x.json"]) == 2
    assert "say what to delete" in capsys.readouterr().err
    assert main(["audit", graph, "--retract-source", "PMID:4005707", "--oracle", "replay:x.json"]) == 2
    assert "did you mean PMID:40057077" in capsys.readouterr().err
    assert main(["audit", graph, "--retract-source", AIM2_ABSTRACT, "--oracle", "replay:missing.json"]) == 2
    assert "cannot read replay file missing.json" in capsys.readouterr().err
    assert main(["audit", graph, "--retract-source", AIM2_ABSTRACT, "--oracle", "oracle-of-delphi"]) == 2
    assert "choose anthropic or replay:FILE" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["audit", graph, "--retract-source", AIM2_ABSTRACT, "--oracle", f"replay:{empty}"]) == 2
    assert "has no answer for deletion 'retract-source PMID:40057077'" in capsys.readouterr().err
    assert main(["audit", graph, "--retract-source", AIM2_ABSTRACT, "--oracle", f"replay:{empty}",
                 "--tau", "0.5"]) == 2
    assert "--tau" in capsys.readouterr().err
    assert not (tmp_path / "AUDIT.json").exists()
