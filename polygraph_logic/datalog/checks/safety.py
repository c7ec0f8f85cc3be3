"""Safe rules: every variable is bound by a positive atom, an assignment or the outside of an aggregate.

A variable that occurs only inside one negated atom is read as existential there:
``p(x) :- q(x), !r(x, y, y).`` holds when no ``r(x, v, v)`` exists, for any ``v``.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from polygraph_logic.errors import ProgramError
from polygraph_logic.datalog.values.functions import arithmetic
from polygraph_logic.datalog.syntax import (
    Aggregate,
    Arithmetic,
    Atom,
    BranchTerm,
    Comparison,
    Constant,
    Constraint,
    Functor,
    Negation,
    RecordTerm,
    Rule,
    Term,
    Value,
    Variable,
    Wildcard,
)
from polygraph_logic.datalog.values.functions import call
from polygraph_logic.datalog.values.record_values import call as record_call
from polygraph_logic.datalog.values.record_values import is_function as is_record_function


def term_variables(term: Term) -> Iterator[Variable]:
    """Yields the variables a term needs bound, left to right (wildcards excluded).

    An aggregate needs only its ``outer`` variables: the others are its own.
    """
    if isinstance(term, Variable):
        yield term
    elif isinstance(term, Arithmetic):
        yield from term_variables(term.left)
        yield from term_variables(term.right)
    elif isinstance(term, Functor):
        for arg in term.args:
            yield from term_variables(arg)
    elif isinstance(term, Aggregate):
        for name in term.outer:
            yield Variable(name, term.position)


def literal_terms(literal) -> tuple:
    """Returns the terms of a body literal."""
    if isinstance(literal, Atom):
        return literal.args
    if isinstance(literal, Negation):
        return literal.atom.args
    if isinstance(literal, Comparison):
        return (literal.left, literal.right)
    return literal.args  # Constraint


def ground_value(term: Term) -> Value:
    """Returns the value of a variable-free term, or raises ProgramError."""
    if isinstance(term, Constant):
        return term.value
    if isinstance(term, Arithmetic):
        return arithmetic(term.op, ground_value(term.left), ground_value(term.right), term.position, term.width)
    if isinstance(term, Functor):
        if term.name == "autoinc":
            raise ProgramError("autoinc_in_fact", "autoinc() in a fact: a fact's arguments are constants, as "
                               "Souffle requires too; write the number, or number facts with a rule "
                               "(r(autoinc(), x) :- s(x).)", term.position)
        args = [ground_value(a) for a in term.args]
        if is_record_function(term.name):
            return record_call(term.name, args, term.position)
        return call(term.name, args, term.position)
    what = "wildcard" if isinstance(term, Wildcard) else "variable" if isinstance(term, Variable) else "aggregate"
    raise ProgramError("unbound_variable", f"a fact must be ground, but {term} is a {what}",
                       getattr(term, "position", None))


def assignment_target(literal, bound: set[str]) -> Variable | None:
    """Returns ``x`` if the literal is ``x = expr`` (either side) binding an unbound ``x``."""
    if not isinstance(literal, Comparison) or literal.op != "=":
        return None
    for target, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if (
            isinstance(target, Variable)
            and target.name not in bound
            and all(v.name in bound for v in term_variables(expr))
            and not isinstance(expr, Wildcard)
        ):
            return target
    return None


def existential(literal: Negation, rule_literals: Iterable, head: Atom | None) -> set[str]:
    """Returns the variables of a negated atom that occur nowhere else in the rule."""
    elsewhere: set[str] = set()
    if head is not None:
        elsewhere |= {v.name for arg in head.args for v in term_variables(arg)}
    for other in rule_literals:
        if other is literal:
            continue
        for term in literal_terms(other):
            elsewhere |= {v.name for v in term_variables(term)}
            if isinstance(term, Aggregate):
                elsewhere |= {v.name for lit in term.body for t in literal_terms(lit) for v in term_variables(t)}
    mine = {v.name for arg in literal.atom.args for v in pattern_variables(arg)}
    return mine - elsewhere


def pattern_variables(term) -> Iterator[Variable]:
    """Yields a term's variables that stand as a value or as a field of a record or ADT
    pattern (``x`` in ``x``, ``[x, [y, _]]``, ``$A(x)``), not those inside expressions."""
    if isinstance(term, Variable):
        yield term
    elif isinstance(term, (RecordTerm, BranchTerm)):
        for arg in term.args:
            yield from pattern_variables(arg)


def check_safety(rule: Rule) -> None:
    """Raises ProgramError(unbound_variable) unless every variable of the rule is bound.

    A comparison ``x = expr`` binds ``x`` once ``expr``'s variables are bound, as in Souffle.
    """
    for arg in rule.head.args:
        if isinstance(arg, Wildcard):
            raise ProgramError("unbound_variable", "'_' cannot appear in a rule head", arg.position)
    _check_ranges(rule)
    bound = _check_body(rule.body, set(), rule.head)
    for arg in rule.head.args:
        _require(arg, bound, f"the head {rule.head}")


def _check_body(body: tuple, outer: set[str], head: Atom | None) -> set[str]:
    """Checks one body (a rule's or an aggregate's) given the variables bound outside it."""
    bound = set(outer) | {
        arg.name for literal in body if isinstance(literal, Atom) for arg in literal.args if isinstance(arg, Variable)
    }
    changed = True
    while changed:
        changed = False
        for literal in body:
            target = assignment_target(literal, bound)
            if target is not None:
                bound.add(target.name)
                changed = True
    _check_witnesses(body, bound)
    for literal in body:
        if isinstance(literal, Negation):
            free = existential(literal, body, head)
            for arg in literal.atom.args:
                here = {v.name for v in pattern_variables(arg)} & free
                _require(arg, bound | here, f"the negation {literal}")
        elif isinstance(literal, (Comparison, Constraint)):
            for term in literal_terms(literal):
                if isinstance(term, Wildcard):
                    raise ProgramError("unbound_variable", f"'_' has no value to compare in {literal}: "
                                       "name a variable bound in the body", term.position)
                _require(term, bound, f"the {'comparison' if isinstance(literal, Comparison) else 'test'} {literal}")
        else:
            for arg in literal.args:
                if not isinstance(arg, (Variable, Wildcard, Constant)):
                    _require(arg, bound, f"the expression {arg}")
        for term in literal_terms(literal):
            for aggregate in aggregates_in(term):
                inner = _check_body(aggregate.body, bound & set(aggregate.outer) | set(aggregate.outer), None)
                if aggregate.target is not None:
                    _require(aggregate.target, inner, f"the aggregate {aggregate}")
    return bound


def _check_ranges(rule: Rule) -> None:
    """Refuses ``range(...)`` anywhere but as one side of ``x = range(...)`` (it gives several values)."""
    def refuse(term) -> None:
        if isinstance(term, Functor):
            if term.name == "range":
                raise ProgramError("range_outside_assignment", f"'{term}' gives several values: bind them in a "
                                   "body with x = range(...) and use x", term.position)
            for arg in term.args:
                refuse(arg)
        elif isinstance(term, Arithmetic):
            refuse(term.left)
            refuse(term.right)
        elif isinstance(term, Aggregate):
            if term.target is not None:
                refuse(term.target)
            walk(term.body)

    def walk(body) -> None:
        for literal in body:
            if isinstance(literal, Comparison) and literal.op == "=":
                for one, other in ((literal.left, literal.right), (literal.right, literal.left)):
                    if isinstance(one, Variable) and isinstance(other, Functor) and other.name == "range":
                        for arg in other.args:
                            refuse(arg)
                        break
                else:
                    refuse(literal.left)
                    refuse(literal.right)
            else:
                for term in literal_terms(literal):
                    refuse(term)

    for arg in rule.head.args:
        refuse(arg)
    walk(rule.body)


def _check_witnesses(body: tuple, bound: set[str]) -> None:
    """Refuses a variable that only an aggregate's body binds but that is used outside it (a
    witness: which of the rows gave the maximum), as Souffle does."""
    for literal in body:
        for term in literal_terms(literal):
            for aggregate in aggregates_in(term):
                for name in aggregate.outer:
                    if name not in bound:
                        raise ProgramError(
                            "aggregate_witness",
                            f"variable {name} is bound only inside the aggregate {aggregate} but used outside "
                            "it; Souffle refuses such a witness too. Bind it outside the aggregate (an atom "
                            f"that ranges over {name}), or join the result back: m = max z : {{ r(_, z) }}, "
                            "r(x, m)",
                            aggregate.position,
                        )


def aggregates_in(term) -> Iterator[Aggregate]:
    """Yields the aggregates inside a term (not those nested in their bodies)."""
    if isinstance(term, Aggregate):
        yield term
    elif isinstance(term, Arithmetic):
        yield from aggregates_in(term.left)
        yield from aggregates_in(term.right)
    elif isinstance(term, Functor):
        for arg in term.args:
            yield from aggregates_in(arg)


def _require(term: Term, bound: set[str], where: str) -> None:
    for v in term_variables(term):
        if v.name not in bound:
            raise ProgramError(
                "unbound_variable",
                f"variable {v.name} in {where} is not bound by a positive body atom",
                v.position,
            )
