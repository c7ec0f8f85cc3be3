"""The rule language as small dataclasses.

The grammar lives in ``grammar/polygraph.lark``; ``parser.py`` turns its tree into
the classes below (grammar rule ``atom`` = method ``atom`` = ``Atom``). Souffle's
directives (``.decl``, ``.type``, ``.input`` ...) are in ``directives.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from polygraph_logic.datalog.values.record_values import STRUCTURED, text
from polygraph_logic.errors import Position

Value = Union[str, int, float]


@dataclass(frozen=True)
class Variable:
    """A variable in argument position (any identifier that is not a constant)."""

    name: str
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "_" if self.name.startswith("_#") else self.name  # "_#n": a wildcard the parser named


@dataclass(frozen=True)
class Wildcard:
    """``_``: matches anything, binds nothing."""

    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Constant:
    """A string, integer or float constant; ``unsigned`` for one written ``12u``, whose
    type makes the arithmetic around it wrap as an unsigned."""

    value: Value
    unsigned: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return format_value(self.value)


@dataclass(frozen=True)
class Arithmetic:
    """Arithmetic ``left op right`` with op one of ``+ - * / % ^`` (``+`` also joins strings) or a
    bitwise or logical word (``band``, ``lor``, ...).

    ``width`` is set where Souffle's types make the result a ``number`` (a signed integer
    of the domain's width, 32 or 64 bits) or an ``unsigned``: the integer result wraps as C's does. Without
    it (no declarations, or a float place) integers are unbounded.
    """

    op: str
    left: "Term"
    right: "Term"
    position: Position | None = field(default=None, compare=False, repr=False)
    width: str | None = None

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Functor:
    """A built-in function applied to terms: ``cat(x, "a")``, ``strlen(s)``, ``min(x, y)``."""

    name: str
    args: tuple["Term", ...]
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Aggregate:
    """``count : { body }``, ``sum x : { body }``, ``min x : { body }``, ``max``, ``mean``.

    ``outer`` names the body's variables that also occur outside the aggregate in its
    rule: they are bound before it runs and group it (the parser fills them in).
    """

    op: str
    target: "Term | None"
    body: tuple["Literal", ...]
    outer: tuple[str, ...] = ()
    position: Position | None = field(default=None, compare=False, repr=False)
    #: for a sum whose place Souffle's types make a number or an unsigned: it wraps to the domain's width
    width: str | None = None

    def __str__(self) -> str:
        target = f" {self.target}" if self.target is not None else ""
        return f"{self.op}{target} : {{ {', '.join(map(str, self.body))} }}"


@dataclass(frozen=True)
class RecordTerm(Functor):
    """A record built or matched: ``[a, b]``, the functor named ``$record`` (``nil`` is a Constant)."""

    def __str__(self) -> str:
        return f"[{', '.join(map(str, self.args))}]"


@dataclass(frozen=True)
class BranchTerm(Functor):
    """An ADT value built or matched: ``$Name(a, b)`` or ``$Name`` (the functor ``$Name``)."""

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})" if self.args else self.name


Term = Union[Variable, Wildcard, Constant, Arithmetic, Functor, Aggregate]


@dataclass(frozen=True)
class Atom:
    """``relation(arg, ...)``; a zero-arity atom has no arguments."""

    relation: str
    args: tuple[Term, ...]
    position: Position | None = field(default=None, compare=False, repr=False)

    @property
    def arity(self) -> int:
        return len(self.args)

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Negation:
    """``!atom`` or ``not atom``: true when the atom does not hold (stratified)."""

    atom: Atom
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"!{self.atom}"


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=``; ``x = expr`` may bind ``x``."""

    op: str
    left: Term
    right: Term
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Constraint:
    """A built-in test on strings: ``contains(sub, s)`` or ``match(regex, s)``, as in Souffle,
    or its negation (``!match(regex, s)``)."""

    name: str
    args: tuple[Term, ...]
    position: Position | None = field(default=None, compare=False, repr=False)
    negated: bool = False

    def __str__(self) -> str:
        return f"{'!' if self.negated else ''}{self.name}({', '.join(map(str, self.args))})"


Literal = Union[Atom, Negation, Comparison, Constraint]


@dataclass(frozen=True)
class Fact:
    """A ground atom; with ``variable`` set it is a tracked source assertion."""

    atom: Atom
    variable: str | None = None
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        prefix = f"{format_variable(self.variable)} :: " if self.variable else ""
        return f"{prefix}{self.atom}."


@dataclass(frozen=True)
class Rule:
    """``head :- body.``"""

    head: Atom
    body: tuple[Literal, ...]
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.head} :- {', '.join(map(str, self.body))}."


Clause = Union[Fact, Rule]


def format_value(value: Value) -> str:
    """Writes a constant the way the rule language reads it back."""
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, STRUCTURED):
        return text(value, format_value)  # symbols inside quoted, so the rule language reads it back
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return f'"{escaped}"'


_NAME = re.compile(r"(?!not\b)[A-Za-z][A-Za-z0-9_]*\Z|_[A-Za-z0-9_]+\Z")


def format_variable(name: str) -> str:
    """Writes a provenance variable: bare when it is a name, quoted otherwise."""
    return name if _NAME.match(name) else format_value(name)
