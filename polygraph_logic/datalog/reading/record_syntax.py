"""The parser's part for records and ADTs: record and ADT types, ``[a, b]`` and ``$Name(a, b)`` terms.

A mixin of the parser's transformer (``parser._ToAst``): grammar rule ``record_type`` =
method ``record_type``, and so on. ``nil`` is read by the parser's ``variable``.
"""

from __future__ import annotations

from lark import v_args

from polygraph_logic.datalog.directives import Attribute, Constructor, TypeDeclaration
from polygraph_logic.datalog.syntax import BranchTerm, RecordTerm
from polygraph_logic.errors import ParseError


class RecordSyntax:
    """Transformer methods for the record and ADT rules of the grammar."""

    @v_args(meta=True)
    def record(self, meta, children):
        args = tuple(self._term(a) for a in children if a is not None)
        return RecordTerm("$record", args, self._meta(meta))

    def constructor(self, children):
        name, *args = children
        args = tuple(self._term(a) for a in args if a is not None)
        return BranchTerm(str(name), args, self._at(name))

    def record_type(self, children):
        name, *fields = children
        fields = _fields(fields)
        return TypeDeclaration(str(name), "record", tuple(a.type for a in fields), self._at(name), fields=fields)

    def adt_type(self, children):
        name, *branches = children
        constructors = tuple(Constructor(str(branch), str(name), fields, self._at(branch))
                             for branch, fields in branches)
        return TypeDeclaration(str(name), "adt", (), self._at(name), constructors=constructors)

    def adt_branch(self, children):
        name, *fields = children
        return name, _fields(fields)


def _fields(children) -> tuple[Attribute, ...]:
    fields = tuple(c for c in children if isinstance(c, Attribute))
    seen: dict[str, Attribute] = {}
    for attribute in fields:
        if attribute.name in seen:
            raise ParseError("syntax_error", f"field {attribute.name} is named twice", attribute.position)
        seen[attribute.name] = attribute
    return fields

