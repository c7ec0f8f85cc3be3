"""pyDatalog as an independent engine: Boolean closures to cross-check ours against.

``evaluate_with_pydatalog(facts, rules)`` translates the rule language's dataclasses
into pyDatalog and returns every relation as a set of tuples. Nothing here uses our
own evaluator, so agreement between the two is evidence, not a tautology.

How the translation keeps pyDatalog's semantics equal to ours:

- relation ``r`` becomes predicate ``p_r`` and variable ``x`` becomes ``V_x`` (pyDatalog
  wants capitalised variables, and a bare relation name could shadow a Python builtin);
  wildcards become fresh variables ``W1, W2, ...``;
- constants keep their Python type (``"1"`` and ``1`` stay different); facts go in
  through ``assert_fact``, constants inside rules are written with ``repr``;
- ``/`` and ``%`` on integers truncate toward zero, as C (and Souffle, and our engine)
  do: ``-7 / 2 = -3``, ``-7 % 2 = -1``; pyDatalog's own ``/`` would be true division and
  its ``%`` Python's, so both are calls of the plain functions ``c_quotient`` and
  ``c_remainder`` below. A division by zero inside pyDatalog silently derives nothing
  (our engine raises an EvaluationError instead);
- pyDatalog resolves top down, left to right, and insists that comparisons and
  negations see bound variables, so body literals are reordered: atoms keep their
  order, a comparison or negation waits until its variables are bound, and
  ``x = expr`` (either side) binds ``x`` as in Souffle. Arithmetic inside an atom or
  a head is moved into an equality with a fresh variable ``T1, T2, ...``;
- zero-arity relations get a dummy argument (pyDatalog has no 0-ary predicates),
  stripped again on the way back;
- a relation with neither facts nor rules gets the rule ``p(X) <= p(X)``, which is
  empty but defined (pyDatalog raises on a predicate without definition).

pyDatalog keeps its knowledge base in a per-thread global; every call clears it
before and after, so calls are independent (but not re-entrant within one thread).
"""

from __future__ import annotations

import itertools
from typing import Iterable

from pyDatalog import pyDatalog

from polygraph_logic.datalog.syntax import (
    Arithmetic,
    Atom,
    Constant,
    Fact,
    Negation,
    Rule,
    Term,
    Value,
    Variable,
    Wildcard,
)

_DUMMY = 0  # the argument a zero-arity relation carries inside pyDatalog
_MIRROR = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_PYTHON_OP = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def closure(program) -> dict[str, set[tuple]]:
    """Returns pyDatalog's Boolean closure of a Program (anything with .facts and .rules)."""
    return evaluate_with_pydatalog(program.facts, program.rules)


def evaluate_with_pydatalog(facts: Iterable[Fact], rules: Iterable[Rule]) -> dict[str, set[tuple]]:
    """Returns every relation that appears (given facts included) as a set of tuples."""
    facts, rules = list(facts), list(rules)
    arities = _arities(facts, rules)
    ground_facts = [(f.atom.relation, tuple(_ground(arg) for arg in f.atom.args)) for f in facts]
    translated = [_RuleTranslator(rule).translate() for rule in rules]
    defined = {relation for relation, _ in ground_facts}
    defined |= {r.head.relation for r, line in zip(rules, translated) if line is not None}
    pyDatalog.clear()
    try:
        for relation, args in ground_facts:
            pyDatalog.assert_fact(_predicate(relation), *(args or (_DUMMY,)))
        lines = [line for line in translated if isinstance(line, str)]
        lines += [_self_rule(rel, arities[rel]) for rel in sorted(arities) if rel not in defined]
        for line in translated:
            if isinstance(line, tuple):  # a rule whose body vanished: its ground head is a fact
                relation, args = line
                pyDatalog.assert_fact(_predicate(relation), *(args or (_DUMMY,)))
        if lines:
            pyDatalog.load("\n".join(lines))
        return {relation: _ask(relation, arities[relation]) for relation in sorted(arities)}
    finally:
        pyDatalog.clear()


