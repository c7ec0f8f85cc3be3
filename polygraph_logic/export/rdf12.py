"""RDF 1.2 output: statements as triple terms (``rdf:reifies <<( s p o )>>``), via pyoxigraph.

rdflib neither writes nor reads triple terms, so these exports are written by
pyoxigraph (and read back by it, as the importer does). N-Quads and TriG keep the
named graphs; Turtle drops them (see rdf_writers.py); JSON-LD has no triple terms at all.
"""

from __future__ import annotations

from typing import BinaryIO, Iterable, Iterator

import pyoxigraph as ox

from polygraph_logic.errors import PolygraphError
from polygraph_logic.export.model import Literal, Quad, TripleTerm
from polygraph_logic.export.rdf_writers import prefixes as export_prefixes

FORMATS = {"nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG, "turtle": ox.RdfFormat.TURTLE}


class _Terms:
    """Converts model terms to pyoxigraph terms; predicates and datatypes are memoised
    (bounded by the vocabulary), other IRIs are made afresh."""

    def __init__(self):
        self.cache: dict[str, ox.NamedNode] = {}

    def named(self, iri: str) -> ox.NamedNode:
        node = self.cache.get(iri)
        if node is None:
            node = self.cache[iri] = ox.NamedNode(iri)
        return node

    def term(self, term):
        if type(term) is str:
            return ox.NamedNode(term)
        if isinstance(term, Literal):
            return ox.Literal(term.value, datatype=self.named(term.datatype))
        if isinstance(term, TripleTerm):
            return ox.Triple(ox.NamedNode(term.subject), self.named(term.predicate), self.term(term.object))
        raise TypeError(f"not an RDF term: {term!r}")


def oxigraph_quads(quads: Iterable[Quad], graphs: bool = True) -> Iterator[ox.Quad | ox.Triple]:
    """Yields pyoxigraph quads (or triples, without ``graphs``) for model quads."""
    terms = _Terms()
    for s, p, o, g in quads:
        subject, predicate, object_ = ox.NamedNode(s), terms.named(p), terms.term(o)
        if graphs:
            yield ox.Quad(subject, predicate, object_, ox.NamedNode(g) if g else ox.DefaultGraph())
        else:
            yield ox.Triple(subject, predicate, object_)


def write_rdf12(quads: Iterable[Quad], out: BinaryIO, format: str, base: str | None = None) -> int:
    """Writes quads with triple terms in ``format`` (nquads, trig, turtle); returns how many."""
    if format not in FORMATS:
        raise PolygraphError("bad_argument", f"RDF 1.2 triple terms can be written as {', '.join(FORMATS)}; "
                                             f"{format} cannot carry them")
    count = 0

    def counted():
        nonlocal count
        for quad in quads:
            count += 1
            yield quad

    prefixes = export_prefixes(base) if format != "nquads" else None
    ox.serialize(oxigraph_quads(counted(), graphs=format != "turtle"), out, FORMATS[format], prefixes=prefixes)
    return count
