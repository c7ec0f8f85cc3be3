"""Record and ADT patterns in rule bodies rewritten into plain atoms and equalities.

``q(x) :- p([x, _])`` becomes ``q(x) :- p(r), r = [x, w], x = $field(r, 0), w = $field(r, 1)``
(``r`` and ``w`` fresh variables). Both directions are kept: when ``r`` is bound first
(``p`` scanned) the fields are taken from it and the last equality checks its shape;
when ``x`` is bound first the record is built and ``p`` is looked up by it. The join
planner places whichever is ready, so a pattern matches nested records, constants
inside records (``[1, y]``), repeated variables and ADT branches (``$Add(l, r)``,
``$Zero``) with the equalities it already knows. A field of ``nil``, or an argument of
another branch, has no value (``records.NoMatch``): that binding does not match.

A negated atom may hold a record whose variables are bound elsewhere in the rule
(``!seen([x, y])``): it is built, then looked up. One with ``_`` or a variable found
only there (``!edge([x, _])``: no record with first field ``x``) stays an open pattern,
matched against the candidate tuples by ``open_pattern``.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from polygraph_logic.datalog.values.record_values import ARG, FIELD, Branch, Record
from polygraph_logic.datalog.checks.safety import literal_terms, term_variables
from polygraph_logic.datalog.syntax import (
    Aggregate,
    Arithmetic,
    Atom,
    BranchTerm,
    Comparison,
    Constant,
    Functor,
    Negation,
    RecordTerm,
    Rule,
    Variable,
    Wildcard,
)
from polygraph_logic.errors import ParseError

STRUCTURED = (RecordTerm, BranchTerm)


def destructure(rule: Rule) -> Rule:
    """Returns the rule with every record or ADT pattern of its body matched through equalities."""
    if not any(_mentions(term) for term in (*rule.head.args, *_all_terms(rule.body))):
        return rule
    for arg in rule.head.args:
        _no_wildcard(arg, "a rule head")
    fresh = itertools.count(1)
    return Rule(rule.head, tuple(_body(rule.body, fresh, rule)), rule.position)


def _body(literals, fresh, rule: Rule) -> list:
    out: list = []
    for literal in literals:
        if isinstance(literal, Atom):
            extra: list = []
            args = tuple(_argument(_in_aggregates(a, fresh, rule), fresh, extra) for a in literal.args)
            out.append(replace(literal, args=args))
            out.extend(extra)
        elif isinstance(literal, Negation):
            out.extend(_negation(literal, fresh, rule))
        elif isinstance(literal, Comparison):
            out.extend(_comparison(replace(literal, left=_in_aggregates(literal.left, fresh, rule),
                                           right=_in_aggregates(literal.right, fresh, rule)), fresh))
        else:
            for arg in literal.args:
                _no_wildcard(arg, f"the test {literal}")
            out.append(literal)
    return out


def _argument(arg, fresh, extra: list):
    if not isinstance(arg, STRUCTURED):
        return arg
    value = _fresh("r", fresh, arg)
    extra.extend(match(arg, value, fresh))
    return value


def _negation(literal: Negation, fresh, rule: Rule) -> list:
    """A record or ADT value in a negated atom: built first when all its variables are bound
    elsewhere (then looked up whole), else left in place as an open pattern that
    ``open_pattern`` matches against each candidate tuple (``_`` and the variables found
    only here stand for any value)."""
    structured = [a for a in literal.atom.args if isinstance(a, STRUCTURED)]
    if not structured:
        return [literal]
    elsewhere = _names_outside(literal, rule)
    before: list = []
    args = []
    for arg in literal.atom.args:
        if isinstance(arg, STRUCTURED) and not _is_open(arg, elsewhere):
            value = _fresh("r", fresh, arg)
            before.append(Comparison("=", value, arg, arg.position))
            arg = value
        args.append(arg)
    return [*before, replace(literal, atom=replace(literal.atom, args=tuple(args)))]


def _is_open(term, bound_elsewhere: set[str]) -> bool:
    if isinstance(term, Wildcard):
        return True
    if isinstance(term, Variable):
        return term.name not in bound_elsewhere
    if isinstance(term, STRUCTURED):
        return any(_is_open(a, bound_elsewhere) for a in term.args)
    return False


def open_pattern(term, free: set[str], make_getter):
    """Returns ``(value, b, local) -> bool``: does ``value`` match the pattern ``term`` of a
    negated atom? ``free`` names its variables found nowhere else (bound in ``local``, the same
    value wherever they repeat in one tuple); the others are read from the binding ``b`` by
    getters ``make_getter(term)`` builds."""
    if isinstance(term, Wildcard):
        return lambda value, b, local: True
    if isinstance(term, Variable) and term.name in free:
        name = term.name

        def variable(value, b, local):
            if name in local:
                return local[name] == value
            local[name] = value
            return True

        return variable
    if isinstance(term, STRUCTURED):
        parts = [open_pattern(a, free, make_getter) for a in term.args]
        size = len(parts)
        if isinstance(term, RecordTerm):
            return lambda value, b, local: (type(value) is Record and len(value) == size
                                            and all(m(v, b, local) for m, v in zip(parts, value)))
        name = term.name[1:]
        return lambda value, b, local: (type(value) is Branch and value[0] == name and len(value[1]) == size
                                        and all(m(v, b, local) for m, v in zip(parts, value[1])))
    get = make_getter(term)
    return lambda value, b, local: value == get(b)


def is_open_pattern(term, free: set[str]) -> bool:
    """True for a record or ADT term of a negated atom holding ``_`` or a variable in ``free``."""
    return isinstance(term, STRUCTURED) and _is_open(term, set(_all_names(term)) - free)


def _all_names(term):
    if isinstance(term, Variable):
        yield term.name
    elif isinstance(term, STRUCTURED):
        for arg in term.args:
            yield from _all_names(arg)


def _comparison(literal: Comparison, fresh) -> list:
    left, right = literal.left, literal.right
    if not isinstance(left, STRUCTURED) and not isinstance(right, STRUCTURED):
        for side in (left, right):
            _no_wildcard(side, f"the comparison {literal}")
        return [literal]
    if literal.op not in ("=", "!="):
        raise ParseError("type_error", f"records and ADT values compare only with = and !=, not {literal.op} "
                         f"({literal})", literal.position)
    if literal.op == "!=":
        for side in (left, right):
            _no_wildcard(side, f"the comparison {literal}")
        return [literal]
    if isinstance(right, STRUCTURED) and isinstance(left, Variable):
        left, right = right, left
    if isinstance(left, STRUCTURED) and isinstance(right, Variable):
        return match(left, right, fresh)
    value = _fresh("r", fresh, literal)
    out: list = []
    for side in (left, right):
        if isinstance(side, STRUCTURED):
            out.extend(match(side, value, fresh))
        else:
            out.append(Comparison("=", value, side, literal.position))
    return out


def match(pattern, value: Variable, fresh) -> list:
    """Returns the equalities that match ``value`` against ``pattern`` (either may be bound first)."""
    pattern = _name_wildcards(pattern, fresh)
    out = [Comparison("=", value, pattern, pattern.position)]
    _fields(pattern, value, fresh, out)
    return out


def _fields(pattern, value: Variable, fresh, out: list) -> None:
    position = pattern.position
    for i, sub in enumerate(pattern.args):
        if isinstance(pattern, RecordTerm):
            take = Functor(FIELD, (value, Constant(i)), position)
        else:
            take = Functor(ARG, (value, Constant(pattern.name[1:]), Constant(i)), position)
        if isinstance(sub, Variable):
            out.append(Comparison("=", sub, take, position))
            continue
        part = _fresh("f", fresh, sub)
        out.append(Comparison("=", part, take, position))
        if isinstance(sub, STRUCTURED):
            _fields(sub, part, fresh, out)
        else:  # a constant or an expression the field must equal
            out.append(Comparison("=", part, sub, position))


def _name_wildcards(term, fresh):
    if isinstance(term, Wildcard):
        return _fresh("w", fresh, term)
    if isinstance(term, STRUCTURED):
        return replace(term, args=tuple(_name_wildcards(a, fresh) for a in term.args))
    return term


def _fresh(kind: str, fresh, near) -> Variable:
    return Variable(f"_#{kind}{next(fresh)}", getattr(near, "position", None))


def _in_aggregates(term, fresh, rule: Rule):
    """Rewrites the patterns in the bodies of the aggregates inside ``term``."""
    if isinstance(term, Aggregate):
        return replace(term, body=tuple(_body(term.body, fresh, rule)))
    if isinstance(term, Arithmetic):
        return replace(term, left=_in_aggregates(term.left, fresh, rule),
                       right=_in_aggregates(term.right, fresh, rule))
    if isinstance(term, Functor) and any(isinstance(a, (Aggregate, Arithmetic, Functor)) for a in term.args):
        return replace(term, args=tuple(_in_aggregates(a, fresh, rule) for a in term.args))
    return term


def _no_wildcard(term, where: str) -> None:
    """Refuses ``_`` inside a record or ADT value that is built, not matched (a head, ``!=``)."""
    if not _mentions(term):
        return
    stack = [term]
    while stack:
        node = stack.pop()
        if isinstance(node, Wildcard):
            raise ParseError("unsupported_pattern", f"'_' inside a record or ADT value in {where}: the value is "
                             "built there, so name a variable bound in the body",
                             node.position or getattr(term, "position", None))
        if isinstance(node, Functor):
            stack.extend(node.args)
        elif isinstance(node, Arithmetic):
            stack += [node.left, node.right]


def _mentions(term) -> bool:
    """True when a term holds a record or ADT term (aggregate bodies included)."""
    if isinstance(term, STRUCTURED):
        return True
    if isinstance(term, Functor):
        return any(_mentions(a) for a in term.args)
    if isinstance(term, Arithmetic):
        return _mentions(term.left) or _mentions(term.right)
    if isinstance(term, Aggregate):
        return any(_mentions(t) for t in _all_terms(term.body)) or (
            term.target is not None and _mentions(term.target))
    return False


def _all_terms(literals):
    for literal in literals:
        yield from literal_terms(literal)


def _names_outside(literal, rule: Rule) -> set[str]:
    names = {v.name for arg in rule.head.args for v in term_variables(arg)}
    stack = [lit for lit in rule.body if lit is not literal]
    while stack:
        other = stack.pop()
        for term in literal_terms(other):
            names |= {v.name for v in term_variables(term)}
            if isinstance(term, Aggregate):
                stack.extend(term.body)
    return names
