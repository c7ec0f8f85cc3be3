"""Calls to the API with retries: exponential backoff with jitter, at least as long as Retry-After.

The SDK's own retries are off (ModelClient builds it with ``max_retries=0``): these count the
attempts, back off, honour ``Retry-After`` and report. Statuses 408, 429, 500, 502, 503, 504
and 529 and lost connections are retried; after ``max_retries`` a ModelUnavailable is raised.
Any other status fails at once: a 402 or a billing or quota error type as a QuotaBanner, a 401
or 403 as ``api_auth``, the rest as ``api_error``.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from polygraph_logic.llm.errors import ModelError, ModelUnavailable, QuotaBanner

KEY_ENV = "ANTHROPIC_API_KEY"
#: statuses worth retrying: timeouts, rate limits, server errors, overload (529)
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504, 529})

log = logging.getLogger("polygraph_logic.llm.client")


class Retrying:
    """The retrying half of ModelClient: it needs ``_client()``, ``usage``, ``_lock``, ``max_retries``,
    ``backoff``, ``max_backoff``, ``_sleep`` and ``_jitter`` from the class that mixes it in."""

    def call(self, send: Callable[[Any], Any], what: str, draw: int | None = None) -> Any:
        """Returns ``send(sdk)``, retrying rate limits, server errors and lost connections."""
        import anthropic  # the SDK is loaded only when a call must reach the API

        client = self._client()
        attempt = 0
        while True:
            retry_after = None
            try:
                return send(client)
            except anthropic.APIStatusError as error:
                if error.status_code not in RETRY_STATUS:
                    raise self._fatal(error, what, draw) from None
                last = f"HTTP {error.status_code} ({_error_type(error)})"
                retry_after = error.response.headers.get("retry-after")
            except anthropic.APIConnectionError as error:
                last = f"{type(error).__name__}: {error}"
            if attempt >= self.max_retries:
                with self._lock:
                    self.usage.rejected["model_unavailable"] += 1
                raise ModelUnavailable(f"gave up after {attempt + 1} attempt(s); last failure: {last}",
                                       template=what, draw=draw)
            delay = self._delay(attempt, retry_after)
            attempt += 1
            with self._lock:
                self.usage.retries += 1
            log.warning("%s; retry %d of %d in %.1f s", last, attempt, self.max_retries, delay)
            self._sleep(delay)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        """Exponential backoff with jitter (half fixed, half random), at least Retry-After."""
        ceiling = min(self.max_backoff, self.backoff * 2 ** attempt)
        delay = ceiling / 2 + self._jitter() * ceiling / 2
        try:
            return max(delay, min(float(retry_after), self.max_backoff)) if retry_after else delay
        except ValueError:  # an HTTP date instead of seconds: keep our own schedule
            return delay

    def _fatal(self, error: Any, what: str, draw: int | None) -> ModelError:
        kind = _error_type(error)
        if error.status_code == 402 or any(w in kind for w in ("billing", "spend", "quota")):
            failure: ModelError = QuotaBanner(f"the API refused the call for quota or billing "
                                              f"(HTTP {error.status_code}, {kind})", template=what, draw=draw)
        elif error.status_code in (401, 403):
            failure = ModelError(f"the API rejected the credentials (HTTP {error.status_code}, {kind}); "
                                 f"check {KEY_ENV}", template=what, draw=draw, code="api_auth")
        else:
            failure = ModelError(f"the API rejected the request (HTTP {error.status_code}, {kind}): "
                                 f"{_error_message(error)}", template=what, draw=draw, code="api_error")
        with self._lock:
            self.usage.rejected[failure.code] += 1
        return failure


def _error_type(error: Any) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else {}
    return str(detail.get("type") or "unknown error")


def _error_message(error: Any) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error") if isinstance(body.get("error"), dict) else {}
    return str(detail.get("message") or error.message)
