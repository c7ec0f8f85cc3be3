"""Checking record and ADT terms and values against their ``.type`` declarations, as Souffle does.

A record term in a column of a record type has that type's number of fields, each
checked against its field's type; ``$Name(...)`` names a declared constructor, of the
column's ADT, with its number of arguments; ``nil`` stands only where a record type
does. Values read from fact files or written as facts are checked the same way. A
variable keeps one type: a field's variable is checked against the field's type.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.directives import Constructor, TypeDeclaration
from polygraph_logic.datalog.values.record_values import ARG, FIELD, NIL, Branch, Record
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
from polygraph_logic.errors import Position, ProgramError

_PYTHON_TYPES = {"symbol": (str,), "number": (int,), "unsigned": (int,), "float": (float, int)}

NoteVariable = Callable[..., None]  # (variable, type[, the term it stands in])


# Souffle holds a number in signed and an unsigned in unsigned bits of its build's width
# (datalog/values/domain.py); a constant out of range is an error there (its parser and its fact
# reader refuse it)
RANGES = ("number", "unsigned")


def fits_type(kind: str, value) -> bool:
    """True when a plain value is of a base type, whatever its size (an unsigned is a non-negative integer)."""
    return isinstance(value, _PYTHON_TYPES[kind]) and not isinstance(value, bool) and (kind != "unsigned" or value >= 0)


def fits(kind: str, value) -> bool:
    """True when a plain value is of a base type and, for a number or an unsigned, within its range."""
    if kind in RANGES:
        low, high = domain.ranges()[kind]
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    return fits_type(kind, value)


def article(kind: str) -> str:
    """Returns "a number", "an unsigned"."""
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


class Structures:
    """The record and ADT types of a program, and their constructors by name."""

    def __init__(self, types: dict[str, TypeDeclaration], base: Callable[[str], str]):
        self.types = {name: t for name, t in types.items() if t.kind in ("record", "adt")}
        self.base = base
        self.constructors: dict[str, Constructor] = {}
        for declared in self.types.values():
            for constructor in declared.constructors:
                earlier = self.constructors.get(constructor.name)
                if earlier is not None:
                    raise ProgramError("duplicate_declaration", f"constructor {constructor.name} is declared twice "
                                       f"(in {earlier.type} at {earlier.position})", constructor.position)
                self.constructors[constructor.name] = constructor

    def floaty(self) -> set[str]:
        """The record and ADT types that hold a float, in a field or deeper."""
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, declared in self.types.items():
                fields = [*declared.fields, *(f for c in declared.constructors for f in c.fields)]
                if name not in found and any(self.base(f.type) in found | {"float"} for f in fields):
                    found.add(name)
                    changed = True
        return found

    def coerce(self, value, kind: str, floaty: set[str]):
        """Returns a checked value with its integers in float fields made floats, as Souffle types them."""
        if kind == "float":
            return domain.integer_float(value) if type(value) is int else value
        if kind not in floaty or value is NIL:
            return value
        if isinstance(value, Record):
            return Record([self.coerce(v, self.base(f.type), floaty) for v, f in zip(value, self.types[kind].fields)])
        fields = self.constructors[value[0]].fields
        return Branch(value[0], tuple(self.coerce(v, self.base(f.type), floaty) for v, f in zip(value[1], fields)))

    def coerce_term(self, term, kind: str, floaty: set[str]):
        """Returns a term with its integer constants in float fields made floats (a checked term)."""
        if kind == "float":
            return Constant(domain.integer_float(term.value)) if isinstance(term, Constant) and type(term.value) is int \
                else term
        if kind not in floaty:
            return term
        if isinstance(term, RecordTerm) and self.types[kind].kind == "record":
            fields = self.types[kind].fields
        elif isinstance(term, BranchTerm) and term.name[1:] in self.constructors:
            fields = self.constructors[term.name[1:]].fields
        else:
            return term
        return replace(term, args=tuple(self.coerce_term(a, self.base(f.type), floaty)
                                        for a, f in zip(term.args, fields)))

    def fields(self, kind: str) -> tuple | None:
        declared = self.types.get(kind)
        return None if declared is None else declared.fields

    def constructor(self, term: BranchTerm) -> Constructor:
        """Returns the declared constructor of ``$Name(...)``; raises on an unknown name or a wrong arity."""
        found = self.constructors.get(term.name[1:])
        if found is None:
            known = ", ".join(f"${c}" for c in sorted(self.constructors)) or "none is declared"
            raise ProgramError("type_error", f"unknown constructor {term.name} (constructors: {known})", term.position)
        if len(term.args) != len(found.fields):
            raise ProgramError("arity_mismatch", f"{term.name} takes {len(found.fields)} argument(s) ({found}), "
                               f"not {len(term.args)}", term.position)
        return found

    # --- terms -----------------------------------------------------------------------------
    def check_term(self, term, kind: str, position: Position | None, note: NoteVariable) -> None:
        """Checks a term standing where a value of ``kind`` (a base, record or ADT type) is expected."""
        where = getattr(term, "position", None) or position
        declared = self.types.get(kind)
        if isinstance(term, Variable):
            note(term, kind)
        elif isinstance(term, RecordTerm):
            if declared is None or declared.kind != "record":
                raise ProgramError("type_error", f"the record {term} stands where {article(kind)} is expected", where)
            if len(term.args) != len(declared.fields):
                raise ProgramError("arity_mismatch", f"the record {term} has {len(term.args)} field(s), but {kind} "
                                   f"has {len(declared.fields)} ({declared})", where)
            for arg, field in zip(term.args, declared.fields):
                self.check_term(arg, self.base(field.type), position, note)
        elif isinstance(term, BranchTerm):
            constructor = self.constructor(term)
            if constructor.type != kind:
                raise ProgramError("type_error", f"{term} is a value of {constructor.type}, where "
                                   f"{article(kind)} is expected", where)
            for arg, field in zip(term.args, constructor.fields):
                self.check_term(arg, self.base(field.type), position, note)
        elif isinstance(term, Constant):
            problem = self.problem(term.value, kind)
            if problem:
                raise ProgramError("type_error", problem, where)
        elif declared is not None and not isinstance(term, (Aggregate, Wildcard)):
            raise ProgramError("type_error", f"{term} is no value of the {declared.kind} type {kind}", where)

    def check_comparison(self, literal: Comparison, kinds: dict[str, str], note: NoteVariable) -> None:
        """Checks ``v = [..]`` and ``v != $C(..)`` against the type of ``v``, and that a record or
        ADT value is compared only with ``=`` and ``!=``."""
        for side, other in ((literal.left, literal.right), (literal.right, literal.left)):
            kind = kinds.get(side.name) if isinstance(side, Variable) else None
            if kind is None:
                continue
            if kind in self.types and literal.op not in ("=", "!="):
                raise ProgramError("type_error", f"{side} is a value of {kind}: records and ADT values compare "
                                   f"only with = and !=, not {literal.op}", literal.position)
            if isinstance(other, (RecordTerm, BranchTerm)) or (kind in self.types and isinstance(other, Constant)):
                self.check_term(other, kind, literal.position, lambda v, k, at=other: note(v, k, at))
        if isinstance(literal.left, Variable) and isinstance(literal.right, Functor):
            self._field_kind(literal.left, literal.right, kinds, note)

    def _field_kind(self, target: Variable, take: Functor, kinds: dict[str, str], note: NoteVariable) -> None:
        """``x = $field(r, i)``: ``x`` has the type of field ``i`` of ``r``'s type."""
        if take.name not in (FIELD, ARG) or not isinstance(take.args[0], Variable):
            return
        kind = kinds.get(take.args[0].name)
        if take.name == FIELD:
            fields = self.fields(kind) if kind else None
        else:
            constructor = self.constructors.get(take.args[1].value)
            fields = constructor.fields if constructor else None
        index = take.args[-1].value
        if fields is not None and index < len(fields):
            note(target, self.base(fields[index].type))

    # --- values ----------------------------------------------------------------------------
    def problem(self, value, kind: str) -> str | None:
        """Returns why a value is not of ``kind`` (a base, record or ADT type), or None."""
        declared = self.types.get(kind)
        if declared is None:
            if isinstance(value, (Record, Branch)) or value is NIL or not fits(kind, value):
                return f"{shown(value)} is not {article(kind)}"
            return None
        if declared.kind == "record":
            if value is NIL:
                return None
            if not isinstance(value, Record):
                return f"{shown(value)} is not a record of {kind}"
            if len(value) != len(declared.fields):
                return (f"the record {value} has {len(value)} field(s), but {kind} has "
                        f"{len(declared.fields)} ({declared})")
            fields = declared.fields
            items = value
        else:
            constructor = self.constructors.get(value[0]) if isinstance(value, Branch) else None
            if constructor is None and isinstance(value, Branch):
                known = ", ".join(f"${c}" for c in sorted(self.constructors)) or "none is declared"
                return f"unknown constructor ${value[0]} in {value} (constructors: {known})"
            if constructor is None or constructor.type != kind:
                return f"{shown(value)} is not a value of {kind} ({declared})"
            if len(value[1]) != len(constructor.fields):
                return f"{value} does not give ${constructor.name} its {len(constructor.fields)} argument(s)"
            fields = constructor.fields
            items = value[1]
        for item, field in zip(items, fields):
            problem = self.problem(item, self.base(field.type))
            if problem:
                return problem
        return None


