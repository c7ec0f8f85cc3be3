"""GAF importer: one assertion per annotation line of a GAF 2.x (or 1.0) file.

    assertions, report = read_gaf("pombase.gaf")

Columns (17, tab-separated; the last two, annotation extension and gene product form,
are optional and often left off, as GAF 1.0 has 15): DB | DB Object ID | Symbol |
Qualifier | GO ID | Reference(s) | Evidence code | With/From | Aspect | ... | Date |
Assigned by | Annotation extension | Gene product form ID.

The relation: GAF 2.2 (``!gaf-version: 2.2``) states it in the qualifier column
(``enables``, ``NOT|located_in``) and a line without one is malformed. GAF 2.0/2.1 and
1.0 state one only for ``contributes_to`` and ``colocalizes_with``; otherwise it comes
from the aspect: F -> enables, P -> involved_in, C -> part_of. For C, GO's own 2.1 ->
2.2 conversion picks located_in except for protein-containing complexes (part_of); we
cannot tell complexes apart without the ontology, and part_of is what the GPAD files GO
derived from the same GAFs state (PomBase's GPAD 1.2 in data/go-pombase: every C line
is part_of), so both importers agree and the GO closure rules, which reason over
part_of, apply. Without a version header the 2.1 rules are used and the report says so.

An assertion gets id ``{id_prefix}{N}`` for physical line N, source = the first
reference of column 6, subject = ``DB:ID`` (columns 1-2), object = the GO ID
(column 5), text = the evidence code and with/from. A NOT-qualified line is a negated
assertion and malformed lines are reported, as for GPAD (see gpad.py).
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

ASPECT_RELATIONS = {"F": "enables", "P": "involved_in", "C": "part_of"}


def read_gaf(
    path: str | Path, id_prefix: str = "gaf", strict: bool = False
) -> tuple[list[Assertion], ImportReport]:
    """Returns the assertions of a GAF file and the report accounting for every line."""
    return read_annotation_file(path, GAF, id_prefix, strict)


def _reader(relation_required: bool):
    def read_line(identifier: str, fields: list[str]) -> Assertion:
        require(fields, {0: "DB", 1: "DB object ID", 4: "GO ID", 5: "reference", 6: "evidence code", 8: "aspect"})
        aspect = fields[8]
        if aspect not in ASPECT_RELATIONS:
            raise MalformedLine(f"aspect {aspect!r} is not F, P or C (column 9)")
        negated, predicate = qualifier_relation(fields[3], column=3)
        if predicate is None:
            if relation_required:
                raise MalformedLine(f"GAF 2.2 needs a relation in the qualifier, found {fields[3]!r} (column 4)")
            predicate = relation_curie(ASPECT_RELATIONS[aspect])
        term = require_curie(fields[4], "GO ID", 4)
        source, others = split_references(fields[5], 5)
        subject = f"{fields[0]}:{fields[1]}"
        return Assertion(identifier, source, subject, predicate, term, evidence_text(fields[6], fields[7], others),
                         negated=negated)

    return read_line


def _choose(version: str | None) -> Layout | None:
    if version == "2.2":
        return Layout("GAF 2.2", 17, 15, _reader(relation_required=True))
    if version is None or version in ("1.0", "2.0", "2.1"):
        return Layout(f"GAF {version or '2.1'}", 17, 15, _reader(relation_required=False))
    return None


GAF = Format("GAF", ("gaf-version",), "GAF 1.0, 2.0, 2.1 and 2.2", _choose)
