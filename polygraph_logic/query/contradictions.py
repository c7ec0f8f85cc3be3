"""Contradictions and what would resolve them: the minimal hitting sets of their support sets.

A contradiction artifact (graph/contradiction_layer.py) stands while some support set
of its label survives; its label is the product of its two sides, so each support set
holds evidence for both. A deletion resolves it exactly when it hits every support set.
So the smallest retractions that resolve it are the minimal hitting sets of its support
sets: over assertions, and over sources (retracting a source deletes every assertion of
it, so a set of sources resolves the contradiction when it meets the sources of every
support set).

    for found in contradictions(Graph("g.graph")):
        print(found.id, found.by_sources)

Hitting sets are listed smallest first (then by their members), at most ``hitting`` of
them, found by branching on an unhit support set with a budget of search steps; the
listing says when it stopped early (``truncated``). A capped (inexact) label lists only
the smallest support sets: a hitting set of those is necessary, not always sufficient,
since a dropped support set may survive it (``whatif --exact`` settles it); the report
says so in ``note``.

The balance of origins (origins.py): for each contradiction with sides, the distinct
evidential origins of the assertions that state its first side (*supporting*: the atoms of the
first side's label, the ``edge`` fact; atoms.py) and its second (*refuting*: the second side's
``edge``, or ``neg_edge`` for a negated side), and the verdict by balance: ``support`` when
more distinct origins support than refute, ``refute`` when fewer, ``undecided`` when as many.
The evidence that only carries a claim (a merge's, onto the side's entity) is not counted; a
support set none of whose assertions states the side counts whole.  An origin may still be
on both sides: it counts on each, so it never tips the balance.  With a deletion, the balance after it too: each side keeps
the support sets the deletion leaves whole (label arithmetic, as the trust-all policy reads
labels), and ``resolved`` says whether the contradiction falls.  A capped side label makes
the counts lower bounds (``exact`` false).  A contradiction without sides (``"SWRL: ..."``),
or whose side facts the graph does not store, has no balance (None).

Order: contradictions are listed sorted by their fact's arguments (subject, object, reason)
in the engine's order of values (datalog.evaluate.tuple_key), the order a full build writes
them; so a graph grown by ``add`` (or read ``--at`` a version) lists them as a fresh build of
the same inputs does.

Nothing is ever resolved by itself: the listing only says what would resolve each. One
precedence policy is available, opt-in and named: ``prefer:KIND`` (``prefer=KIND``) keeps the
evidence of kind KIND and of every more authoritative kind (kinds.py) and lists the smallest
sets of the other assertions whose deletion resolves the contradiction (``preferred``); when
a support set holds only kept evidence the policy cannot decide it (``preferred`` is empty).
"""

from __future__ import annotations

from itertools import islice
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from polygraph_logic.datalog.evaluate import tuple_key
from polygraph_logic.graph.artifact_ids import graph_id
from polygraph_logic.graph.contradiction_layer import sides
from polygraph_logic.graph.kinds import KINDS, authority, check_kinds
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import Artifact, fact_key
from polygraph_logic.query.atoms import Atoms
from polygraph_logic.query.origins import Balance, Origins, graph_origins

#: hitting sets listed per contradiction, per universe (sources, assertions), by default
HITTING = 3
#: search steps (branch nodes) per enumeration before it stops and says so
BUDGET = 100_000
INEXACT_NOTE = ("the label is capped: these sets hit every listed support set, but a support set the cap "
                "dropped may survive them; `polygraph whatif --exact` settles a retraction")


def _order(items: Iterable[str]) -> tuple:
    return tuple(sorted(items, key=lambda a: (len(a), a)))  # a2 before a10


def _minimal_family(family: Iterable[frozenset]) -> list[frozenset]:
    """Returns the inclusion-minimal sets of a family (hitting them hits every superset too)."""
    unique = sorted(set(family), key=len)
    kept: list[frozenset] = []
    for s in unique:
        if not any(k <= s for k in kept):
            kept.append(s)
    return kept


