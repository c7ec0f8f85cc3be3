"""Two graphs compared by content: what one holds that the other does not, and what differs.

    diff = diff_graphs("replayed.graph", "original.graph")
    diff.symmetric                       # |G1 Δ G2|: artifacts in one graph only
    diff.layers["edge"].label            # edges in both whose labels differ
    diff.examples[:3]                    # the first differences, with both labels

Graphs are compared by what they say, not by how they number it: artifacts are matched by id (a
claim's or an edge's id is a digest of its triple, a receipt's artifact its own id) and
assertions by id; a label is its support sets by assertion id and its exact flag.  Either graph
may be a file or a folder, at any version.  The study's replay floor (Table 1) is the size of
the symmetric difference of the artifacts.

The first graph is read once into a table of compact digests (id -> layer, content, label: about
100 bytes an artifact), the second streamed against it; the differences listed (``limit``) are
read again in full.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from polygraph_logic.graph.store.graph_file import Graph

#: what the listing of differences calls each kind
CHANGES = ("only in first", "only in second", "content differs", "label differs")


@dataclass
class Counts:
    """How many items of one kind (a layer, or the assertions) each graph holds and how they compare."""

    only_first: int = 0
    only_second: int = 0
    content: int = 0  # in both, with another content (a triple, a text, a receipt's content)
    label: int = 0  # in both, same content, another label (support sets by assertion id, or the exact flag)
    same: int = 0

    @property
    def differing(self) -> int:
        return self.only_first + self.only_second + self.content + self.label

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "differing": self.differing}


@dataclass
class GraphDiff:
    """What ``diff_graphs`` found: counts per layer and for the assertions, and the first differences."""

    first: str
    second: str
    layers: dict[str, Counts] = field(default_factory=dict)
    assertions: Counts = field(default_factory=Counts)
    examples: list[dict] = field(default_factory=list)

    @property
    def symmetric(self) -> int:
        """|G1 Δ G2| over the artifacts: those in one graph only."""
        return sum(c.only_first + c.only_second for c in self.layers.values())

    @property
    def identical(self) -> bool:
        return not self.assertions.differing and not any(c.differing for c in self.layers.values())

    def to_json(self) -> dict:
        return {"first": self.first, "second": self.second, "identical": self.identical,
                "symmetric_difference": self.symmetric, "assertions": self.assertions.to_json(),
                "layers": {layer: counts.to_json() for layer, counts in sorted(self.layers.items())},
                "examples": self.examples}


def _digest(value) -> bytes:
    return hashlib.blake2b(json.dumps(value, sort_keys=True, ensure_ascii=False).encode(), digest_size=8).digest()


def _label(artifact) -> bytes:
    return _digest([sorted(sorted(group) for group in artifact.support), artifact.exact])


def _assertion(assertion) -> bytes:
    row = dataclasses.asdict(assertion)
    row.pop("num", None)
    return _digest(row)


def diff_graphs(first: str | Path, second: str | Path, at_first: int | None = None, at_second: int | None = None,
                layer: str | None = None, limit: int = 10,
                progress: Callable[[int], None] | None = None) -> GraphDiff:
    """Compares two graphs (files or folders, at versions ``at_first``/``at_second``) by content:
    per layer (or one ``layer``), the artifacts only in one and, of those in both, how many differ
    in content or in label; the same for the assertions; the first ``limit`` differences with both
    sides.  ``progress(n)`` after every 100,000 artifacts read."""
    out = GraphDiff(str(first), str(second))
    with Graph(first, at=at_first) as one, Graph(second, at=at_second) as two:
        _assertions(one, two, out)
        held: dict[str, tuple[str, bytes, bytes]] = {}
        for n, artifact in enumerate(one.artifacts(layer), 1):
            held[artifact.id] = (artifact.layer, _digest(artifact.content), _label(artifact))
            if progress is not None and n % 100_000 == 0:
                progress(n)
        for n, artifact in enumerate(two.artifacts(layer), 1):
            counts = out.layers.setdefault(artifact.layer, Counts())
            found = held.pop(artifact.id, None)
            if found is None:
                counts.only_second += 1
                _example(out, limit, "only in second", artifact.id, artifact.layer, None, artifact, two)
            elif (found[0], found[1]) != (artifact.layer, _digest(artifact.content)):
                counts.content += 1
                _example(out, limit, "content differs", artifact.id, artifact.layer, one, artifact, two)
            elif found[2] != _label(artifact):
                counts.label += 1
                _example(out, limit, "label differs", artifact.id, artifact.layer, one, artifact, two)
            else:
                counts.same += 1
            if progress is not None and n % 100_000 == 0:
                progress(n)
        for artifact_id, (kind, _, _) in sorted(held.items()):
            out.layers.setdefault(kind, Counts()).only_first += 1
            _example(out, limit, "only in first", artifact_id, kind, one, None, two)
    out.examples = sorted(out.examples, key=lambda e: (CHANGES.index(e["change"]), e["layer"], e["artifact"]))[:limit]
    return out


def _assertions(one: Graph, two: Graph, out: GraphDiff) -> None:
    held = {name: _assertion(a) for name, a in one.assertions.items()}
    counts = out.assertions
    for name, assertion in two.assertions.items():
        found = held.pop(name, None)
        if found is None:
            counts.only_second += 1
        elif found != _assertion(assertion):
            counts.content += 1
        else:
            counts.same += 1
    counts.only_first = len(held)


def _example(out: GraphDiff, limit: int, change: str, artifact_id: str, layer: str, one: Graph | None,
             artifact, two: Graph) -> None:
    """Notes a difference for the listing while its kind has room (the first graph's side read again):
    up to ``limit`` of each kind, the listing then the first ``limit`` in the order of CHANGES."""
    if sum(e["change"] == change for e in out.examples) >= limit:
        return
    before = one.artifact(artifact_id) if one is not None else None
    out.examples.append({"artifact": artifact_id, "layer": layer, "change": change,
                         "first": _side(before, one), "second": _side(artifact, two)})


def _side(artifact, graph: Graph | None) -> dict | None:
    if artifact is None:
        return None
    return {"content": artifact.content, "label": graph.semiring.text(artifact.support), "exact": artifact.exact}


__all__ = ["CHANGES", "Counts", "GraphDiff", "diff_graphs"]
