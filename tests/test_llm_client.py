"""ModelClient through the real anthropic SDK over an httpx2 MockTransport (no network).

The scripted API answers like the Messages API with structured outputs: every answer comes
back as a text block (one JSON object when the model keeps to the format; a gateway banner or
a refusal is text too), and, like Claude Sonnet 5.5, it answers a request that carries a
setting the current models reject (tool_choice, sampling parameters, a thinking budget or
``disabled``, prefill) or lacks ``output_config.format`` with a 400 error. Which template a request
renders is recognised from its system prompt, so answers can depend on it. Every guard is driven
through a real HTTP response and checked three ways: it raises its error, it is counted,
and it is not cached (a later good answer to the same prompt is).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import typing
from pathlib import Path

import httpx2
import pytest

from polygraph_logic.graph.records import load_assertions
from polygraph_logic.llm import (
    DEFAULT_MODEL,
    AnswerCache,
    EmptyAnswer,
    MissingApiKey,
    ModelClient,
    ModelError,
    ModelUnavailable,
    Question,
    QuotaBanner,
    Refusal,
    SchemaViolation,
    Shown,
    UnknownCitation,
    cache_key,
    load_template,
    render_evidence,
    template_names,
)

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-ant-test-0123456789-SECRET-KEY"
GOOD = '{"verdict": true, "reason": "the evidence still states it"}'


def template_of(prompt: str) -> str:
    """Returns the name of the shipped template whose fixed opening the prompt starts with."""
    for name in template_names():
        template = load_template(name)
        first = [template.system.index("{" + p + "}") for p in template.placeholders if "{" + p + "}" in template.system]
        opening = template.system[:min(first)] if first else template.system + "\n--- user ---\n"
        if prompt.startswith(opening):
            return name
    raise AssertionError(f"no template renders a prompt starting {prompt[:60]!r}")


def prompt_of(body: dict) -> str:
    """Returns the whole prompt a request sends (its system part, the user mark, its user turn)."""
    system = "".join(block["text"] for block in body.get("system", ()))
    user = body["messages"][0]["content"]  # a text, or one text block marked for caching (a repeated prompt)
    return f"{system}\n--- user ---\n{user if isinstance(user, str) else user[0]['text']}"


def _one_object(text: str):
    def unique(pairs):
        if len({k for k, _ in pairs}) != len(pairs):
            raise ValueError("duplicate field")
        return dict(pairs)
    try:
        value = json.loads(text, object_pairs_hook=unique)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def message(text: str | None, stop_reason: str = "end_turn", model: str = DEFAULT_MODEL,
            usage: dict | None = None) -> dict:
    """Returns a Messages API response body: one text block (none when text is None), the form a
    structured-output answer takes."""
    content = [] if text is None else [{"type": "text", "text": text}]
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage or {"input_tokens": 100, "output_tokens": 20}}


#: request keys that return a 400 error on Claude Sonnet 5.5 (its migration guide), or that a
#: structured-output request has no use for
REJECTED_KEYS = ("tool_choice", "tools", "temperature", "top_p", "top_k", "thinking")


def rejected(body: dict) -> str | None:
    """Returns why Claude Sonnet 5.5 would refuse this request body with a 400, or None."""
    found = [key for key in REJECTED_KEYS if key in body]
    if found:
        return f"{', '.join(found)} not supported on this model"
    if body["messages"][-1]["role"] != "user":
        return "assistant prefill is not supported on this model"
    if "format" not in body.get("output_config", {}):
        return "no output_config.format: the answer would not be structured"
    return None


class ScriptedAPI:
    """A MockTransport handler: scripted responses first, then ``answer(template, prompt)``."""

    def __init__(self, answer=lambda template, prompt: GOOD):
        self.answer = answer
        self.script: list = []  # httpx2.Response, an exception to raise, or (text, stop_reason)
        self.requests: list[httpx2.Request] = []
        self.lock = threading.Lock()  # answer_all calls from several threads

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        with self.lock:
            self.requests.append(request)
            item = self.script.pop(0) if self.script else None
        body = json.loads(request.content)
        if rejected(body):
            return error(400, "invalid_request_error", message=rejected(body))
        if item is not None:
            if isinstance(item, Exception):
                raise item
            if isinstance(item, httpx2.Response):
                return item
            return httpx2.Response(200, json=message(*item, model=body["model"]))
        prompt = prompt_of(body)
        return httpx2.Response(200, json=message(self.answer(template_of(prompt), prompt), model=body["model"]))

    def http(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    @property
    def prompts(self) -> list[str]:
        return [prompt_of(json.loads(r.content)) for r in self.requests]


def error(status: int, kind: str, headers: dict | None = None, message: str | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers or {},
                           json={"type": "error", "error": {"type": kind, "message": message or f"scripted {kind}"}})


@pytest.fixture(autouse=True)
def environment(monkeypatch):
    monkeypatch.delenv("POLYGRAPH_MODEL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.fixture
def api():
    return ScriptedAPI()


@pytest.fixture
def sleeps():
    return []


def client_for(api, tmp_path, sleeps=None, **options) -> ModelClient:
    waits = sleeps if sleeps is not None else []
    return ModelClient(cache=tmp_path / "cache.sqlite", http_client=api.http(), sleep=waits.append,
                       jitter=lambda: 0.5, **options)


EVIDENCE = render_evidence(load_assertions(ROOT / "examples" / "figure1" / "assertions.jsonl"))
MERGE = {"artifact": "canonical: MAPK/ERK; members: MAPK/ERK, MAPK/ERK pathway, ERK1/2 cascade",
         "evidence": EVIDENCE}


def rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT * FROM answers").fetchall()


def test_cache_miss_then_hit_makes_one_http_call(api, tmp_path):
    with client_for(api, tmp_path) as client:
        first = client.complete("rederive-merge", MERGE)
        second = client.complete("rederive-merge", MERGE)
    assert (first.cached, second.cached) == (False, True)
    assert first.data == second.data == {"verdict": True, "reason": "the evidence still states it"}
    assert len(api.requests) == 1
    assert client.usage.to_json() == {"calls": 1, "cached": 1, "input_tokens": 100, "output_tokens": 20,
                                      "cache_write_tokens": 0, "cache_read_tokens": 0, "retries": 0,
                                      "rejected": {}}
    assert second.input_tokens == 100  # what the answer cost when first asked


def test_rerun_from_the_cache_needs_no_key_and_no_call(api, tmp_path, monkeypatch):
    with client_for(api, tmp_path) as client:
        client.complete("rederive-merge", MERGE)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    again = ScriptedAPI()
    with client_for(again, tmp_path) as client:
        assert client.complete("rederive-merge", MERGE).cached
        with pytest.raises(MissingApiKey):  # a miss needs the key and says so
            client.complete("rederive-merge", MERGE, draw=1)
    assert again.requests == [] and client.usage.calls == 0


def test_draw_index_changes_the_key_and_each_draw_replays(api, tmp_path):
    api.script = [('{"verdict": true, "reason": "draw zero"}',), ('{"verdict": false, "reason": "draw one"}',)]
    with client_for(api, tmp_path) as client:
        assert client.complete("rederive-merge", MERGE, draw=0).data["reason"] == "draw zero"
        assert client.complete("rederive-merge", MERGE, draw=1).data["reason"] == "draw one"
        replay = [client.complete("rederive-merge", MERGE, draw=d) for d in (1, 0)]
    assert [c.data["verdict"] for c in replay] == [False, True] and all(c.cached for c in replay)
    assert len(api.requests) == 2
    # the request itself is the same for every draw: the draw lives in the cache key only
    assert api.prompts[0] == api.prompts[1]


def test_template_version_changes_the_key(api, tmp_path):
    shipped = load_template("rederive-merge")
    paths = []
    for version in ("1", "2"):
        folder = tmp_path / f"v{version}"
        folder.mkdir()
        path = folder / "rederive-merge.md"
        path.write_text(f"name: rederive-merge\nversion: {version}\nschema: rederivation\n---\n{shipped.system}\n"
                        f"--- user ---\n{shipped.body}")
        paths.append(str(path))
    with client_for(api, tmp_path) as client:
        one, two = (client.complete(p, MERGE) for p in paths)
        assert client.complete(paths[0], MERGE).cached
    assert (one.cached, two.cached) == (False, False) and len(api.requests) == 2
    assert api.prompts[0] == api.prompts[1]  # same prompt text, different version


def test_cache_key_is_the_documented_content_address():
    import hashlib
    prompt = "a prompt"
    fields = json.dumps(["m", "t", "3", hashlib.sha256(prompt.encode()).hexdigest(), 2], separators=(",", ":"))
    assert cache_key("m", "t", "3", prompt, 2) == hashlib.sha256(fields.encode()).hexdigest()
    keys = {cache_key(*args) for args in [("m", "t", "3", prompt, 2), ("n", "t", "3", prompt, 2),
                                           ("m", "u", "3", prompt, 2), ("m", "t", "4", prompt, 2),
                                           ("m", "t", "3", prompt + " ", 2), ("m", "t", "3", prompt, 3)]}
    assert len(keys) == 6


def test_retries_rate_limits_overload_and_server_errors_then_succeeds(api, tmp_path, sleeps):
    api.script = [error(429, "rate_limit_error"), error(529, "overloaded_error"), error(500, "api_error"),
                  httpx2.ConnectError("connection refused")]
    with client_for(api, tmp_path, sleeps, backoff=1.0) as client:
        completion = client.complete("rederive-merge", MERGE)
    assert completion.data["verdict"] is True
    assert len(api.requests) == 5 and client.usage.retries == 4 and client.usage.calls == 1
    # exponential backoff, jitter fixed at 0.5: three quarters of 1, 2, 4, 8 seconds
    assert sleeps == [0.75, 1.5, 3.0, 6.0]


def test_retry_after_header_is_honoured(api, tmp_path, sleeps):
    api.script = [error(429, "rate_limit_error", {"retry-after": "7"})]
    with client_for(api, tmp_path, sleeps) as client:
        client.complete("rederive-merge", MERGE)
    assert sleeps == [7.0]


def test_gives_up_after_max_retries_with_a_clear_error(api, tmp_path, sleeps):
    api.script = [error(529, "overloaded_error")] * 3
    with client_for(api, tmp_path, sleeps, max_retries=2) as client:
        with pytest.raises(ModelUnavailable) as raised:
            client.complete("rederive-merge", MERGE, draw=4)
        assert "gave up after 3 attempt(s)" in str(raised.value) and "HTTP 529" in str(raised.value)
        assert "rederive-merge, draw 4" in str(raised.value)
        assert client.usage.rejected["model_unavailable"] == 1
    assert len(api.requests) == 3 and len(sleeps) == 2 and rows(tmp_path / "cache.sqlite") == []


@pytest.mark.parametrize("status, kind, expected, code", [
    (400, "invalid_request_error", ModelError, "api_error"),
    (401, "authentication_error", ModelError, "api_auth"),
    (402, "billing_error", QuotaBanner, "quota_banner"),
])
def test_client_errors_are_not_retried(api, tmp_path, sleeps, status, kind, expected, code):
    api.script = [error(status, kind)]
    with client_for(api, tmp_path, sleeps) as client:
        with pytest.raises(expected) as raised:
            client.complete("rederive-merge", MERGE)
    assert raised.value.code == code and len(api.requests) == 1 and sleeps == []
    assert KEY not in str(raised.value)


BAD_ANSWERS = [
    ("Claude AI usage limit reached|1767225600", "end_turn", QuotaBanner, "quota_banner"),
    ("You've hit your session limit · resets 3pm (UTC)", "end_turn", QuotaBanner, "quota_banner"),
    ("5-hour limit reached ∙ resets 2am\n/upgrade to increase your usage limit.", "end_turn", QuotaBanner,
     "quota_banner"),
    ("", "refusal", Refusal, "refusal"),
    ('{"verdict": true, "reason": "ok"}', "refusal", Refusal, "refusal"),
    ("I can't help with that request.", "end_turn", Refusal, "refusal"),
    ("Output blocked by content filtering policy", "end_turn", Refusal, "refusal"),
    (None, "end_turn", EmptyAnswer, "empty_answer"),
    ("   \n ", "end_turn", EmptyAnswer, "empty_answer"),
]


@pytest.mark.parametrize("text, stop, expected, code", BAD_ANSWERS)
def test_guards_raise_count_and_never_cache(api, tmp_path, text, stop, expected, code):
    api.script = [(text, stop)]
    with client_for(api, tmp_path) as client:
        with pytest.raises(expected) as raised:
            client.complete("rederive-merge", MERGE)
        assert raised.value.code == code
        assert client.usage.rejected[code] == 1
        assert rows(tmp_path / "cache.sqlite") == []
        later = client.complete("rederive-merge", MERGE)  # the next answer is a good one
        assert later.data["verdict"] is True and not later.cached
        assert client.complete("rederive-merge", MERGE).cached
    assert len(api.requests) == 2
    assert [row[7] for row in rows(tmp_path / "cache.sqlite")] == [GOOD]


def test_a_plain_text_banner_from_a_gateway_is_a_banner(api, tmp_path):
    api.script = [httpx2.Response(200, text="Claude AI usage limit reached|1767225600",
                                  headers={"content-type": "text/plain"})]
    with client_for(api, tmp_path) as client:
        with pytest.raises(QuotaBanner):
            client.complete("rederive-merge", MERGE)
        assert client.usage.rejected["quota_banner"] == 1
    assert rows(tmp_path / "cache.sqlite") == []


def test_json_answers_that_mention_limits_or_policies_are_answers(api, tmp_path):
    api.script = [('{"verdict": false, "reason": "I cannot see the rate limit step in the usage policy"}',)]
    with client_for(api, tmp_path) as client:
        assert client.complete("rederive-merge", MERGE).data["verdict"] is False


def test_a_banner_cached_by_an_older_harness_is_discarded_not_served(api, tmp_path):
    cache = AnswerCache(tmp_path / "cache.sqlite")
    template = load_template("rederive-merge")
    prompt = template.render(MERGE)
    from polygraph_logic.llm.cache import CachedAnswer
    cache.put(cache_key(DEFAULT_MODEL, template.name, template.version, prompt, 0), model=DEFAULT_MODEL,
              template=template.name, version=template.version, prompt=prompt, draw=0,
              answer=CachedAnswer("Claude AI usage limit reached|1767225600", "end_turn", 5, 5))
    cache.close()
    with client_for(api, tmp_path) as client:
        completion = client.complete("rederive-merge", MERGE)
    assert not completion.cached and completion.data["verdict"] is True
    assert client.usage.rejected["stale_cache"] == 1 and len(api.requests) == 1
    assert [row[7] for row in rows(tmp_path / "cache.sqlite")] == [GOOD]


@pytest.mark.parametrize("text", [
    '{"verdict": true}',                                            # missing field
    '{"verdict": true, "reason": "x", "confidence": 0.9}',          # extra field
    '{"verdict": "yes", "reason": "x"}',                            # not a boolean
    '{"verdict": true, "reason": "x"',                              # malformed
    'Sure! {"verdict": true, "reason": "x"}',                       # prose around it
    '{"verdict": true, "reason": "x"} {"verdict": false, "reason": "y"}',
    '{"verdict": true, "verdict": false, "reason": "x"}',           # duplicate field
    '["verdict", true]',
    '```json\n{"verdict": true, "reason": "x"}\n```\nHope this helps.',
])
def test_strict_parsing_rejects_anything_but_the_schema(api, tmp_path, text):
    api.script = [(text,)]
    with client_for(api, tmp_path) as client:
        with pytest.raises(SchemaViolation):
            client.complete("rederive-merge", MERGE)
        assert client.usage.rejected["schema_violation"] == 1
    assert rows(tmp_path / "cache.sqlite") == []


def test_a_fenced_answer_to_a_structured_request_is_a_schema_violation(api, tmp_path):
    api.script = [('```json\n{"verdict": false, "reason": "gone"}\n```',)]  # JSON, but not the bare object
    with client_for(api, tmp_path) as client:
        with pytest.raises(SchemaViolation, match="not the bare JSON object its format asks for"):
            client.complete("rederive-merge", MERGE)
        assert client.usage.rejected["schema_violation"] == 1
    assert rows(tmp_path / "cache.sqlite") == []


def test_a_fenced_json_object_recorded_as_text_is_still_read(tmp_path):
    # recorded answers and older caches hold text: one fenced object is accepted there
    template = load_template("rederive-merge")
    prompt = template.render(MERGE)
    recorded = tmp_path / "answers.jsonl"
    from polygraph_logic.llm.cache import prompt_sha256
    recorded.write_text(json.dumps({"format": "polygraph-recorded-answers/1"}) + "\n" + json.dumps(
        {"model": "m", "template": template.name, "version": template.version, "prompt_sha256": prompt_sha256(prompt),
         "draw": 0, "text": '```json\n{"verdict": false, "reason": "gone"}\n```'}) + "\n")
    from polygraph_logic.llm import RecordedAnswers
    with ModelClient("m", cache=RecordedAnswers(recorded)) as client:
        assert client.complete("rederive-merge", MERGE).data == {"verdict": False, "reason": "gone"}


MERGE_BATCH = {"entities": "ERK1/2 cascade\nMAPK/ERK\nMAPK/ERK pathway", "evidence": EVIDENCE}


def test_an_item_citing_an_unseen_id_is_left_out_and_reported_with_its_reason(api, tmp_path):
    bad = {"canonical": "MAPK/ERK", "members": ["MAPK/ERK", "ERK1/2 cascade"],
           "support": [["a20", "a21"], ["a12", "a99"]]}
    good = {"canonical": "AIM2", "members": ["AIM2", "AIM-2"], "support": [["a31"]]}
    api.script = [(json.dumps({"merges": [bad, good]}),)]
    names = Shown.from_variables(MERGE_BATCH)
    assert names.ids == {"a12", "a13", "a20", "a21", "a31", "a32"}  # the ids the evidence lines show
    with client_for(api, tmp_path) as client:
        completion = client.complete("merge-with-receipts", MERGE_BATCH, schema="merges")
        assert completion.data == {"merges": [good]}
        assert completion.rejected == ({"item": "merges[0]", "code": "unknown_citation",
                                        "reason": "cites id(s) a99 that the prompt did not show"},)
        assert client.usage.rejected_items == {"unknown_citation": 1} and not client.usage.rejected
        again = client.complete("merge-with-receipts", MERGE_BATCH, schema="merges")  # from the cache: the same
    assert again.cached and again.rejected == completion.rejected and again.data == completion.data
    assert client.usage.to_json()["rejected_items"] == {"unknown_citation": 2}


def test_a_one_object_answer_citing_an_unseen_id_is_rejected_and_never_cached(api, tmp_path):
    variables = {"community": "AIM2", "evidence": EVIDENCE}
    api.script = [(json.dumps({"summary": "AIM2 suppresses oral carcinoma.", "support": [["a31", "a99"]]}),)]
    with client_for(api, tmp_path) as client:
        with pytest.raises(UnknownCitation) as raised:
            client.complete("summary-whole", variables, schema="summary")
        assert raised.value.unknown == ["a99"] and client.usage.rejected["unknown_citation"] == 1
        api.script = [(json.dumps({"summary": "AIM2 suppresses oral carcinoma.", "support": [["a31", "a31"]]}),)]
        completion = client.complete("summary-whole", variables, schema="summary")
    assert completion.data["support"] == [["a31"]] and len(rows(tmp_path / "cache.sqlite")) == 1


def test_merge_answers_must_use_the_names_shown(api, tmp_path):
    answer = {"merges": [{"canonical": "ERK", "members": ["ERK", "MAPK/ERK"], "support": [["a20"]]},
                         {"canonical": "MAPK/ERK", "members": ["MAPK/ERK", "ERK1/2 cascade"], "support": [["a20"]]}]}
    api.script = [(json.dumps(answer),)]
    shown = Shown(frozenset({"a20"}), names=frozenset({"MAPK/ERK", "ERK1/2 cascade"}))
    with client_for(api, tmp_path) as client:
        completion = client.complete("merge-with-receipts", MERGE_BATCH, schema="merges", shown=shown)
    # the first merge names a name not listed: left out, with its reason; the second (which it
    # would have overlapped) is kept, since only a kept merge takes its names
    assert [m["canonical"] for m in completion.data["merges"]] == ["MAPK/ERK"]
    [rejected] = completion.rejected
    assert rejected["item"] == "merges[0]" and rejected["code"] == "schema_violation"
    assert "'ERK', which is not one of the entity names listed" in rejected["reason"]


def test_an_answer_whose_outer_shape_is_wrong_is_rejected_whole(api, tmp_path):
    api.script = [(json.dumps({"merges": "none"}),)]
    with client_for(api, tmp_path) as client:
        with pytest.raises(SchemaViolation, match="merges must be a list"):
            client.complete("merge-with-receipts", MERGE_BATCH, schema="merges")


def test_the_schema_must_be_the_templates(api, tmp_path):
    with client_for(api, tmp_path) as client:
        with pytest.raises(ModelError, match="unknown schema"):
            client.complete("rederive-merge", MERGE, schema="verdicts")
        with pytest.raises(Exception, match="answered with schema 'rederivation', not 'merges'"):
            client.complete("rederive-merge", MERGE, schema="merges")
    assert api.requests == []


def test_the_api_key_reaches_the_header_and_nothing_else(api, tmp_path, caplog, sleeps):
    caplog.set_level(logging.DEBUG)
    api.script = [error(429, "rate_limit_error"), ("Claude AI usage limit reached|1767225600",), ("I can't help.",),
                  error(400, "invalid_request_error")]
    failures = []
    with client_for(api, tmp_path, sleeps) as client:
        for draw in range(4):
            try:
                client.complete("rederive-merge", MERGE, draw=draw)
            except ModelError as failure:
                failures.append(str(failure))
        client.complete("rederive-merge", MERGE, draw=0)  # a cache hit
        shown = repr(client)
    sent = [r.headers.get("x-api-key") or r.headers.get("authorization", "") for r in api.requests]
    assert all(KEY in header for header in sent) and len(sent) == 6
    assert len(failures) == 3 and caplog.records  # the retries and rejections were logged
    assert KEY not in caplog.text and KEY not in shown and not any(KEY in f for f in failures)
    assert all(KEY not in str(value) for row in rows(tmp_path / "cache.sqlite") for value in row)
    assert KEY.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_model_from_flag_environment_or_default(api, tmp_path, monkeypatch):
    # the SDK is imported here, not at the top: it takes 1-2 s to import, which every pytest-xdist
    # worker would pay while collecting (the client itself imports it when a request is made)
    from anthropic._data import DEPRECATED_MODELS
    from anthropic.types.model_param import ModelParam
    assert DEFAULT_MODEL in typing.get_args(typing.get_args(ModelParam)[0])
    assert DEFAULT_MODEL not in DEPRECATED_MODELS and "sonnet" in DEFAULT_MODEL
    assert ModelClient().model == DEFAULT_MODEL
    monkeypatch.setenv("POLYGRAPH_MODEL", "claude-opus-5-5")
    with client_for(api, tmp_path) as client:
        assert client.model == "claude-opus-5-5"
        client.complete("rederive-merge", MERGE)
    with client_for(api, tmp_path, model="claude-haiku-5-5") as client:
        client.complete("rederive-merge", MERGE)
    assert [json.loads(r.content)["model"] for r in api.requests] == ["claude-opus-5-5", "claude-haiku-5-5"]


def test_the_sdk_is_used_without_its_own_retries(api, tmp_path):
    import anthropic  # here, not at the top (see test_model_from_flag_environment_or_default)
    with client_for(api, tmp_path) as client:
        client.complete("rederive-merge", MERGE)
        assert isinstance(client._sdk, anthropic.Anthropic) and client._sdk.max_retries == 0
    body = json.loads(api.requests[0].content)
    assert body["max_tokens"] == 4096 and body["messages"][0]["role"] == "user"


def test_a_recorded_answer_that_fails_its_checks_is_that_failure(tmp_path):
    """Under --replay a recorded answer is the model's answer: a one-object answer citing an id the
    prompt did not show is refused as such (unknown_citation), and a refusal as a refusal, neither
    taken for a missing answer (replay_missing); a list answer's bad item is left out and reported,
    as it is from the API."""
    from polygraph_logic.llm import RecordedAnswers
    from polygraph_logic.llm.cache import RECORDED_FORMAT, prompt_sha256

    evidence = "[a20] x | p | y | t"
    whole, sentences, merge = (load_template(name) for name in ("summary-whole", "summary-sentences",
                                                                   "rederive-merge"))
    summary = {"community": "c", "evidence": evidence}
    recorded = [(whole, summary, '{"summary": "x", "support": [["a20"], ["a99"]]}'),
                (sentences, summary, '{"sentences": [{"text": "x", "support": [["a99"]]}, '
                                     '{"text": "y", "support": [["a20"]]}]}'),
                (merge, MERGE, "I'm sorry, I cannot help with that.")]
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"format": RECORDED_FORMAT}) + "\n" + "".join(json.dumps(
        {"model": "m", "template": t.name, "version": t.version, "prompt_sha256": prompt_sha256(t.render(v)),
         "draw": 0, "text": text}) + "\n" for t, v, text in recorded))
    assert {t.version for t, _, _ in recorded} == {"3"}
    with ModelClient("m", cache=RecordedAnswers(path)) as client:
        with pytest.raises(UnknownCitation) as unknown:
            client.complete("summary-whole", summary, 0, "summary")
        with pytest.raises(ModelError) as refused:
            client.complete("rederive-merge", MERGE)
        kept = client.complete("summary-sentences", summary, 0, "sentences")
        [as_outcome] = client.answer_all([Question("summary-whole", summary, 0, "summary")])
    assert unknown.value.unknown == ["a99"] and refused.value.code == "refusal" and client.usage.calls == 0
    assert isinstance(as_outcome, UnknownCitation)  # answer_all returns it as the question's outcome
    assert kept.data == {"sentences": [{"text": "y", "support": [["a20"]]}]} and kept.cached
    assert [(r["item"], r["code"]) for r in kept.rejected] == [("sentences[0]", "unknown_citation")]
    assert client.usage.rejected == {"unknown_citation": 2, "refusal": 1}
    assert client.usage.rejected_items == {"unknown_citation": 1}


def test_each_answer_keeps_the_agent_record_of_its_call(api, tmp_path):
    api.script = [httpx2.Response(200, headers={"request-id": "req_0123"},
                                  json=message(GOOD, model="claude-sonnet-5-5-20261201"))]
    with client_for(api, tmp_path) as client:
        client.complete("rederive-merge", MERGE)
        [record] = client.cache.agent_records()
    prompt = load_template("rederive-merge").render(MERGE)
    from polygraph_logic.llm.cache import prompt_sha256
    assert {k: record[k] for k in ("model", "template", "version", "prompt_sha256", "draw", "response_model",
                                   "message_id", "request_id", "mode")} == {
        "model": DEFAULT_MODEL, "template": "rederive-merge", "version": "3", "prompt_sha256": prompt_sha256(prompt),
        "draw": 0, "response_model": "claude-sonnet-5-5-20261201", "message_id": "msg_test", "request_id": "req_0123",
        "mode": "interactive"}
    assert record["created"] > 0 and record["input_tokens"] == 100


def test_a_format_1_cache_is_upgraded_in_place_and_still_served(api, tmp_path):
    path = tmp_path / "cache.sqlite"
    template = load_template("rederive-merge")
    prompt = template.render(MERGE)
    key = cache_key(DEFAULT_MODEL, template.name, template.version, prompt, 0)
    from polygraph_logic.llm.cache import prompt_sha256
    with sqlite3.connect(path) as db:  # what an earlier release wrote
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE answers (key TEXT PRIMARY KEY, model TEXT NOT NULL, template TEXT NOT NULL,
                version TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, draw INTEGER NOT NULL, prompt TEXT NOT NULL,
                text TEXT NOT NULL, stop_reason TEXT, input_tokens INTEGER NOT NULL,
                output_tokens INTEGER NOT NULL, created REAL NOT NULL);
            INSERT INTO meta VALUES ('format', 'polygraph-llm-cache/1');""")
        db.execute("INSERT INTO answers VALUES (?, ?, ?, ?, ?, 0, ?, ?, 'end_turn', 7, 3, 1.0)",
                   (key, DEFAULT_MODEL, template.name, template.version, prompt_sha256(prompt), prompt, GOOD))
    with client_for(api, tmp_path) as client:
        answer = client.complete("rederive-merge", MERGE)
    assert answer.cached and answer.input_tokens == 7 and answer.cache_read_tokens == 0 and api.requests == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta").fetchone()[0] == "polygraph-llm-cache/2"
        assert db.execute("SELECT mode FROM answers").fetchone()[0] is None  # not known for an old row


