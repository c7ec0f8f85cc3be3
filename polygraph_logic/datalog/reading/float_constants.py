"""Integer constants that Soufflé's types make floats, rewritten as floats; integer arithmetic given its width.

Soufflé gives a numeric constant the type of its place: in ``.decl r(x: float)``,
``r(x) :- x = 7 / 2.`` divides the floats 7 and 2 and derives 3.5, where an integer
division would give 3. The engine computes with the values it is given, so before
evaluation each integer constant whose place is float is written as a float. In the
same way an arithmetic term whose place is a ``number`` or an ``unsigned`` is given
that width (``integer_widths``): its result wraps to the domain's width, as Soufflé's
build of that width computes (at 32, ``2147483647 + 1`` is ``-2147483648`` and ``0u - 1u``
is ``4294967295``; datalog/values/domain.py).

The places are found as Soufflé's type inference finds them, by unification: a term and
the column of a declared relation it stands in, the two sides of a comparison, an
arithmetic result and its operands, ``min``/``max`` and their arguments, an aggregate
and its target share a type; ``strlen``, ``count`` and ``to_number`` are numbers,
``cat``, ``substr`` and ``to_string`` symbols, ``to_float`` and ``mean`` floats. A
variable has one type in its rule. A place whose type is unknown, or mixed (a program
Soufflé would refuse), keeps its constants as written.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import count

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.syntax import (
    Aggregate,
    Arithmetic,
    Atom,
    Comparison,
    Constant,
    Constraint,
    Fact,
    Functor,
    Negation,
    Rule,
    Variable,
)

_MIXED = "mixed"
_SHIFTS = {"bshl", "bshr", "bshru"}
_LOGICAL = {"land", "lor", "lxor"}
_RESULT = {"cat": "symbol", "substr": "symbol", "to_string": "symbol", "strlen": "number",
           "to_number": "number", "to_float": "float", "to_unsigned": "unsigned", "ord": "number",
           "lnot": "number", "autoinc": "number"}
_ARGUMENTS = {"cat": None, "strlen": ("symbol",), "substr": ("symbol", "number", "number")}


class _Types:
    """Union-find over the places of one rule: term occurrences (numbered in a fixed walk) and variables."""

    def __init__(self, kinds):
        self.kinds = kinds  # relation -> column base types, or None when undeclared
        self.parent: dict = {}
        self.kind: dict = {}
        self.numbers = count()
        self.constants: list[int] = []  # the occurrences of integer constants
        self.arithmetic: list[int] = []  # the occurrences of arithmetic terms

    def find(self, node):
        parent = self.parent.setdefault(node, node)
        if parent != node:
            parent = self.parent[node] = self.find(parent)
        return parent

    def union(self, a, b) -> None:
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[a] = b
            self.assign(b, self.kind.pop(a, None))

    def assign(self, node, kind: str | None) -> None:
        if kind is None:
            return
        root = self.find(node)
        known = self.kind.get(root)
        self.kind[root] = kind if known in (None, kind) else _MIXED

    def term(self, term) -> int:
        """Walks a term; returns its occurrence node."""
        node = next(self.numbers)
        if isinstance(term, Variable):
            self.union(node, ("var", term.name))
        elif isinstance(term, Constant):
            value = term.value
            if isinstance(value, str):
                self.assign(node, "symbol")
            elif isinstance(value, float):
                self.assign(node, "float")
            elif term.unsigned:  # 12u: an unsigned place, as Souffle types it
                self.assign(node, "unsigned")
            else:
                self.constants.append(node)
        elif isinstance(term, Arithmetic):
            self.arithmetic.append(node)
            if term.op in _SHIFTS:  # the shift count need not have the shifted value's type
                self.union(node, self.term(term.left))
                self.term(term.right)
            elif term.op in _LOGICAL:  # 0 or 1, a number; operands of any integer type
                self.assign(node, "number")
                self.term(term.left)
                self.term(term.right)
            else:
                self.union(node, self.term(term.left))
                self.union(node, self.term(term.right))
        elif isinstance(term, Functor):
            self._functor(node, term)
        elif isinstance(term, Aggregate):
            if term.op == "sum":
                self.arithmetic.append(node)
            target = self.term(term.target) if term.target is not None else None
            if term.op == "count":
                self.assign(node, "number")
            elif term.op == "mean":
                self.assign(node, "float")
            elif target is not None:
                self.union(node, target)
            self.body(term.body)
        return node

    def _functor(self, node: int, term: Functor) -> None:
        args = [self.term(arg) for arg in term.args]
        if term.name in ("min", "max", "range"):
            for arg in args:
                self.union(node, arg)
            return
        self.assign(node, _RESULT.get(term.name))
        if term.name in _ARGUMENTS:
            kinds = _ARGUMENTS[term.name] or ("symbol",) * len(args)
            for arg, kind in zip(args, kinds):
                self.assign(arg, kind)

    def atom(self, atom: Atom) -> None:
        columns = self.kinds(atom.relation) or (None,) * atom.arity
        for arg, kind in zip(atom.args, columns):
            self.assign(self.term(arg), kind)

    def body(self, body) -> None:
        for literal in body:
            if isinstance(literal, Atom):
                self.atom(literal)
            elif isinstance(literal, Negation):
                self.atom(literal.atom)
            elif isinstance(literal, Comparison):
                self.union(self.term(literal.left), self.term(literal.right))
            elif isinstance(literal, Constraint):
                for arg in literal.args:
                    self.assign(self.term(arg), "symbol")

    def floats(self) -> set[int]:
        """Returns the occurrences of integer constants whose place is a float."""
        return {node for node in self.constants if self.kind.get(self.find(node)) == "float"}

    def widths(self) -> dict[int, str]:
        """Returns the occurrences of arithmetic (and sums) whose place is a number or an unsigned, with that type."""
        kinds = {node: self.kind.get(self.find(node)) for node in self.arithmetic}
        return {node: kind for node, kind in kinds.items() if kind in ("number", "unsigned")}


class _Rewrite:
    """Walks a rule in the order ``_Types`` numbered it, writing the chosen constants as floats."""

    def __init__(self, floats: set[int], widths: dict[int, str] | None = None):
        self.floats = floats
        self.widths = widths or {}
        self.numbers = count()

    def term(self, term):
        node = next(self.numbers)
        if isinstance(term, Constant):
            return Constant(domain.integer_float(term.value)) if node in self.floats else term
        if isinstance(term, Arithmetic):
            width = self.widths.get(node, term.width)
            return replace(term, left=self.term(term.left), right=self.term(term.right), width=width)
        if isinstance(term, Functor):
            return replace(term, args=tuple(self.term(arg) for arg in term.args))
        if isinstance(term, Aggregate):
            width = self.widths.get(node, term.width)
            target = self.term(term.target) if term.target is not None else None
            return replace(term, target=target, body=self.body(term.body), width=width)
        return term

    def atom(self, atom: Atom) -> Atom:
        return replace(atom, args=tuple(self.term(arg) for arg in atom.args))

    def body(self, body) -> tuple:
        out = []
        for literal in body:
            if isinstance(literal, Atom):
                out.append(self.atom(literal))
            elif isinstance(literal, Negation):
                out.append(replace(literal, atom=self.atom(literal.atom)))
            elif isinstance(literal, Comparison):
                left = self.term(literal.left)
                out.append(replace(literal, left=left, right=self.term(literal.right)))
            else:
                out.append(replace(literal, args=tuple(self.term(arg) for arg in literal.args)))
        return tuple(out)


def float_constants(clause: Rule | Fact, kinds) -> Rule | Fact:
    """Returns the rule or fact with its integer constants in float places written as floats
    (the clause itself when there are none). ``kinds(relation)`` gives a relation's column
    base types, or None for an undeclared relation."""
    types = _Types(kinds)
    head = clause.head if isinstance(clause, Rule) else clause.atom
    types.atom(head)
    if isinstance(clause, Rule):
        types.body(clause.body)
    floats = types.floats()
    if not floats:
        return clause
    rewrite = _Rewrite(floats)
    head = rewrite.atom(head)
    if isinstance(clause, Fact):
        return replace(clause, atom=head)
    return replace(clause, head=head, body=rewrite.body(clause.body))


def integer_widths(rule: Rule, kinds) -> Rule:
    """Returns the rule with each arithmetic term whose place is a ``number`` or an ``unsigned``
    given that width (the rule itself when there is none)."""
    types = _Types(kinds)
    types.atom(rule.head)
    types.body(rule.body)
    widths = types.widths()
    if not widths:
        return rule
    rewrite = _Rewrite(set(), widths)
    return replace(rule, head=rewrite.atom(rule.head), body=rewrite.body(rule.body))
