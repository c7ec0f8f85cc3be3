"""Reading an RDF export (polygraph_logic.export) back into a graph file.

Every format the export writes is read, RDF 1.2 triple terms included, with
pyoxigraph. The graph comes back from the export's own terms: ``pg:assertionId``
nodes give the assertions (source from ``dcterms:identifier``, triple from
``rdf:subject/predicate/object`` or ``rdf:reifies``), ``pg:artifactId`` nodes the
artifacts (layer from the class, content, exact flag, support sets in ``pg:index``
order), the export node the metadata, rules and non-artifact facts. Each artifact's
``pg:polynomial`` is checked against its support sets, and the counts against the
export's own, so a damaged or truncated file is an error, not a smaller graph.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from polygraph_logic.graph.circuit_build import store_circuit
from polygraph_logic.errors import PolygraphError
from polygraph_logic.export.iris import Minter
from polygraph_logic.export.namespaces import (
    CLASS_KINDS,
    CLASS_LAYERS,
    DCTERMS,
    FORMAT,
    PG,
    PROV,
    RDF,
    RDF_TYPE,
    RDFS,
    VOID,
)
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.evidence import Evidence, evidence_of
from polygraph_logic.graph.store.rows import Artifact, StoredFact
from polygraph_logic.graph.store.writer import write_graph
from polygraph_logic.provenance import WhySemiring

FORMATS = {".trig": ox.RdfFormat.TRIG, ".nq": ox.RdfFormat.N_QUADS, ".nquads": ox.RdfFormat.N_QUADS,
           ".ttl": ox.RdfFormat.TURTLE, ".turtle": ox.RdfFormat.TURTLE, ".jsonld": ox.RdfFormat.JSON_LD,
           ".json": ox.RdfFormat.JSON_LD}

_WANTED = frozenset([RDF_TYPE, RDF + "subject", RDF + "predicate", RDF + "object", RDF + "reifies", RDFS + "label",
                     PROV + "hadPrimarySource", PROV + "qualifiedDerivation", PROV + "hadMember", PROV + "invalidated",
                     DCTERMS + "identifier", VOID + "uriSpace"]
                    + [PG + name for name in ("artifactId", "assertionId", "ordinal", "content", "polynomial",
                                              "exact", "index", "member", "supportSet", "text", "format", "graphMeta", "rulesText",
                                              "fact", "artifactCount", "assertionCount", "factsIncluded",
                                              "status", "policy", "negated", "evidence")])


@dataclass
class RdfImport:
    """What an import read and wrote, and what the written graph lacks."""

    path: str
    format: str
    quads: int
    assertions: list[Assertion]
    artifacts: list[Artifact]
    facts: list[StoredFact]
    meta: dict
    rules: str
    facts_included: bool
    deletion: str | None = None
    dead: int = 0

    def summary(self) -> str:
        """Returns a few lines: counts read, and what the written graph lacks."""
        layers: dict[str, int] = defaultdict(int)
        for artifact in self.artifacts:
            layers[artifact.layer] += 1
        lines = [f"{self.path} ({self.format}): {self.quads:,} quads read: {len(self.assertions)} assertions, "
                 f"{len(self.artifacts)} artifacts ({', '.join(f'{v} {k}' for k, v in layers.items())}), "
                 f"{len(self.facts)} program facts, {len(self.rules.splitlines())} rule lines"]
        if not self.facts_included:
            lines.append("  lacks: the program's facts (exported with --no-facts): `whatif --exact` cannot "
                         "settle capped dead verdicts and `why` shows no derivation trees")
        if self.deletion:
            lines.append(f"  not imported: the what-if in the export ({self.deletion}: {self.dead} dead); "
                         "a graph file holds no what-if, run `polygraph whatif` on it again")
        return "\n".join(lines)


def _formats(path: Path, format: str | None) -> list[ox.RdfFormat]:
    """Returns the formats to try, in order: the one named, the extension's, or a sniffed guess."""
    if format is not None:
        by_name = {"trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS, "turtle": ox.RdfFormat.TURTLE,
                   "jsonld": ox.RdfFormat.JSON_LD}
        if format not in by_name:
            raise PolygraphError("bad_argument", f"unknown RDF format {format!r}; choose one of {', '.join(by_name)}")
        return [by_name[format]]
    if path.suffix.lower() in FORMATS:
        return [FORMATS[path.suffix.lower()]]
    with path.open("rb") as handle:
        start = handle.read(64).lstrip()
    if start[:1] in (b"[", b"{"):
        return [ox.RdfFormat.JSON_LD]
    # TriG also reads Turtle and N-Triples; N-Quads lines (four terms) are not TriG
    return [ox.RdfFormat.TRIG, ox.RdfFormat.N_QUADS]


def _value(term):
    if isinstance(term, ox.Triple):
        return (_value(term.subject), _value(term.predicate), _value(term.object))
    return term.value


