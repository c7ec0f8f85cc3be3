"""The rule language as small dataclasses, and the parser that builds them.

The grammar lives in ``grammar/polygraph.lark``; a lark Transformer turns its
tree into the classes below (grammar rule ``atom`` = method ``atom`` = ``Atom``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Union

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from .errors import ParseError, Position
from .resources import resource_path

Value = Union[str, int]


@dataclass(frozen=True)
class Variable:
    """A variable in argument position (any identifier that is not a constant)."""

    name: str
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Wildcard:
    """``_``: matches anything, binds nothing."""

    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Constant:
    """A string or integer constant."""

    value: Value

    def __str__(self) -> str:
        return format_value(self.value)


@dataclass(frozen=True)
class Arithmetic:
    """Integer arithmetic ``left op right`` with op one of ``+ - * /``."""

    op: str
    left: "Term"
    right: "Term"
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


Term = Union[Variable, Wildcard, Constant, Arithmetic]


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


Literal = Union[Atom, Negation, Comparison]


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
    if isinstance(value, int):
        return str(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return f'"{escaped}"'


_NAME = re.compile(r"(?!not\b)[A-Za-z][A-Za-z0-9_]*\Z|_[A-Za-z0-9_]+\Z")


def format_variable(name: str) -> str:
    """Writes a provenance variable: bare when it is a name, quoted otherwise."""
    return name if _NAME.match(name) else format_value(name)


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "/": "/", "'": "'"}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def _unescape(token: Token, file: str) -> str:
    def replace(match: re.Match) -> str:
        code = match.group(1)
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        if code in _ESCAPES:
            return _ESCAPES[code]
        column = token.column + match.start()
        raise ParseError(
            "syntax_error",
            f"unknown escape '\\{code}' in string (use \\\", \\\\, \\n, \\t, \\r or \\uXXXX)",
            Position(file, token.line, column),
        )

    return _ESCAPE.sub(replace, token.value[1:-1])


class _ToAst(Transformer):
    """Turns the lark tree into the dataclasses above."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def _at(self, item) -> Position:
        return Position(self.file, item.line, item.column)

    def start(self, clauses):
        return list(clauses)

    @v_args(meta=True)
    def fact(self, meta, children):
        if len(children) == 2:
            name, atom = children
            variable = _unescape(name, self.file) if name.type == "STRING" else str(name)
            return Fact(atom, variable, self._at(name))
        return Fact(children[0], None, children[0].position)

    @v_args(meta=True)
    def rule(self, meta, children):
        head, body = children
        return Rule(head, tuple(body), head.position)

    def body(self, literals):
        return list(literals)

    @v_args(meta=True)
    def negation(self, meta, children):
        return Negation(children[0], Position(self.file, meta.line, meta.column))

    @v_args(meta=True)
    def comparison(self, meta, children):
        left, op, right = children
        return Comparison(str(op), left, right, self._at(op))

    @v_args(meta=True)
    def atom(self, meta, children):
        name, *args = children
        args = tuple(a for a in args if a is not None)
        return Atom(str(name), args, self._at(name))

    def variable(self, children):
        (token,) = children
        return Variable(str(token), self._at(token))

    @v_args(meta=True)
    def wildcard(self, meta, children):
        return Wildcard(Position(self.file, meta.line, meta.column))

    def string(self, children):
        return Constant(_unescape(children[0], self.file))

    def integer(self, children):
        return Constant(int(children[0]))

    @v_args(meta=True)
    def negative(self, meta, children):
        (inner,) = children
        if isinstance(inner, Constant) and isinstance(inner.value, int):
            return Constant(-inner.value)
        return Arithmetic("-", Constant(0), inner, Position(self.file, meta.line, meta.column))

    def _binary(op):
        @v_args(meta=True)
        def build(self, meta, children):
            left, right = children
            return Arithmetic(op, left, right, Position(self.file, meta.line, meta.column))

        return build

    add, sub, mul, div = _binary("+"), _binary("-"), _binary("*"), _binary("/")


@lru_cache(maxsize=1)
def _parser() -> Lark:
    text = resource_path("grammar", "polygraph.lark").read_text("utf-8")
    return Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=True)


_READABLE = {
    "NAME": "a name",
    "STRING": "a string",
    "INT": "an integer",
    "COMPARE": "a comparison",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "DOT": "'.'",
    "__ANON_0": "':-'",
    "IF": "':-'",
    "_": "'_'",
    "$END": "end of input",
}


def _expected(error: UnexpectedInput) -> str:
    names = getattr(error, "expected", None) or getattr(error, "allowed", None) or set()
    parser = _parser()
    readable = set()
    for name in names:
        if name in _READABLE:
            readable.add(_READABLE[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
            readable.add(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
        except KeyError:
            readable.add(name.lower())
    return ", ".join(sorted(readable)) or "something else"


def parse_clauses(text: str, file: str = "<string>") -> list[Clause]:
    """Parses program text into clauses; raises ParseError with file, line and column."""
    try:
        tree = _parser().parse(text)
    except UnexpectedToken as error:
        found = "end of input" if error.token.type == "$END" else repr(str(error.token))
        raise ParseError(
            "syntax_error",
            f"unexpected {found}; expected {_expected(error)}",
            Position(file, error.line if error.line != -1 else _last_line(text), max(error.column, 1)),
        ) from None
    except UnexpectedCharacters as error:
        char = text[error.pos_in_stream]
        what = "unterminated string" if char == '"' else f"unexpected character {char!r}"
        raise ParseError(
            "syntax_error",
            f"{what}; expected {_expected(error)}",
            Position(file, error.line, error.column),
        ) from None
    except UnexpectedEOF as error:
        raise ParseError(
            "syntax_error",
            f"unexpected end of input; expected {_expected(error)}",
            Position(file, _last_line(text), 1),
        ) from None
    try:
        return _ToAst(file).transform(tree)
    except VisitError as error:
        raise error.orig_exc from None


def _last_line(text: str) -> int:
    return text.count("\n") + 1
