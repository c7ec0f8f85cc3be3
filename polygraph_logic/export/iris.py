"""Minting IRIs for a graph's assertions, artifacts, entities and sources, reversibly.

Every value gets an IRI that can be turned back into exactly that value:

- CURIEs of OBO ontologies expand to OBO PURLs (``RO:0002211`` ->
  ``http://purl.obolibrary.org/obo/RO_0002211``), PubMed ids to PubMed pages
  (``PMID:39973430`` -> ``https://pubmed.ncbi.nlm.nih.gov/39973430/``), DOIs to doi.org;
  a value that already is a plain http(s) IRI stays itself;
- anything else (names with spaces, quotes, slashes, non-ASCII text, ids such as
  ``merge:mapk-erk``) is percent-encoded, one UTF-8 byte at a time, into one path
  segment under the export's base: ``{base}entity/MAPK%2FERK%20pathway``.

An expansion is used only when contracting it gives the value back; otherwise the
value is minted under the base, so ``value()`` inverts ``term()`` for every string.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from polygraph_logic.errors import PolygraphError

DEFAULT_BASE = "https://w3id.org/polygraph/id/"
OBO = "http://purl.obolibrary.org/obo/"
PUBMED = "https://pubmed.ncbi.nlm.nih.gov/"
DOI = "https://doi.org/"

# OBO Foundry ID spaces expanded to PURLs. An allow-list, not a pattern: PMID:1 or
# PomBase:SPAC1 look like OBO ids but have no OBO PURL.
OBO_PREFIXES = frozenset("""
    AGRO APO BFO BSPO BTO CARO CDNO CHEBI CHMO CIO CL CLO CMO COB CTO DDANAT DDPHENO DOID DRON DUO
    ECAO ECO ECTO EMAPA ENVO EUPATH FAO FBbt FBcv FBdv FIDEO FMA FOBI FOODON FYPO GAZ GENO GEO GO
    GSSO HANCESTRO HP HSAPDV IAO ICO IDO INO KISAO MA MAXO MCO MF MFOEM MFOMD MI MIAPA MICRO MMO
    MmusDv MOD MONDO MOP MP MPATH MRO MS NBO NCBITaxon NCIT NCRO NOMEN OAE OBA OBCS OBI OGG OGMS
    OHD OMIT OMO OMP OMRSE ONS OPL ORNASEQ OVAE PATO PCL PCO PDRO PECO PHIPO PLANA PLANP PO PPO PR
    PSDO PSO RBO RO RS RXNO SBO SEPIO SO SWO SYMP TADS TAXRANK TO TRANS TXPO UBERON UO UPHENO VO VT
    WBbt WBls WBPhenotype XAO XCO XLMOD XPO ZECO ZFA ZFS ZP
