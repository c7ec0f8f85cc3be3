"""Benchmark: what `construct` and `audit` cost on the bundled corpus, the earlier model path against
prompt caching and Message Batches, in one run, with no network and no model.

`construct` runs on examples/corpus and `audit` on the graph it builds, under the offline tour's
deletion (`example:doc-1`, 5 draws), each through the real SDK over an httpx2 MockTransport that
answers from the recorded fixtures (examples/corpus/recorded/: construction answers by prompt,
audit verdicts by artifact) and reports each request's usage the way the API would:

- tokens are estimated from the request's text, UTF-8 bytes / 4 rounded up (Anthropic's tokenizer
  is not available offline; every path is counted by the same rule, so the ratios hold better
  than the absolute counts), plus, for a request with a structured-output format, the JSON of
  its schema and `--format-overhead` tokens (default 0: the pages read state no system prompt
  added for `output_config.format`, as they did, 313 tokens, for a forced tool); an answer's
  output tokens are its text's (the JSON object);
- prompt caching is simulated: a request's breakpoints (after the system part; after the user
  turn when the prompt is asked again) are looked up in a cache of the prefixes seen so far; the
  longest one found is a cache read, a longer marked one a cache write; a prefix shorter than the
  model's minimum (`--min-cache`, 1,024 tokens on Sonnet models) is neither, as on the API.

The rows: the earlier path (the templates of `--before`, one user turn, free-text JSON, one call
at a time, read with `git show`), the new interactive path (system prompt, the answer's JSON
Schema as `output_config.format`, cache breakpoints) and the new batch path (one Message Batch per step, half price); and the same two
new paths with the cache minimum waived, which says what caching does once a prefix is long
enough (not what it does on this corpus). Dollars come from the price table (pricing.py) at
`--model`'s list price; the tokens and dollars of each row are the client's own accounting of the
usage the mock reported. Cache hits within a batch are best effort on the API; the batch rows
assume the same hits as the interactive ones.

    python -m benchmarks.model_cost [--model claude-sonnet-4-6] [--before 7d479f1] [--draws 5]
                                    [--min-cache 1024] [--format-overhead 0] [--prices FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import tempfile
import threading
from pathlib import Path

import httpx2

from benchmarks.harness import CHECKOUT, print_table
from polygraph_logic import build_graph
from polygraph_logic.audit import ModelOracle, ReplayOracle, ScriptedOracle, audit
from polygraph_logic.llm import ModelClient, Tokens, load_prices
from polygraph_logic.llm.cache import prompt_sha256
from polygraph_logic.llm.construct import construct
from polygraph_logic.llm.templates import USER_MARK, parse_template
from polygraph_logic.query.whatif import Deletion

CORPUS = CHECKOUT / "examples" / "corpus"
RECORDED = CORPUS / "recorded"
TOUR = Deletion(sources=("example:doc-1",))


def estimate(text: str) -> int:
    """Returns the estimated tokens of a text: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def _text(content) -> str:
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


