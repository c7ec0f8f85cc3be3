"""Which variables of an aggregate are bound outside it: each aggregate's ``outer``, set once
a rule is parsed (``count : { e(x, y) }`` counts per ``x`` when ``x`` is used outside)."""

from __future__ import annotations

from dataclasses import replace

from polygraph_logic.datalog.syntax import Aggregate, Arithmetic, Atom, Comparison, Functor, Negation, Rule, Variable


def resolve_aggregates(rule: Rule) -> Rule:
    """Returns the rule with each aggregate's ``outer`` set: its variables used outside it."""
    if not any(_aggregates_of(lit) for lit in rule.body):
        return rule
    everywhere = _names(rule.head)
    for literal in rule.body:
        everywhere |= _names(literal, skip_aggregates=True)
    body = tuple(_with_outer(lit, everywhere) for lit in rule.body)
    return Rule(rule.head, body, rule.position)


def lift_head_aggregates(head: Atom) -> tuple[Atom, tuple]:
    """Returns the head with each aggregate in it (``r(count : { e(_) } - 1)``) replaced by a
    fresh variable, and the equations that bind those variables, for the rule's body."""
    equations: list = []

    def lift(term):
        if isinstance(term, Aggregate):
            value = Variable(f"_#g{len(equations) + 1}", term.position)
            equations.append(Comparison("=", value, term, term.position))
            return value
        if isinstance(term, Arithmetic):
            return replace(term, left=lift(term.left), right=lift(term.right))
        if isinstance(term, Functor):
            return replace(term, args=tuple(lift(a) for a in term.args))
        return term

    if not _aggregates_of(head):
        return head, ()
    return replace(head, args=tuple(lift(a) for a in head.args)), tuple(equations)


def _with_outer(node, outside: set[str]):
    if isinstance(node, Aggregate):
        inner = set().union(*(_names(lit) for lit in node.body))
        if node.target is not None:
            inner |= _names(node.target)
        here = outside | set().union(*(_names(lit, skip_aggregates=True) for lit in node.body))
        body = tuple(_with_outer(lit, here) for lit in node.body)
        return replace(node, body=body, outer=tuple(sorted(inner & outside)))
    if isinstance(node, Comparison):
        return replace(node, left=_with_outer(node.left, outside), right=_with_outer(node.right, outside))
    if isinstance(node, Arithmetic):
        return replace(node, left=_with_outer(node.left, outside), right=_with_outer(node.right, outside))
    if isinstance(node, (Functor, Atom)):
        return replace(node, args=tuple(_with_outer(a, outside) for a in node.args))
    return node


def _names(node, skip_aggregates: bool = False) -> set[str]:
    if isinstance(node, Variable):
        return {node.name}
    if isinstance(node, Aggregate):
        if skip_aggregates:
            return set(node.outer)
        found = set().union(*(_names(lit) for lit in node.body))
        return found | (_names(node.target) if node.target is not None else set())
    if isinstance(node, (Arithmetic, Comparison)):
        return _names(node.left, skip_aggregates) | _names(node.right, skip_aggregates)
    if isinstance(node, (Atom, Functor)):
        return set().union(*(_names(a, skip_aggregates) for a in node.args))
    if isinstance(node, Negation):
        return _names(node.atom, skip_aggregates)
    return set()


def _aggregates_of(node) -> bool:
    if isinstance(node, Aggregate):
        return True
    if isinstance(node, (Arithmetic, Comparison)):
        return _aggregates_of(node.left) or _aggregates_of(node.right)
    if isinstance(node, (Atom, Functor)):
        return any(_aggregates_of(a) for a in node.args)
    return False