""".split())

# the kinds of value minted under the base, each in its own path segment
KINDS = ("entity", "relation", "source", "artifact", "assertion", "np", "agent", "activity")

_CURIE = re.compile(r"([A-Za-z][A-Za-z0-9]*):([A-Za-z0-9]+)\Z")
_OBO_IRI = re.compile(r"([A-Za-z][A-Za-z0-9]*)_([A-Za-z0-9]+)\Z")
_PMID = re.compile(r"PMID:([0-9]+)\Z")
_PUBMED_IRI = re.compile(r"([0-9]+)/\Z")
_DOI = re.compile(r"DOI:(10\.[0-9]+/\S+)\Z")
# A conservative absolute IRI: what N-Quads, Turtle and JSON-LD readers all accept as is.
_PCHAR = r"[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2}"
_HTTP_IRI = re.compile(rf"https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/(?:{_PCHAR})*)?"
                       rf"(?:\?(?:{_PCHAR}|\?)*)?(?:#(?:{_PCHAR}|\?)*)?\Z")


def encode_segment(value: str) -> str:
    """Returns ``value`` as one IRI path segment: every byte but ``A-Za-z0-9_.-~:`` as ``%XX``.

    A segment of dots alone is encoded too, so that no reader takes it for ``.`` or ``..``.
    """
    if value and not value.strip("."):
        return "%2E" * len(value)
    return quote(value, safe=":")


def decode_segment(segment: str) -> str:
    """Inverts encode_segment."""
    return unquote(segment, errors="strict")


def check_base(base: str) -> str:
    """Returns ``base`` if it is an absolute http(s) IRI ending in ``/``; raises PolygraphError."""
    if not (_HTTP_IRI.match(base) and base.endswith("/") and "#" not in base and "?" not in base):
        raise PolygraphError("bad_argument", f"--base must be an absolute http(s) IRI ending in '/' "
                                             f"without '?' or '#', e.g. {DEFAULT_BASE}; got {base!r}")
    return base


class Minter:
    """IRIs of one export, under one base; ``value()`` inverts ``term()``."""

    def __init__(self, base: str = DEFAULT_BASE):
        self.base = check_base(base)

    def minted(self, kind: str, value: str) -> str:
        """Returns ``{base}{kind}/{value percent-encoded}``."""
        return f"{self.base}{kind}/{encode_segment(value)}"

    def artifact(self, artifact_id: str) -> str:
        """The artifact, which is also the name of the graph that holds its statement."""
        return self.minted("artifact", artifact_id)

    def nanopub(self, artifact_id: str) -> str:
        """The nanopublication of an artifact; its head, provenance, pubinfo graphs are fragments."""
        return self.minted("np", artifact_id)

    def support_set(self, artifact_id: str, index: int) -> str:
        return f"{self.artifact(artifact_id)}/support/{index}"

    def assertion(self, assertion_id: str) -> str:
        return self.minted("assertion", assertion_id)

    def graph(self, name: str) -> str:
        """A graph of the whole export: ``meta``, ``terms``, ``assertions``, ``deletion``, ``facts``."""
        return f"{self.base}{name}"

    def term(self, value: str, kind: str = "entity") -> str:
        """Returns the IRI of an entity, relation or source; see the module docstring."""
        for candidate in _expansions(value):
            if self.value(candidate) == value:
                return candidate
        return self.minted(kind, value)

    def value(self, iri: str) -> str:
        """Returns the value an IRI of ``term()`` or ``minted()`` stands for."""
        if iri.startswith(self.base):
            kind, _, rest = iri[len(self.base):].partition("/")
            if kind in KINDS and "/" not in rest:
                return decode_segment(rest)
        return contract(iri)


def _expansions(value: str) -> list[str]:
    match = _CURIE.match(value)
    if match and match.group(1) in OBO_PREFIXES:
        return [f"{OBO}{match.group(1)}_{match.group(2)}"]
    match = _PMID.match(value)
    if match:
        return [f"{PUBMED}{match.group(1)}/"]
    match = _DOI.match(value)
    if match:
        return [DOI + quote(match.group(1), safe="/:;()._-")]
    if _HTTP_IRI.match(value):
        return [value]
    return []


def contract(iri: str) -> str:
    """Returns the CURIE of an OBO, PubMed or doi.org IRI, or the IRI itself."""
    if iri.startswith(OBO):
        match = _OBO_IRI.match(iri[len(OBO):])
        if match and match.group(1) in OBO_PREFIXES:
            return f"{match.group(1)}:{match.group(2)}"
    elif iri.startswith(PUBMED):
        match = _PUBMED_IRI.match(iri[len(PUBMED):])
        if match:
            return f"PMID:{match.group(1)}"
    elif iri.startswith(DOI):
        return "DOI:" + unquote(iri[len(DOI):])
    return iri


def expand_curie(curie: str) -> str:
    """Returns the OBO PURL of an OBO CURIE (``RO:0002211``), or raises ValueError."""
    match = _CURIE.match(curie)
    if not match or match.group(1) not in OBO_PREFIXES:
        raise ValueError(f"{curie!r} is not a CURIE of a known OBO ontology")
    return f"{OBO}{match.group(1)}_{match.group(2)}"