class MockAPI:
    """The Messages and Message Batches endpoints over recorded answers, with simulated usage."""

    def __init__(self, answer, min_cache: int, format_overhead: int):
        self.answer, self.min_cache, self.format_overhead = answer, min_cache, format_overhead
        self.cached: set[str] = set()  # the prefixes the simulated prompt cache holds
        self.batches: dict[str, list[dict]] = {}
        self.lock = threading.Lock()

    def usage(self, params: dict, output: str) -> dict:
        """Returns the usage the API would report for one request (see the module docstring)."""
        fmt = params.get("output_config", {}).get("format")
        head_tokens = (estimate(json.dumps(fmt)) + self.format_overhead) if fmt else 0
        system = sum(estimate(b["text"]) for b in params.get("system", ()))
        user_content = params["messages"][0]["content"]
        user = estimate(_text(user_content))
        marks = []  # (prefix key, prefix tokens) of each breakpoint, in order
        head = json.dumps([fmt, params.get("system")])
        if any("cache_control" in b for b in params.get("system", ())):
            marks.append((hashlib.sha256(head.encode()).hexdigest(), head_tokens + system))
        if not isinstance(user_content, str) and "cache_control" in user_content[-1]:
            marks.append((hashlib.sha256((head + _text(user_content)).encode()).hexdigest(), head_tokens + system + user))
        marks = [(key, size) for key, size in marks if size >= self.min_cache]
        with self.lock:
            read = max((size for key, size in marks if key in self.cached), default=0)
            write = max((size for key, size in marks if key not in self.cached and size > read), default=0)
            self.cached.update(key for key, _ in marks)
        write = write - read if write else 0
        return {"input_tokens": head_tokens + system + user - read - write, "output_tokens": estimate(output),
                "cache_creation_input_tokens": write, "cache_read_input_tokens": read}

    def message(self, params: dict) -> dict:
        prompt = "".join(b["text"] for b in params.get("system", ()))
        prompt = f"{prompt}\n{USER_MARK}\n{_text(params['messages'][0]['content'])}" if prompt \
            else _text(params["messages"][0]["content"])
        text = self.answer(prompt)
        return {"id": "msg_bench", "type": "message", "role": "assistant", "model": params["model"],
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": None, "usage": self.usage(params, text)}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path == "/v1/messages":
            return httpx2.Response(200, json=self.message(json.loads(request.content)))
        if path == "/v1/messages/batches":
            batch_id = f"msgbatch_{len(self.batches) + 1}"
            self.batches[batch_id] = json.loads(request.content)["requests"]
            return httpx2.Response(200, json=self.batch(batch_id))
        batch_id = path.split("/")[4]
        if path.endswith("/results"):
            lines = [json.dumps({"custom_id": r["custom_id"], "result": {
                "type": "succeeded", "message": self.message(r["params"])}}) for r in self.batches[batch_id]]
            return httpx2.Response(200, text="\n".join(lines) + "\n")
        return httpx2.Response(200, json=self.batch(batch_id))

    def batch(self, batch_id: str) -> dict:
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended",
                "request_counts": {"processing": 0, "succeeded": len(self.batches[batch_id]), "errored": 0,
                                   "expired": 0, "canceled": 0},
                "created_at": "2026-12-06T00:00:00Z", "expires_at": "2026-12-07T00:00:00Z",
                "results_url": f"https://api.anthropic.com/v1/messages/batches/{batch_id}/results"}


class Recorder(ModelClient):
    """A ModelClient that keeps every question it renders (the earlier path is priced from them)."""

    def __init__(self, *args, **options):
        super().__init__(*args, **options)
        self.questions: list = []

    def _render(self, question):
        self.questions.append(question)
        return super()._render(question)


def recorded_answers():
    """Returns answer(prompt) -> text over the recorded fixtures: construction answers by the prompt's
    sha256, audit verdicts by the artifact a re-derivation prompt shows."""
    lines = [json.loads(line) for line in (RECORDED / "answers.jsonl").read_text().splitlines()[1:]]
    by_prompt = {line["prompt_sha256"]: line["text"] for line in lines}
    verdicts: dict[str, bool] = {}

    def answer(prompt: str) -> str:
        if prompt_sha256(prompt) in by_prompt:
            return by_prompt[prompt_sha256(prompt)]
        artifact = prompt.split(USER_MARK + "\n", 1)[1].split("\n", 1)[1].split("\n\nThe evidence", 1)[0]
        return json.dumps({"verdict": verdicts[artifact], "reason": "recorded"})
    return answer, verdicts


def learn_verdicts(graph: Path, draws: int, verdicts: dict) -> None:
    """Fills artifact text -> verdict from the recorded audit draws (the fixture's answer is the same for
    every draw of an artifact)."""
    replay = ReplayOracle(RECORDED / "audit.jsonl")

    def remember(task):
        verdicts[task.text] = replay.rederive(task)
        return verdicts[task.text]
    audit(graph, [TOUR], ScriptedOracle(remember), draws=draws)


