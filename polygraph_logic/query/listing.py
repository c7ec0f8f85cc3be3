"""A graph's artifacts listed with their labels, as ``polygraph show`` lists them.

``Listing`` reads the counts per layer once and, with a requirement (``--require``), the
standing artifacts that have no support set of its kinds; ``to_json`` is ``show --json``'s
document, its ``artifacts`` an iterator read as the store streams them (a listing is never
held whole), and ``rows`` the same artifacts for the text form.
"""

from __future__ import annotations

import itertools
from typing import Iterator

from polygraph_logic.graph.store.rows import LAYERS, Artifact, describe
from polygraph_logic.query.evidence import Requirement, left_out_now
from polygraph_logic.query.whatif import Deletion, what_if

#: a listing of at most this many artifacts a layer reads them all at once (a few queries); a
#: longer one streams them
SHORT = 1_000


class Listing:
    """The artifacts of some layers of an open graph, at most ``limit`` per layer, each with its
    label and, with ``require``, whether it meets the requirement."""

    def __init__(self, graph, layers=None, limit: int | None = None, require: Requirement | None = None):
        self.graph, self.limit, self.require = graph, limit, require
        self.counts = graph.counts()
        self.layers = [layer for layer in layers or LAYERS if self.counts.get(layer)]
        self.unqualified: set[str] = set()
        self.left_out: dict[int, str] = {}
        if require:  # under the current view (evidence.py): what it leaves out satisfies nothing
            outcome = what_if(graph, Deletion(), require=require)
            self.unqualified = ({entry["id"] for entry in outcome.unqualified} | set(outcome.dead)
                                | {entry["artifact"] for entry in outcome.demoted})
            self.left_out = left_out_now(graph)
        # a label's text without interning its ids (graph.label would hold every assertion id read)
        self.text = graph.semiring.text

    def rows(self) -> Iterator[tuple[str, Artifact]]:
        """Yields (layer, artifact) in layer order, at most ``limit`` a layer, as the store reads them."""
        if self.limit is not None and self.limit <= SHORT:
            yield from self.graph.first_artifacts(self.layers, self.limit)
            return
        for layer in self.layers:
            for artifact in itertools.islice(self.graph.artifacts(layer), self.limit):
                yield layer, artifact

    def marks(self, artifact: Artifact) -> dict:
        """With a requirement: whether the artifact meets it and which listed support sets do."""
        if not self.require:
            return {}
        return {"meets_requirement": artifact.id not in self.unqualified,
                "qualifying_sets": self.require.qualifying(self.graph, self.graph.label(artifact).support_sets(),
                                                            self.left_out)}

    def entry(self, layer: str, artifact: Artifact) -> dict:
        """One artifact as ``show --json`` lists it."""
        return {"id": artifact.id, "layer": layer, "text": describe(artifact), "label": self.text(artifact.support),
                "exact": artifact.exact, **self.marks(artifact)}

    def to_json(self) -> dict:
        """``show --json``'s document: ``counts`` per layer listed, ``artifacts`` (an iterator),
        and with a requirement ``required_kinds``."""
        listed = (self.entry(layer, artifact) for layer, artifact in self.rows())
        return {"counts": {layer: self.counts[layer] for layer in self.layers}, "artifacts": listed,
                **({"required_kinds": list(self.require.kinds)} if self.require else {})}
