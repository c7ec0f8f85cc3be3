"""GPAD importer: one assertion per annotation line of a GPAD 1.1/1.2 or 2.0 file.

    assertions, report = read_gpad("pombase.gpad")

The version comes from the header: ``!gpa-version: 1.1`` (or 1.2) or ``!gpad-version:
2.0`` (either key is read; without one, 1.1 is assumed and the report says so). Both
layouts have 12 tab-separated columns, the last two (annotation extensions and
properties) optional:

- 1.x: DB | DB_Object_ID | Qualifier (``part_of``, ``NOT|enables``) | GO ID | Reference(s)
  | Evidence (ECO) | With/From | Interacting taxon | Date | Assigned by | ...
- 2.0: DB:DB_Object_ID | Negation (``NOT`` or empty) | Relation (CURIE) | GO ID | ...

An assertion gets id ``{id_prefix}{N}`` for physical line N, source = the first
reference (the others, usually aliases of the same document, go into ``text``),
subject = ``DB:ID``, predicate = the relation's RO CURIE, object = the GO term and
text = the evidence code and with/from. A NOT-qualified line is a negated assertion
(``negated=True``: the source states the triple does not hold; it compiles to ``neg_edge``
and rules/contradictions.dl pairs it with a positive edge of the same triple); the report
counts them.
Required columns are those the assertion uses: subject, relation, term, reference,
evidence. A malformed line (wrong column count, empty required column, unknown
relation label, a CURIE column that is not one) is reported with its line number;
with ``strict=True`` the first one raises ``PolygraphError("malformed_line")``.
"""

from __future__ import annotations

from pathlib import Path

from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.importers.annotation import (
    Format,
    Layout,
    MalformedLine,
    evidence_text,
    qualifier_relation,
    read_annotation_file,
    require,
    require_curie,
    split_references,
)
from polygraph_logic.importers.relations import relation_curie
from polygraph_logic.importers.import_report import ImportReport


def read_gpad(
    path: str | Path, id_prefix: str = "gpad", strict: bool = False
) -> tuple[list[Assertion], ImportReport]:
    """Returns the assertions of a GPAD file and the report accounting for every line."""
    return read_annotation_file(path, GPAD, id_prefix, strict)


def _read_1x(identifier: str, fields: list[str]) -> Assertion:
    require(fields, {0: "DB", 1: "DB object ID", 2: "qualifier", 3: "GO ID", 4: "reference", 5: "evidence code"})
    negated, predicate = qualifier_relation(fields[2], column=2)
    return _assertion(identifier, f"{fields[0]}:{fields[1]}", predicate, fields, negated)


def _read_20(identifier: str, fields: list[str]) -> Assertion:
    require(fields, {0: "DB:DB object ID", 2: "relation", 3: "GO ID", 4: "reference", 5: "evidence code"})
    subject = require_curie(fields[0], "DB:DB object ID", 0)
    if fields[1] not in ("", "NOT"):
        raise MalformedLine(f"negation {fields[1]!r} is neither NOT nor empty (column 2)")
    if relation_curie(fields[2]):
        raise MalformedLine(
            f"relation {fields[2]!r} is a GPAD 1.x label; GPAD 2.0 gives a CURIE "
            f"({relation_curie(fields[2])}) (column 3)"
        )
    predicate = require_curie(fields[2], "relation", 2)
    return _assertion(identifier, subject, predicate, fields, fields[1] == "NOT")


def _assertion(
    identifier: str, subject: str, predicate: str | None, fields: list[str], negated: bool
) -> Assertion:
    if predicate is None:
        raise MalformedLine(f"no relation in qualifier {fields[2]!r} (column 3)")
    term = require_curie(fields[3], "GO ID", 3)
    evidence = require_curie(fields[5], "evidence code", 5)
    source, others = split_references(fields[4], 4)
    return Assertion(identifier, source, subject, predicate, term, evidence_text(evidence, fields[6], others),
                     negated=negated)


def _choose(version: str | None) -> Layout | None:
    if version is None or version.startswith("1."):
        return Layout(f"GPAD {version or '1.1'}", 12, 10, _read_1x)
    if version.startswith("2."):
        return Layout(f"GPAD {version}", 12, 10, _read_20)
    return None


GPAD = Format("GPAD", ("gpa-version", "gpad-version"), "GPAD 1.x and 2.0", _choose)
