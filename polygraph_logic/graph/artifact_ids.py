"""Artifact ids of claims, entailed edges and contradictions: stable digests of their arguments.

An id is the layer and a 12-hex-digit blake2b digest of the fact's arguments (``claim:3f40...``).
Twelve digits are 48 bits: a graph of ten million edges holds two edges of one digest about
once in ten builds.  So an id is that short digest **unless an artifact of the same layer
listed before it in the graph holds it already**: then the 24-digit digest (``long_id``, 96
bits).  "Before" is the build's listing order (``iter_artifacts``: facts in ``tuple_key``
order), and in a later version every artifact stored already: an id once given never changes,
and every engine gives the same ids to the same graph (tests/test_artifact_ids.py).

Whoever looks an artifact up by its triple asks ``stored_id``, which checks whose the short id
is before it answers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Sequence

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.writer import json_text

#: the layers whose artifacts' ids are digests of their facts' arguments
DIGESTED = ("claim", "edge", "contradiction")
#: the digest of an id, in bytes; LONG_DIGEST when the short one is held by an artifact before it
DIGEST = 6
LONG_DIGEST = 12


def triple_id(layer: str, triple: Sequence[str]) -> str:
    """Returns a stable artifact id for a claim or edge: ``claim:`` plus a short digest."""
    return digest_id(layer, json_text(triple))


def digest_id(layer: str, args_text: str, size: int | None = None) -> str:
    """``triple_id`` of arguments already written as a fact's JSON key (``json_text``);
    ``size``: the digest's bytes (DIGEST unless said; LONG_DIGEST: the long id)."""
    return f"{layer}:{hashlib.blake2b(args_text.encode(), digest_size=size or DIGEST).hexdigest()}"


def long_id(layer: str, triple: Sequence[str]) -> str:
    """The id of ``triple``'s artifact when its short id is held by an artifact before it."""
    return digest_id(layer, json_text(triple), LONG_DIGEST)


def content_args(layer: str, content: str | dict) -> tuple:
    """The fact's arguments of a digested artifact from its content (JSON text or a dict)."""
    found = json.loads(content) if isinstance(content, str) else content
    if layer == "contradiction":
        return found["subject"], found["object"], found["reason"]
    return found["subject"], found["predicate"], found["object"]


class IdsGiven:
    """The ids of the digested artifacts of one layer's listing, given in its order: each the short
    id unless one given before holds it (then the long id); ``lengthened`` counts the long ones."""

    def __init__(self):
        self.taken: set[str] = set()
        self.lengthened = 0

    def id(self, layer: str, triple: Sequence[str]) -> str:
        found = triple_id(layer, triple)
        if found in self.taken:
            found = long_id(layer, triple)
            if found in self.taken:
                raise PolygraphError("duplicate_artifact", f"artifact id {found!r} is given twice")
            self.lengthened += 1
        self.taken.add(found)
        return found


#: ``holds(id)``: whether the graph's artifact of that id is the one asked about (None: the graph
#: has no artifact of that id)
Holds = Callable[[str], "bool | None"]


def held_by(fact_of: Callable[[str], int | None], fact: int) -> Holds:
    """``holds`` for the artifact of fact number ``fact``, ``fact_of(id)`` reading the fact number
    of a graph's artifact (None: no such artifact)."""
    def holds(found: str) -> bool | None:
        number = fact_of(found)
        return None if number is None else number == fact
    return holds


def stored_id(layer: str, triple: Sequence[str], holds: Holds) -> str | None:
    """The id a graph gives the artifact of ``triple`` (None: it has none)."""
    for found in (triple_id(layer, triple), long_id(layer, triple)):  # the long one: its short may be retired since
        if holds(found):
            return found
    return None


def graph_id(graph, layer: str, triple: Sequence[str]) -> str | None:
    """``stored_id`` read from a graph (its ``has_artifact`` and ``artifact``)."""
    triple = tuple(triple)

    def holds(found: str) -> bool | None:
        if not graph.has_artifact(found):
            return None
        return tuple(content_args(layer, graph.artifact(found).content)) == triple
    return stored_id(layer, triple, holds)


def new_id(layer: str, triple: Sequence[str], holds: Holds) -> str:
    """The id of the artifact of ``triple`` in a graph it is written to: the one it holds already
    (the long one first: its short may be free again, retired since), else the short id unless
    the graph's artifact of that id is another (then the long one; refused if that is another's too)."""
    short, long = triple_id(layer, triple), long_id(layer, triple)
    held = holds(long)
    if held:
        return long
    if holds(short) is not False:
        return short
    if held is None:
        return long
    raise PolygraphError("duplicate_artifact", f"artifact id {long!r} is already in the graph")


__all__ = ["DIGEST", "DIGESTED", "LONG_DIGEST", "Holds", "IdsGiven", "content_args", "digest_id", "graph_id", "held_by", "long_id", "new_id",
           "stored_id", "triple_id"]