def earlier_cost(questions, answers: list[str], before: str, model: str, prices) -> tuple[Tokens, float | None]:
    """Returns the tokens and dollars of the same questions asked the earlier way: each question's
    template at ``before`` rendered as one user turn, answered with the same text, no caching."""
    templates = {}
    tokens = Tokens()
    for question, answer in zip(questions, answers):
        if question.template not in templates:
            text = subprocess.run(["git", "-C", str(CHECKOUT), "show", f"{before}:prompts/{question.template}.md"],
                                  capture_output=True, text=True, check=True).stdout
            templates[question.template] = parse_template(text)
        prompt = templates[question.template].render(question.variables)
        tokens.add(Tokens(input=estimate(prompt), output=estimate(answer)))
    return tokens, prices.cost(model, tokens)


def run_paths(args) -> list[list]:
    prices = load_prices(args.prices)
    answer, verdicts = recorded_answers()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for label, mode, minimum in (("interactive: system prompt, format, caching", "interactive", args.min_cache),
                                     ("batch: the same, one batch per step", "batch", args.min_cache),
                                     ("interactive, cache minimum waived", "interactive", 0),
                                     ("batch, cache minimum waived", "batch", 0)):
            api = MockAPI(answer, minimum, args.format_overhead)
            out = work / f"{mode}-{minimum}"
            for step in ("construct", "audit"):
                with Recorder(args.model, cache=out / f"{step}.sqlite", mode=mode, concurrency=1, prices=prices,
                              http_client=httpx2.Client(transport=httpx2.MockTransport(api)),
                              api_key="not-a-key-mock-transport", poll_interval=0) as client:
                    if step == "construct":
                        construct(CORPUS, out / "out", client)
                        graph = out / "example.graph"
                        build_graph(out / "out" / "assertions.jsonl", out / "out" / "receipts.jsonl",
                                    [CHECKOUT / "rules" / "ro.dl"]).write(graph)
                        if not verdicts:
                            learn_verdicts(graph, args.draws, verdicts)
                    else:
                        audit(graph, [TOUR], ModelOracle(client), draws=args.draws)
                    usage = client.usage
                    if minimum == args.min_cache and mode == "interactive":  # price the earlier path once
                        questions = list(client.questions)
                        texts = [answer_of(client, q) for q in questions]
                        tokens, dollars = earlier_cost(questions, texts, args.before, args.model, prices)
                        rows.append([step, f"earlier ({args.before}): one user turn, free text", len(questions),
                                     tokens.input, tokens.output, 0, 0, dollars])
                    total = usage.total
                    rows.append([step, label, usage.calls, total.input, total.output, total.cache_write,
                                 total.cache_read, usage.dollars(args.model, prices)])
    return rows


def answer_of(client: ModelClient, question) -> str:
    """Returns the text the cache holds for a question the client asked."""
    return client.cache.get(client._render(question).key).text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="claude-sonnet-4-6", help="the model priced (default claude-sonnet-4-6)")
    parser.add_argument("--before", default="7d479f1", help="the commit whose templates are the earlier path")
    parser.add_argument("--draws", type=int, default=5, help="audit draws per artifact (default 5)")
    parser.add_argument("--min-cache", type=int, default=1024, help="the model's minimum cacheable prefix")
    parser.add_argument("--format-overhead", type=int, default=0,
                        help="system tokens the API adds for an output format (none stated; default 0)")
    parser.add_argument("--prices", default=None, help="a JSON price table over the built-in one")
    args = parser.parse_args(argv)
    rows = run_paths(args)
    order = {"construct": 0, "audit": 1}
    rows.sort(key=lambda r: order[r[0]])  # stable: the paths in the order run
    print(f"construct on examples/corpus, then audit of its graph under retract-source example:doc-1 "
          f"(R={args.draws}); model {args.model} at {load_prices(args.prices).source}'s prices; tokens estimated "
          f"as UTF-8 bytes / 4")
    for step in ("construct", "audit"):
        base = next(r[7] for r in rows if r[0] == step and r[1].startswith("earlier"))
        print_table(["step", "path", "calls", "input", "output", "cache write", "cache read", "dollars", "vs earlier"],
                    [[*r[:7], f"${r[7]:.6f}" if r[7] is not None else "no price",
                      f"{r[7] / base:.2f}x" if r[7] is not None and base else "-"] for r in rows if r[0] == step])
        print()


if __name__ == "__main__":
    main()
