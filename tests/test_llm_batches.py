"""Message Batches through the real anthropic SDK over an httpx2 MockTransport (no network).

The scripted batch API keeps the batches it was sent: ``POST /v1/messages/batches`` creates
one, ``GET .../batches/ID`` reports it in progress for a set number of polls and then
ended, and ``GET .../batches/ID/results`` serves its results as JSON Lines, each request's
outcome (succeeded, errored, expired) chosen by a function of the request.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading

import httpx2
import pytest

from polygraph_logic.audit import ModelOracle, audit
from polygraph_logic.llm import AnswerCache, ModelClient, ModelError, Question
from polygraph_logic.llm.batches import custom_id
from test_audit import RETRACTED_ABSTRACT, by_artifact, graph_path, index  # noqa: F401  (fixtures)
from test_llm_client import EVIDENCE, KEY, MERGE, message, prompt_of, template_of
from polygraph_logic.query.whatif import Deletion

BASE = "https://api.anthropic.com/v1/messages/batches"


def verdict_of(prompt: str) -> str:
    """A scripted re-derivation: true while paper B's two assertions are still shown."""
    return json.dumps({"verdict": "[a20]" in prompt and "[a21]" in prompt, "reason": "scripted"})


class BatchAPI:
    """A MockTransport handler for the Message Batches endpoints (see the module docstring)."""

    def __init__(self, outcome=lambda params, round_number: ("succeeded", verdict_of(prompt_of(params))),
                 polls_in_progress: int = 2):
        self.outcome = outcome
        self.polls_in_progress = polls_in_progress
        self.batches: dict[str, dict] = {}
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        with self.lock:
            self.calls.append((request.method, request.url.path))
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            requests = json.loads(request.content)["requests"]
            batch_id = f"msgbatch_{len(self.batches) + 1:03d}"
            self.batches[batch_id] = {"requests": requests, "polls": 0, "round": len(self.batches)}
            return httpx2.Response(200, json=self.batch(batch_id))
        found = re.fullmatch(r"/v1/messages/batches/(msgbatch_\d+)(/results)?", path)
        if request.method == "GET" and found and found.group(1) in self.batches:
            if found.group(2):
                lines = [json.dumps(self.result(entry, self.batches[found.group(1)]["round"]))
                         for entry in reversed(self.batches[found.group(1)]["requests"])]  # not in request order
                return httpx2.Response(200, text="\n".join(lines) + "\n",
                                       headers={"content-type": "application/binary"})
            self.batches[found.group(1)]["polls"] += 1
            return httpx2.Response(200, json=self.batch(found.group(1)))
        return httpx2.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": path}})

    def batch(self, batch_id: str) -> dict:
        state = self.batches[batch_id]
        ended = state["polls"] > self.polls_in_progress
        counts = {"processing": 0 if ended else len(state["requests"]), "succeeded": 0, "errored": 0, "expired": 0,
                  "canceled": 0}
        if ended:
            for entry in state["requests"]:
                counts[self.outcome(entry["params"], state["round"])[0]] += 1
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "created_at": "2026-12-06T00:00:00Z",
                "expires_at": "2026-12-07T00:00:00Z", "ended_at": "2026-12-06T01:00:00Z" if ended else None,
                "results_url": f"{BASE}/{batch_id}/results" if ended else None}

    def result(self, entry: dict, round_number: int) -> dict:
        kind, *detail = self.outcome(entry["params"], round_number)
        params = entry["params"]
        if kind == "succeeded":
            usage = {"input_tokens": 40, "output_tokens": 10, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 300}
            body = message(detail[0], model=params["model"], usage=usage)
            return {"custom_id": entry["custom_id"], "result": {"type": "succeeded", "message": body}}
        if kind == "errored":
            return {"custom_id": entry["custom_id"], "result": {"type": "errored", "error": {
                "type": "error", "error": {"type": detail[0], "message": f"scripted {detail[0]}"}}}}
        return {"custom_id": entry["custom_id"], "result": {"type": kind}}

    def http(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def creates(self) -> int:
        return sum(1 for method, path in self.calls if method == "POST")


@pytest.fixture(autouse=True)
def environment(monkeypatch):
    monkeypatch.delenv("POLYGRAPH_MODEL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def batch_client(api, tmp_path, **options) -> ModelClient:
    sleeps = options.pop("sleeps", [])
    return ModelClient(cache=tmp_path / "cache.sqlite", http_client=api.http(), mode="batch", poll_interval=7.0,
                       sleep=sleeps.append, jitter=lambda: 0.5, **options)


def merge_draws(n: int = 3) -> list[Question]:
    return [Question("rederive-merge", MERGE, draw) for draw in range(n)]


def test_a_batch_is_submitted_polled_and_matched_by_custom_id(tmp_path):
    api, sleeps, seen = BatchAPI(), [], []
    with batch_client(api, tmp_path, sleeps=sleeps) as client:
        answers = client.answer_all(merge_draws(), progress=lambda done, total: seen.append((done, total)))
        usage = client.usage
    assert [a.data["verdict"] for a in answers] == [True, True, True] and [a.draw for a in answers] == [0, 1, 2]
    # two polls in progress, one ended, and the SDK's results() reads the batch once more for its results URL
    assert api.creates() == 1 and api.batches["msgbatch_001"]["polls"] == 4
    assert sleeps == [7.0, 7.0] and seen[-1] == (3, 3) and seen[0] == (0, 3)
    sent = api.batches["msgbatch_001"]["requests"]
    assert [r["custom_id"] for r in sent] == [custom_id(a.key) for a in [client._render(q) for q in merge_draws()]]
    assert all(len(r["custom_id"]) <= 64 and re.fullmatch(r"[A-Za-z0-9_-]+", r["custom_id"]) for r in sent)
    params = sent[0]["params"]
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    # the same request as an interactive call: the answer's JSON Schema as the output format (written out
    # here, not read from formats.py), and none of the settings current models reject
    assert params["output_config"] == {"format": {"type": "json_schema", "schema": {
        "type": "object", "properties": {"verdict": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["verdict", "reason"], "additionalProperties": False}}}
    assert not {"tool_choice", "tools", "temperature", "top_p", "top_k", "thinking"} & set(params)
    assert [m["role"] for m in params["messages"]] == ["user"]
    # tokens are counted under the batch mode, and the cache holds the answers with their agent record
    assert usage.calls == 3 and usage.batches == 1
    assert usage.tokens["batch"].to_json() == {"input_tokens": 120, "output_tokens": 30, "cache_write_tokens": 0,
                                               "cache_read_tokens": 900}
    assert usage.tokens["interactive"].input == 0
    records = AnswerCache(tmp_path / "cache.sqlite").agent_records()
    assert len(records) == 3 and {r["mode"] for r in records} == {"batch"}
    assert {r["template"] for r in records} == {"rederive-merge"} and {r["version"] for r in records} == {"3"}
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM batch_requests").fetchone()[0] == 0  # all collected
    with batch_client(api, tmp_path) as again:  # answered from the cache: no second batch
        assert all(a.cached for a in again.answer_all(merge_draws()))
    assert api.creates() == 1


def test_errored_and_expired_requests_are_resubmitted_or_reported(tmp_path):
    def outcome(params, round_number):
        text = prompt_of(params)
        if "canonical: A;" in text:
            return ("errored", "invalid_request_error")  # the request itself is wrong: reported
        if "canonical: B;" in text:
            return ("expired",) if round_number == 0 else ("succeeded", '{"verdict": false, "reason": "x"}')
        if "canonical: C;" in text:
            return ("errored", "overloaded_error")  # transient, every round
        return ("succeeded", verdict_of(text))

    questions = [Question("rederive-merge", {"artifact": f"canonical: {name}; members: {name}, {name}2",
                                             "evidence": EVIDENCE}) for name in "ABCD"]
    api = BatchAPI(outcome, polls_in_progress=0)
    with batch_client(api, tmp_path, max_retries=1) as client:
        a, b, c, d = client.answer_all(questions)
        rejected = dict(client.usage.rejected)
    assert isinstance(a, ModelError) and a.code == "batch_errored" and "invalid_request_error" in a.message
    assert b.data["verdict"] is False and not b.cached  # expired once, then answered by the second batch
    assert isinstance(c, ModelError) and c.code == "batch_errored" and "overloaded_error" in c.message
    assert d.data["verdict"] is True
    assert api.creates() == 2 and len(api.batches["msgbatch_002"]["requests"]) == 2  # B and C again
    assert rejected == {"batch_errored": 2}
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:  # nothing left to resume: a re-run asks A and C anew
        assert db.execute("SELECT COUNT(*) FROM batch_requests").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 2


def test_an_interrupted_run_resumes_polling_and_never_submits_again(tmp_path):
    class Interrupt(BaseException):
        pass

    api = BatchAPI(polls_in_progress=10)

    def interrupt_on_second_poll(seconds):
        if api.batches["msgbatch_001"]["polls"] >= 2:
            raise Interrupt  # as ^C would, while the batch is still in progress

    with pytest.raises(Interrupt):
        with batch_client(api, tmp_path) as client:
            client._sleep = interrupt_on_second_poll
            client.answer_all(merge_draws())
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        kept = db.execute("SELECT batch_id, COUNT(*) FROM batch_requests GROUP BY batch_id").fetchall()
    assert kept == [("msgbatch_001", 3)] and api.creates() == 1
    api.polls_in_progress = 3  # the batch ends while nobody watches
    with batch_client(api, tmp_path) as client:
        answers = client.answer_all(merge_draws())
    assert [a.data["verdict"] for a in answers] == [True] * 3 and api.creates() == 1  # polled, not resubmitted
    assert client.usage.batches == 0 and client.usage.calls == 3


def test_a_schema_violation_in_a_batch_result_is_reported_with_its_reason(tmp_path):
    api = BatchAPI(lambda params, n: ("succeeded", '{"verdict": "maybe", "reason": "x"}'), polls_in_progress=0)
    with batch_client(api, tmp_path) as client:
        [answer] = client.answer_all(merge_draws(1))
    assert answer.code == "schema_violation" and "verdict must be true or false" in answer.message
    assert client.usage.rejected == {"schema_violation": 1}
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 0


def test_audit_batch_asks_every_draw_in_one_batch(index, tmp_path):  # noqa: F811
    api = BatchAPI(polls_in_progress=1)
    with batch_client(api, tmp_path) as client:
        report = audit(index, [Deletion(sources=(RETRACTED_ABSTRACT,))], ModelOracle(client), draws=5)
    merge = by_artifact(report.deletions[0])["merge:mapk-erk"]
    assert (merge.draws, merge.verdict, merge.outcome) == ([True] * 5, "alive", "agree")
    assert api.creates() == 1
    asked = {template_of(prompt_of(r["params"])) for r in api.batches["msgbatch_001"]["requests"]}
    assert "rederive-merge" in asked
    # the five draws of one artifact share their prompt: the user turn is marked for caching as well
    assert all(r["params"]["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
               for r in api.batches["msgbatch_001"]["requests"])
    assert len(api.batches["msgbatch_001"]["requests"]) == 5 * len(report.deletions[0].artifacts)


def test_construct_in_batch_mode_writes_what_the_interactive_run_writes(tmp_path):
    from polygraph_logic.llm.construct import construct
    from test_construct import CORPUS, ScriptedAPI, scripted

    api = BatchAPI(lambda params, n: ("succeeded", scripted(template_of(prompt_of(params)), prompt_of(params))),
                   polls_in_progress=0)
    with batch_client(api, tmp_path / "b") as client:
        report = construct(CORPUS, tmp_path / "batch", client)
    assert api.creates() == 3  # one batch per step: claims, merges, summaries
    assert [len(b["requests"]) for b in api.batches.values()] == [4, 1, 2]
    # each construction prompt is asked once: only the system part is marked for caching, not the user turn
    assert all(isinstance(r["params"]["messages"][0]["content"], str) for b in api.batches.values()
               for r in b["requests"])
    with ModelClient(cache=tmp_path / "i.sqlite", http_client=ScriptedAPI(scripted).http()) as client:
        construct(CORPUS, tmp_path / "interactive", client)
    for name in ("assertions.jsonl", "receipts.jsonl"):
        assert (tmp_path / "batch" / name).read_bytes() == (tmp_path / "interactive" / name).read_bytes()
    assert report.usage["batches"] == 3 and report.usage["by_mode"]["batch"]["input_tokens"] == 7 * 40
    assert "(3 batches)" in report.cost


def test_the_construct_command_takes_batch_and_price_options(tmp_path, monkeypatch, capsys):
    import polygraph_logic.cli.construct as command
    from polygraph_logic.cli import main
    from test_construct import CORPUS, scripted

    api = BatchAPI(lambda params, n: ("succeeded", scripted(template_of(prompt_of(params)), prompt_of(params))),
                   polls_in_progress=1)
    made = []

    def client(model, cache, max_retries, **options):
        made.append(options)
        return ModelClient(model, cache, api.http(), max_retries, sleep=lambda s: None, **options)

    monkeypatch.setattr(command, "ModelClient", client)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"claude-sonnet-5-5": {"input": 3, "output": 15, "cache_write": 3.75,
                                                        "cache_read": 0.3}}))
    assert main(["construct", str(CORPUS), "-o", str(tmp_path / "out"), "--batch", "--poll-interval", "2",
                 "--prices", str(prices), "--json"]) == 0
    [options] = made
    assert options["mode"] == "batch" and options["poll_interval"] == 2.0 and options["concurrency"] == 4
    usage = json.loads(capsys.readouterr().out)["usage"]
    assert api.creates() == 3 and usage["batches"] == 3 and usage["calls"] == 7
    # every request is billed as 40 input, 10 output, 300 cache read tokens at half of the file's prices
    assert usage["dollars"] == pytest.approx(7 * (40 * 3 + 10 * 15 + 300 * 0.3) / 1e6 / 2)