def minimal_hitting_sets(family: Iterable[Iterable[str]], limit: int | None = None,
                         budget: int = BUDGET) -> tuple[list[frozenset], bool]:
    """Returns the minimal hitting sets of ``family`` smallest first (ties by their sorted members),
    at most ``limit``, and whether the listing stopped early (at the limit or the budget).

    Size by size: every hitting set of size k is reached by branching on the elements of an
    unhit set (the smallest), and one of size k is minimal when it contains none found at a
    smaller size (all of those are found first). An empty family is hit by the empty set; a
    family with an empty set has no hitting set.
    """
    sets = _minimal_family(frozenset(s) for s in family)
    if not sets:
        return [frozenset()], False
    if not all(sets):
        return [], False
    found: list[frozenset] = []
    steps = 0
    for size in range(1, len(sets) + 1):
        level: set[frozenset] = set()
        stack, seen = [frozenset()], {frozenset()}
        while stack:
            steps += 1
            if steps > budget:
                return _ordered(found, level, limit), True
            chosen = stack.pop()
            unhit = [s for s in sets if not s & chosen]
            if not unhit:
                if len(chosen) == size and not any(f <= chosen for f in found):
                    level.add(chosen)
                continue
            if len(chosen) < size:
                for grown in (chosen | {e} for e in min(unhit, key=len)):
                    if grown not in seen:
                        seen.add(grown)
                        stack.append(grown)
        found = _ordered(found, level, None)
        if limit is not None and len(found) >= limit:
            return found[:limit], len(found) > limit or size < len(sets)
    return (found if limit is None else found[:limit]), False


def _ordered(found: list[frozenset], level: set[frozenset], limit: int | None) -> list[frozenset]:
    out = found + sorted(level, key=_order)
    return out if limit is None else out[:limit]


@dataclass
class Contradiction:
    """One contradiction with what would resolve it (see the module docstring)."""

    id: str
    subject: object
    object: object
    reason: object
    sides: list[dict] | None
    support: tuple[tuple[str, ...], ...]
    exact: bool
    label: str
    by_sources: list[tuple[str, ...]] = field(default_factory=list)
    by_assertions: list[tuple[str, ...]] = field(default_factory=list)
    truncated: bool = False  # a listing stopped at the limit or the budget: there may be more
    prefer: str | None = None  # the precedence policy's kind (prefer:KIND), when asked for
    preferred: list[tuple[str, ...]] = field(default_factory=list)  # its resolving assertion sets
    balance: Balance | None = None  # the balance of origins (None: no sides, or side facts not stored)
    balance_after: Balance | None = None  # ... after the deletion asked about, if any
    deletion: str | None = None  # the deletion (as text) balance_after is under

    @property
    def note(self) -> str | None:
        return None if self.exact else INEXACT_NOTE

    def to_json(self) -> dict:
        policy = {} if self.prefer is None else {"policy": f"prefer:{self.prefer}",
                                                 "preferred": [list(s) for s in self.preferred]}
        return {**policy,
            "id": self.id, "subject": self.subject, "object": self.object, "reason": self.reason,
            "sides": self.sides, "label": self.label, "exact": self.exact, "support_sets": len(self.support),
            "resolve_by_sources": [list(s) for s in self.by_sources],
            "resolve_by_assertions": [list(s) for s in self.by_assertions],
            "truncated": self.truncated, "note": self.note,
            "balance": None if self.balance is None else self.balance.to_json(),
            **({} if self.deletion is None else {
                "balance_after": None if self.balance_after is None else self.balance_after.to_json()}),
        }


def side_artifact(graph: Graph, triple: tuple) -> str | None:
    """Returns the id of the claim or edge artifact of a side's triple (None: background knowledge)."""
    for layer in ("claim", "edge"):
        found = graph_id(graph, layer, triple)
        if found is not None:
            return found
    return None


def sources_of(graph: Graph, assertion_ids: Iterable[str]) -> dict[str, str]:
    """Returns {assertion id: source} for the given ids (one indexed query)."""
    return graph.sources_of(assertion_ids)


