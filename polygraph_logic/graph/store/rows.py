"""The rows of a graph file as values: stored facts, artifacts, keys, and the file's constants."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import build_advice

FORMAT = "polygraph-graph/2"
LAYERS = ("claim", "merge", "edge", "summary", "sentence", "contradiction")
TABLES = ("meta", "assertions", "facts", "mentions", "artifacts", "rules")


@dataclass(frozen=True)
class StoredFact:
    """One fact of the evaluated program (artifact or not), kept for re-derivation."""

    relation: str
    args: tuple
    support: tuple[tuple[str, ...], ...]  # () is zero; ((),) is background knowledge (1)
    exact: bool


@dataclass(frozen=True)
class Artifact:
    """Anything the graph holds and a retriever can return, with its support label."""

    id: str
    layer: str
    content: dict
    support: tuple[tuple[str, ...], ...]  # support sets of assertion ids, smallest first
    exact: bool

    @property
    def fact(self) -> tuple[str, tuple]:
        """The program fact the artifact is: its relation and argument tuple."""
        if self.layer in ("claim", "edge"):
            c = self.content
            return self.layer, (c["subject"], c["predicate"], c["object"])
        if self.layer == "contradiction":  # contradiction(x, y, reason), see contradiction_layer.py
            c = self.content
            return self.layer, (c["subject"], c["object"], c["reason"])
        return self.layer, (self.id,)


def bad_graph(path, what: str) -> PolygraphError:
    """Returns the error for a damaged or foreign graph file."""
    return PolygraphError("bad_graph", f"{path}: {what}; {build_advice(path)}")


_INT64 = 1 << 63


def key_value(value):
    """Returns the value stored in a ``k`` column for one argument (lookups compare these)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return f"#int:{value}"  # SQLite integers are 64-bit; matches are re-checked on the decoded args
    return value


def fact_key(args: Iterable) -> str:
    """Returns the canonical text of a fact's arguments (the unique key of the facts table)."""
    return json.dumps(list(args), ensure_ascii=False)


def layer_order(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def describe(artifact: Artifact) -> str:
    """Returns a one-line human description of an artifact's content."""
    content = artifact.content
    if content.get("purged"):  # its content was erased (query/purge.py)
        return "[purged]"
    if artifact.layer in ("claim", "edge"):
        return f"{content['subject']} {content['predicate']} {content['object']}"
    if artifact.layer == "merge":
        return f"{content['canonical']} == {', '.join(m for m in content['members'] if m != content['canonical'])}"
    if artifact.layer == "sentence":
        return repr(content["text"])
    text = content.get("text")
    return repr(text) if text else json.dumps(content, ensure_ascii=False)
