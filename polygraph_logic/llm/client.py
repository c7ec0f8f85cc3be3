"""ModelClient: templates in, schema-checked answers out, through a cache and guards.

One question is: render a versioned template into its fixed system part and its user
turn, look the question up in the answer cache (a hit costs nothing), otherwise ask the
Messages API with retries and backoff, the system part marked for prompt caching and the
answer's JSON Schema given as its structured-output format (formats.py), run the guards
(banner, refusal, empty answer), parse the answer text strictly against its schema with citations checked
against the ids shown (an item of a list that fails is left out and reported with its
reason), and only then store it with its agent record. Every rejection is counted in
``usage.rejected`` (``usage.rejected_items`` for items) and raised as a ModelError.

Many questions at once (``answer_all``): the interactive mode asks the ones the cache
lacks with at most ``concurrency`` calls in flight; the batch mode submits them as one
Message Batch (batches.py), at half price, and collects the results by custom id. Either
way the answers come back in the order of the questions.

Draws: the request is the same for every draw (no sampling parameters are sent: current
models reject them, so the model samples at its default temperature); the draw index is only part
of the cache key, which makes draw ``i`` reproducible from the cache.

The API key is read from ``ANTHROPIC_API_KEY`` (or passed in) only when a call must
reach the API, handed to the SDK and kept nowhere else: not in the cache, the log,
an error message or ``repr``.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from polygraph_logic.errors import PolygraphError
from polygraph_logic.llm.cache import AnswerCache, CachedAnswer, RecordedAnswers, cache_key, prompt_sha256
from polygraph_logic.llm.errors import MissingApiKey, ModelError, QuotaBanner, SchemaViolation
from polygraph_logic.llm.guards import check_answer
from polygraph_logic.llm.retries import KEY_ENV, RETRY_STATUS, Retrying  # noqa: F401  (RETRY_STATUS: its home was here)
from polygraph_logic.llm.pricing import MODES, PriceTable, Tokens, Usage, load_prices
from polygraph_logic.llm.schemas import Parsed, Shown, check_schema_name, parse_items
from polygraph_logic.llm.templates import Prompt, Template, load_template
from polygraph_logic.llm.formats import Reply, reply, request

#: a current Claude Sonnet (not in anthropic._data.DEPRECATED_MODELS)
DEFAULT_MODEL = "claude-sonnet-5-5"
MODEL_ENV = "POLYGRAPH_MODEL"
#: failures every later call would meet too: answer_all sends nothing more after one
STOPPING = frozenset({"quota_banner", "missing_api_key", "model_unavailable", "api_auth"})

log = logging.getLogger(__name__)


def resolve_model(model: str | None = None) -> str:
    """Returns ``model``, else ``$POLYGRAPH_MODEL``, else DEFAULT_MODEL."""
    return model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL


@dataclass(frozen=True)
class Completion:
    """One answer: the parsed object (``data``), its text, and whether the cache served it.

    Token counts are what the answer cost when it was first asked, also on a cache hit.
    ``rejected`` lists the items of a list answer that were left out, each with its reason.
    """

    template: str
    version: str
    draw: int
    model: str
    text: str
    data: dict
    cached: bool
    input_tokens: int
    output_tokens: int
    stop_reason: str | None
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    rejected: tuple[dict, ...] = ()
    # the agent record of the call (for provenance): the template's and the rendered prompt's sha256,
    # the model the API reported, its message and request ids, how and when it was asked
    template_sha256: str = ""
    prompt_sha256: str = ""
    response_model: str | None = None
    message_id: str | None = None
    request_id: str | None = None
    mode: str | None = None
    created: float | None = None


@dataclass(frozen=True)
class Question:
    """One question for ``answer_all``: a template, its variables, the draw, the schema and the
    ids (names, predicates) the prompt shows (default: the ``[id] ...`` lines of the variables)."""

    template: str
    variables: Mapping[str, str]
    draw: int = 0
    schema: str = "rederivation"
    shown: Shown | None = None


@dataclass(frozen=True)
class _Asked:
    """A question rendered: its template, prompt, cache key and what it shows."""

    question: Question
    template: Template
    prompt: Prompt
    key: str
    shown: Shown
    repeated: bool = False  # the same prompt is asked again in this run (another draw)


class ModelClient(Retrying):
    """Asks a Claude model through prompt templates; see the module docstring.

    ``mode`` is how ``answer_all`` asks what the cache lacks (``interactive``: at most
    ``concurrency`` calls at once; ``batch``: one Message Batch, polled every
    ``poll_interval`` seconds); ``prices`` is the price table of ``usage.dollars``.
    """

    def __init__(self, model: str | None = None, cache: str | Path | AnswerCache | RecordedAnswers | None = None,
                 http_client: Any = None, max_retries: int = 4, api_key: str | None = None, *,
                 max_tokens: int = 4096, timeout: float = 300.0,
                 backoff: float = 1.0, max_backoff: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep, jitter: Callable[[], float] = random.random,
                 mode: str = "interactive", concurrency: int = 4, poll_interval: float = 30.0,
                 prices: PriceTable | None = None):
        if mode not in MODES:
            raise PolygraphError("bad_option", f"mode {mode!r}: choose {' or '.join(MODES)}")
        if concurrency < 1:
            raise PolygraphError("bad_option", f"concurrency must be at least 1, got {concurrency}")
        self.model = resolve_model(model)
        self.cache = cache if isinstance(cache, (AnswerCache, RecordedAnswers)) or cache is None \
            else AnswerCache(cache)
        self.max_retries, self.max_tokens = max_retries, max_tokens
        self.timeout, self.backoff, self.max_backoff = timeout, backoff, max_backoff
        self.mode, self.concurrency, self.poll_interval = mode, concurrency, poll_interval
        self.prices = prices or load_prices()
        self.usage = Usage()
        self._sleep, self._jitter = sleep, jitter
        self._http_client = http_client
        self._api_key = api_key
        self._sdk: anthropic.Anthropic | None = None
        self._templates: dict[str, Template] = {}
        self._lock = threading.Lock()  # usage is counted from the worker threads of answer_all

    def __repr__(self) -> str:
        cache = self.cache.path if self.cache else None
        return f"ModelClient(model={self.model!r}, cache={str(cache)!r})"

    def __enter__(self) -> "ModelClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Closes the cache, and the HTTP client unless the caller passed it in."""
        if self.cache is not None:
            self.cache.close()
        if self._sdk is not None and self._http_client is None:
            self._sdk.close()

    def template(self, name: str) -> Template:
        """Returns the template ``name`` (loaded once per client)."""
        if name not in self._templates:
            self._templates[name] = load_template(name)
        return self._templates[name]

    def complete(self, template_name: str, variables: Mapping[str, str], draw: int = 0,
                 schema: str = "rederivation", *, shown: Shown | None = None) -> Completion:
        """Returns the schema-checked answer to one rendered template at draw ``draw``.

        ``shown`` lists the ids a receipt may cite (default: every ``[id] ...`` line of
        the variables, the form render_evidence writes). Raises a ModelError subclass for
        a banner, refusal, empty answer, schema violation, unknown citation or an API
        that stays unavailable; none of them is cached.
        """
        asked = self._render(Question(template_name, variables, draw, schema, shown))
        hit = self._lookup(asked)
        if hit is not None:
            return hit
        self._check_replay(asked)
        return self._settle(asked, self._ask(asked), "interactive")

    def answer_all(self, questions: list[Question], progress: Callable[[int, int], None] | None = None
                   ) -> list[Completion | ModelError]:
        """Returns the answer to each question, or the ModelError it met, in the questions' order.

        Cached answers are served first; the rest are asked in ``self.mode`` (see the class
        docstring), each distinct question once. ``progress(done, total)`` follows the calls.
        Errors that are not ModelErrors (a bad template) are raised at once, before any call.
        """
        asked = [self._render(q) for q in questions]
        results: list[Completion | ModelError | None] = [self._looked_up(a) for a in asked]
        missing = {a.key: a for a, found in zip(asked, results) if found is None}
        times = Counter(a.prompt.text for a in missing.values())
        missing = {key: replace(a, repeated=times[a.prompt.text] > 1) for key, a in missing.items()}
        if missing and getattr(self.cache, "replay", False):  # recorded answers: never reach the API
            return [found if found is not None else self._replay_missing(a) for a, found in zip(asked, results)]
        collected: list[str] = []  # the custom ids of the batch requests collected
        if self.mode == "batch" and missing:
            from polygraph_logic.llm.batches import BatchRun  # only a batch run needs it

            replies, collected = BatchRun(self, progress).run(list(missing.values()))
        else:
            replies = self._ask_concurrently(list(missing.values()), progress)
        settled: dict[str, Completion | ModelError] = {}
        for key, a in missing.items():
            outcome = replies[key]
            if isinstance(outcome, Reply):
                try:
                    outcome = self._settle(a, outcome, self.mode)
                except ModelError as error:
                    outcome = error
            settled[key] = outcome
        if collected and self.cache is not None:  # settled: a later run asks anew what failed
            self.cache.forget_batch_requests(collected)
        return [r if r is not None else settled[a.key] for a, r in zip(asked, results)]

    def _ask_concurrently(self, asked: list[_Asked], progress) -> dict[str, Reply | ModelError]:
        """Returns key -> Reply (or the ModelError of its call) with at most ``concurrency`` calls at once.

        After a failure that every later call would meet too (a quota banner, no key, an API
        that stays down, rejected credentials) nothing more is sent: each question not yet
        started gets that same failure, so that whichever a caller meets first names the cause.
        """
        stopped: list[ModelError] = []

        def one(a: _Asked) -> Reply | ModelError:
            if stopped:
                return stopped[0]
            try:
                answer = self._ask(a)
            except ModelError as error:
                if error.code in STOPPING:
                    stopped.append(error)
                return error
            if not answer.structured:  # a banner sent instead of the JSON stops the run as a quota error does
                try:
                    check_answer(answer.text, answer.stop_reason, template=a.template.name, draw=a.question.draw)
                except QuotaBanner as banner:
                    stopped.append(banner)
                except ModelError:
                    pass  # reported when the answer is settled
            return answer

        # the first asking of each prompt goes first, its repeats (other draws) after all of them have
        # answered, so that the repeats find the prompt in the API's cache rather than racing to write it
        seen: set[str] = set()
        firsts = [a for a in asked if not (a.prompt.text in seen or seen.add(a.prompt.text))]
        first_ids = {id(a) for a in firsts}
        waves = [firsts, [a for a in asked if id(a) not in first_ids]]
        found: dict[str, Reply | ModelError] = {}
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="polygraph-model") as pool:
            for wave in waves:
                for a, outcome in zip(wave, pool.map(one, wave)):
                    found[a.key] = outcome
                    if progress is not None:
                        progress(len(found), len(asked))
        return found

    def _render(self, question: Question) -> _Asked:
        template = self.template(question.template)
        check_schema_name(question.schema)
        if template.schema != question.schema:
            raise PolygraphError("template_error", f"template {template.name!r} is answered with schema "
                                 f"{template.schema!r}, not {question.schema!r}")
        if not isinstance(question.draw, int) or question.draw < 0:
            raise PolygraphError("bad_draw", f"draw must be an integer >= 0, got {question.draw!r}")
        prompt = template.render_parts(question.variables)
        shown = question.shown if question.shown is not None else Shown.from_variables(question.variables)
        return _Asked(question, template, prompt, cache_key(self.model, template.name, template.version,
                                                             prompt.text, question.draw), shown)

    def _lookup(self, asked: _Asked) -> Completion | None:
        """Returns the cached answer to the question, or None (discarding a row that fails its checks)."""
        hit = self.cache.get(asked.key) if self.cache is not None else None
        if hit is None:
            return None
        try:
            parsed = self._accept(hit, asked)
        except ModelError as error:  # written by an older, laxer harness: never serve it
            if getattr(self.cache, "replay", False):  # a recorded answer is the answer: its failure is the run's
                self.usage.rejected[error.code] += 1
                raise
            log.warning("discarding a cached answer that fails its checks: %s", error)
            self.usage.rejected["stale_cache"] += 1
            self.cache.discard(asked.key)
            return None
        self.usage.cached += 1
        self._count_items(parsed)
        log.debug("cache hit: %s v%s draw %d", asked.template.name, asked.template.version, asked.question.draw)
        return self._completion(asked, hit, parsed, cached=True)

    def _looked_up(self, asked: _Asked) -> Completion | ModelError | None:
        """_lookup, a recorded answer's failure returned as the question's outcome."""
        try:
            return self._lookup(asked)
        except ModelError as error:
            return error

    def _check_replay(self, asked: _Asked) -> None:
        if getattr(self.cache, "replay", False):  # recorded answers: never reach the API
            raise self._replay_missing(asked)

    def _replay_missing(self, asked: _Asked) -> ModelError:
        template, draw = asked.template, asked.question.draw
        return ModelError(f"{self.cache.path} holds no answer to this {template.name} v{template.version} "
                          f"prompt (draw {draw}, model {self.model}); it was recorded for other prompts",
                          template=template.name, draw=draw, code="replay_missing")

    def _settle(self, asked: _Asked, answer: Reply, mode: str) -> Completion:
        """Returns the Completion of a fresh answer and caches it; raises (and counts) a rejection."""
        stored = CachedAnswer(answer.text, answer.stop_reason, answer.input_tokens, answer.output_tokens,
                              answer.cache_write_tokens, answer.cache_read_tokens, answer.model,
                              answer.message_id, answer.request_id, mode, time.time())
        name, draw = asked.template.name, asked.question.draw
        try:
            if not answer.structured:
                check_answer(answer.text, answer.stop_reason, template=name, draw=draw)
                raise SchemaViolation(f"the answer is not the bare JSON object its format asks for "
                                      f"(stop reason {answer.stop_reason!r})", template=name, draw=draw)
            parsed = self._accept(stored, asked)
        except ModelError as error:
            with self._lock:
                self.usage.rejected[error.code] += 1
            log.warning("rejected answer: %s", error)
            raise
        self._count_items(parsed)
        if self.cache is not None:
            self.cache.put(asked.key, model=self.model, template=name, version=asked.template.version,
                           prompt=asked.prompt.text, draw=draw, answer=stored)
        return self._completion(asked, stored, parsed, cached=False)

    def _count_items(self, parsed: Parsed) -> None:
        for item in parsed.rejected:
            self.usage.rejected_items[item["code"]] += 1

    def _completion(self, asked: _Asked, answer: CachedAnswer, parsed: Parsed, cached: bool) -> Completion:
        return Completion(asked.template.name, asked.template.version, asked.question.draw, self.model, answer.text,
                          parsed.data, cached, answer.input_tokens, answer.output_tokens, answer.stop_reason,
                          answer.cache_write_tokens, answer.cache_read_tokens, parsed.rejected,
                          asked.template.digest, prompt_sha256(asked.prompt.text), answer.response_model,
                          answer.message_id, answer.request_id, answer.mode, answer.created)

    @staticmethod
    def _accept(answer: CachedAnswer, asked: _Asked) -> Parsed:
        name, draw = asked.template.name, asked.question.draw
        check_answer(answer.text, answer.stop_reason, template=name, draw=draw)
        return parse_items(asked.question.schema, answer.text, asked.shown, template=name, draw=draw)

    def _client(self) -> anthropic.Anthropic:
        import anthropic  # here, not at the top: the SDK takes a second to import, most commands never call it

        with self._lock:
            if self._sdk is None:
                key = self._api_key or os.environ.get(KEY_ENV)
                if not key:
                    raise MissingApiKey(f"set {KEY_ENV} to call the API (answers already in the cache need no key)")
                # the SDK's own retries are off: ours count attempts, back off and report
                self._sdk = anthropic.Anthropic(api_key=key, http_client=self._http_client, max_retries=0,
                                                timeout=self.timeout)
                self._api_key = None
        return self._sdk

    def count(self, mode: str, answer: Reply) -> None:
        """Adds one answered call's tokens to ``usage`` under ``mode``."""
        with self._lock:
            self.usage.calls += 1
            self.usage.tokens[mode].add(Tokens(answer.input_tokens, answer.output_tokens,
                                               answer.cache_write_tokens, answer.cache_read_tokens))

    def _ask(self, asked: _Asked) -> Reply:
        """Returns the API's answer to one question (its tokens counted)."""
        params = request(self.model, self.max_tokens, asked.prompt, asked.question.schema, asked.repeated)
        message = self.call(lambda sdk: sdk.messages.create(**params), asked.template.name, asked.question.draw)
        answer = reply(message, getattr(message, "_request_id", None))
        self.count("interactive", answer)
        return answer
