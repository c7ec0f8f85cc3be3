"""What-if deletions: which artifacts a deletion touches, which stand, which fall, and why.

Nothing here mutates the graph.  A deletion is resolved to assertion ids, the
index yields the touched facts, and each touched artifact gets a verdict under a
cleanup policy:

- ``deployed``: only claims all of whose assertions are deleted fall (what current
  pipelines do); every other artifact is kept.
- ``trust-all``: every label is trusted: an artifact falls when no support set survives.
- ``distrust:LAYER``: every touched artifact of LAYER falls outright; other labels trusted.
- ``flat``: everything whose flat lineage touches the deletion falls.

A sentence-level summary is the conjunction of its sentences; under label-trusting
policies it is kept with its dead sentences dropped while any sentence stands.
With ``exact``, a dead verdict on a capped (inexact) label is settled by symbolic
re-derivation over the surviving facts (see rederive.py).
"""

from __future__ import annotations

import difflib
from itertools import compress, filterfalse
import time
from dataclasses import dataclass, field
from functools import cached_property

from .errors import PolygraphError
from .graph.index import GraphIndex
from .graph.store import LAYERS

POLICIES = ("deployed", "trust-all", "flat") + tuple(f"distrust:{layer}" for layer in LAYERS)


@dataclass(frozen=True)
class Deletion:
    """A set of assertions to delete, by source, by predicate, or by id, in any mix."""

    sources: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    assertions: tuple[str, ...] = ()

    def resolve(self, index: GraphIndex) -> frozenset[str]:
        """Returns the deleted assertion ids; unknown names are an error with close matches."""
        problems = []
        for kind, names, known in (("source", self.sources, index.sources),
                                   ("relation", self.relations, index.predicates),
                                   ("assertion", self.assertions, index.bit)):
            for name in names:
                if name not in known:
                    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
                    hint = f" (did you mean {', '.join(close)}?)" if close else ""
                    problems.append(f"no {kind} named {name!r}{hint}")
        if problems:
            raise PolygraphError("unknown_deletion", "; ".join(problems) + "; nothing was evaluated")
        ids = set(self.assertions)
        for source in self.sources:
            ids.update(index.sources[source])
        for relation in self.relations:
            ids.update(index.predicates[relation])
        return frozenset(ids)

    def __add__(self, other: "Deletion") -> "Deletion":
        return Deletion(*(tuple(dict.fromkeys(a + b)) for a, b in zip(
            (self.sources, self.relations, self.assertions),
            (other.sources, other.relations, other.assertions))))

    def __bool__(self) -> bool:
        return bool(self.sources or self.relations or self.assertions)

    def __str__(self) -> str:
        parts = [f"retract-source {s}" for s in self.sources]
        parts += [f"revoke-relation {r}" for r in self.relations]
        parts += [f"assertion {a}" for a in self.assertions]
        return ", ".join(parts) or "nothing"


@dataclass
class Outcome:
    """The verdicts of one what-if: touched, dead and kept artifact ids, per layer too.

    The verdicts are decided as sets of artifact ranks; ``touched``, ``dead`` and
    ``kept`` name them (in rank order: layer, then id) when first read.
    """

    deletion: Deletion
    deleted: frozenset[str]
    policy: str
    exact: bool
    touched_ranks: set[int] = field(default_factory=set, repr=False)
    dead_ranks: set[int] = field(default_factory=set, repr=False)
    summaries: dict[str, dict] = field(default_factory=dict)
    settled: int = 0  # inexact dead verdicts that re-derivation examined
    revived: int = 0  # ... and found alive after all
    elapsed_ms: float = 0.0
    index: GraphIndex | None = field(default=None, repr=False)

    @cached_property
    def _ordered(self) -> list[int]:
        return sorted(self.touched_ranks)

    @cached_property
    def touched(self) -> list[str]:
        """The ids of every artifact whose label mentions a deleted assertion."""
        return list(map(self.index.ids.__getitem__, self._ordered))

    @cached_property
    def dead(self) -> list[str]:
        """The ids of the touched artifacts that fall under the policy."""
        return list(map(self.index.ids.__getitem__, compress(self._ordered, map(self.dead_ranks.__contains__,
                                                                                self._ordered))))

    @cached_property
    def kept(self) -> list[str]:
        """The ids of the touched artifacts that stand under the policy."""
        return list(map(self.index.ids.__getitem__, filterfalse(self.dead_ranks.__contains__, self._ordered)))

    def by_layer(self) -> dict[str, dict[str, int]]:
        """Returns touched / dead / kept counts per layer."""
        counts: dict[str, dict[str, int]] = {}
        artifacts = self.index.artifacts
        for name, ids in (("touched", self.touched), ("dead", self.dead), ("kept", self.kept)):
            for artifact in ids:
                entry = counts.setdefault(artifacts[artifact].layer, {"touched": 0, "dead": 0, "kept": 0})
                entry[name] += 1
        return {layer: counts[layer] for layer in LAYERS if layer in counts}

    def to_json(self) -> dict:
        return {
            "deletion": str(self.deletion),
            "deleted_assertions": sorted(self.deleted),
            "policy": self.policy,
            "exact": self.exact,
            "touched": self.touched,
            "dead": self.dead,
            "kept": self.kept,
            "by_layer": self.by_layer(),
            "summaries": self.summaries,
            "settled_by_rederivation": self.settled,
            "revived_by_rederivation": self.revived,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }


def check_policy(policy: str) -> str:
    """Returns the policy if it is known; raises PolygraphError naming the choices otherwise."""
    if policy not in POLICIES:
        raise PolygraphError("unknown_policy", f"unknown policy {policy!r}; choose one of: {', '.join(POLICIES)}")
    return policy


def what_if(index: GraphIndex, deletion: Deletion, policy: str = "trust-all", exact: bool = False,
            rederiver=None) -> Outcome:
    """Evaluates a deletion under a policy without changing anything; see the module docstring.

    ``rederiver`` (a rederive.Rederiver) is built on first use when ``exact`` is set.
    """
    check_policy(policy)
    started = time.perf_counter()
    deleted = deletion.resolve(index)
    outcome = Outcome(deletion, deleted, policy, exact, index=index)
    touched, hit = _reach(index, deletion)  # hit: numbered support sets that lose an assertion
    label_dead = touched & index.single  # one support set, touched: dead
    multi = list(touched - index.single)
    label_dead.update(compress(multi, map(hit.issuperset, map(index.monomials.__getitem__, multi))))
    if exact and policy not in ("flat", "deployed"):
        label_dead -= _revived(index, index.mask(deleted), outcome, rederiver)
    distrusted = policy.split(":", 1)[1] if policy.startswith("distrust:") else None
    layer_of = index.layer_of
    if policy == "trust-all":
        dies = label_dead
    elif policy == "flat":
        dies = set(touched)
    elif policy == "deployed":
        dies = _deployed(index, label_dead, deleted)
    else:
        dies = label_dead | {r for r in touched if layer_of[r] == distrusted}
    _trim_summaries(index, touched, dies, policy, distrusted, outcome)
    outcome.touched_ranks, outcome.dead_ranks = touched, dies
    outcome.elapsed_ms = (time.perf_counter() - started) * 1000
    return outcome


def _deployed(index: GraphIndex, label_dead: set[int], deleted: frozenset[str]) -> set[int]:
    """Returns the claims every stating assertion of which is deleted (what deployed pipelines delete).

    A capped claim label (more stating assertions than the cap) is no proof of that, so
    such claims are checked against the assertions that state them.
    """
    dies = set()
    for rank in label_dead:
        entry = index.ranked[rank]
        if entry.layer != "claim":
            continue
        if not index.exact.get(entry.fact, True) and not deleted.issuperset(index.stating[entry.fact[1]]):
            continue
        dies.add(rank)
    return dies


def _reach(index: GraphIndex, deletion: Deletion) -> tuple[set[int], set[int]]:
    """Returns the ranks a deletion touches and the numbered support sets it hits."""
    reach = [index.reach["source", s] for s in deletion.sources]
    reach += [index.reach["relation", r] for r in deletion.relations]
    touched = set().union(*(r[0] for r in reach))
    hit = set().union(*(r[1] for r in reach))
    for number in index.numbers(deletion.assertions):
        touched.update(index.mentions.get(number, ()))
        hit.update(index.monomial_mentions.get(number, ()))
    return touched, hit


def _revived(index: GraphIndex, mask: int, outcome: Outcome, rederiver) -> set[int]:
    """Settles dead verdicts on inexact labels by re-derivation; returns the revived ranks."""
    dead_facts = {f for f in index.touched_facts(mask) if not index.survives(f, mask)}
    uncertain = {f for f in dead_facts if not index.exact[f]}
    if not uncertain:
        return set()
    if rederiver is None:
        from .rederive import Rederiver
        rederiver = Rederiver(index)
    revived = rederiver.revive(uncertain, dead_facts, mask)
    outcome.settled, outcome.revived = len(uncertain), len(revived)
    return {index.by_fact[f].rank for f in revived if f in index.by_fact}


def _trim_summaries(index: GraphIndex, touched: set[int], dies: set[int], policy: str,
                    distrusted: str | None, outcome: Outcome) -> None:
    """Keeps a sentence-level summary with its dead sentences dropped while any sentence stands;
    a removed summary takes its sentences with it (``touched`` and ``dies`` are updated).

    Only the summaries whose own rank or a sentence's rank is touched are looked at."""
    trusting = policy not in ("flat", "deployed") and distrusted not in ("summary", "sentence")
    concerned = {index.summary_of[r] for r in touched & index.summary_parts}
    for summary in sorted(concerned):
        rank, sentences = index.sentence_ranks[summary]
        dead = [s for s in sentences if s in dies]
        removed = len(dead) == len(sentences) if trusting else rank in dies
        if rank in touched:
            dies.discard(rank)
            if removed:
                dies.add(rank)
        if removed:
            touched.update(sentences)
            dies.update(sentences)
        status = "removed" if removed else ("trimmed" if dead else "kept")
        outcome.summaries[summary] = {"status": status, "sentences": len(sentences), "dead_sentences": len(dead)}