def _read(path: Path, rdf_format: ox.RdfFormat) -> tuple[dict[str, dict[str, list]], int]:
    """Returns ``{subject: {predicate: [values]}}`` for the predicates the import needs, and the quad count."""
    nodes: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    count = 0
    try:
        for quad in ox.parse(path=str(path), format=rdf_format):
            count += 1
            predicate = quad.predicate.value
            if predicate in _WANTED and not isinstance(quad.subject, ox.Triple):
                nodes[quad.subject.value][predicate].append(_value(quad.object))
    except SyntaxError as error:
        raise PolygraphError("bad_rdf", f"{path}: not valid {rdf_format.name}: {error}") from None
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror or error}") from None
    return nodes, count


def _one(node: dict, predicate: str, what: str):
    values = node.get(predicate)
    if not values:
        raise PolygraphError("bad_rdf", f"{what} has no {_short(predicate)}")
    if len(set(values)) > 1:
        raise PolygraphError("bad_rdf", f"{what} has {len(values)} values of {_short(predicate)}: {values[:3]}")
    return values[0]


def _short(iri: str) -> str:
    for prefix, namespace in (("pg", PG), ("prov", PROV), ("rdf", RDF), ("dcterms", DCTERMS), ("void", VOID)):
        if iri.startswith(namespace):
            return f"{prefix}:{iri[len(namespace):]}"
    return iri


def read_rdf(path: str | Path, format: str | None = None) -> RdfImport:
    """Reads an export into assertions, artifacts, facts, metadata and rules (nothing is written)."""
    path = Path(path)
    if not path.is_file():
        raise PolygraphError("file_error", f"no file at {path}")
    formats = _formats(path, format)
    first_error = None
    for rdf_format in formats:
        try:
            nodes, count = _read(path, rdf_format)
            break
        except PolygraphError as error:
            first_error = first_error or error
    else:
        raise first_error
    exports = [s for s, node in nodes.items() if PG + "format" in node]
    if len(exports) != 1:
        raise PolygraphError("bad_rdf", f"{path} holds {len(exports)} polygraph exports (pg:format nodes); "
                                        "expected exactly one")
    head = nodes[exports[0]]
    if _one(head, PG + "format", "the export") != FORMAT:
        raise PolygraphError("bad_rdf", f"{path} is {head[PG + 'format'][0]!r}, expected {FORMAT!r}")
    minter = Minter(_one(head, VOID + "uriSpace", "the export"))
    meta = _json(head, PG + "graphMeta", "the export")
    assertions, by_node = _assertions(nodes, minter)
    cap = meta.get("cap", "none") if isinstance(meta, dict) else None
    if not (isinstance(cap, str) and (cap == "none" or cap.isdigit())):
        raise PolygraphError("bad_rdf", f"{path}: pg:graphMeta is not an object with a cap (a number or 'none')")
    semiring = WhySemiring(cap=None if cap == "none" else int(cap))
    artifacts = _artifacts(nodes, by_node, {a.id: i for i, a in enumerate(assertions)}, semiring)
    for name, found in (("assertionCount", len(assertions)), ("artifactCount", len(artifacts))):
        expected = _integer(head, PG + name, "the export")
        if expected != found:
            raise PolygraphError("bad_rdf", f"{path} declares {expected} {name[:-5]}s but holds {found}: "
                                            "is it truncated, or merged with another export?")
    facts_included = _one(head, PG + "factsIncluded", "the export") in ("true", "1")
    facts = [_fact(_json({PG + "fact": [text]}, PG + "fact", "the export")) for text in head.get(PG + "fact", ())] \
        if facts_included else []
    if facts_included:
        facts += [StoredFact(*a.fact, a.support, a.exact) for a in artifacts]
    deletion = next((n for n in nodes.values() if PG + "policy" in n), None)
    label = None
    if deletion is not None:
        label = f"{_one(deletion, RDFS + 'label', 'the deletion')} under {_one(deletion, PG + 'policy', 'the deletion')}"
    return RdfImport(str(path), rdf_format.name, count, assertions, artifacts, facts, meta,
                     _one(head, PG + "rulesText", "the export"), facts_included, label,
                     len(deletion.get(PROV + "invalidated", ())) if deletion else 0)


def _assertions(nodes, minter: Minter) -> tuple[list[Assertion], dict[str, str]]:
    """Returns the assertions in their original order, and assertion IRI -> id."""
    rows, by_node = [], {}
    for iri, node in nodes.items():
        if PG + "assertionId" not in node:
            continue
        what = f"assertion {iri}"
        id_ = _one(node, PG + "assertionId", what)
        source_iri = _one(node, PROV + "hadPrimarySource", what)
        source_node = nodes.get(source_iri, {})
        source = (_one(source_node, DCTERMS + "identifier", f"source {source_iri}")
                  if DCTERMS + "identifier" in source_node else minter.value(source_iri))
        if RDF + "reifies" in node:
            triple = _one(node, RDF + "reifies", what)
        else:
            triple = tuple(_one(node, RDF + part, what) for part in ("subject", "predicate", "object"))
        if not isinstance(triple, tuple) or len(triple) != 3 or not all(isinstance(t, str) for t in triple):
            raise PolygraphError("bad_rdf", f"{what}: its triple is not three IRIs: {triple!r}")
        texts = node.get(PG + "text")
        kinds = sorted({CLASS_KINDS[t] for t in node.get(RDF_TYPE, ()) if t in CLASS_KINDS})
        if len(kinds) > 1:
            raise PolygraphError("bad_rdf", f"{what} has several kinds: {', '.join(kinds)}")
        assertion = Assertion(id_, source, minter.value(triple[0]), minter.value(triple[1]),
                              minter.value(triple[2]), _one(node, PG + "text", what) if texts else None,
                              kind=kinds[0] if kinds else "source_claim",
                              negated=PG + "negated" in node and _one(node, PG + "negated", what) in ("true", "1"),
                              evidence=_evidence(node, kinds[0] if kinds else "source_claim", what))
        rows.append((_integer(node, PG + "ordinal", what), assertion))
        by_node[iri] = id_
    rows.sort(key=lambda row: row[0])
    assertions = [a for _, a in rows]
    if len({a.id for a in assertions}) != len(assertions):
        raise PolygraphError("bad_rdf", "two assertion nodes share an assertion id")
    return assertions, by_node


