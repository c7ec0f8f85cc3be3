"""A built graph as RDF quads: one nanopublication per artifact, PROV-O for its support.

Quads come out one artifact at a time, so a writer can stream them to a file. The
layout, in the order written (``m`` is the export's Minter; every graph is named):

- ``{base}meta``: the export itself (``pg:GraphExport``): the graph file's metadata, its
  rules as text, counts, and ``void:uriSpace`` (the base, needed to read ids back).
- ``{base}terms``: each source with ``dcterms:identifier`` (its CURIE or URL as written),
  each entity minted under the base with its name as ``rdfs:label``.
- ``{base}assertions``: each assertion (``pg:Assertion``): ``pg:assertionId``,
  ``prov:hadPrimarySource``, its triple (``rdf:subject/predicate/object``, or with RDF 1.2
  ``rdf:reifies <<( s p o )>>``), the evidence ``pg:text``, its evidence metadata, and its agent
  (``prov:wasAttributedTo``) and acquisition (``prov:wasGeneratedBy`` an activity): prov_agents.py.
- ``{base}facts``: every fact of the evaluated program that is not an artifact, as JSON,
  so that an import can re-derive (``--exact``) as the original graph could.
- ``{base}deletion`` (after a what-if): the deletion as a ``prov:Activity`` that
  ``prov:invalidated`` the dead artifacts; each artifact's ``pg:status`` follows it.
- per artifact, last (a file cut short loses artifacts, which an import counts), a
  nanopublication ``m.nanopub(id)`` with graphs ``#head`` (the nanopublication's parts),
  the assertion graph ``m.artifact(id)`` (the artifact's statement: the triple of a claim
  or edge, ``owl:sameAs`` for a merge, the text of a summary or sentence), ``#provenance``
  (``prov:Entity`` and its layer class, ``pg:artifactId``, ``pg:polynomial``, ``pg:exact``,
  ``pg:content``, ``prov:wasDerivedFrom`` every assertion of its label, one ``pg:supportSet``
  per support set: a ``prov:Collection`` of its assertions, ``prov:hadMember``) and ``#pubinfo``.

PROV tools read types as stated (no inference) and name each resource by a prefix and a local
part: assertions and artifacts are typed ``prov:Entity`` themselves, and the writers declare the
base as the prefix ``pgid`` (TriG, Turtle, JSON-LD's context); N-Quads declares none, so there
each graph types the entities its PROV relations name (``declare``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import PurePath
from typing import Callable, Iterator, NamedTuple

from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import Artifact
from polygraph_logic.export.iris import Minter
from polygraph_logic.export.once import Once
from polygraph_logic.export.prov_agents import AgentQuads
from polygraph_logic.export.namespaces import (
    DCTERMS,
    FORMAT,
    KIND_CLASSES,
    LAYER_CLASSES,
    NP,
    OWL,
    PG,
    PROV,
    RDF,
    RDF_JSON,
    RDF_TYPE,
    RDFS,
    VOID,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_INTEGER,
    XSD_STRING,
)


class Literal(NamedTuple):
    """An RDF literal: its lexical form and datatype IRI."""

    value: str
    datatype: str = XSD_STRING


class TripleTerm(NamedTuple):
    """An RDF 1.2 triple term ``<<( s p o )>>``."""

    subject: str
    predicate: str
    object: "str | Literal"


# (subject IRI, predicate IRI, object: IRI str | Literal | TripleTerm, graph IRI)
Quad = tuple

#: the IRIs of entities, relations and sources an export keeps at a time
TERMS_HELD = 1 << 16

TRUE, FALSE = Literal("true", XSD_BOOLEAN), Literal("false", XSD_BOOLEAN)


def integer(n: int) -> Literal:
    return Literal(str(n), XSD_INTEGER)


def json_literal(value) -> Literal:
    return Literal(json.dumps(value, ensure_ascii=False), RDF_JSON)


class Status(NamedTuple):
    """What a what-if decided, for an after-deletion export."""

    deletion: object  # whatif.Deletion
    policy: str
    exact: bool
    deleted: frozenset[str]
    dead: frozenset[str]
    required: tuple[str, ...] = ()  # --require: the kinds asked of a support set
    unqualified: frozenset[str] = frozenset()  # standing artifacts with no support set of those kinds


class ExportModel:
    """Turns a Graph (and optionally a what-if Status) into quads; see the module docstring."""

    def __init__(self, graph: Graph, minter: Minter | None = None, status: Status | None = None,
                 facts: bool = True, rdf12: bool = False, declare: bool = False):
        """``declare``: every graph types (``prov:Entity``) the entities its PROV relations name, for a
        format that declares no prefix (N-Quads): a PROV reader resolves a name by a namespace it
        has met, and meets one for each typed subject of the graph it reads."""
        self.graph, self.m = graph, minter or Minter()
        self.status, self.with_facts, self.rdf12, self.declare = status, facts, rdf12, declare
        self.meta, self.terms_graph = self.m.graph("meta"), self.m.graph("terms")
        self.deletion = self.m.graph("deletion")
        # the IRIs of entities, relations and sources, the latest TERMS_HELD kept (entities repeat)
        self.term = lru_cache(maxsize=TERMS_HELD)(self.m.term)
        self._labelled = Once()  # minted entities whose rdfs:label was written
        self._entity_space = f"{self.m.base}entity/"
        self.counts = self.graph.counts()

    def quads(self, progress: Callable[[], None] | None = None) -> Iterator[Quad]:
        """Yields every quad of the export, artifact by artifact; ``progress()`` after each artifact."""
        yield from self._head()
        yield from self._assertions()
        if self.with_facts:
            yield from self._facts()
        if self.status is not None:
            yield from self._deletion()
        for ordinal, artifact in enumerate(self.graph.artifacts(), 1):
            yield from self._artifact(artifact, ordinal)
            if progress is not None:
                progress()

    def _head(self) -> Iterator[Quad]:
        g, node = self.meta, self.m.graph("graph")
        meta = _shareable({k: v for k, v in self.graph.meta.items() if k not in ("format", "rules")})
        yield node, RDF_TYPE, PG + "GraphExport", g
        yield node, RDF_TYPE, VOID + "Dataset", g
        yield node, PG + "format", Literal(FORMAT), g
        yield node, VOID + "uriSpace", Literal(self.m.base), g
        yield node, PG + "graphMeta", json_literal(meta), g
        yield node, PG + "rulesText", Literal(self.graph.rules_text()), g
        yield node, PG + "assertionCount", integer(len(self.graph.assertions)), g
        yield node, PG + "artifactCount", integer(sum(self.counts.values())), g
        yield node, PG + "factsIncluded", TRUE if self.with_facts else FALSE, g
        chained = self.graph.history_digest()
        if chained is not None:  # the version exported and its hash-chain digest (graph/store/chain.py)
            yield node, PG + "version", integer(chained[0]), g
            yield node, PG + "historyDigest", Literal(chained[1]), g

    def _entity_labels(self, values, graph: str) -> Iterator[Quad]:
        for value in values:
            iri = self.term(value)
            if iri.startswith(self._entity_space) and self._labelled.first(iri):
                yield iri, RDFS + "label", Literal(value), graph

    def _assertions(self) -> Iterator[Quad]:
        g = self.terms_graph
        described = Once()
        for source in (a.source for a in self.graph.assertions.values()):
            if not described.first(source):
                continue
            iri = self.term(source, "source")
            yield iri, RDF_TYPE, PROV + "Entity", g
            yield iri, DCTERMS + "identifier", Literal(source), g
        yield from self._entity_labels((v for a in self.graph.assertions.values() for v in (a.subject, a.object)), g)
        g = self.m.graph("assertions")
        declared = Once()  # the sources (and errata) typed in this graph too (declare)

        def input_iri(value: str) -> tuple[str, bool]:  # an acquisition's input: typed once, as a source is
            iri, new = self.term(value, "source"), described.first(value)
            return iri, (declared.first(iri) if self.declare else new)

        agents = AgentQuads(Literal, self.m.minted, self.m.assertion, self.graph.assertions.__contains__, input_iri)
        for ordinal, a in enumerate(self.graph.assertions.values(), 1):
            node = self.m.assertion(a.id)
            yield node, RDF_TYPE, PROV + "Entity", g  # PROV tools read types as stated: no inference
            yield node, RDF_TYPE, PG + "Assertion", g
            yield node, RDF_TYPE, KIND_CLASSES[a.kind], g
            yield node, PG + "assertionId", Literal(a.id), g
            yield node, PG + "ordinal", integer(ordinal), g
            yield node, PROV + "hadPrimarySource", self.term(a.source, "source"), g
            yield from self._declared([self.term(a.source, "source")], g, declared)
            s, p, o = self.term(a.subject), self.term(a.predicate, "relation"), self.term(a.object)
            if self.rdf12:
                yield node, RDF + "reifies", TripleTerm(s, p, o), g
            else:
                yield node, RDF + "subject", s, g
                yield node, RDF + "predicate", p, g
                yield node, RDF + "object", o, g
            if a.text is not None:
                yield node, PG + "text", Literal(a.text), g
            if a.negated:
                yield node, PG + "negated", TRUE, g
            if a.evidence is not None:
                yield from self._evidence(node, a.evidence, g, declared)
                yield from agents.quads(node, a.evidence.agent, a.evidence.acquisition, g)

    def _declared(self, iris, graph: str, once: Once | None = None) -> Iterator[Quad]:
        """``iri a prov:Entity`` in ``graph`` for each of ``iris`` (once each per ``once``), when declaring."""
        if self.declare:
            for iri in iris:
                if once is None or once.first(iri):
                    yield iri, RDF_TYPE, PROV + "Entity", graph

    def _evidence(self, node: str, evidence, g: str, declared: Once) -> Iterator[Quad]:
        """An assertion's evidence metadata: as its record states it (``pg:evidence``, which an
        import reads back) and in PROV-O's terms and the vocabulary's."""
        yield node, PG + "evidence", json_literal(evidence.to_json()), g
        stated = evidence.to_json()
        for field, predicate in (("time", PROV + "generatedAtTime"), ("invalidated_at", PROV + "invalidatedAtTime"),
                                 ("expires", PG + "expires")):
            if field in stated:
                yield node, predicate, Literal(stated[field], XSD_DATETIME), g
        if evidence.invalidated_by is not None:
            # PROV-O: an entity is invalidated by an activity; here the activity that used the erratum
            # (an assertion of the graph, or a source), never the erratum itself (entities and
            # activities are disjoint)
            by = evidence.invalidated_by
            activity = f"{node}/invalidation"
            yield activity, RDF_TYPE, PROV + "Activity", g
            yield activity, RDF_TYPE, PG + "Invalidation", g
            erratum = self.m.assertion(by) if by in self.graph.assertions else self.term(by, "source")
            yield activity, PROV + "used", erratum, g
            if by not in self.graph.assertions:  # an assertion is typed in this graph already
                yield from self._declared([erratum], g, declared)
            yield node, PROV + "wasInvalidatedBy", activity, g
        if evidence.status != "active":
            yield node, PG + "evidenceStatus", Literal(evidence.status), g
        for scope in evidence.scope:
            yield node, PG + "scope", Literal(scope), g
        for named in evidence.verifies:
            yield node, PG + "verifies", self.m.assertion(named), g

    def _deletion(self) -> Iterator[Quad]:
        status, g = self.status, self.deletion
        node = g
        yield node, RDF_TYPE, PROV + "Activity", g
        yield node, RDF_TYPE, PG + "Deletion", g
        yield node, RDFS + "label", Literal(str(status.deletion)), g
        yield node, PG + "policy", Literal(status.policy), g
        yield node, PG + "exactVerdicts", TRUE if status.exact else FALSE, g
        for source in status.deletion.sources:
            yield node, PG + "retractsSource", self.term(source, "source"), g
        for relation in status.deletion.relations:
            yield node, PG + "revokesRelation", self.term(relation, "relation"), g
        for assertion in status.deletion.assertions:
            yield node, PG + "deletesAssertion", self.m.assertion(assertion), g
        for assertion in self.graph.assertions:
            if assertion in status.deleted:
                yield node, PG + "deletedAssertion", self.m.assertion(assertion), g
        if status.required:
            yield node, PG + "requiredKinds", Literal(",".join(status.required)), g

    def _artifact(self, artifact: Artifact, ordinal: int) -> Iterator[Quad]:
        m, id_ = self.m, artifact.id
        np_, a = m.nanopub(id_), m.artifact(id_)
        head, prov, info = f"{np_}#head", f"{np_}#provenance", f"{np_}#pubinfo"
        yield np_, RDF_TYPE, NP + "Nanopublication", head
        yield np_, NP + "hasAssertion", a, head
        yield np_, NP + "hasProvenance", prov, head
        yield np_, NP + "hasPublicationInfo", info, head

        triple = yield from self._statement(artifact, a)

        yield a, RDF_TYPE, PROV + "Entity", prov
        yield a, RDF_TYPE, LAYER_CLASSES[artifact.layer], prov
        yield a, PG + "artifactId", Literal(id_), prov
        yield a, PG + "ordinal", integer(ordinal), prov
        yield a, PG + "content", json_literal(artifact.content), prov
        yield a, PG + "polynomial", Literal(self.graph.semiring.text(artifact.support)), prov
        yield a, PG + "exact", TRUE if artifact.exact else FALSE, prov
        if triple is not None and self.rdf12:
            yield a, RDF + "reifies", TripleTerm(*triple), prov
        cited = [m.assertion(assertion) for assertion in dict.fromkeys(x for group in artifact.support for x in group)]
        for assertion in cited:
            yield a, PROV + "wasDerivedFrom", assertion, prov
        yield from self._declared(cited, prov)
        # each support set a collection of its assertions (prov:Collection, prov:hadMember), from
        # which the artifact was derived: one monomial of its polynomial, sufficient on its own
        sets = [m.support_set(id_, i) for i in range(1, len(artifact.support) + 1)]
        for node in sets:
            yield a, PG + "supportSet", node, prov
        for i, (node, group) in enumerate(zip(sets, artifact.support), 1):
            yield node, RDF_TYPE, PROV + "Collection", prov
            yield node, RDF_TYPE, PG + "SupportSet", prov
            yield node, PG + "index", integer(i), prov
            for assertion in group:
                yield node, PROV + "hadMember", m.assertion(assertion), prov

        yield np_, DCTERMS + "isPartOf", m.graph("graph"), info
        built = self.graph.meta.get("built")
        if built:
            yield np_, DCTERMS + "created", Literal(built, XSD_DATETIME), info

        if self.status is not None:
            dead = id_ in self.status.dead
            yield a, PG + "status", Literal("dead" if dead else "alive"), self.deletion
            if dead:
                yield self.deletion, PROV + "invalidated", a, self.deletion
                yield from self._declared([a], self.deletion)
            if self.status.required:
                meets = not dead and id_ not in self.status.unqualified
                yield a, PG + "meetsRequirement", TRUE if meets else FALSE, self.deletion

    def _statement(self, artifact: Artifact, a: str):
        """Yields the artifact's assertion graph (then new entity labels); returns its triple, if any."""
        content, layer = artifact.content, artifact.layer
        names: list[str] = []
        triple = None
        if layer in ("claim", "edge"):
            names = [content["subject"], content["object"]]
            triple = (self.term(names[0]), self.term(content["predicate"], "relation"), self.term(names[1]))
            yield (*triple, a)
        elif layer == "merge" and isinstance(content.get("canonical"), str):
            canonical = content["canonical"]
            members = [x for x in content.get("members", ()) if isinstance(x, str) and x != canonical]
            names = [canonical, *members]
            for member in members:
                yield self.term(member), OWL + "sameAs", self.term(canonical), a
        else:
            text = content.get("text")
            if isinstance(text, str):
                yield a, PG + "text", Literal(text), a
            summary = content.get("summary") if layer == "sentence" else None
            if isinstance(summary, str):
                yield a, DCTERMS + "isPartOf", self.m.artifact(summary), a
            if not isinstance(text, str) and not isinstance(summary, str):
                # an assertion graph is never empty; not the provenance graph's type triple, which
                # a reader of the graphs as one (Turtle) would count once
                yield a, RDFS + "label", Literal(artifact.id), a
        yield from self._entity_labels(names, self.terms_graph)
        return triple

    def _facts(self) -> Iterator[Quad]:
        """The facts no artifact carries (an import rebuilds the others from their artifacts)."""
        node, g = self.m.graph("graph"), self.m.graph("facts")
        for fact in self.graph.facts(carried=False):
            yield node, PG + "fact", json_literal(
                [fact.relation, list(fact.args), [list(s) for s in fact.support], fact.exact]), g


def _shareable(meta: dict) -> dict:
    """The graph's metadata as an export shares it: rule files by name, never a path of the
    machine that built the graph."""
    if "rule_files" in meta:
        try:
            files = json.loads(meta["rule_files"])
        except (TypeError, ValueError):
            files = []
        meta["rule_files"] = json.dumps([PurePath(str(f)).name for f in files if isinstance(f, str)])
    return meta