def side_fact(side: dict) -> tuple[str, tuple]:
    """Returns the fact a side names: ``edge(s, p, o)``, or ``neg_edge(s, p, o)`` when negated."""
    return ("neg_edge" if side["negated"] else "edge"), (side["subject"], side["predicate"], side["object"])


def side_labels(graph: Graph, facts: Iterable[tuple[str, tuple]]) -> dict[tuple, tuple[list[frozenset], bool]]:
    """Returns ``{fact: (support sets of assertion ids, exact)}`` of the given side facts the graph
    stores (one read per relation, one for the assertion ids)."""
    keys: dict[str, set[str]] = {}
    for relation, args in facts:
        keys.setdefault(relation, set()).add(fact_key(args))
    rows = []
    for relation, wanted in sorted(keys.items()):
        for args, blob, exact in graph.facts_named(relation, sorted(wanted)):
            rows.append(((relation, graph.args(args)), graph.decode(blob), bool(exact)))
    names = graph.names(n for _, groups, _ in rows for group in groups for n in group)
    return {fact: ([frozenset(names[n] for n in group) for group in groups], exact) for fact, groups, exact in rows}


def origin_balance(found_sides: list[dict] | None, labels: dict, source: dict[str, str], origins: Origins,
                   deleted: frozenset[str] | None = None, support=(), exact: bool = True,
                   atoms: Atoms | None = None) -> Balance | None:
    """Returns the balance of origins of a contradiction's two sides (``labels``: side_labels;
    ``source``: {assertion id: source} of their assertions); with ``deleted`` (assertion ids), the
    balance after that deletion: each side keeps the support sets it leaves whole, and
    ``resolved`` says whether every support set of the contradiction (``support``, ``exact`` or
    capped) is hit.  The balance is exact when the labels it reads are."""
    if not found_sides:
        return None
    found = [labels.get(side_fact(side)) for side in found_sides]
    if any(label is None for label in found):
        return None
    origin_sets = []
    for side, (sets, _) in zip(found_sides, found):
        kept = sets if deleted is None else [s for s in sets if s.isdisjoint(deleted)]
        # the origins of the assertions that state the side (atoms.py), not of those that carry it
        stating = [atoms.of(side, s) for s in kept] if atoms is not None else kept
        origin_sets.append([origins.origin_set(source[a] for a in s) for s in stating])
    resolved = None if deleted is None else not any(deleted.isdisjoint(group) for group in support)
    exact = exact and all(side_exact for _, side_exact in found)
    return Balance.of(origin_sets[0], origin_sets[1], exact, resolved)


def resolve(graph: Graph, artifact: Artifact, hitting: int | None = HITTING, budget: int = BUDGET,
            prefer: str | None = None, source: dict[str, str] | None = None, origins: Origins | None = None,
            deleted: frozenset[str] | None = None, labels: dict | None = None,
            deletion: str | None = None, atoms: Atoms | None = None) -> Contradiction:
    """Returns a contradiction artifact with its smallest resolving source and assertion sets
    (and, with ``prefer``, those the precedence policy prefer:KIND allows) and its balance of
    origins (``origins``: the graph's stored ones unless given), and with ``deleted`` (assertion
    ids; ``deletion``: its text) the balance after that deletion.  ``source`` ({assertion id:
    source}) and ``labels`` (side_labels) are what was already read, of its assertions and sides."""
    c = artifact.content
    found_sides = _sides(artifact)
    for side in found_sides or ():
        if not side["negated"]:
            side["artifact"] = side_artifact(graph, (side["subject"], side["predicate"], side["object"]))
    if labels is None:
        labels = side_labels(graph, (side_fact(side) for side in found_sides or ()))
    if source is None:
        source = sources_of(graph, _assertions([artifact], labels))
    origins = graph_origins(graph) if origins is None else origins
    by_assertions, cut_a = minimal_hitting_sets(artifact.support, hitting, budget)
    by_sources, cut_s = minimal_hitting_sets(({source[a] for a in group} for group in artifact.support),
                                             hitting, budget)
    found = Contradiction(
        artifact.id, c["subject"], c["object"], c["reason"], found_sides, artifact.support, artifact.exact,
        str(graph.label(artifact)),
        [_order(s) for s in by_sources], [_order(s) for s in by_assertions], cut_a or cut_s)
    if prefer is not None:
        found.prefer, found.preferred, cut = _preferred(graph, artifact.support, prefer, hitting, budget)
        found.truncated |= cut
    atoms = Atoms(graph) if atoms is None else atoms
    found.balance = origin_balance(found_sides, labels, source, origins, atoms=atoms)
    if deleted is not None:
        found.deletion = deletion or f"{len(deleted)} assertions"
        found.balance_after = origin_balance(found_sides, labels, source, origins, deleted, artifact.support,
                                             artifact.exact, atoms)
    return found


