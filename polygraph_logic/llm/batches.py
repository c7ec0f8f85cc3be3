"""Questions asked as one Message Batch: submit, poll with progress, resume, collect by custom id.

A batch run takes the questions the cache lacks and

1. looks in the cache file for requests of an earlier batch still uncollected (an
   interrupted run): those are polled, not submitted again;
2. submits the rest as one batch (``messages.batches.create``), each request's
   ``custom_id`` derived from its cache key, and records the batch id and its custom id ->
   key map in the cache file in one transaction;
3. polls every batch it waits for (``retrieve``) every ``poll_interval`` seconds, drawing a
   progress line of the requests ended, until each has ended;
4. reads the results (``results``), matches each to its question by custom id, and hands
   back a Reply for every ``succeeded`` request; an ``expired`` request, or an ``errored``
   one whose error is transient (overload, rate limit, server error), is submitted again
   in a new batch, up to the client's ``max_retries`` rounds; the rest, and what is still
   failing after the last round, become ModelErrors (``batch_expired``, ``batch_errored``,
   ``batch_canceled``) that the caller reports.

Batch tokens are billed at the batch discount (pricing.py) and counted under the
``batch`` mode of the client's usage.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Callable

from polygraph_logic.llm.errors import ModelError
from polygraph_logic.llm.formats import Reply, reply, request
from polygraph_logic.progress import Progress

#: batch error types worth a second batch (the request itself was fine)
TRANSIENT = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})

log = logging.getLogger(__name__)


def custom_id(key: str) -> str:
    """Returns the custom id of a batch request: its cache key, cut to the API's 64-character limit."""
    return "q" + key[:62]


class BatchRun:
    """One batch run of a ModelClient's rendered questions (see the module docstring).

    The client (``call`` with retries, ``count``, ``cache``, ``model``, ``max_tokens``,
    ``max_retries``, ``poll_interval``, ``usage``) is duck-typed: the arrow points from the
    client to this module only.
    """

    def __init__(self, client: Any, progress: Callable[[int, int], None] | None = None):
        self.client = client
        self.progress = progress

    def run(self, asked: list[Any]) -> tuple[dict[str, Reply | ModelError], list[str]]:
        """Returns key -> Reply or ModelError for each question, and the custom ids collected."""
        by_custom = {custom_id(a.key): a for a in asked}
        outcomes: dict[str, Reply | ModelError] = {}
        collected: list[str] = []
        cache = self.client.cache
        earlier = cache.submitted([a.key for a in asked]) if cache is not None else {}
        waiting: dict[str, list[str]] = {}  # batch id -> the custom ids of ours it holds
        for key, (batch_id, custom) in earlier.items():
            waiting.setdefault(batch_id, []).append(custom)
        if earlier:
            log.info("resuming %d batch(es) submitted earlier: %s", len(waiting), ", ".join(sorted(waiting)))
        fresh = [custom for custom, a in by_custom.items() if a.key not in earlier]
        for round_number in range(self.client.max_retries + 1):
            if fresh:
                waiting[self._submit(fresh, by_custom)] = fresh
            again: list[str] = []
            for batch_id, customs in waiting.items():
                self._wait(batch_id)
                for custom, outcome in self._collect(batch_id, by_custom, set(customs)):
                    collected.append(custom)
                    if isinstance(outcome, ModelError) and outcome.code in ("batch_expired", "batch_transient") \
                            and round_number < self.client.max_retries:
                        again.append(custom)
                        continue
                    outcomes[by_custom[custom].key] = outcome
            if not again:
                break
            log.warning("%d batch request(s) expired or met a transient error: submitting them again", len(again))
            fresh, waiting = again, {}
        for custom, a in by_custom.items():  # a result the batch did not hold
            outcomes.setdefault(a.key, ModelError(f"batch result for {custom} is missing",
                                                  template=a.template.name, draw=a.question.draw,
                                                  code="batch_missing"))
        for outcome in outcomes.values():
            if isinstance(outcome, ModelError):
                if outcome.code == "batch_transient":  # still failing after the last round
                    outcome.code = "batch_errored"
                self.client.usage.rejected[outcome.code] += 1
        return outcomes, collected

    def _submit(self, customs: list[str], by_custom: dict[str, Any]) -> str:
        client = self.client
        requests = [{"custom_id": custom, "params": request(client.model, client.max_tokens, a.prompt,
                                                            a.question.schema, a.repeated)}
                    for custom in customs for a in (by_custom[custom],)]
        batch = client.call(lambda sdk: sdk.messages.batches.create(requests=requests), "batch")
        if client.cache is not None:  # persisted before the first poll: an interrupt resumes this batch
            client.cache.record_batch(batch.id, {custom: by_custom[custom].key for custom in customs})
        with client._lock:
            client.usage.batches += 1
        log.info("submitted batch %s with %d request(s)", batch.id, len(customs))
        return batch.id

    def _wait(self, batch_id: str) -> None:
        """Polls the batch until it has ended, drawing the share of its requests that ended."""
        client = self.client
        # the caller's progress line when it has one, else a line of our own
        bar = Progress(f"batch {batch_id}", stream=sys.stderr if self.progress is None else _Quiet(),
                       unit="requests ended")
        try:
            while True:
                batch = client.call(lambda sdk: sdk.messages.batches.retrieve(batch_id), "batch")
                counts = batch.request_counts
                total = counts.processing + counts.succeeded + counts.errored + counts.expired + counts.canceled
                ended = total - counts.processing
                bar.total = total
                bar.step(batch.processing_status, ended - bar.count)
                if self.progress is not None:
                    self.progress(ended, total)
                if batch.processing_status == "ended":
                    return
                client._sleep(client.poll_interval)
        finally:
            bar.done()

    def _collect(self, batch_id: str, by_custom: dict[str, Any], ours: set[str]):
        """Yields (custom id, Reply or ModelError) for each result of ours in the ended batch."""
        client = self.client
        results = client.call(lambda sdk: list(sdk.messages.batches.results(batch_id)), "batch")
        for entry in results:
            if entry.custom_id not in ours:
                continue  # a request of an earlier run's batch that this run does not ask
            a = by_custom[entry.custom_id]
            result, where = entry.result, dict(template=a.template.name, draw=a.question.draw)
            if result.type == "succeeded":
                answer = reply(result.message, None)
                client.count("batch", answer)
                yield entry.custom_id, answer
            elif result.type == "errored":
                detail = getattr(result.error, "error", None)
                kind = getattr(detail, "type", None) or "unknown error"
                message = getattr(detail, "message", "") or ""
                yield entry.custom_id, ModelError(f"batch {batch_id} request {entry.custom_id} errored ({kind}): "
                                                  f"{message}", code="batch_transient" if kind in TRANSIENT
                                                  else "batch_errored", **where)
            elif result.type == "expired":
                yield entry.custom_id, ModelError(f"batch {batch_id} request {entry.custom_id} expired before it "
                                                  "was processed", code="batch_expired", **where)
            else:
                yield entry.custom_id, ModelError(f"batch {batch_id} request {entry.custom_id} was canceled",
                                                  code="batch_canceled", **where)


class _Quiet:
    """A stream that is not a terminal: a Progress drawn on it stays silent."""

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass
