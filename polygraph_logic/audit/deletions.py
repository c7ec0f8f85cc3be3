"""The deletions an audit grades labels under: named, comparable as sets, or drawn at random."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.query.whatif import Deletion

DeletionKey = tuple[frozenset[str], frozenset[str], frozenset[str]]


@dataclass(frozen=True)
class NamedDeletion:
    """A deletion with the name the audit reports it under (``retract-source PMID:1``)."""

    name: str
    deletion: Deletion

    @property
    def key(self) -> DeletionKey:
        return deletion_key(self.deletion)

    def to_json(self) -> dict:
        """Returns ``{"sources": [...], "relations": [...], "assertions": [...]}``, each sorted."""
        return {"sources": sorted(self.deletion.sources), "relations": sorted(self.deletion.relations),
                "assertions": sorted(self.deletion.assertions)}


def deletion_key(deletion: Deletion | dict) -> DeletionKey:
    """Returns the deletion as three sets: two deletions match when these are equal."""
    if isinstance(deletion, dict):
        return (frozenset(deletion.get("sources", ())), frozenset(deletion.get("relations", ())),
                frozenset(deletion.get("assertions", ())))
    return frozenset(deletion.sources), frozenset(deletion.relations), frozenset(deletion.assertions)


def name_of(deletion: Deletion) -> str:
    """Returns the default name: ``retract-source S1 S2``, ``revoke-relation P``, ``assertions a1 a2``."""
    parts = []
    for word, names in (("retract-source", deletion.sources), ("revoke-relation", deletion.relations),
                        ("assertions", deletion.assertions)):
        if names:
            parts.append(f"{word} {' '.join(names)}")
    return "; ".join(parts)


def named(deletions: Iterable[Deletion | NamedDeletion]) -> list[NamedDeletion]:
    """Returns the deletions named (a bare Deletion gets name_of); empty or duplicate ones are errors."""
    result = []
    for deletion in deletions:
        entry = deletion if isinstance(deletion, NamedDeletion) else NamedDeletion(name_of(deletion), deletion)
        if not entry.deletion:
            raise PolygraphError("no_deletion", f"deletion {entry.name!r} deletes nothing")
        result.append(entry)
    if not result:
        raise PolygraphError("no_deletion", "an audit needs a deletion: --retract-source, --revoke-relation "
                                            "or --random-retraction")
    names = [d.name for d in result]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PolygraphError("duplicate_deletion", f"deletions must have distinct names; repeated: {', '.join(twice)}")
    return result


def random_retractions(index: GraphIndex, fraction: float, seed: int, repeat: int = 1) -> list[NamedDeletion]:
    """Returns ``repeat`` deletions, each retracting ``fraction`` of the graph's sources
    (rounded, at least one) drawn with seeds ``seed .. seed + repeat - 1``."""
    if not 0 < fraction <= 1:
        raise PolygraphError("bad_fraction", f"--random-retraction takes a fraction in (0, 1], not {fraction!r}")
    if repeat < 1:
        raise PolygraphError("bad_fraction", f"--repeat must be at least 1, not {repeat!r}")
    sources = sorted(index.sources)
    if not sources:
        raise PolygraphError("no_deletion", f"{index.graph.path} has no sources to retract")
    count = max(1, round(fraction * len(sources)))
    result = []
    for current in range(seed, seed + repeat):
        chosen = sorted(random.Random(current).sample(sources, count))
        result.append(NamedDeletion(f"random-retraction {fraction:g} seed {current}", Deletion(sources=tuple(chosen))))
    return result