def test_a_rate_limit_in_answer_all_waits_as_retry_after_asks(api, tmp_path, sleeps):
    api.script = [error(429, "rate_limit_error", {"retry-after": "9"})]
    with client_for(api, tmp_path, sleeps, concurrency=2) as client:
        answers = client.answer_all([Question("rederive-merge", MERGE, draw) for draw in range(2)])
    assert [a.data["verdict"] for a in answers] == [True, True]
    assert sleeps == [9.0] and client.usage.retries == 1 and len(api.requests) == 3


def test_after_a_quota_failure_answer_all_sends_nothing_more_and_names_the_cause(api, tmp_path):
    api.script = [error(402, "billing_error")]
    questions = [Question("rederive-merge", MERGE, draw) for draw in range(4)]
    with client_for(api, tmp_path, concurrency=2) as client:
        answers = client.answer_all(questions)
    # the first draw goes alone (the others repeat its prompt), fails for quota, and no other is sent
    assert len(api.requests) == 1
    assert all(isinstance(a, QuotaBanner) for a in answers) and answers[1] is answers[0]
    assert client.usage.rejected == {"quota_banner": 1}


def test_the_request_asks_for_the_answer_schema_as_output_format_and_nothing_the_model_rejects(api, tmp_path):
    with client_for(api, tmp_path) as client:
        client.complete("rederive-merge", MERGE)
    body = json.loads(api.requests[0].content)
    # the verdict's JSON Schema, written out here rather than read from formats.py
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": {
        "type": "object", "properties": {"verdict": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["verdict", "reason"], "additionalProperties": False}}}
    assert not {"tool_choice", "tools", "temperature", "top_p", "top_k", "thinking"} & set(body)
    assert [m["role"] for m in body["messages"]] == ["user"]  # no assistant prefill
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}  # the fixed part stays cached


