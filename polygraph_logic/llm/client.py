"""ModelClient: templates in, schema-checked answers out, through a cache and guards.

One call is: render a versioned template, look the question up in the answer cache
(a hit costs nothing), otherwise ask the Messages API with retries and backoff, run
the guards (banner, refusal, empty answer), parse the answer strictly against its
schema with citations checked against the ids shown, and only then store it. Every
rejection is counted in ``usage.rejected`` and raised as a ModelError.

Draws: the request is the same for every draw (the Messages API of SDK 2.14 takes no
sampling parameters, so the model samples at its default temperature); the draw index
is only part of the cache key, which makes draw ``i`` reproducible from the cache.

The API key is read from ``ANTHROPIC_API_KEY`` (or passed in) only when a call must
reach the API, handed to the SDK and kept nowhere else: not in the cache, the log,
an error message or ``repr``.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping


from polygraph_logic.errors import PolygraphError
from polygraph_logic.llm.cache import AnswerCache, CachedAnswer, RecordedAnswers, cache_key
from polygraph_logic.llm.errors import MissingApiKey, ModelError, ModelUnavailable, QuotaBanner
from polygraph_logic.llm.guards import check_answer
from polygraph_logic.llm.schemas import Shown, check_schema_name, parse_answer
from polygraph_logic.llm.templates import Template, load_template

#: a current Claude Sonnet (not in anthropic._data.DEPRECATED_MODELS)
DEFAULT_MODEL = "claude-sonnet-5-5"
MODEL_ENV = "POLYGRAPH_MODEL"
KEY_ENV = "ANTHROPIC_API_KEY"
#: statuses worth retrying: timeouts, rate limits, server errors, overload (529)
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504, 529})

log = logging.getLogger(__name__)


def resolve_model(model: str | None = None) -> str:
    """Returns ``model``, else ``$POLYGRAPH_MODEL``, else DEFAULT_MODEL."""
    return model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL


@dataclass(frozen=True)
class Completion:
    """One answer: the parsed object (``data``), its text, and whether the cache served it.

    Token counts are what the answer cost when it was first asked, also on a cache hit.
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


@dataclass
class Usage:
    """Running totals: API calls answered, cache hits, tokens billed, retries, rejections."""

    calls: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    rejected: Counter = field(default_factory=Counter)

    def to_json(self) -> dict:
        """Returns the totals as a JSON object (rejections by error code)."""
        return {"calls": self.calls, "cached": self.cached, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "retries": self.retries,
                "rejected": dict(sorted(self.rejected.items()))}


