"""Search over what stands: BM25 over a graph's artifacts, restricted to those a question keeps.

An agent that keeps a graph as its memory asks it in words; what it may be told is only what
stands.  ``StandingSearch`` ranks the artifacts with the retrieval evaluation's index
(consequences.Retriever: one BM25 index over every artifact, a sentence-level summary scored as
the text of its sentences) and serves only the documents of the view a question names: the
artifacts alive under a policy after a deletion (``what_if``'s dead left out), the evidence
view's leavings deleted as by a retraction, and with a requirement (``--require``) only the
artifacts that have a support set of the required kinds.  A sentence-level summary some of
whose sentences fall is served trimmed to the others, as the retrieval evaluation serves it.
Scores use the whole graph's statistics in every view, so a view only masks documents: an
artifact that stands ranks where it ranks with nothing deleted.

The index reads every artifact of the graph once (as ``polygraph evaluate`` does); a graph
that grows by a version needs a new one.
"""

from __future__ import annotations

import numpy as np

from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.query.evidence import Requirement
from polygraph_logic.query.whatif import Deletion, what_if
from polygraph_logic.retrieval.consequences import Retriever, top_k


class StandingSearch:
    """A BM25 index over one graph's artifacts, searched under a deletion, a policy and a requirement."""

    def __init__(self, graph):
        self.graph = graph
        self.retriever = Retriever(GraphIndex(graph))
        self._order = self.retriever.order()
        self._layer = {a.id: a.layer for a in self.retriever.index.ranked}

    def search(self, query: str, limit: int = 10, deletion: Deletion | None = None, policy: str = "trust-all",
               require: Requirement | None = None, layers=None, graph=None) -> dict:
        """Returns the ``limit`` best artifacts for ``query`` among those standing: ``results`` (id,
        layer, score, the text searched), and how many artifacts the view left out (``left_out``:
        dead under the policy, and with a requirement standing without a support set of its kinds).
        ``graph``: the indexed version opened again, to decide what stands on (the index is in memory)."""
        deletion = deletion or Deletion()
        outcome = what_if(graph or self.graph, deletion, policy, require=require)
        dead = set(outcome.dead)
        unqualified = {entry["id"] for entry in outcome.unqualified} if require else set()
        visible = self.retriever.visible(dead | unqualified)
        if layers:
            layer_of = np.array([self._layer[artifact] for artifact in self.retriever.artifact_of[:len(visible)]])
            visible &= np.isin(layer_of, list(layers))
        docs, scores = self.retriever.scores(query)
        top = top_k(docs, scores, self._order_of(len(self.retriever.artifact_of)), limit, visible)
        results = [{"id": self.retriever.artifact_of[d], "layer": self._layer[self.retriever.artifact_of[d]],
                    "score": round(score, 6), "text": self.text(d)} for d, score in top]
        return {"query": query, "policy": policy, "deletion": str(deletion),
                **({"require": list(require.kinds)} if require else {}),
                **({"layers": list(layers)} if layers else {}),
                "results": results,
                "left_out": {"dead": len(dead), "unqualified": len(unqualified)}}

    def _order_of(self, size: int) -> np.ndarray:
        """Each document's artifact-id position (the tie-break), trimmed summaries included."""
        if len(self._order) < size:  # documents added for trimmed summaries since
            self._order = self.retriever.order()
        return self._order

    def text(self, doc: int) -> str:
        """The text a document was scored on: an artifact's, or a trimmed summary's kept sentences."""
        retriever = self.retriever
        if doc < len(retriever.texts):
            return retriever.texts[doc]
        chosen = next(sentences for (_, sentences), d in retriever.variants.items() if d == doc)
        ranks = retriever.index.artifacts
        return " ".join(retriever.texts[ranks[s].rank] for s in chosen)