def test_the_scripted_api_refuses_what_claude_sonnet_5_5_refuses():
    good = {"model": DEFAULT_MODEL, "messages": [{"role": "user", "content": "q"}],
            "output_config": {"format": {"type": "json_schema", "schema": {}}}}
    assert rejected(good) is None
    assert "tool_choice" in rejected({**good, "tool_choice": {"type": "tool", "name": "record_verdict"}})
    assert "temperature" in rejected({**good, "temperature": 0.0})
    assert "thinking" in rejected({**good, "thinking": {"type": "disabled"}})
    assert "prefill" in rejected({**good, "messages": [*good["messages"], {"role": "assistant", "content": "{"}]})
    assert "output_config" in rejected({k: v for k, v in good.items() if k != "output_config"})


def test_the_answer_is_the_text_block_not_the_thinking_before_it(api, tmp_path):
    # Claude Sonnet 5.5 thinks adaptively when the request says nothing of thinking: a thinking block
    # may come first, and only the text block is the answer
    body = message(GOOD)
    body["content"] = [{"type": "thinking", "thinking": "{\"verdict\": false}", "signature": "sig"}, *body["content"]]
    api.script = [httpx2.Response(200, json=body)]
    with client_for(api, tmp_path) as client:
        answer = client.complete("rederive-merge", MERGE)
    assert answer.text == GOOD and answer.data["verdict"] is json.loads(GOOD)["verdict"]