def _evidence(node: dict, kind: str, what: str) -> Evidence | None:
    """An assertion's evidence metadata from its ``pg:evidence`` JSON (validated as a record's)."""
    if PG + "evidence" not in node:
        return None
    text = _one(node, PG + "evidence", what)
    try:
        record = json.loads(text)
    except (TypeError, ValueError):
        record = None
    if not isinstance(record, dict):
        raise PolygraphError("bad_rdf", f"{what}: pg:evidence is not a JSON object: {text!r}")
    problems: list[PolygraphError] = []
    evidence = evidence_of(record, kind, None, problems)
    if problems:
        raise PolygraphError("bad_rdf", f"{what}: pg:evidence: " + "; ".join(p.message for p in problems))
    return evidence


def _artifacts(nodes, by_node: dict[str, str], order: dict[str, int], semiring: WhySemiring) -> list[Artifact]:
    rows = []
    for iri, node in nodes.items():
        if PG + "artifactId" not in node:
            continue
        what = f"artifact {iri}"
        id_ = _one(node, PG + "artifactId", what)
        layers = sorted({CLASS_LAYERS[t] for t in node.get(RDF_TYPE, ()) if t in CLASS_LAYERS})
        if len(layers) != 1:
            raise PolygraphError("bad_rdf", f"{what} has {len(layers)} layer classes, expected one")
        sets = []
        # pg:supportSet and prov:hadMember; exports written before: prov:qualifiedDerivation and pg:member
        for set_iri in [*node.get(PG + "supportSet", ()), *node.get(PROV + "qualifiedDerivation", ())]:
            set_node = nodes.get(set_iri, {})
            members = []
            for member in [*set_node.get(PROV + "hadMember", ()), *set_node.get(PG + "member", ())]:
                if member not in by_node:
                    raise PolygraphError("bad_rdf", f"support set {set_iri} cites {member}, which is no assertion")
                members.append(by_node[member])
            members = sorted(set(members), key=order.__getitem__)
            sets.append((_integer(set_node, PG + "index", f"support set {set_iri}"), tuple(members)))
        support = tuple(members for _, members in sorted(sets))
        exact = _one(node, PG + "exact", what) in ("true", "1")
        polynomial = str(semiring.polynomial(support, exact=exact))
        stated = _one(node, PG + "polynomial", what)
        if polynomial != stated:
            raise PolygraphError("bad_rdf", f"{what}: its support sets make {polynomial!r} "
                                            f"but its pg:polynomial says {stated!r}")
        content = _json(node, PG + "content", what)
        rows.append((_integer(node, PG + "ordinal", what),
                     Artifact(id_, layers[0], content, support, exact)))
    rows.sort(key=lambda row: row[0])
    artifacts = [a for _, a in rows]
    if len({a.id for a in artifacts}) != len(artifacts):
        raise PolygraphError("bad_rdf", "two artifact nodes share an artifact id")
    return artifacts


def _integer(node: dict, predicate: str, what: str) -> int:
    """The one value of ``predicate`` as an integer; a literal that is none is a bad_rdf error."""
    value = _one(node, predicate, what)
    try:
        return int(value)
    except ValueError:
        raise PolygraphError("bad_rdf", f"{what}: {predicate} is {value!r}, not an integer") from None


def _json(node: dict, predicate: str, what: str):
    """The one value of ``predicate`` read as JSON; a literal that is none is a bad_rdf error."""
    value = _one(node, predicate, what)
    try:
        return json.loads(value)
    except ValueError as error:
        raise PolygraphError("bad_rdf", f"{what}: {predicate} is not JSON ({error})") from None


def _fact(record) -> StoredFact:
    relation, args, support, exact = record
    return StoredFact(relation, tuple(args), tuple(tuple(group) for group in support), bool(exact))


def import_rdf(path: str | Path, output: str | Path, format: str | None = None) -> RdfImport:
    """Reads an export and writes it as a graph file (atomically); returns what was read."""
    read = read_rdf(path, format)
    write_graph(output, read.assertions, read.artifacts, read.meta, read.facts, read.rules, finish=store_circuit)
    return read
