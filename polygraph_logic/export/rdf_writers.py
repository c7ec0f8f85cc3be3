"""Streaming writers for N-Quads, TriG, Turtle and JSON-LD: quads in, bytes out, in one pass.

What each format carries:

- ``nquads`` and ``trig``: everything (named graphs: the nanopublication structure).
- ``turtle``: no named graphs. Every triple is written into the one graph, so which
  graph held a statement (an artifact's assertion graph, its provenance) is lost; the
  triples themselves, and so an import, are complete.
- ``jsonld``: everything, in expanded form (full IRIs, no context to fetch); a named
  graph may appear in several top-level objects, which JSON-LD readers merge.

None of these carries RDF 1.2 triple terms; rdf12.py writes those through pyoxigraph.
Nothing is held in memory beyond the current subject (JSON-LD: at most ``_BLOCK`` quads).
Literals are escaped as N-Triples asks (``\\ " \\n \\r`` and every other control
character); IRIs come from iris.Minter, which never mints a character that needs it.
"""

from __future__ import annotations

import io
import json
import re
from typing import BinaryIO, Iterable

from polygraph_logic.export.model import Literal, Quad
from polygraph_logic.export.namespaces import (
    KIND_CLASSES,
    LAYER_CLASSES,
    NP,
    PG,
    PREFIXES,
    PROV,
    RDF_TYPE,
    VOID,
    XSD_BOOLEAN,
    XSD_INTEGER,
    XSD_STRING,
)

FORMATS = ("trig", "nquads", "turtle", "jsonld")
EXTENSIONS = {"trig": ".trig", "nquads": ".nq", "turtle": ".ttl", "jsonld": ".jsonld"}
NAMED_GRAPHS = {"trig": True, "nquads": True, "turtle": False, "jsonld": True}

_ESCAPES = {i: f"\\u{i:04X}" for i in (*range(0x20), 0x7F)}
_ESCAPES.update({ord("\\"): "\\\\", ord('"'): '\\"', ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
                 ord("\b"): "\\b", ord("\f"): "\\f"})
_LOCAL = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_BLOCK = 1000  # JSON-LD: quads of one graph gathered before they are written
# datatypes whose lexical forms the model writes canonically, so Turtle may write them bare
_BARE = (XSD_INTEGER, XSD_BOOLEAN)


def literal(term: Literal) -> str:
    """Returns a literal in N-Triples syntax (also valid Turtle and TriG)."""
    text = '"' + term.value.translate(_ESCAPES) + '"'
    return text if term.datatype == XSD_STRING else f"{text}^^<{term.datatype}>"


def nt_term(term) -> str:
    """Returns an IRI or a literal in N-Triples syntax."""
    if type(term) is str:
        return f"<{term}>"
    if isinstance(term, Literal):
        return literal(term)
    raise TypeError(f"{term!r} is an RDF 1.2 triple term: write it with rdf12 (pyoxigraph)")


def _prefixed(iri: str) -> str:
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace) and _LOCAL.match(iri[len(namespace):]):
            return f"{prefix}:{iri[len(namespace):]}"
    return f"<{iri}>"


class _Shortener:
    """Prefixed names for predicates and vocabulary classes, memoised; data IRIs stay whole
    (the cache is bounded by the vocabulary, not by the output)."""

    def __init__(self):
        classes = [*LAYER_CLASSES.values(), *KIND_CLASSES.values(), PG + "GraphExport", PG + "Assertion", PG + "SupportSet",
                   PG + "Deletion", PG + "Invalidation", PROV + "Entity", PROV + "Collection", PROV + "Activity",
                   NP + "Nanopublication", VOID + "Dataset"]
        self.objects = {iri: _prefixed(iri) for iri in classes}
        self.predicates: dict[str, str] = {}

    def predicate(self, iri: str) -> str:
        short = self.predicates.get(iri)
        if short is None:
            short = self.predicates[iri] = "a" if iri == RDF_TYPE else _prefixed(iri)
        return short

    def object(self, term) -> str:
        if type(term) is str:
            return self.objects.get(term) or f"<{term}>"
        if isinstance(term, Literal) and term.datatype != XSD_STRING:
            if term.datatype in _BARE:  # Turtle's own forms: 7, true
                return term.value
            datatype = self.predicate(term.datatype)
            return '"' + term.value.translate(_ESCAPES) + '"^^' + datatype
        return nt_term(term)


