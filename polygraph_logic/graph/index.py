"""A whole-graph view in memory, for batch work that reads every artifact anyway.

Retrieval evaluation (a BM25 index over every artifact) and the audit (every touched
model-authored artifact of many deletions) scan the whole graph; this view loads
artifact labels once for them.  Interactive questions (what-if, why, whynot,
robustness, export) never use it: they query the graph file in place (whatif.py).
Fact labels beyond the artifacts are loaded only when ``labels`` is first read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

from polygraph_logic.graph.store.graph_file import Graph

from polygraph_logic.graph.store.rows import layer_order

FactKey = tuple[str, tuple]


@dataclass(frozen=True)
class IndexedArtifact:
    """What the view keeps of an artifact: id, layer, its fact, and for a sentence its summary.

    ``rank`` orders artifacts by layer, then id.
    """

    id: str
    layer: str
    fact: FactKey
    rank: int
    summary: str | None = None


class GraphIndex:
    """Every artifact with its label as sets of assertion numbers, and the assertion -> artifacts map."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.assertion_ids: list[str] = []
        self.sources: dict[str, list[str]] = defaultdict(list)
        self.predicates: dict[str, list[str]] = defaultdict(list)
        for a in graph.assertions.values():
            self.assertion_ids.append(a.id)
            self.sources[a.source].append(a.id)
            self.predicates[a.predicate].append(a.id)
        self.bit = {a: i for i, a in enumerate(self.assertion_ids)}
        stored = sorted(graph.artifacts(), key=lambda a: (layer_order(a.layer), a.id))
        self.ranked: list[IndexedArtifact] = []
        self.artifacts: dict[str, IndexedArtifact] = {}
        self.by_fact: dict[FactKey, IndexedArtifact] = {}
        self.exact: dict[FactKey, bool] = {}
        self.sentences: dict[str, list[str]] = defaultdict(list)
        self.artifact_labels: list[tuple[frozenset[int], ...]] = []
        self.mentions: dict[int, list[int]] = defaultdict(list)
        for rank, artifact in enumerate(stored):
            summary = artifact.content.get("summary") if artifact.layer == "sentence" else None
            entry = IndexedArtifact(artifact.id, artifact.layer, artifact.fact, rank, summary)
            self.ranked.append(entry)
            self.artifacts[artifact.id] = entry
            self.by_fact[entry.fact] = entry
            self.exact[entry.fact] = artifact.exact
            if summary is not None:
                self.sentences[summary].append(artifact.id)
            groups = tuple(frozenset(self.bit[a] for a in group) for group in artifact.support)
            self.artifact_labels.append(groups)
            for bit in frozenset().union(*groups):
                self.mentions[bit].append(rank)
        self.ids: list[str] = [entry.id for entry in self.ranked]

    @cached_property
    def labels(self) -> dict[FactKey, tuple[frozenset[int], ...]]:
        """Every fact of the program (artifact or not) with its support sets as assertion numbers."""
        bit = self.bit
        return {(f.relation, f.args): tuple(frozenset(bit[a] for a in group) for group in f.support)
                for f in self.graph.facts()}

    def numbers(self, assertion_ids) -> frozenset[int]:
        """Returns the assertion numbers of assertion ids."""
        bit = self.bit
        return frozenset(bit[a] for a in assertion_ids)

    def touched(self, deleted: frozenset[int]) -> set[int]:
        """Returns the ranks of the artifacts whose labels mention a deleted assertion number."""
        ranks: set[int] = set()
        for number in deleted:
            ranks.update(self.mentions.get(number, ()))
        return ranks