def _assertions(artifacts: list[Artifact], labels: dict) -> set[str]:
    """The assertion ids of the artifacts' labels and of the side labels read."""
    found = {a for artifact in artifacts for group in artifact.support for a in group}
    return found.union(*(s for sets, _ in labels.values() for s in sets))


def _preferred(graph: Graph, support, prefer: str, hitting, budget) -> tuple[str, list[tuple[str, ...]], bool]:
    """prefer:KIND: the minimal sets of assertions less authoritative than KIND that resolve it."""
    (prefer,) = check_kinds([prefer])
    kept = set(list(KINDS)[:authority(prefer) + 1])
    kind = graph.kinds_of((a for group in support for a in group))
    family = [frozenset(a for a in group if kind[a] not in kept) for group in support]
    sets, cut = minimal_hitting_sets(family, hitting, budget)
    return prefer, [_order(s) for s in sets], cut


def contradictions(graph: Graph, limit: int | None = None, hitting: int | None = HITTING,
                   budget: int = BUDGET, prefer: str | None = None, origins: "Origins | str | None" = None,
                   deletion=None) -> Iterator[Contradiction]:
    """Yields the graph's contradictions sorted by (subject, object, reason) (see the module
    docstring; at most ``limit``), each resolved and with its balance of origins (``prefer``: the
    kind of the opt-in precedence policy prefer:KIND; ``origins``: derived_from records, a file or
    an Origins, instead of the graph's).  With ``deletion`` (a whatif.Deletion), each also carries
    its balance after that deletion (``balance_after``); an unknown name in it is an error
    before anything is listed."""
    if prefer is not None:
        check_kinds([prefer])  # an unknown kind is an error before anything is read
    origins = graph_origins(graph, origins)
    deleted = None if deletion is None else frozenset(deletion.viewed(graph).resolve(graph))
    listed = iter(sorted(graph.artifacts("contradiction"), key=lambda a: (tuple_key(a.fact[1]), a.id))[:limit])
    atoms = Atoms(graph)
    # a batch's sources and side labels in a few reads (a folder's read costs milliseconds)
    while batch := list(islice(listed, 1_000)):
        labels = side_labels(graph, (side_fact(side) for artifact in batch for side in _sides(artifact) or ()))
        source = sources_of(graph, _assertions(batch, labels))
        for artifact in batch:
            yield resolve(graph, artifact, hitting, budget, prefer, source, origins, deleted, labels,
                          None if deletion is None else str(deletion), atoms)


def _sides(artifact: Artifact) -> list[dict] | None:
    c = artifact.content
    return c.get("sides") or sides(c["subject"], c["object"], c["reason"])


def count(graph: Graph) -> int:
    """Returns how many contradictions the graph holds (the artifacts_by_layer index)."""
    return graph.layer_count("contradiction")


__all__ = ["BUDGET", "HITTING", "Contradiction", "contradictions", "count", "minimal_hitting_sets",
           "origin_balance", "resolve", "side_artifact", "side_fact", "side_labels", "sources_of"]
