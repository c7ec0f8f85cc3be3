"""An in-memory index of a built graph for interactive what-if questions.

Labels become tuples of integer bitsets over assertion numbers, and each assertion
points at the facts whose labels mention it, so a deletion costs time in proportion
to what it touches, never to the size of the graph.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .build import artifact_fact
from .store import Graph

FactKey = tuple[str, tuple]


@dataclass(frozen=True)
class IndexedArtifact:
    """What the index keeps of an artifact: id, layer, its fact, and for a sentence its summary."""

    id: str
    layer: str
    fact: FactKey
    summary: str | None = None


class GraphIndex:
    """Labels of every fact as bitsets, and assertion -> facts and fact -> artifact maps."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.assertion_ids: list[str] = list(graph.assertions)
        self.bit = {a: i for i, a in enumerate(self.assertion_ids)}
        self.labels: dict[FactKey, tuple[int, ...]] = {}
        self.exact: dict[FactKey, bool] = {}
        self.mentions: dict[int, list[FactKey]] = defaultdict(list)
        for fact in graph.facts():
            key = (fact.relation, fact.args)
            masks = []
            for group in fact.support:
                mask = 0
                for assertion in group:
                    mask |= 1 << self.bit[assertion]
                masks.append(mask)
            self.labels[key] = tuple(masks)
            self.exact[key] = fact.exact
            union = 0
            for mask in masks:
                union |= mask
            while union:
                low = union & -union
                self.mentions[low.bit_length() - 1].append(key)
                union ^= low
        self.artifacts: dict[str, IndexedArtifact] = {}
        self.by_fact: dict[FactKey, IndexedArtifact] = {}
        self.sentences: dict[str, list[str]] = defaultdict(list)
        for artifact in graph.artifacts():
            summary = artifact.content.get("summary") if artifact.layer == "sentence" else None
            entry = IndexedArtifact(artifact.id, artifact.layer, artifact_fact(artifact), summary)
            self.artifacts[artifact.id] = entry
            self.by_fact[entry.fact] = entry
            if summary is not None:
                self.sentences[summary].append(artifact.id)
        self.sources: dict[str, list[str]] = defaultdict(list)
        self.predicates: dict[str, list[str]] = defaultdict(list)
        for assertion in graph.assertions.values():
            self.sources[assertion.source].append(assertion.id)
            self.predicates[assertion.predicate].append(assertion.id)

    def mask(self, assertion_ids) -> int:
        """Returns the bitset of assertion ids (every id must exist)."""
        mask = 0
        for assertion in assertion_ids:
            mask |= 1 << self.bit[assertion]
        return mask

    def touched_facts(self, deleted_mask: int) -> set[FactKey]:
        """Returns the facts whose labels mention a deleted assertion."""
        touched: set[FactKey] = set()
        mask = deleted_mask
        while mask:
            low = mask & -mask
            touched.update(self.mentions.get(low.bit_length() - 1, ()))
            mask ^= low
        return touched

    def survives(self, fact: FactKey, deleted_mask: int) -> bool:
        """Returns True when some support set of the fact avoids every deleted assertion."""
        return any(not m & deleted_mask for m in self.labels[fact])

    def names(self, mask: int) -> list[str]:
        """Returns the assertion ids of a bitset."""
        out = []
        while mask:
            low = mask & -mask
            out.append(self.assertion_ids[low.bit_length() - 1])
            mask ^= low
        return out
