"""Bodies with parentheses: disjunctions and negated bodies, brought to a normal form.

``p(x) :- a(x), (b(x) ; c(x)).`` is two rules; ``!(b(x) ; c(x), x > 2)`` is negated as
Soufflé's parser negates it (De Morgan over the normal form, each comparison turned round).
"""

from __future__ import annotations

import itertools

from polygraph_logic.datalog.syntax import Atom, Comparison, Negation


class Disjunction(tuple):
    """Alternatives of a parenthesised body, each a list of literals (expanded in ``rule``)."""


_OPPOSITE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def negated(literal):
    """Returns the negation of a literal or of a parenthesised body, as Soufflé's parser builds
    it: each alternative of the body's normal form fails (one of its literals is false)."""
    if isinstance(literal, Negation):
        return literal.atom
    if isinstance(literal, Atom):
        return Negation(literal, literal.position)
    if isinstance(literal, Comparison):
        return Comparison(_OPPOSITE[literal.op], literal.left, literal.right, literal.position)
    return Disjunction([[Disjunction([[negated(item)] for item in alternative])
                          for alternative in expand([literal])]])


def expand(conjunction) -> list[list]:
    """Returns the disjunctive normal form of a conjunction that may hold disjunctions."""
    options = []
    for item in conjunction:
        if isinstance(item, Disjunction):
            options.append([alt for branch in item for alt in expand(branch)])
        else:
            options.append([[item]])
    return [[lit for part in combo for lit in part] for combo in itertools.product(*options)]