def _arities(facts: list[Fact], rules: list[Rule]) -> dict[str, int]:
    atoms = [f.atom for f in facts]
    for rule in rules:
        atoms.append(rule.head)
        for literal in rule.body:
            if isinstance(literal, Atom):
                atoms.append(literal)
            elif isinstance(literal, Negation):
                atoms.append(literal.atom)
    arities: dict[str, int] = {}
    for atom in atoms:
        if arities.setdefault(atom.relation, atom.arity) != atom.arity:
            raise ValueError(f"{atom.relation} is used with {arities[atom.relation]} and {atom.arity} arguments")
    return arities


def _ask(relation: str, arity: int) -> set[tuple]:
    query_vars = ", ".join(f"X{i}" for i in range(max(arity, 1)))
    answer = pyDatalog.ask(f"{_predicate(relation)}({query_vars})")
    if answer is None:
        return set()
    if arity == 0:
        return {()}
    return {tuple(row) for row in answer.answers}


def _self_rule(relation: str, arity: int) -> str:
    args = ", ".join(f"V{i}" for i in range(max(arity, 1)))
    return f"{_predicate(relation)}({args}) <= {_predicate(relation)}({args})"


def _predicate(relation: str) -> str:
    return f"p_{relation}"


def _ground(term: Term) -> Value:
    """Returns the value of a variable-free term (C's division, as in our engine)."""
    if isinstance(term, Constant):
        return term.value
    if isinstance(term, Arithmetic):
        left, right = _ground(term.left), _ground(term.right)
        if not isinstance(left, int) or not isinstance(right, int):
            raise ValueError(f"arithmetic needs integers: {term}")
        if term.op == "/" and right == 0:
            raise ZeroDivisionError(f"division by zero: {term}")
        ops = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__, "/": c_quotient, "%": c_remainder}
        return ops[term.op](left, right)
    raise ValueError(f"not ground: {term}")


def _variables(term: Term) -> set[str]:
    if isinstance(term, Variable):
        return {term.name}
    if isinstance(term, Arithmetic):
        return _variables(term.left) | _variables(term.right)
    return set()


