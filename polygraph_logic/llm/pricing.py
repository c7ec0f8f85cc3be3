"""What a run cost in dollars: one price table, overridable, and the arithmetic.

``PRICES`` holds list prices in US dollars per million tokens for the models whose prices
this project states: ``input``, ``output``, ``cache_write`` (a 5-minute prompt-cache write)
and ``cache_read`` (a prompt-cache hit). Each entry states every figure: a cache write is
1.25 x input and a cache read 0.1 x input on the 4.x models, but not on every model (a
cache read on Claude Sonnet 5.5 and Opus 5.5 is 0.05 x input). The Message Batches API bills every token
of a batch at half price (``BATCH_DISCOUNT``), cache writes and reads included.

Prices change and new models come out, so the table is overridable: a JSON file
``{"MODEL": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}, ...}``
given as ``--prices FILE`` or in ``$POLYGRAPH_PRICES`` replaces or adds entries (a
``"batch_discount"`` key replaces the discount). A model with no price gets no dollar
figure, said plainly, never a guess.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Mapping

from polygraph_logic.errors import PolygraphError

PRICES_ENV = "POLYGRAPH_PRICES"
#: how a call is asked: one Messages call, or a request of a Message Batch (billed at the discount)
MODES = ("interactive", "batch")
BATCH_DISCOUNT = 0.5
_KINDS = ("input", "output", "cache_write", "cache_read")


def _price(input: float, output: float, cache_write: float, cache_read: float) -> dict[str, float]:
    return {"input": input, "output": output, "cache_write": cache_write, "cache_read": cache_read}


#: US dollars per million tokens (list prices; override with --prices FILE or $POLYGRAPH_PRICES).
#: Sources, each figure from Anthropic's own pages: the 4.x models from
#: https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing");
#: Claude Sonnet 5.5 from https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide
#: (Sonnet 5's prices, except cache reads at $0.10) and its specification page
#: https://platform.claude.com/docs/zh-CN/models/sonnet-5-5/overview ($2 input, $10 output,
#: 5-minute cache write $2.50; that snapshot predates the cache-read cut the guide states);
#: Claude Sonnet 5 and Opus 5.5 from https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview
#: and https://platform.claude.com/docs/zh-CN/models/opus-5-5/overview; Claude Opus 5 from
#: https://platform.claude.com/docs/en/models/opus-5/overview. Batch: 50% off, same pages.
#: Claude Haiku 5.5 is left out: its price depends on each request's prompt length (from
#: $0.10 / $0.50 up to 100K tokens), which one flat entry cannot state; give it with --prices.
PRICES: dict[str, dict[str, float]] = {
    "claude-haiku-4-5": _price(1.0, 5.0, 1.25, 0.10),
    "claude-haiku-4-5-20251001": _price(1.0, 5.0, 1.25, 0.10),
    "claude-sonnet-4-6": _price(3.0, 15.0, 3.75, 0.30),
    "claude-opus-4-5": _price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-5-20251101": _price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-6": _price(5.0, 25.0, 6.25, 0.50),
    "claude-sonnet-5": _price(2.0, 10.0, 2.50, 0.20),
    "claude-sonnet-5-5": _price(2.0, 10.0, 2.50, 0.10),
    "claude-opus-5": _price(5.0, 25.0, 6.25, 0.50),
    "claude-opus-5-5": _price(4.0, 20.0, 5.0, 0.20),
}


@dataclass
class Tokens:
    """Token counts of some calls, by how they are billed."""

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0

    def add(self, other: "Tokens") -> None:
        """Adds another count to this one."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_json(self) -> dict:
        """Returns the counts as ``{"input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"}``."""
        return {f"{f.name}_tokens": getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class PriceTable:
    """Prices per million tokens by model, and the batch discount."""

    prices: Mapping[str, Mapping[str, float]]
    batch_discount: float = BATCH_DISCOUNT
    source: str = "the built-in table"

    def cost(self, model: str, tokens: Tokens, batch: bool = False) -> float | None:
        """Returns the dollars ``tokens`` cost on ``model`` (batch-discounted if ``batch``), or None
        when the table has no price for the model."""
        price = self.prices.get(model)
        if price is None:
            return None
        dollars = sum(getattr(tokens, kind) * price[kind] for kind in _KINDS) / 1_000_000
        return dollars * (1 - self.batch_discount) if batch else dollars

    def no_price(self, model: str) -> str:
        """Returns the sentence a report prints when the model has no price."""
        return (f"no price for model {model} in {self.source}; give one with --prices FILE or "
                f"${PRICES_ENV} ({{\"{model}\": {{\"input\": ..., \"output\": ..., \"cache_write\": ..., "
                f"\"cache_read\": ...}}}}, dollars per million tokens)")


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Returns the built-in table overridden by ``path``, else by ``$POLYGRAPH_PRICES``, if either is set."""
    path = path or os.environ.get(PRICES_ENV)
    if not path:
        return PriceTable(PRICES)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read the price table {path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise PolygraphError("bad_prices", f"{path}: not valid JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict):
        raise PolygraphError("bad_prices", f"{path}: expected an object of model -> prices")
    prices = {model: dict(entry) for model, entry in PRICES.items()}
    discount = data.pop("batch_discount", BATCH_DISCOUNT)
    if not isinstance(discount, (int, float)) or not 0 <= discount < 1:
        raise PolygraphError("bad_prices", f"{path}: batch_discount must be a number in [0, 1), got {discount!r}")
    for model, entry in data.items():
        bad = not isinstance(entry, dict) or set(entry) != set(_KINDS) or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in entry.values())
        if bad:
            raise PolygraphError("bad_prices", f"{path}: the price of {model!r} must be an object with exactly "
                                               f"{', '.join(_KINDS)} (dollars per million tokens, >= 0)")
        prices[model] = {kind: float(entry[kind]) for kind in _KINDS}
    return PriceTable(prices, float(discount), str(path))


@dataclass
class Usage:
    """Running totals: API calls answered, cache hits, tokens billed by mode, retries, rejections."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    batches: int = 0
    rejected: Counter = field(default_factory=Counter)
    rejected_items: Counter = field(default_factory=Counter)
    tokens: dict[str, Tokens] = field(default_factory=lambda: {mode: Tokens() for mode in MODES})

    @property
    def total(self) -> Tokens:
        """Returns the tokens of every mode together."""
        total = Tokens()
        for tokens in self.tokens.values():
            total.add(tokens)
        return total

    @property
    def input_tokens(self) -> int:
        return self.total.input

    @property
    def output_tokens(self) -> int:
        return self.total.output

    def dollars(self, model: str, prices: PriceTable) -> float | None:
        """Returns what the calls cost on ``model`` (batch tokens at the batch discount), or None: no price."""
        if self.total == Tokens():  # nothing was billed: nothing to price, whatever the model
            return 0.0
        costs = [prices.cost(model, tokens, batch=mode == "batch") for mode, tokens in self.tokens.items()]
        return None if None in costs else sum(costs)

    def to_json(self, model: str | None = None, prices: PriceTable | None = None) -> dict:
        """Returns the totals as a JSON object (rejections by error code; with a model and a price
        table also ``dollars``, null when the table has no price for the model, and ``price_note``)."""
        found = {"calls": self.calls, "cached": self.cached, **self.total.to_json(), "retries": self.retries,
                 "rejected": dict(sorted(self.rejected.items()))}
        if self.rejected_items:
            found["rejected_items"] = dict(sorted(self.rejected_items.items()))
        if self.batches or self.tokens["batch"] != Tokens():
            found["batches"] = self.batches
            found["by_mode"] = {mode: tokens.to_json() for mode, tokens in self.tokens.items()}
        if model is not None and prices is not None:
            found["dollars"] = self.dollars(model, prices)
            if found["dollars"] is None:
                found["price_note"] = prices.no_price(model)
        return found

    def line(self, model: str, prices: PriceTable) -> str:
        """Returns the usage as one line of a run report: calls, tokens by kind, dollars."""
        total, dollars = self.total, self.dollars(model, prices)
        batch = f" ({self.batches} batch{'es' * (self.batches != 1)})" if self.batches else ""
        cost = f"${dollars:.4f}" if dollars is not None else f"no price for {model}"
        return (f"model {model}: {self.calls} calls{batch}, {self.cached} answered from the cache; tokens "
                f"{total.input} input, {total.output} output, {total.cache_write} cache write, "
                f"{total.cache_read} cache read; {cost}; {self.retries} retries")