#: the prefix of the export's minted IRIs (its base), declared where the format can: PROV tools
#: name every entity by a prefix and a local part, and know no other way to split an IRI
ID_PREFIX = "pgid"


def write_quads(quads: Iterable[Quad], out: BinaryIO, format: str, base: str | None = None) -> int:
    """Writes quads to a binary stream in ``format``; returns how many were written.  ``base``: the
    namespace of the minted IRIs, declared as the prefix ``pgid`` (TriG, Turtle, JSON-LD's context)."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="\n")
    try:
        writer = {"nquads": _nquads, "trig": _trig, "turtle": _turtle, "jsonld": _jsonld}[format]
        return writer(quads, text) if format == "nquads" else writer(quads, text, base)
    finally:
        text.flush()
        text.detach()


def _nquads(quads: Iterable[Quad], out) -> int:
    count = 0
    write = out.write
    for s, p, o, g in quads:
        obj = f"<{o}>" if type(o) is str else nt_term(o)
        write(f"<{s}> <{p}> {obj} <{g}> .\n" if g else f"<{s}> <{p}> {obj} .\n")
        count += 1
    return count


def prefixes(base: str | None) -> dict[str, str]:
    """The prefixes an export declares: the vocabularies', and ``pgid`` for its base."""
    return {**PREFIXES, ID_PREFIX: base} if base else dict(PREFIXES)


def _prefix_lines(out, base: str | None) -> None:
    for prefix, namespace in prefixes(base).items():
        out.write(f"@prefix {prefix}: <{namespace}> .\n")
    out.write("\n")


def _turtle_like(quads: Iterable[Quad], out, graphs: bool, base: str | None = None) -> int:
    """Writes Turtle (``graphs`` False) or TriG: consecutive quads of one graph in one block,
    consecutive triples of one subject joined with ``;``."""
    short = _Shortener()
    _prefix_lines(out, base)
    write = out.write
    count, graph, subject = 0, None, None
    for s, p, o, g in quads:
        if graphs and g != graph:
            if subject is not None:
                write(" .\n")
            if graph is not None:
                write("}\n")
            if g is not None:
                write(f"<{g}> {{\n")
            graph, subject = g, None
        if s == subject:
            write(f" ;\n    {short.predicate(p)} {short.object(o)}")
        else:
            if subject is not None:
                write(" .\n")
            write(f"<{s}> {short.predicate(p)} {short.object(o)}")
            subject = s
        count += 1
    if subject is not None:
        write(" .\n")
    if graphs and graph is not None:
        write("}\n")
    return count


def _trig(quads, out, base=None) -> int:
    return _turtle_like(quads, out, graphs=True, base=base)


def _turtle(quads, out, base=None) -> int:
    return _turtle_like(quads, out, graphs=False, base=base)


def _json_value(term) -> dict:
    if type(term) is str:
        return {"@id": term}
    if isinstance(term, Literal):
        return {"@value": term.value} if term.datatype == XSD_STRING else {"@value": term.value,
                                                                           "@type": term.datatype}
    raise TypeError(f"{term!r} is an RDF 1.2 triple term: JSON-LD cannot carry it")


def _jsonld(quads: Iterable[Quad], out, base: str | None = None) -> int:
    """Writes JSON-LD: a context declaring the base's prefix (``pgid``), then the graph objects, one
    per block of quads, in ``@graph``; every IRI in full (the context names no term)."""
    opening, closing = ((f'{{"@context": {json.dumps({ID_PREFIX: base})}, "@graph": [\n', "]}\n") if base
                        else ("[\n", "]\n"))
    count, first, block = 0, True, 0
    graph, nodes = None, {}

    def flush() -> None:
        nonlocal first, block
        block = 0
        if not nodes:
            return
        entries = list(nodes.values())
        objects = entries if graph is None else [{"@id": graph, "@graph": entries}]
        for item in objects:
            out.write((opening if first else ",\n") + json.dumps(item, ensure_ascii=False))
            first = False
        nodes.clear()

    for s, p, o, g in quads:
        if g != graph or block >= _BLOCK:
            flush()
            graph = g
        block += 1
        node = nodes.get(s)
        if node is None:
            node = nodes[s] = {"@id": s}
        if p == RDF_TYPE and type(o) is str:
            node.setdefault("@type", []).append(o)
        else:
            node.setdefault(p, []).append(_json_value(o))
        count += 1
    flush()
    out.write(opening + closing if first else "\n" + closing)
    return count
