"""Checking a program against its ``.decl`` and ``.type`` declarations, as Souffle does.

Once a program declares one relation it must declare all it uses: an undeclared
relation, a wrong arity or a constant of the wrong type is an error with file, line
and column. Types resolve to one of four base types (symbol, number, unsigned,
float); a variable may not be a symbol in one place and a number in another.
Programs without any ``.decl`` are not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.directives import BASE_TYPES, Declaration, IODirective, LazyDeclaration, TypeDeclaration
from polygraph_logic.errors import Position, ProgramError
from polygraph_logic.datalog.fact_table import FactTable
from polygraph_logic.datalog.values.record_values import NIL
from polygraph_logic.datalog.checks.record_types import RANGES, Structures, article, fits, fits_type, structured_terms
from polygraph_logic.datalog.checks.safety import aggregates_in, literal_terms
from polygraph_logic.datalog.syntax import Atom, BranchTerm, Comparison, Constant, Negation, RecordTerm, Rule, Variable

_PYTHON_TYPES = {"symbol": (str,), "number": (int,), "unsigned": (int,), "float": (float, int)}


@dataclass
class Declarations:
    """The declared relations, types and I/O directives of a program."""

    relations: dict[str, Declaration] = field(default_factory=dict)
    types: dict[str, TypeDeclaration] = field(default_factory=dict)
    io: list[IODirective] = field(default_factory=list)
    lazy: list[LazyDeclaration] = field(default_factory=list)
    structures: Structures | None = None  # the record and ADT types, set by collect

    @classmethod
    def collect(cls, directives: Iterable) -> "Declarations":
        """Gathers directives; raises ProgramError on a duplicate or an unknown type."""
        found = cls()
        for item in directives:
            if isinstance(item, Declaration):
                earlier = found.relations.get(item.relation)
                if earlier is not None:
                    raise ProgramError("duplicate_declaration",
                                       f"{item.relation} is declared twice (first at {earlier.position})",
                                       item.position)
                found.relations[item.relation] = item
            elif isinstance(item, TypeDeclaration):
                if item.name in found.types or item.name in BASE_TYPES:
                    raise ProgramError("duplicate_declaration", f"type {item.name} is declared twice",
                                       item.position)
                found.types[item.name] = item
            elif isinstance(item, LazyDeclaration):
                found.lazy.append(item)
            elif item.kind == "limitsize":
                raise ProgramError("unsupported_directive", ".limitsize is not supported; "
                                   "bound a runaway relation with polygraph eval --max-facts", item.position)
            else:
                found.io.append(item)
        for type_declaration in found.types.values():
            found.base(type_declaration.name, type_declaration.position)
            fields = [*type_declaration.fields, *(f for c in type_declaration.constructors for f in c.fields)]
            for attribute in fields:  # a record's fields may name its own type (a list)
                found.base(attribute.type, attribute.position)
        found.structures = Structures(found.types, found.base)
        for declaration in found.relations.values():
            if "eqrel" in declaration.qualifiers and declaration.arity != 2:
                raise ProgramError("type_error", f"eqrel relation {declaration.relation} must be binary",
                                   declaration.position)
            for attribute in declaration.attributes:
                found.base(attribute.type, attribute.position)
        for directive in found.io:
            if found.relations and directive.relation not in found.relations:
                raise ProgramError("undeclared_relation",
                                   f".{directive.kind} names {directive.relation}, which has no .decl",
                                   directive.position)
        return found

    def base(self, type_name: str, position: Position | None = None, seen: frozenset = frozenset()) -> str:
        """Returns the base type (symbol, number, unsigned or float) a type name stands for."""
        if type_name in BASE_TYPES:
            return type_name
        declared = self.types.get(type_name)
        if declared is not None and declared.kind in ("record", "adt"):
            return type_name  # a record or ADT type is its own base (see record_types.py)
        if declared is None or type_name in seen:
            known = ", ".join([*BASE_TYPES, *sorted(self.types)])
            why = "is defined in terms of itself" if declared else "is not declared"
            raise ProgramError("type_error", f"type {type_name} {why} (types: {known})", position)
        bases = {self.base(part, declared.position, seen | {type_name}) for part in declared.parts}
        if len(bases) > 1:
            raise ProgramError("type_error", f"union type {type_name} mixes {' and '.join(sorted(bases))}",
                               declared.position)
        return bases.pop()

    def kinds(self, relation: str) -> tuple[str, ...] | None:
        """Returns the base types of a declared relation's columns, or None if it is undeclared."""
        declared = self.relations.get(relation)
        return None if declared is None else tuple(self.base(a.type) for a in declared.attributes)

    def check(self, tables: dict[str, FactTable], rules: list[Rule], facts: Iterable = ()) -> None:
        """Checks facts and rules against the declarations; raises ProgramError. ``facts``: the
        program text's facts, whose constructors are checked even without declarations."""
        structures = self.structures or Structures(self.types, self.base)
        for fact in facts:
            for arg in fact.atom.args:
                for term in structured_terms(arg):
                    structures.constructor(term)
        for rule in rules:  # constructors are global: known and of the right arity, declared or not
            for atom in _rule_atoms(rule):
                for arg in atom.args:
                    for term in structured_terms(arg):
                        structures.constructor(term)
            for literal in rule.body:
                if isinstance(literal, Comparison):
                    for term in (*structured_terms(literal.left), *structured_terms(literal.right)):
                        structures.constructor(term)
        if not self.relations:
            return
        for table in tables.values():
            declared = self._declared(table.relation, table.arity, table.position(0))
            _check_table(table, self.kinds(table.relation), declared, structures)
        for rule in rules:
            variables: dict[str, tuple[str, Variable]] = {}
            for atom in _rule_atoms(rule):
                self._declared(atom.relation, atom.arity, atom.position)
                for kind, arg in zip(self.kinds(atom.relation), atom.args):
                    _check_argument(kind, arg, atom, variables, structures)
            kinds = {name: kind for name, (kind, _) in variables.items()}

            for literal in rule.body:
                if isinstance(literal, Comparison):
                    structures.check_comparison(literal, kinds, lambda v, k, at=literal: _note(v, k, at, variables, kinds))

    def _declared(self, relation: str, arity: int, position: Position | None) -> Declaration:
        declared = self.relations.get(relation)
        if declared is None:
            raise ProgramError("undeclared_relation",
                               f"{relation} is used but not declared (add .decl {relation}(...))", position)
        if declared.arity != arity:
            raise ProgramError("arity_mismatch", f"{relation} is used with {arity} argument(s) here but "
                               f"declared with {declared.arity} at {declared.position}", position)
        return declared


