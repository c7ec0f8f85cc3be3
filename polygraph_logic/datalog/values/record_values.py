"""Record and ADT values (``[1, "a"]``, ``nil``, ``$Leaf(3)``), the functions that build and take them apart.

A record is a tuple of values (``Record``), ``nil`` the one empty reference of every
record type, an ADT value a constructor's name and its arguments (``Branch``). All
three are plain values: equal when their structure is equal, hashable, written as
Souffle's writers write them (``[1, [2, nil]]``, ``$Add($Num(1), $Num(2))``, ``$Nil``:
a comma and a space between fields, symbols raw, floats as the plain writer's, datalog/values/domain.py).

The rule language builds them with ``$record`` and ``$NAME`` functors (the parser's
``[a, b]`` and ``$NAME(a, b)``) and takes them apart with ``$field`` and ``$arg``,
which the pattern rewrite of ``record_patterns.py`` puts in rule bodies. Taking a field
of ``nil``, or an argument of another constructor, is no value: the rule does not fire
for that binding (``NoMatch``), as a pattern that does not match.
"""

from __future__ import annotations

from typing import Callable

from polygraph_logic.datalog.values import domain
from polygraph_logic.errors import Position

RECORD = "$record"
FIELD = "$field"  # $field(r, i): field i of record r
ARG = "$arg"  # $arg(v, "Name", i): argument i of v, when v was built by $Name


class NoMatch(Exception):
    """A field of ``nil`` or an argument of another constructor: the binding does not match."""


class Record(tuple):
    """A record value: its fields, in order. Its hash is kept (a list of n records nests n
    deep: hashing it again at every step would make building it quadratic)."""

    def __new__(cls, fields=()):
        self = tuple.__new__(cls, fields)
        self._hash = tuple.__hash__(self)
        return self

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return text(self)

    def __repr__(self) -> str:
        return f"Record({tuple.__repr__(self)})"

    def __reduce__(self):
        return Record, (tuple(self),)


class Nil:
    """``nil``: the empty reference, a value of every record type."""

    __slots__ = ()

    def __str__(self) -> str:
        return "nil"

    __repr__ = __str__

    def __reduce__(self):
        return "NIL"


NIL = Nil()


class Branch(tuple):
    """An ADT value: ``(constructor name, arguments)``, written ``$Name(a, b)`` or ``$Name``."""

    def __new__(cls, name: str, args: tuple = ()):
        self = tuple.__new__(cls, (name, tuple(args)))
        self._hash = tuple.__hash__(self)
        return self

    def __hash__(self) -> int:
        return self._hash

    @property
    def name(self) -> str:
        return self[0]

    @property
    def args(self) -> tuple:
        return self[1]

    def __str__(self) -> str:
        return text(self)

    def __repr__(self) -> str:
        return f"Branch({self[0]!r}, {self[1]!r})"

    def __reduce__(self):
        return Branch, (self[0], self[1])


STRUCTURED = (Record, Nil, Branch)


class _Piece(str):
    """Punctuation pushed on the writer's stack (a symbol value is a plain str)."""


_CLOSE, _SEPARATOR, _RIGHT = _Piece("]"), _Piece(", "), _Piece(")")


def _plain_text(value) -> str:
    return domain.float_text(value) if isinstance(value, float) else str(value)


def text(value, leaf: Callable[[object], str] = _plain_text) -> str:
    """Writes a value as Souffle does inside a record or an ADT (``leaf`` writes the plain
    values: by default symbols raw and floats as ``domain.float_text``). Iterative: a list a hundred
    thousand long is written without deep recursion."""
    if not isinstance(value, STRUCTURED):
        return leaf(value)
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is _Piece:
            out.append(item)
        elif kind is Record:
            out.append("[")
            _push(stack, item, _CLOSE)
        elif kind is Branch:
            if item[1]:
                out.append(f"${item[0]}(")
                _push(stack, item[1], _RIGHT)
            else:
                out.append(f"${item[0]}")
        elif item is NIL:
            out.append("nil")
        else:
            out.append(leaf(item))
    return "".join(out)


def _push(stack: list, items, close: _Piece) -> None:
    stack.append(close)
    for i in range(len(items) - 1, -1, -1):
        stack.append(items[i])
        if i:
            stack.append(_SEPARATOR)


_END = (-1, 0)


def sort_key(value) -> tuple:
    """Returns a key ordering values of one column: numbers, symbols, then nil, records and ADT
    values (records field by field, ADT values by constructor name, then argument by argument).
    Flat (a record's fields in pre-order between a start and an end mark), so deep values
    compare without deep recursion."""
    if isinstance(value, (int, float)):
        return (0, value, "")
    if isinstance(value, str):
        return (1, 0, value)
    tokens = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Record:
            tokens.append((3, 0))
            stack.append(_END)
            stack.extend(reversed(item))
        elif kind is Branch:
            tokens.append((4, item[0]))
            stack.append(_END)
            stack.extend(reversed(item[1]))
        elif item is NIL:
            tokens.append((2, 0))
        elif item is _END:
            tokens.append(_END)
        elif isinstance(item, str):
            tokens.append((1, item))
        else:
            tokens.append((0, item))
    return (2, 0, tuple(tokens))


def is_function(name: str) -> bool:
    """True for the names of the record and ADT functors (all start with ``$``)."""
    return name[:1] == "$"


def call(name: str, args: list, position: Position | None):
    """Applies a record or ADT functor to evaluated arguments; raises NoMatch when a
    field or an argument is taken from a value that does not have it."""
    if name == RECORD:
        return Record(args)
    if name == FIELD:
        record, index = args
        if type(record) is not Record or index >= len(record):
            raise NoMatch  # nil, or (in a program without declarations) a value of another shape
        return record[index]
    if name == ARG:
        value, constructor, index = args
        if type(value) is not Branch or value[0] != constructor or index >= len(value[1]):
            raise NoMatch
        return value[1][index]
    return Branch(name[1:], tuple(args))


def structured_getter(name: str, args: list, position: Position | None):
    """Returns ``b -> value`` for a record or ADT functor over argument getters."""
    if name == RECORD:
        return lambda b: Record([get(b) for get in args])
    if name in (FIELD, ARG):
        return lambda b: call(name, [get(b) for get in args], position)
    constructor = name[1:]
    if not args:
        value = Branch(constructor)
        return lambda b: value
    return lambda b: Branch(constructor, tuple(get(b) for get in args))
