"""Witnesses of ``min`` and ``max``, grounded as Souffle grounds them (its GroundWitnesses pass).

``tallest(s, n) :- n = max h : { student(s, h) }.`` uses ``s``, which only the aggregate's
body binds: a *witness*, any row of the body that gives the maximum. The rule is read as
``tallest(s, n) :- n = v, v = max h : { student(s', h) }, student(s, h2), h2 = v``: the
aggregate computed with the witness renamed apart, then its body joined again at the top with
the target equal to the result (its own variables renamed apart, the witnesses kept), so
every row that reaches the maximum gives one. A witness of a ``min`` or ``max`` nested in
another aggregate's body is joined at the top the same way; a witness of ``count``, ``sum`` or
``mean`` is refused, as Souffle refuses it.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from polygraph_logic.datalog.reading.aggregate_scope import aggregates_of, grounded, map_terms, names, scope_aggregates
from polygraph_logic.datalog.syntax import Aggregate, Comparison, Rule, Variable, Wildcard
from polygraph_logic.errors import ParseError


def resolve_aggregates(rule: Rule) -> Rule:
    """Returns the rule with its aggregates scoped (``outer`` set) and their witnesses grounded."""
    if not any(aggregates_of(lit) for lit in rule.body):
        return rule
    rule = scope_aggregates(rule)
    everywhere = grounded(rule.body)
    used = names(rule.head) | set().union(*(names(lit, skip_aggregates=True) for lit in rule.body))
    taken = names(rule.head) | set().union(*(names(lit) for lit in rule.body))
    fresh = (f"_#a{n}" for n in itertools.count(1) if f"_#a{n}" not in taken)
    extra: list = []

    def ground(node, depth: int):
        if not isinstance(node, Aggregate):
            return map_terms(node, lambda term: ground(term, depth))
        body = tuple(ground(lit, depth + 1) for lit in node.body)
        node = replace(node, body=body)
        witnesses = (grounded(body, frozenset(node.outer)) & used) - everywhere - set(node.outer)
        if not witnesses:
            return node
        _refuse(node, witnesses, depth, everywhere)
        return _joined_back(node, witnesses, fresh, extra)

    body = tuple(ground(_named(lit, fresh), 0) for lit in rule.body)
    if not extra:
        return rule
    return scope_aggregates(Rule(rule.head, _unscoped(body + tuple(extra)), rule.position))


def _named(literal, fresh):
    """Returns ``_ = aggregate`` (its witnesses wanted, its value not) with the ``_`` named."""
    if isinstance(literal, Comparison) and literal.op == "=":
        if isinstance(literal.left, Wildcard) and isinstance(literal.right, Aggregate):
            return replace(literal, left=Variable(next(fresh), literal.position))
        if isinstance(literal.right, Wildcard) and isinstance(literal.left, Aggregate):
            return replace(literal, right=Variable(next(fresh), literal.position))
    return literal


def _refuse(aggregate: Aggregate, witnesses: set[str], depth: int, everywhere: set[str]) -> None:
    name = sorted(witnesses)[0]
    if aggregate.op not in ("min", "max"):
        raise ParseError("aggregate_witness", f"variable {name} is bound only inside the aggregate {aggregate} "
                         f"but used outside it: a {aggregate.op} has no row to take it from (Souffle refuses "
                         "it too). Bind it outside the aggregate, or group by it", aggregate.position)
    if depth and not set(aggregate.outer) <= everywhere:
        raise ParseError("aggregate_witness", f"variable {name} is a witness of {aggregate}, nested in an "
                         "aggregate whose body binds its other variables: it cannot be joined back outside. "
                         "Compute the inner aggregate in a rule of its own", aggregate.position)


def _joined_back(aggregate: Aggregate, witnesses: set[str], fresh, extra: list) -> Variable:
    """Returns the variable that stands for the aggregate's value, adding to ``extra`` the
    equation that computes it (witnesses renamed apart) and its body joined back."""
    value = Variable(next(fresh), aggregate.position)
    inside = {name: next(fresh) for name in sorted(witnesses)}
    own = names(aggregate) - set(aggregate.outer) - witnesses
    copied = {name: next(fresh) for name in sorted(own)}
    extra.append(Comparison("=", value, _renamed(aggregate, inside), aggregate.position))
    extra.extend(_renamed(lit, copied) for lit in aggregate.body)
    extra.append(Comparison("=", _renamed(aggregate.target, copied), value, aggregate.position))
    return value


def _renamed(node, mapping: dict[str, str]):
    if isinstance(node, Variable):
        return replace(node, name=mapping[node.name]) if node.name in mapping else node
    if isinstance(node, Aggregate):
        target = _renamed(node.target, mapping) if node.target is not None else None
        return replace(node, target=target, body=tuple(_renamed(lit, mapping) for lit in node.body))
    return map_terms(node, lambda term: _renamed(term, mapping))


def _unscoped(literals: tuple) -> tuple:
    """Returns the literals with every aggregate's ``outer`` cleared, for scoping them again."""
    def clear(node):
        if isinstance(node, Aggregate):
            return replace(node, outer=(), body=tuple(clear(lit) for lit in node.body))
        return map_terms(node, clear)

    return tuple(clear(lit) for lit in literals)
