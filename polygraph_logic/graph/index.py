"""An in-memory index of a built graph for interactive what-if questions.

Labels become tuples of integer bitsets over assertion numbers, and each assertion
points at the facts whose labels mention it, so a deletion costs time in proportion
to what it touches, never to the size of the graph.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .build import artifact_fact
from .store import LAYERS, Graph

FactKey = tuple[str, tuple]


@dataclass(frozen=True)
class IndexedArtifact:
    """What the index keeps of an artifact: id, layer, its fact, and for a sentence its summary.

    ``rank`` orders artifacts by layer, then id; what-if works on ranks, not names.
    """

    id: str
    layer: str
    fact: FactKey
    rank: int
    summary: str | None = None


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class GraphIndex:
    """Labels as bitsets, with assertion -> artifacts and assertion -> facts maps.

    The what-if hot path works on integers only: artifact ranks, their labels in
    ``artifact_labels`` (sets of assertion numbers) and, per assertion number, the ranks
    whose labels mention it.
    Keyed maps (``labels``, ``exact``, ``by_fact``) serve re-derivation and explanations.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.assertion_ids: list[str] = list(graph.assertions)
        self.bit = {a: i for i, a in enumerate(self.assertion_ids)}
        self.labels: dict[FactKey, tuple[int, ...]] = {}
        self.exact: dict[FactKey, bool] = {}
        self.fact_mentions: dict[int, list[FactKey]] = defaultdict(list)
        for fact in graph.facts():
            key = (fact.relation, fact.args)
            masks = tuple(self.mask(group) for group in fact.support)
            self.labels[key] = masks
            self.exact[key] = fact.exact
            union = 0
            for mask in masks:
                union |= mask
            for bit in _bits(union):
                self.fact_mentions[bit].append(key)
        stored = sorted(graph.artifacts(), key=lambda a: (LAYERS.index(a.layer), a.id))
        self.ranked: list[IndexedArtifact] = []
        self.artifacts: dict[str, IndexedArtifact] = {}
        self.by_fact: dict[FactKey, IndexedArtifact] = {}
        self.sentences: dict[str, list[str]] = defaultdict(list)
        self.artifact_labels: list[tuple[frozenset[int], ...]] = []
        self.layer_of: list[str] = []
        self.mentions: dict[int, list[int]] = defaultdict(list)
        for rank, artifact in enumerate(stored):
            summary = artifact.content.get("summary") if artifact.layer == "sentence" else None
            entry = IndexedArtifact(artifact.id, artifact.layer, artifact_fact(artifact), rank, summary)
            self.ranked.append(entry)
            self.artifacts[artifact.id] = entry
            self.by_fact[entry.fact] = entry
            if summary is not None:
                self.sentences[summary].append(artifact.id)
            # sparse sets of assertion numbers: the cost of a check must not grow with the graph
            groups = tuple(frozenset(self.bit[a] for a in group) for group in artifact.support)
            self.artifact_labels.append(groups)
            self.layer_of.append(artifact.layer)
            for bit in frozenset().union(*groups):
                self.mentions[bit].append(rank)
        self.ids: list[str] = [entry.id for entry in self.ranked]
        # artifacts with several support sets: numbered support sets, so that "every set is
        # hit" is one C-level superset test against the sets a deletion hits
        self.monomials: list[frozenset[int]] = [frozenset()] * len(self.ranked)
        self.monomial_mentions: dict[int, list[int]] = defaultdict(list)
        count = 0
        for rank, groups in enumerate(self.artifact_labels):
            if len(groups) > 1:
                # a frozenset: set.issuperset copies any other argument into a new set first
                self.monomials[rank] = frozenset(range(count, count + len(groups)))
                for group in groups:
                    for bit in group:
                        self.monomial_mentions[bit].append(count)
                    count += 1
        # artifacts with one support set die as soon as they are touched: a set operation
        self.single: frozenset[int] = frozenset(r for r, masks in enumerate(self.artifact_labels) if len(masks) == 1)
        self.sentence_ranks: dict[str, tuple[int, list[int]]] = {
            summary: (self.artifacts[summary].rank, [self.artifacts[s].rank for s in sentences])
            for summary, sentences in self.sentences.items()
        }
        # the ranks of sentence-level summaries and of their sentences, back to the summary
        self.summary_of: dict[int, str] = {}
        for summary, (rank, sentences) in self.sentence_ranks.items():
            for part in (rank, *sentences):
                self.summary_of[part] = summary
        self.summary_parts: frozenset[int] = frozenset(self.summary_of)
        self.sources: dict[str, list[str]] = defaultdict(list)
        self.predicates: dict[str, list[str]] = defaultdict(list)
        self.stating: dict[tuple, list[str]] = defaultdict(list)  # claim triple -> the assertions stating it
        for assertion in graph.assertions.values():
            self.sources[assertion.source].append(assertion.id)
            self.predicates[assertion.predicate].append(assertion.id)
            self.stating[assertion.triple].append(assertion.id)
        # what a whole source or relation touches, precomputed: a batch retraction is then a
        # union of a few sets instead of one update per assertion
        self.reach: dict[tuple[str, str], tuple[frozenset[int], frozenset[int]]] = {}
        for kind, groups in (("source", self.sources), ("relation", self.predicates)):
            for name, ids in groups.items():
                numbers = self.numbers(ids)
                self.reach[kind, name] = (
                    frozenset().union(*(self.mentions.get(n, ()) for n in numbers)),
                    frozenset().union(*(self.monomial_mentions.get(n, ()) for n in numbers)))

    def mask(self, assertion_ids) -> int:
        """Returns the bitset of assertion ids (every id must exist)."""
        mask = 0
        for assertion in assertion_ids:
            mask |= 1 << self.bit[assertion]
        return mask

    def numbers(self, assertion_ids) -> frozenset[int]:
        """Returns the assertion numbers (bit positions) of assertion ids."""
        bit = self.bit
        return frozenset(bit[a] for a in assertion_ids)

    def touched(self, deleted: frozenset[int]) -> set[int]:
        """Returns the ranks of the artifacts whose labels mention a deleted assertion number."""
        ranks: set[int] = set()
        mentions = self.mentions
        for bit in deleted:
            ranks.update(mentions.get(bit, ()))
        return ranks

    def touched_facts(self, deleted_mask: int) -> set[FactKey]:
        """Returns every fact (artifact or not) whose label mentions a deleted assertion."""
        touched: set[FactKey] = set()
        for bit in _bits(deleted_mask):
            touched.update(self.fact_mentions.get(bit, ()))
        return touched

    def survives(self, fact: FactKey, deleted_mask: int) -> bool:
        """Returns True when some support set of the fact avoids every deleted assertion."""
        return any(not m & deleted_mask for m in self.labels[fact])

    def names(self, mask: int) -> list[str]:
        """Returns the assertion ids of a bitset."""
        return [self.assertion_ids[bit] for bit in _bits(mask)]