class ModelClient:
    """Asks a Claude model through prompt templates; see the module docstring."""

    def __init__(self, model: str | None = None, cache: str | Path | AnswerCache | RecordedAnswers | None = None,
                 http_client: Any = None, max_retries: int = 4, api_key: str | None = None, *,
                 max_tokens: int = 4096, timeout: float = 300.0,
                 backoff: float = 1.0, max_backoff: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep, jitter: Callable[[], float] = random.random):
        self.model = resolve_model(model)
        self.cache = cache if isinstance(cache, (AnswerCache, RecordedAnswers)) or cache is None \
            else AnswerCache(cache)
        self.max_retries, self.max_tokens = max_retries, max_tokens
        self.timeout, self.backoff, self.max_backoff = timeout, backoff, max_backoff
        self.usage = Usage()
        self._sleep, self._jitter = sleep, jitter
        self._http_client = http_client
        self._api_key = api_key
        self._sdk: anthropic.Anthropic | None = None
        self._templates: dict[str, Template] = {}

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
        template = self.template(template_name)
        check_schema_name(schema)
        if template.schema != schema:
            raise PolygraphError("template_error", f"template {template.name!r} is answered with schema "
                                 f"{template.schema!r}, not {schema!r}")
        if not isinstance(draw, int) or draw < 0:
            raise PolygraphError("bad_draw", f"draw must be an integer >= 0, got {draw!r}")
        prompt = template.render(variables)
        shown = shown if shown is not None else Shown.from_variables(variables)
        key = cache_key(self.model, template.name, template.version, prompt, draw)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            try:
                data = self._accept(hit, schema, shown, template, draw)
            except ModelError as error:  # written by an older, laxer harness: never serve it
                if getattr(self.cache, "replay", False):  # a recorded answer is the answer: its failure is the run's
                    self.usage.rejected[error.code] += 1
                    raise
                log.warning("discarding a cached answer that fails its checks: %s", error)
                self.usage.rejected["stale_cache"] += 1
                self.cache.discard(key)
            else:
                self.usage.cached += 1
                log.debug("cache hit: %s v%s draw %d", template.name, template.version, draw)
                return self._completion(template, draw, hit, data, cached=True)
        if getattr(self.cache, "replay", False):  # recorded answers: never reach the API
            raise ModelError(f"{self.cache.path} holds no answer to this {template.name} v{template.version} prompt "
                             f"(draw {draw}, model {self.model}); it was recorded for other prompts",
                             template=template.name, draw=draw, code="replay_missing")
        answer = self._ask(prompt, template, draw)
        try:
            data = self._accept(answer, schema, shown, template, draw)
        except ModelError as error:
            self.usage.rejected[error.code] += 1
            log.warning("rejected answer: %s", error)
            raise
        if self.cache is not None:
            self.cache.put(key, model=self.model, template=template.name, version=template.version,
                           prompt=prompt, draw=draw, answer=answer)
        return self._completion(template, draw, answer, data, cached=False)

    def _completion(self, template: Template, draw: int, answer: CachedAnswer, data: dict,
                    cached: bool) -> Completion:
        return Completion(template.name, template.version, draw, self.model, answer.text, data, cached,
                          answer.input_tokens, answer.output_tokens, answer.stop_reason)

    @staticmethod
    def _accept(answer: CachedAnswer, schema: str, shown: Shown, template: Template, draw: int) -> dict:
        check_answer(answer.text, answer.stop_reason, template=template.name, draw=draw)
        return parse_answer(schema, answer.text, shown, template=template.name, draw=draw)

    def _client(self) -> anthropic.Anthropic:
        import anthropic  # here, not at the top: the SDK takes a second to import, most commands never call it

        if self._sdk is None:
            key = self._api_key or os.environ.get(KEY_ENV)
            if not key:
                raise MissingApiKey(f"set {KEY_ENV} to call the API (answers already in the cache need no key)")
            # the SDK's own retries are off: ours count attempts, back off and report
            self._sdk = anthropic.Anthropic(api_key=key, http_client=self._http_client, max_retries=0,
                                            timeout=self.timeout)
            self._api_key = None
        return self._sdk

    def _ask(self, prompt: str, template: Template, draw: int) -> CachedAnswer:
        """Returns the API's answer, retrying rate limits, server errors and lost connections."""
        import anthropic

        client = self._client()
        attempt = 0
        while True:
            retry_after = None
            try:
                message = client.messages.create(model=self.model, max_tokens=self.max_tokens,
                                                 messages=[{"role": "user", "content": prompt}])
                break
            except anthropic.APIStatusError as error:
                if error.status_code not in RETRY_STATUS:
                    raise self._fatal(error, template, draw) from None
                last = f"HTTP {error.status_code} ({_error_type(error)})"
                retry_after = error.response.headers.get("retry-after")
            except anthropic.APIConnectionError as error:
                last = f"{type(error).__name__}: {error}"
            if attempt >= self.max_retries:
                self.usage.rejected["model_unavailable"] += 1
                raise ModelUnavailable(f"gave up after {attempt + 1} attempt(s); last failure: {last}",
                                       template=template.name, draw=draw)
            delay = self._delay(attempt, retry_after)
            attempt += 1
            self.usage.retries += 1
            log.warning("%s; retry %d of %d in %.1f s", last, attempt, self.max_retries, delay)
            self._sleep(delay)
        self.usage.calls += 1
        if isinstance(message, str):  # a gateway answered with plain text, not a Message: guard it
            return CachedAnswer(message, None, 0, 0)
        usage = message.usage
        self.usage.input_tokens += usage.input_tokens or 0
        self.usage.output_tokens += usage.output_tokens or 0
        text = "".join(block.text for block in message.content if block.type == "text")
        return CachedAnswer(text, message.stop_reason, usage.input_tokens or 0, usage.output_tokens or 0)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        """Exponential backoff with jitter (half fixed, half random), at least Retry-After."""
        ceiling = min(self.max_backoff, self.backoff * 2 ** attempt)
        delay = ceiling / 2 + self._jitter() * ceiling / 2
        try:
            return max(delay, min(float(retry_after), self.max_backoff)) if retry_after else delay
        except ValueError:  # an HTTP date instead of seconds: keep our own schedule
            return delay

    def _fatal(self, error: anthropic.APIStatusError, template: Template, draw: int) -> ModelError:
        kind = _error_type(error)
        if error.status_code == 402 or any(w in kind for w in ("billing", "spend", "quota")):
            failure: ModelError = QuotaBanner(f"the API refused the call for quota or billing "
                                              f"(HTTP {error.status_code}, {kind})", template=template.name,
                                              draw=draw)
        elif error.status_code in (401, 403):
            failure = ModelError(f"the API rejected the credentials (HTTP {error.status_code}, {kind}); "
                                 f"check {KEY_ENV}", template=template.name, draw=draw, code="api_auth")
        else:
            failure = ModelError(f"the API rejected the request (HTTP {error.status_code}, {kind}): "
                                 f"{_error_message(error)}", template=template.name, draw=draw, code="api_error")
        self.usage.rejected[failure.code] += 1
        return failure


def _error_type(error: anthropic.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else {}
    return str(detail.get("type") or "unknown error")


def _error_message(error: anthropic.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else {}
    return str(detail.get("message") or error.message)