def _rule_atoms(rule: Rule):
    yield rule.head
    stack = list(rule.body)
    while stack:
        literal = stack.pop()
        if isinstance(literal, Atom):
            yield literal
        elif isinstance(literal, Negation):
            yield literal.atom
        for term in literal_terms(literal):
            for aggregate in aggregates_in(term):
                stack.extend(aggregate.body)


def _check_argument(kind: str, arg, atom: Atom, variables: dict, structures: Structures) -> None:
    if kind in structures.types or isinstance(arg, (RecordTerm, BranchTerm)) or (
            isinstance(arg, Constant) and not isinstance(arg.value, (str, int, float))):
        structures.check_term(arg, kind, atom.position, lambda v, k: _check_variable(k, v, atom, variables))
    elif isinstance(arg, Constant):
        if not fits(kind, arg.value):
            what = f"out of {article(kind)}'s {domain.size()}-bit range" if fits_type(kind, arg.value) \
                else f"not {article(kind)}"
            raise ProgramError("type_error", f"{arg} is {what} (argument {atom.args.index(arg) + 1} "
                               f"of {atom.relation})", atom.position)
    elif isinstance(arg, Variable):
        _check_variable(kind, arg, atom, variables)


def _note(variable: Variable, kind: str, where, variables: dict, kinds: dict) -> None:
    _check_variable(kind, variable, where, variables)
    kinds[variable.name] = variables[variable.name][0]


def _check_variable(kind: str, arg: Variable, where, variables: dict) -> None:
    """A variable is a symbol, a number (signed, unsigned or float) or a value of one record or ADT type."""
    group = "symbol" if kind == "symbol" else "number" if kind in _PYTHON_TYPES else kind
    seen = variables.setdefault(arg.name, (group, where))
    if seen[0] != group:
        raise ProgramError("type_error", f"variable {arg} is {article(group)} in {where} but {article(seen[0])} "
                           f"in {seen[1]} ({seen[1].position})", arg.position or where.position)


def _check_table(table: FactTable, kinds: tuple[str, ...], declared: Declaration, structures: Structures) -> None:
    """Checks every column of a fact table; floats declared ``float`` accept integers."""
    rows = table.rows
    for column, kind in enumerate(kinds):
        if kind in structures.types or any(isinstance(row[column], tuple) or row[column] is NIL for row in rows):
            for row, values in enumerate(rows):
                problem = structures.problem(values[column], kind)
                if problem:
                    raise ProgramError("type_error", f"{problem} (column {column + 1}, {declared.attributes[column]} "
                                       f"of {table.relation})", table.position(row))
            floaty = structures.floaty()
            if kind in floaty:  # integers in float fields are floats, as Souffle types them
                table.rows = rows = [row[:column] + (structures.coerce(row[column], kind, floaty),) + row[column + 1:]
                                     for row in rows]
            continue
        allowed = _PYTHON_TYPES[kind]
        types = set(map(type, (row[column] for row in rows)))
        bad = types - set(allowed)
        if not bad and kind in RANGES and rows:
            values = [row[column] for row in rows]
            low, high = domain.ranges()[kind]
            bad = {int} if min(values) < low or max(values) > high else set()
        if bad:
            row = next(i for i, r in enumerate(rows) if not fits(kind, r[column]))
            attribute = declared.attributes[column]
            value = rows[row][column]
            what = f"out of {article(kind)}'s {domain.size()}-bit range" if fits_type(kind, value) \
                else f"not {article(kind)}"
            raise ProgramError("type_error", f"{value!r} is {what} (column {column + 1}, "
                               f"{attribute} of {table.relation})", table.position(row))
        if kind == "float" and (int in types or domain.size() == 32):  # floats of the width, as Souffle holds them
            table.rows = rows = [row[:column] + (domain.integer_float(row[column]) if type(row[column]) is int
                                                 else domain.real(row[column]),) + row[column + 1:] for row in rows]