def shown(value) -> str:
    return str(value) if isinstance(value, (Record, Branch)) or value is NIL else repr(value)


def structured_terms(term):
    """Yields the ``$Name(...)`` terms inside a term, outermost first."""
    stack = [term]
    while stack:
        node = stack.pop()
        if isinstance(node, BranchTerm):
            yield node
        if isinstance(node, Functor):
            stack.extend(node.args)
        elif isinstance(node, Arithmetic):
            stack += [node.left, node.right]



def float_fields(rule: Rule, structures: Structures, kinds_of: Callable, floaty: set[str]) -> Rule:
    """Returns the rule with the integer constants of its records and ADT values that stand in
    float fields made floats (``[1, 2]`` of ``[x: float, y: float]`` is ``[1.0, 2.0]``), in
    atoms and in ``v = [..]`` where ``v`` is a column of such a type."""
    variables: dict[str, str] = {}

    def atom(found: Atom) -> Atom:
        kinds = kinds_of(found.relation)
        if kinds is None:
            return found
        for arg, kind in zip(found.args, kinds):
            if isinstance(arg, Variable):
                variables[arg.name] = kind
        return replace(found, args=tuple(structures.coerce_term(a, k, floaty) for a, k in zip(found.args, kinds)))

    head = atom(rule.head)
    body = [atom(lit) if isinstance(lit, Atom) else replace(lit, atom=atom(lit.atom))
            if isinstance(lit, Negation) else lit for lit in rule.body]
    for i, literal in enumerate(body):
        if isinstance(literal, Comparison) and literal.op in ("=", "!="):
            left, right = literal.left, literal.right
            if isinstance(left, Variable) and left.name in variables:
                right = structures.coerce_term(right, variables[left.name], floaty)
            if isinstance(right, Variable) and right.name in variables:
                left = structures.coerce_term(left, variables[right.name], floaty)
            body[i] = replace(literal, left=left, right=right)
    return replace(rule, head=head, body=tuple(body))


def record_use(rules, declarations) -> tuple[str, object] | None:
    """Returns where a program builds or matches a record or ADT value, or declares a column of
    a record or ADT type, as (what, the rule or declaration), or None (engines that store
    only symbols and numbers refuse such a program by name)."""
    for rule in rules:
        terms = [*rule.head.args, *(t for literal in rule.body for t in _terms(literal))]
        if any(isinstance(f, Functor) and f.name[:1] == "$" for t in terms for f in _functors(t)):
            return "it builds or matches records or ADT values ([a, b], $Name(...))", rule
    structured = set(declarations.structures.types) if declarations.structures else set()
    for name, declared in declarations.relations.items():
        for attribute in declared.attributes:
            if declarations.base(attribute.type) in structured:
                return f"its relation {name} has a column of records or ADT values ({attribute})", declared
    return None


def _terms(literal):
    if isinstance(literal, Negation):
        return literal.atom.args
    if isinstance(literal, Comparison):
        return (literal.left, literal.right)
    return literal.args


def _functors(term):
    stack = [term]
    while stack:
        node = stack.pop()
        if isinstance(node, Functor):
            yield node
            stack.extend(node.args)
        elif isinstance(node, Arithmetic):
            stack += [node.left, node.right]
