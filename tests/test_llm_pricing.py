"""The price table and the accounting: tokens by kind and mode, dollars against figures worked by hand."""

from __future__ import annotations

import json

import httpx2
import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic.llm import PRICES, ModelClient, Question, Tokens, Usage, load_prices
from test_llm_client import KEY, MERGE, ScriptedAPI, message


@pytest.fixture(autouse=True)
def environment(monkeypatch):
    monkeypatch.delenv("POLYGRAPH_MODEL", raising=False)
    monkeypatch.delenv("POLYGRAPH_PRICES", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def test_dollars_by_hand():
    usage = Usage()
    usage.tokens["interactive"] = Tokens(input=1000, output=500, cache_write=2000, cache_read=10000)
    usage.tokens["batch"] = Tokens(input=1000, output=500, cache_write=2000, cache_read=10000)
    # claude-sonnet-4-6 at $3 input, $15 output, $3.75 cache write, $0.30 cache read per million:
    # 1000*3 + 500*15 + 2000*3.75 + 10000*0.30 = 21,000 micro-dollars = $0.021; the batch half of it
    assert load_prices().cost("claude-sonnet-4-6", usage.tokens["interactive"]) == pytest.approx(0.021)
    assert usage.dollars("claude-sonnet-4-6", load_prices()) == pytest.approx(0.021 + 0.0105)
    assert usage.to_json("claude-sonnet-4-6", load_prices())["dollars"] == pytest.approx(0.0315)
    assert PRICES["claude-sonnet-4-6"]["cache_write"] == 3.75 and PRICES["claude-sonnet-4-6"]["cache_read"] == 0.3


def test_the_default_model_has_a_price_and_its_dollars_by_hand():
    from polygraph_logic.llm import DEFAULT_MODEL

    assert DEFAULT_MODEL == "claude-sonnet-5-5"
    # Claude Sonnet 5.5 (platform.claude.com migration guide and model page): $2 input, $10 output,
    # $2.50 5-minute cache write, $0.10 cache read per million tokens; the read is 0.05 x input, not 0.1 x
    usage = Usage()
    usage.tokens["interactive"] = Tokens(input=1000, output=500, cache_write=2000, cache_read=10000)
    usage.tokens["batch"] = Tokens(input=1000, output=500, cache_write=2000, cache_read=10000)
    # 1000*2 + 500*10 + 2000*2.50 + 10000*0.10 = 2000 + 5000 + 5000 + 1000 = 13,000 micro-dollars = $0.013
    assert load_prices().cost(DEFAULT_MODEL, usage.tokens["interactive"]) == pytest.approx(0.013)
    assert usage.dollars(DEFAULT_MODEL, load_prices()) == pytest.approx(0.013 + 0.0065)  # the batch half off
    report = usage.to_json(DEFAULT_MODEL, load_prices())
    assert report["dollars"] == pytest.approx(0.0195) and "price_note" not in report
    assert "$0.0195" in usage.line(DEFAULT_MODEL, load_prices())


def test_an_unknown_model_has_no_price_said_plainly():
    usage = Usage()
    usage.tokens["interactive"] = Tokens(input=10)
    report = usage.to_json("claude-unknown-9", load_prices())
    assert report["dollars"] is None and report["price_note"].startswith("no price for model claude-unknown-9")
    assert "--prices FILE" in report["price_note"]
    assert "no price for claude-unknown-9" in usage.line("claude-unknown-9", load_prices())
    assert Usage().dollars("claude-unknown-9", load_prices()) == 0.0  # nothing billed costs nothing


def test_a_price_file_overrides_and_adds(tmp_path, monkeypatch):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"claude-sonnet-5-5": {"input": 2, "output": 10, "cache_write": 2.5, "cache_read": 0.2},
                                "batch_discount": 0.25}))
    table = load_prices(path)
    tokens = Tokens(input=1_000_000, output=100_000)
    assert table.cost("claude-sonnet-5-5", tokens) == pytest.approx(3.0)
    assert table.cost("claude-sonnet-5-5", tokens, batch=True) == pytest.approx(2.25)
    assert table.cost("claude-sonnet-4-6", tokens) == pytest.approx(4.5)  # the built-in entries stay
    assert table.prices["claude-sonnet-5-5"]["cache_read"] == 0.2 and PRICES["claude-sonnet-5-5"]["cache_read"] == 0.1
    monkeypatch.setenv("POLYGRAPH_PRICES", str(path))
    assert load_prices().cost("claude-sonnet-5-5", tokens) == pytest.approx(3.0)
    for bad in ({"m": {"input": 1}}, {"m": {"input": -1, "output": 1, "cache_write": 1, "cache_read": 1}},
                {"batch_discount": 1.5}, ["m"]):
        path.write_text(json.dumps(bad))
        with pytest.raises(PolygraphError) as error:
            load_prices(path)
        assert error.value.code == "bad_prices"


