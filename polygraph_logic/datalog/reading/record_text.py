"""Record and ADT values read from the text of a fact file column, as Souffle's readers read them.

``[1, [2, nil]]`` for a record type, ``$Add($Num(1), $Num(2))`` or ``$Zero`` for an ADT.
Blanks may stand before any part. Inside a record or ADT a symbol is either
double-quoted (a backslash keeps the character after it) or everything up to the next
``,``, ``]`` (in a record) or ``)`` (in an ADT), trailing blanks included; numbers are
decimal, floats as C's ``strtod`` or ``strtof`` reads them (by the domain size,
datalog/values/domain.py). A branch without fields is ``$Name`` alone. Souffle writes the same
text back (``records.Record.__str__``).
"""

from __future__ import annotations

import re
from typing import Callable

from polygraph_logic.datalog.checks.record_types import Structures
from polygraph_logic.datalog.values.record_values import NIL, Branch, Record

_INTEGER = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[ \t\n\v\f\r]*\+?[0-9]+")
_FLOAT = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:0[xX][0-9a-fA-F.]+(?:[pP][+-]?[0-9]+)?|inf(?:inity)?|nan|"
                    r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9_?.]*")
_BLANK = " \t\n\v\f\r"


class RecordTextError(ValueError):
    """The text is not a value of the column's type (the message says what was expected where)."""


def read_value(text: str, kind: str, structures: Structures, read_float: Callable[[str], float | None]):
    """Returns the value of ``kind`` (a record or ADT type) written in ``text``; raises RecordTextError.
    ``read_float`` reads a float's text as the fact files' reader does (None if it is none)."""
    reader = _Reader(text, structures, read_float)
    value = reader.value(kind, "")
    rest = text[reader.pos:]
    if rest.strip(_BLANK):
        raise RecordTextError(f"unexpected {rest.strip(_BLANK)[:20]!r} after the value at character {reader.pos + 1}")
    return value


def split_fields(line: str, delimiter: str, kinds: tuple[str, ...], structures: Structures,
                 read_float: Callable[[str], float | None]) -> tuple[str, ...] | None:
    """Splits a fact file line whose records or ADT values hold the delimiter (``[1, 2]`` under
    ``delimiter=","``) as Souffle's reader does: a value of a record or ADT column is read whole,
    then the delimiter is looked for. None when the line does not split into ``kinds``."""
    fields, pos, last = [], 0, len(kinds) - 1
    for i, kind in enumerate(kinds):
        start = pos
        if kind in structures.types:
            reader = _Reader(line, structures, read_float)
            reader.pos = pos
            try:
                reader.value(kind, "")
            except (RecordTextError, RecursionError):
                return None
            pos = reader.pos
        end = len(line) if i == last else line.find(delimiter, pos)
        if end < 0:
            return None
        fields.append(line[start:end])
        pos = end + len(delimiter)
    return tuple(fields)


class _Reader:
    def __init__(self, text: str, structures: Structures, read_float):
        self.text, self.pos, self.structures, self.read_float = text, 0, structures, read_float

    def value(self, kind: str, stops: str):
        declared = self.structures.types.get(kind)
        if declared is None:
            return self._plain(kind, stops)
        if declared.kind == "record":
            return self._record(kind, declared)
        return self._branch(kind)

    def _record(self, kind: str, declared):
        self._blanks()
        if self.text.startswith("nil", self.pos):
            self.pos += 3
            return NIL
        self._expect("[", f"a record of {kind} ('[' or nil)")
        fields = []
        for i, field in enumerate(declared.fields):
            if i:
                self._expect(",", f"',' before field {field.name} of {kind}")
            self._blanks()
            fields.append(self.value(self.structures.base(field.type), ",]"))
        self._expect("]", f"']' after the {len(declared.fields)} field(s) of {kind}")
        return Record(fields)

    def _branch(self, kind: str):
        self._expect("$", f"a value of {kind} ($Name)")
        self._blanks()
        name = _NAME.match(self.text, self.pos).group()
        self.pos += len(name)
        constructor = self.structures.constructors.get(name)
        if constructor is None or constructor.type != kind:
            raise RecordTextError(f"${name} is no constructor of {kind}")
        if not constructor.fields:
            return Branch(name)
        self._expect("(", f"'(' after ${name}")
        args = []
        for i, field in enumerate(constructor.fields):
            if i:
                self._expect(",", f"',' before argument {i + 1} of ${name}")
            self._blanks()
            args.append(self.value(self.structures.base(field.type), ",)"))
        self._expect(")", f"')' after the {len(constructor.fields)} argument(s) of ${name}")
        return Branch(name, tuple(args))

    def _plain(self, kind: str, stops: str):
        text, pos = self.text, self.pos
        if kind == "symbol":
            if text.startswith('"', pos):
                return self._quoted()
            ends = [i for i in (text.find(c, pos) for c in stops) if i >= 0]
            if not ends:
                raise RecordTextError(f"a symbol at character {pos + 1} is not closed by any of {stops!r}")
            self.pos = min(ends)
            return text[pos:self.pos]
        pattern = _FLOAT if kind == "float" else _UNSIGNED if kind == "unsigned" else _INTEGER
        found = pattern.match(text, pos)
        if found is None:
            raise RecordTextError(f"{text[pos:pos + 20]!r} at character {pos + 1} is not {_article(kind)}")
        self.pos = found.end()
        number = found.group().strip(_BLANK)
        if kind != "float":
            return int(number)
        value = self.read_float(number)
        if value is None:
            raise RecordTextError(f"{number!r} at character {pos + 1} is not a float")
        return value

    def _quoted(self) -> str:
        text, start = self.text, self.pos + 1
        out, i = [], start
        while i < len(text):
            char = text[i]
            if char == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 2
                continue
            if char == '"':
                self.pos = i + 1
                return "".join(out)
            out.append(char)
            i += 1
        raise RecordTextError(f"the quoted symbol at character {start} is not closed")

    def _blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _BLANK:
            self.pos += 1

    def _expect(self, char: str, what: str) -> None:
        self._blanks()
        if not self.text.startswith(char, self.pos):
            found = repr(self.text[self.pos]) if self.pos < len(self.text) else "the end"
            raise RecordTextError(f"expected {what} at character {self.pos + 1}, found {found}")
        self.pos += 1


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
