"""Load-time checks Soufflé makes that the rule language's own checks leave out.

- Every ``match`` whose pattern is a constant compiles (``datalog/values/regex.py``), in any
  program: a malformed pattern is an error at its file, line and column, whether or not
  the rule ever runs. (A pattern computed at run time is checked when it is used.)
- With ``.decl`` in use (a Soufflé program), a named variable that occurs only inside a
  negated atom is ungrounded, as Soufflé reads it: ``_`` is how to say "any value".
  Without declarations the rule language reads such a variable as existential.
- With ``.decl`` in use, a comparison may not set a symbol against a number (``x = 1``
  for a symbol column ``x``), nor two different numeric types against each other (a float
  column against a number column, ``n < 1.5`` for a number ``n``), as Soufflé's type checker
  refuses them; an integer constant fits any numeric type.
"""

from __future__ import annotations

import re
import sys
from typing import Iterable, Iterator

from polygraph_logic.datalog.checks.declarations import Declarations
from polygraph_logic.datalog.values.functions import pattern_warning
from polygraph_logic.datalog.values.regex import PatternError, compile_pattern
from polygraph_logic.datalog.checks.safety import aggregates_in, existential, literal_terms
from polygraph_logic.datalog.syntax import (
    Aggregate,
    Arithmetic,
    Atom,
    Comparison,
    Constant,
    Constraint,
    Functor,
    Negation,
    Rule,
    Variable,
)
from polygraph_logic.errors import ProgramError

# functors whose result has one type whatever their arguments
_FUNCTOR_KINDS = {"cat": "symbol", "substr": "symbol", "to_string": "symbol", "strlen": "number",
                  "to_number": "number", "to_float": "float", "to_unsigned": "unsigned"}


def check_souffle_rules(rules: Iterable[Rule], declarations: Declarations) -> None:
    """Raises ProgramError for the first rule that fails one of the module's checks."""
    declared = bool(declarations.relations)
    for rule in rules:
        bodies = list(_bodies(rule.body))
        for body, _ in bodies:
            for literal in body:
                if isinstance(literal, Constraint) and literal.name == "match":
                    check_pattern(literal)
        if not declared:
            continue
        for body, outer in bodies:
            _check_grounded_negations(rule, body, outer)
        _check_comparisons(rule, bodies, declarations)


def check_pattern(literal: Constraint) -> None:
    """Warns on standard error, as Soufflé does when it loads a program, when ``match``'s
    pattern is a constant that does not compile (match and !match are then false)."""
    pattern = literal.args[0]
    if not isinstance(pattern, Constant) or not isinstance(pattern.value, str):
        return
    try:
        compile_pattern(pattern.value)
    except (re.error, PatternError) as error:
        print(pattern_warning(pattern.value, error, literal.position), file=sys.stderr)


def _bodies(body: tuple) -> Iterator[tuple[tuple, frozenset[str] | None]]:
    """Yields a rule body and the body of every aggregate in it, however deep, each with the
    variables bound outside it (None for the rule's own body)."""
    stack: list[tuple[tuple, frozenset[str] | None]] = [(body, None)]
    while stack:
        current, outer = stack.pop()
        yield current, outer
        for literal in current:
            for term in literal_terms(literal):
                for aggregate in aggregates_in(term):
                    stack.append((aggregate.body, frozenset(aggregate.outer)))


def _check_grounded_negations(rule: Rule, body: tuple, outer: frozenset[str] | None) -> None:
    for literal in body:
        if not isinstance(literal, Negation):
            continue
        if outer is None:
            free = existential(literal, body, rule.head)
        else:  # an aggregate's body: its outer variables are bound outside it
            free = existential(literal, body, None) - outer
        for arg in literal.atom.args:
            if isinstance(arg, Variable) and arg.name in free:
                raise ProgramError(
                    "unbound_variable",
                    f"variable {arg.name} occurs only in the negation !{literal.atom} and is not bound "
                    f"(Soufflé: ungrounded variable); write _ for any value",
                    arg.position or literal.position)


def _check_comparisons(rule: Rule, bodies: list[tuple], declarations: Declarations) -> None:
    kinds: dict[str, str] = {}  # variable -> its base type, from the atoms that bind it
    for body, _ in bodies:
        for literal in body:
            atom = literal if isinstance(literal, Atom) else None
            if atom is None:
                continue
            columns = declarations.kinds(atom.relation)
            if columns is None:
                continue
            for kind, arg in zip(columns, atom.args):
                if isinstance(arg, Variable):
                    kinds.setdefault(arg.name, kind)
    for body, _ in bodies:
        for literal in body:
            if not isinstance(literal, Comparison):
                continue
            left, right = _kind(literal.left, kinds), _kind(literal.right, kinds)
            if left and right and not _comparable(left, right):
                left, right = (_INTEGER if k == _ANY_NUMBER else k for k in (left, right))
                raise ProgramError(
                    "type_error",
                    f"the comparison {literal} sets {_article(left)} against {_article(right)} (Soufflé refuses "
                    "it; to_number, to_string, to_float or to_unsigned converts one side)",
                    literal.position)


_ANY_NUMBER = "integer constant"  # an integer constant: a number, an unsigned or a float, as its place needs
_INTEGER = "number"
_NUMERIC = {"number", "unsigned", "float", _ANY_NUMBER}


def _comparable(left: str, right: str) -> bool:
    if left == right:
        return True
    return left in _NUMERIC and right in _NUMERIC and _ANY_NUMBER in (left, right)


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _kind(term, kinds: dict[str, str]) -> str | None:
    """Returns the base type of a term whose type is known (``_ANY_NUMBER`` for an integer
    constant), else None."""
    if isinstance(term, Constant):  # nil and record or ADT values are typed by record_types
        if isinstance(term.value, str):
            return "symbol"
        if isinstance(term.value, float):
            return "float"
        return _ANY_NUMBER if isinstance(term.value, int) and not isinstance(term.value, bool) else None
    if isinstance(term, Variable):
        return kinds.get(term.name)
    if isinstance(term, Arithmetic):  # "+" also joins strings (the rule language's, not Soufflé's)
        sides = {_kind(term.left, kinds), _kind(term.right, kinds)} - {_ANY_NUMBER}
        if None in sides or "symbol" in sides or len(sides) > 1:
            return None
        return sides.pop() if sides else _ANY_NUMBER
    if isinstance(term, Functor):
        return _FUNCTOR_KINDS.get(term.name)
    if isinstance(term, Aggregate):
        return {"count": "number", "mean": "float"}.get(term.op)
    return None