def test_prompt_cache_usage_is_read_counted_and_priced(tmp_path):
    """The first call writes the cached prefix, the later ones read it; the report prices each kind."""
    calls = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        calls.append(body)
        first = len(calls) == 1
        usage = {"input_tokens": 200, "output_tokens": 20, "cache_creation_input_tokens": 1500 if first else 0,
                 "cache_read_input_tokens": 0 if first else 1500}
        return httpx2.Response(200, json=message('{"verdict": true, "reason": "x"}', model=body["model"],
                                                 usage=usage))

    with ModelClient("claude-sonnet-4-6", cache=tmp_path / "c.sqlite", concurrency=1,
                     http_client=httpx2.Client(transport=httpx2.MockTransport(handler))) as client:
        answers = client.answer_all([Question("rederive-merge", MERGE, draw) for draw in range(3)])
        line = client.usage.line(client.model, client.prices)
    assert [a.cache_read_tokens for a in answers] == [0, 1500, 1500] and answers[0].cache_write_tokens == 1500
    assert client.usage.total == Tokens(input=600, output=60, cache_write=1500, cache_read=3000)
    # 600*3 + 60*15 + 1500*3.75 + 3000*0.30 = 1800 + 900 + 5625 + 900 = 9225 micro-dollars
    assert "tokens 600 input, 60 output, 1500 cache write, 3000 cache read; $0.0092" in line
    assert client.usage.dollars(client.model, client.prices) == pytest.approx(0.009225)
    # every request carries the same cached system prefix and the same output format, and no tool
    assert len({json.dumps(c["system"]) for c in calls}) == 1
    assert calls[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert len({json.dumps(c["output_config"]) for c in calls}) == 1 and not any("tools" in c for c in calls)
    # the three draws share one prompt: its user turn is marked for caching too, and the first draw is
    # asked alone before the other two, so that they read it rather than race to write it
    assert all(c["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"} for c in calls)
    assert "Your earlier merge:" in calls[0]["messages"][0]["content"][0]["text"]
    assert "Working only from this evidence" in calls[0]["system"][0]["text"]


def test_concurrent_calls_come_back_in_the_order_asked(tmp_path):
    import time

    def answer(template, prompt):
        time.sleep(0.05 if "canonical: A" in prompt else 0)  # the first question answers last
        return json.dumps({"verdict": "canonical: A" in prompt, "reason": prompt.split("canonical: ")[1][:1]})

    api = ScriptedAPI(answer)
    questions = [Question("rederive-merge", {**MERGE, "artifact": f"canonical: {name}; members: {name}, x"})
                 for name in "ABCDEF"]
    with ModelClient(cache=tmp_path / "c.sqlite", http_client=api.http(), concurrency=3) as client:
        answers = client.answer_all(questions)
    assert [a.data["reason"] for a in answers] == list("ABCDEF") and answers[0].data["verdict"] is True
    assert len(api.requests) == 6