class _RuleTranslator:
    """Turns one Rule into a pyDatalog clause string (or a ground fact, or None)."""

    def __init__(self, rule: Rule):
        self.rule = rule
        self.fresh = itertools.count(1)
        # pending literals: ("atom", text, vars) | ("neg", text, vars) | ("cmp", op, left, right)
        self.pending: list[tuple] = []

    def translate(self) -> str | tuple | None:
        if any(isinstance(arg, Wildcard) for arg in self.rule.head.args):
            raise ValueError(f"'_' cannot appear in a rule head: {self.rule}")
        head_args = [self._argument(arg) for arg in self.rule.head.args]
        for literal in self.rule.body:
            if isinstance(literal, Atom):
                args = [self._argument(arg) for arg in literal.args]
                self.pending.append(("atom", self._atom_text(literal.relation, args), self._names(args)))
            elif isinstance(literal, Negation):
                args = [self._argument(arg) for arg in literal.atom.args]
                text = "~" + self._atom_text(literal.atom.relation, args)
                needed = {a for a in self._names(args) if not a.startswith("W")}
                self.pending.append(("neg", text, needed))
            else:
                self.pending.append(("cmp", literal.op, literal.left, literal.right))
        head_vars = set().union(*(_variables(a) for a in self.rule.head.args), set())
        body, satisfiable = self._schedule()
        if not satisfiable:
            return None
        head = self._atom_text(self.rule.head.relation, head_args)
        if not body:
            if head_vars:
                raise ValueError(f"unsafe rule: {self.rule}")
            return (self.rule.head.relation, tuple(_ground(a) for a in self.rule.head.args))
        return f"{head} <= {' & '.join(body)}"

    def _argument(self, term: Term) -> str:
        """Returns the pyDatalog text of a term in atom position; arithmetic gets a fresh var."""
        if isinstance(term, Variable):
            return f"V_{term.name}"
        if isinstance(term, Wildcard):
            return f"W{next(self.fresh)}"
        if isinstance(term, Constant):
            return _constant(term.value)
        if not _variables(term):
            return _constant(_ground(term))
        fresh = f"T{next(self.fresh)}"
        # "#" keeps fresh names apart from the user's (which become V_...); the equality
        # binds the fresh variable (negation, head) or tests it (positive atom)
        self.pending.append(("cmp", "=", Variable("#" + fresh), term))
        return fresh

    def _schedule(self) -> tuple[list[str], bool]:
        """Orders literals so that comparisons and negations see bound variables."""
        bound: set[str] = set()
        body: list[str] = []
        remaining = list(self.pending)
        while remaining:
            for index, literal in enumerate(remaining):
                emitted = self._emit(literal, bound)
                if emitted is not None:
                    break
            else:
                raise ValueError(f"cannot order the body of {self.rule} (unsafe variables?)")
            del remaining[index]
            if emitted is False:
                return [], False
            if emitted is not True:
                body.append(emitted)
        return body, True

    def _emit(self, literal: tuple, bound: set[str]) -> str | bool | None:
        """Returns the literal's text if it can go next, True/False if it is decided statically."""
        kind = literal[0]
        if kind == "atom":
            bound |= literal[2]
            return literal[1]
        if kind == "neg":
            return literal[1] if literal[2] <= bound else None
        _, op, left, right = literal
        left_vars, right_vars = self._term_vars(left), self._term_vars(right)
        if not left_vars and not right_vars:
            return _compare(_ground(left), op, _ground(right))
        if left_vars | right_vars <= bound:
            return self._comparison(op, left, right)
        if op == "=":
            for target, expr in ((left, right), (right, left)):
                if isinstance(target, Variable) and target.name not in bound and self._term_vars(expr) <= bound:
                    bound.add(self._var(target))
                    return f"({self._var(target)} == {self._expression(expr)})"
        return None

    def _comparison(self, op: str, left: Term, right: Term) -> str:
        """Writes a test between bound terms with a variable on the left (pyDatalog needs one)."""
        if not isinstance(left, Variable) and isinstance(right, Variable):
            left, right, op = right, left, _MIRROR[op]
        if isinstance(left, Variable):
            return f"({self._var(left)} {_PYTHON_OP[op]} {self._expression(right)})"
        fresh = f"T{next(self.fresh)}"
        return f"({fresh} == {self._expression(left)}) & ({fresh} {_PYTHON_OP[op]} {self._expression(right)})"

    def _expression(self, term: Term) -> str:
        if isinstance(term, Variable):
            return self._var(term)
        if isinstance(term, Constant):
            return _constant(term.value)
        if isinstance(term, Arithmetic):
            left, right = self._expression(term.left), self._expression(term.right)
            if term.op in ("/", "%"):
                return f"{'c_quotient' if term.op == '/' else 'c_remainder'}({left}, {right})"
            return f"({left} {term.op} {right})"
        raise ValueError(f"a wildcard cannot appear in a comparison: {self.rule}")

    def _term_vars(self, term: Term) -> set[str]:
        return {self._var(Variable(name)) for name in _variables(term)}

    @staticmethod
    def _var(variable: Variable) -> str:
        name = variable.name
        return name[1:] if name.startswith("#") else f"V_{name}"

    @staticmethod
    def _names(args: list[str]) -> set[str]:
        return {a for a in args if a[:1] in ("V", "W", "T")}

    @staticmethod
    def _atom_text(relation: str, args: list[str]) -> str:
        return f"{_predicate(relation)}({', '.join(args or [str(_DUMMY)])})"


def c_quotient(left: int, right: int) -> int:
    """Returns C's integer quotient: truncated toward zero."""
    quotient = abs(left) // abs(right)
    return quotient if (left < 0) == (right < 0) else -quotient


def c_remainder(left: int, right: int) -> int:
    """Returns C's integer remainder: the sign of the dividend."""
    return left - right * c_quotient(left, right)


pyDatalog.create_terms("c_quotient, c_remainder")


def _constant(value: Value) -> str:
    return f"({value!r})" if isinstance(value, int) and value < 0 else repr(value)


def _compare(left: Value, op: str, right: Value) -> bool:
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if isinstance(left, int) != isinstance(right, int):
        raise TypeError(f"cannot compare {left!r} {op} {right!r}")
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
