"""Souffle's program structure as dataclasses: ``.decl``, ``.type``, ``.input``/``.output``.

The parser builds them beside facts and rules; ``checks/declarations.py`` checks a
program against them; ``reading/souffle_input.py`` and ``souffle_output.py`` carry out the
I/O directives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from polygraph_logic.errors import Position

BASE_TYPES = ("symbol", "number", "unsigned", "float")


@dataclass(frozen=True)
class Attribute:
    """One column of a declared relation: ``name: type``."""

    name: str
    type: str
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.name}: {self.type}"


@dataclass(frozen=True)
class Declaration:
    """``.decl rel(a: symbol, b: number) [eqrel ...]``: a relation, its columns and qualifiers."""

    relation: str
    attributes: tuple[Attribute, ...]
    qualifiers: tuple[str, ...] = ()
    position: Position | None = field(default=None, compare=False, repr=False)
    #: ``choice-domain x, (y, z)``: the keys (attribute names) each naming at most one tuple
    choice: tuple[tuple[str, ...], ...] = ()

    @property
    def arity(self) -> int:
        return len(self.attributes)

    def __str__(self) -> str:
        qualifiers = "".join(f" {q}" for q in self.qualifiers)
        keys = ", ".join(k[0] if len(k) == 1 else f"({', '.join(k)})" for k in self.choice)
        choice = f" choice-domain {keys}" if keys else ""
        return f".decl {self.relation}({', '.join(map(str, self.attributes))}){qualifiers}{choice}"


@dataclass(frozen=True)
class TypeDeclaration:
    """``.type T <: symbol`` (subtype), ``.type U = A | B`` (union) or ``.number_type T``."""

    name: str
    kind: str  # "subtype", "union", "record" or "adt"
    parts: tuple[str, ...]
    position: Position | None = field(default=None, compare=False, repr=False)
    fields: tuple[Attribute, ...] = ()  # a record's fields
    constructors: tuple["Constructor", ...] = ()  # an ADT's branches

    def __str__(self) -> str:
        if self.kind == "subtype":
            return f".type {self.name} <: {self.parts[0]}"
        if self.kind == "record":
            return f".type {self.name} = [{', '.join(map(str, self.fields))}]"
        if self.kind == "adt":
            return f".type {self.name} = {' | '.join(map(str, self.constructors))}"
        return f".type {self.name} = {' | '.join(self.parts)}"


@dataclass(frozen=True)
class Constructor:
    """One branch of an ADT, ``Name {field: type, ...}``: built and matched as ``$Name(...)``."""

    name: str
    type: str  # the ADT it belongs to
    fields: tuple[Attribute, ...]
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.name} {{{', '.join(map(str, self.fields))}}}"


@dataclass(frozen=True)
class IODirective:
    """``.input rel(key=value, ...)``, ``.output``, ``.printsize`` or ``.limitsize``."""

    kind: str  # "input", "output", "printsize", "limitsize"
    relation: str
    parameters: tuple[tuple[str, str], ...] = ()
    position: Position | None = field(default=None, compare=False, repr=False)

    def get(self, key: str, default: str | None = None) -> str | None:
        """Returns the value of a parameter (``IO``, ``filename``, ``delimiter`` ...)."""
        for name, value in self.parameters:
            if name == key:
                return value
        return default

    def __str__(self) -> str:
        params = ", ".join(f'{k}="{v}"' for k, v in self.parameters)
        return f".{self.kind} {self.relation}" + (f"({params})" if params else "")


@dataclass(frozen=True)
class LazyDeclaration:
    """``.lazy rel`` or ``.lazy rel("c", _)``: facts a graph build leaves unmaterialized (derived on demand).

    ``pattern`` is None for the whole relation, else one value per argument (None for ``_``)."""

    relation: str
    pattern: tuple | None = None
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        if self.pattern is None:
            return f".lazy {self.relation}"
        args = ", ".join("_" if v is None else json.dumps(v, ensure_ascii=False) if isinstance(v, str) else str(v)
                         for v in self.pattern)
        return f".lazy {self.relation}({args})"


@dataclass(frozen=True)
class Pragma:
    """``.pragma "key" "value"``: one of Soufflé's settings given in the program text
    (``magic-transform`` and ``magic-transform-exclude`` are read, datalog/magic/; others are kept
    and have no effect)."""

    key: str
    value: str = ""
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f".pragma {json.dumps(self.key, ensure_ascii=False)} {json.dumps(self.value, ensure_ascii=False)}"


Directive = Declaration | TypeDeclaration | IODirective | LazyDeclaration | Pragma
