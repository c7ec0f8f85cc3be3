"""Record and ADT values (``[1, "a"]``, ``nil``, ``$Leaf(3)``), the functions that build and take them apart.

A record is a tuple of values (``Record``), ``nil`` the one empty reference of every
record type, an ADT value a constructor's name and its arguments (``Branch``). All
three are plain values: equal when their structure is equal, hashable, written as
Souffle's writers write them (``[1, [2, nil]]``, ``$Add($Num(1), $Num(2))``, ``$Nil``:
a comma and a space between fields, symbols raw, floats as ``%.17g``).

The rule language builds them with ``$record`` and ``$NAME`` functors (the parser's
``[a, b]`` and ``$NAME(a, b)``) and takes them apart with ``$field`` and ``$arg``,
which the pattern rewrite of ``record_patterns.py`` puts in rule bodies. Taking a field
of ``nil``, or an argument of another constructor, is no value: the rule does not fire
for that binding (``NoMatch``), as a pattern that does not match.
"""

from __future__ import annotations

from polygraph_logic.datalog.functions import c_float
from polygraph_logic.errors import EvaluationError, Position

RECORD = "$record"
FIELD = "$field"  # $field(r, i): field i of record r
ARG = "$arg"  # $arg(v, "Name", i): argument i of v, when v was built by $Name


class NoMatch(Exception):
    """A field of ``nil`` or an argument of another constructor: the binding does not match."""


class Record(tuple):
    """A record value: its fields, in order."""

    __slots__ = ()

    def __str__(self) -> str:
        return "[" + ", ".join(map(text, self)) + "]"

    def __repr__(self) -> str:
        return f"Record({tuple.__repr__(self)})"


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

    __slots__ = ()

    def __new__(cls, name: str, args: tuple = ()):
        return tuple.__new__(cls, (name, tuple(args)))

    @property
    def name(self) -> str:
        return self[0]

    @property
    def args(self) -> tuple:
        return self[1]

    def __str__(self) -> str:
        if not self[1]:
            return f"${self[0]}"
        return f"${self[0]}(" + ", ".join(map(text, self[1])) + ")"

    def __repr__(self) -> str:
        return f"Branch({self[0]!r}, {self[1]!r})"

    def __getnewargs__(self):
        return self[0], self[1]


STRUCTURED = (Record, Nil, Branch)


def text(value) -> str:
    """Writes a value inside a record or an ADT as Souffle does: symbols raw, floats ``%.17g``."""
    if isinstance(value, float):
        return c_float(value, ".17g")
    return str(value)


def sort_key(value) -> tuple:
    """Returns a key ordering values of one column: numbers, symbols, then nil, records and ADT
    values (records field by field, ADT values by constructor name, then argument by argument)."""
    if isinstance(value, (int, float)):
        return (0, value, "")
    if isinstance(value, str):
        return (1, 0, value)
    if value is NIL:
        return (2, 0, ())
    if isinstance(value, Branch):
        return (4, value[0], tuple(map(sort_key, value[1])))
    return (3, 0, tuple(map(sort_key, value)))


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
            if record is NIL or isinstance(record, Record):
                raise NoMatch
            raise EvaluationError("type_error", f"{record!r} is not a record", position)
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
