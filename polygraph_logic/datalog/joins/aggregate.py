"""Aggregates ``count``, ``sum``, ``min``, ``max`` and ``mean`` as Souffle computes them.

An aggregate runs its body once per binding of its ``outer`` variables (those the
rule binds outside it) and reduces the distinct bindings of the body's own variables;
a one-atom body counts every matching tuple (the parser names its wildcards). An
empty body gives count 0 and sum 0; min, max and mean of nothing make the rule not
fire. Results are cached per outer binding: the body reads only lower strata, which
are complete when the aggregate runs. A sum or mean over floats adds its rows one
after another in the order of their values (column by column, the body's variables
in the order they first occur), so a result that rounding makes depend on the order
is the same every run.

Under a provenance semiring a derived fact's label says which source assertions
support it; a count has no such label, so ``Program.check_provenance_negation``
rejects aggregates over tracked relations, and an aggregate over background
relations contributes provenance 1.
"""

from __future__ import annotations

from typing import Any, Callable

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.values.functions import wrap
from polygraph_logic.errors import EvaluationError
from polygraph_logic.datalog.checks.safety import term_variables
from polygraph_logic.datalog.syntax import Aggregate, Atom

_MISSING = object()
_EMPTY = object()


class NoValue(Exception):
    """Raised by an aggregate over nothing (min, max, mean): the rule does not fire for this binding."""


def aggregate_variables(aggregate: Aggregate, collect: Callable[[Any], set[str]]) -> list[str]:
    """Returns the aggregate's own variables (in its body, not outer): those of its atoms in the
    order they first occur there (the order a sum over floats adds its rows in), then the rest sorted."""
    names: set[str] = set()
    for literal in aggregate.body:
        names |= collect(literal)
    names -= set(aggregate.outer)
    ordered = dict.fromkeys(v.name for literal in aggregate.body if isinstance(literal, Atom)
                            for arg in literal.args for v in term_variables(arg) if v.name in names)
    return [*ordered, *sorted(names - set(ordered))]


def _row_key(row: tuple) -> tuple:
    """Rows of an aggregate's body in order: numbers by value before symbols by code point, column by column."""
    return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, v) for v in row)


def aggregate_getter(aggregate: Aggregate, slots: dict[str, int], inner: list[str], target,
                     compile_body: Callable) -> Callable[[list], Any]:
    """Returns ``b -> value``: the aggregate over its body given the outer bindings in ``b``.

    ``target`` is a getter for the aggregated expression (None for count);
    ``compile_body(body, bound, final)`` compiles the body into ``run(b)``, a chain of steps
    ending in ``final(b, label)``.
    """
    inner_slots = [slots[name] for name in inner]
    outer_slots = [slots[name] for name in aggregate.outer]
    rows: dict[tuple, Any] = {}

    def final(b, label):
        key = tuple([b[s] for s in inner_slots])
        if key not in rows:
            rows[key] = target(b) if target is not None else None

    run = compile_body(aggregate.body, set(aggregate.outer), final)
    cache: dict[tuple, Any] = {}
    op, position = aggregate.op, aggregate.position

    def get(b):
        key = tuple([b[s] for s in outer_slots])
        value = cache.get(key, _MISSING)
        if value is _MISSING:
            rows.clear()
            run(b)
            values = list(rows.values())
            if op in ("sum", "mean") and any(type(v) is float for v in values):
                values = [rows[k] for k in sorted(rows, key=_row_key)]  # floats add in a fixed order
            value = cache[key] = reduce(op, values, position, aggregate.width)
        if value is _EMPTY:
            raise NoValue
        return value

    return get


def reduce(op: str, values: list, position, width: str | None = None) -> Any:
    """Returns the aggregate of values, or the empty marker where Souffle yields nothing; a sum
    with a ``width`` wraps to the domain's width as Souffle's does."""
    if op == "count":
        return len(values)
    if op == "sum" and not values:
        return 0
    if not values:
        return _EMPTY
    try:
        if op in ("sum", "mean"):
            total = 0
            floats = any(type(v) is float for v in values)
            for v in values:  # one addition after another, as Souffle adds (Python 3.12's sum compensates)
                total = domain.real(total + v) if floats else total + v
            if op == "mean":  # Souffle's mean: a float sum over a float count, at the domain's width
                return domain.real(domain.real(float(total)) / len(values))
            return wrap(total, width) if width is not None else total
        if op == "min":
            return min(values)
        return max(values)
    except TypeError:
        raise EvaluationError("type_error", f"{op} needs numbers, got {values[:3]!r}...", position) from None
