"""Evidential origins: which sources repeat which, so echoes are not counted as corroboration.

A ``derived_from`` record says a source was derived from another (a news item from a
press release, a review from its trials)::

    {"source": "news:1", "derived_from": "press:7"}
    {"source": "review:3", "derived_from": ["trial:1", "trial:2"]}

The relation is transitive, and a cycle is an error at the line that closes it.  A
source's *origins* are the sources it derives from that derive from nothing (itself
when it derives from nothing): its evidential origins.  A support set's origins are
the union of its sources' origins.

Per artifact (explain.robustness), over its support sets (the paths to it):

- ``paths``: how many paths reach it.  The why-provenance of a label keeps no derivation
  multiplicity (two derivations from one set of assertions are one support set), so the
  graph counts its minimal support sets, and ``paths_counted`` says so (``"support_sets"``);
- ``origins``: its distinct evidential origins, the union over its support sets (GraphEcho's
  N_prov: every path maps to its origins, and a path that repeats an origin adds none);
- ``independent_supports``: the largest number of support sets whose origin sets are
  pairwise disjoint: how many lines of evidence share no origin.  When every set rests on
  one origin it equals ``origins``; a set resting on several origins (a conjunction) counts
  once, and two sets sharing an origin are not independent, so it may be smaller;
- ``fewest_origins_to_kill``: the fewest origins whose retraction kills it (retracting an
  origin retracts every source derived from it); never smaller than ``independent_supports``.

The echo flag is the design's rule: ``paths > 1`` and exactly one origin (many paths, one
origin).  Under the cap a label lists only its smallest support sets, so every count is a
lower bound (and an echo is one as far as the listed sets show).

For a contradiction (contradictions.py), the *balance of origins*: the distinct origins of
the evidence for its first side (supporting) and for its second (refuting), and the verdict
by balance: ``support`` when more distinct origins support than refute, ``refute`` when
fewer, ``undecided`` when as many (``verdict``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.graph.json_lines import read_records
from polygraph_logic.graph.records import LoadError
from polygraph_logic.graph.store.rows import bad_graph


@dataclass
class Origins:
    """The ``derived_from`` relation: source -> the sources it was derived from."""

    parents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _roots: dict[str, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)

    def roots(self, source: str) -> frozenset[str]:
        """Returns the evidential origins of a source (itself when it derives from nothing)."""
        found = self._roots.get(source)
        if found is None:
            stack = [(source, False)]
            while stack:  # post-order without recursion (chains can be long)
                node, ready = stack.pop()
                if node in self._roots:
                    continue
                parents = self.parents.get(node, ())
                if ready:
                    self._roots[node] = (frozenset().union(*(self._roots[p] for p in parents)) if parents
                                         else frozenset((node,)))
                else:
                    stack.append((node, True))
                    stack.extend((p, False) for p in parents if p not in self._roots)
            found = self._roots[source]
        return found

    def origin_set(self, sources: Iterable[str]) -> frozenset[str]:
        """Returns the union of the sources' origins."""
        return frozenset().union(*(self.roots(s) for s in sources))

    def clusters(self, sources: Iterable[str]) -> dict[str, list[str]]:
        """Returns origin -> the given sources derived from it (or that are it), each sorted."""
        out: dict[str, list[str]] = {}
        for source in sorted(set(sources)):
            for origin in self.roots(source):
                out.setdefault(origin, []).append(source)
        return dict(sorted(out.items()))

    def to_json(self) -> str:
        return json.dumps({s: list(p) for s, p in sorted(self.parents.items())}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | None) -> "Origins":
        if not text:
            return cls()
        return cls({s: tuple(p) for s, p in json.loads(text).items()})

    def __bool__(self) -> bool:
        return bool(self.parents)


def load_origins(path: str | Path) -> Origins:
    """Reads ``derived_from`` records; every bad line and every cycle is an error at its file:line."""
    path = Path(path)
    problems: list[PolygraphError] = []
    origins = Origins()
    for number, record in read_records(path, problems):
        where = Position(str(path), number, 1)
        source, parents = record.get("source"), record.get("derived_from")
        if isinstance(parents, str):
            parents = [parents]
        if not isinstance(source, str) or not source.strip():
            problems.append(PolygraphError("bad_field", f"field 'source' must be a non-empty string, got {source!r}",
                                           where))
            continue
        if (not isinstance(parents, list) or not parents
                or not all(isinstance(p, str) and p.strip() for p in parents)):
            problems.append(PolygraphError(
                "bad_field", f"field 'derived_from' must be a source or a non-empty list of sources, got {parents!r}",
                where))
            continue
        for parent in parents:
            cycle = _path(origins.parents, parent, source)
            if cycle is not None:
                problems.append(PolygraphError(
                    "origin_cycle", f"{source!r} derived from {parent!r} closes a cycle "
                                    f"({' -> '.join([source, *cycle])}, read 'derived from'); a source "
                                    "cannot be derived from itself", where))
                continue
            known = origins.parents.get(source, ())
            if parent not in known:
                origins.parents[source] = known + (parent,)
    if problems:
        raise LoadError(problems)
    return origins


def _path(parents: dict[str, tuple[str, ...]], start: str, goal: str) -> list[str] | None:
    """Returns a derived_from chain from ``start`` up to ``goal`` (both included), or None."""
    stack, came = [start], {start: None}
    while stack:
        node = stack.pop()
        if node == goal:
            chain = []
            while node is not None:
                chain.append(node)
                node = came[node]
            return chain[::-1]
        for parent in parents.get(node, ()):
            if parent not in came:
                came[parent] = node
                stack.append(parent)
    return None


def graph_origins(graph, override: str | Path | Origins | None = None) -> Origins:
    """Returns the origins to use with a graph: ``override`` (a file or Origins) when given,
    else those stored at build time (none: every source is its own origin)."""
    if isinstance(override, Origins):
        return override
    if override is not None:
        return load_origins(override)
    try:
        return Origins.from_json(graph.meta.get("origins"))
    except (ValueError, AttributeError, TypeError):
        raise bad_graph(graph.path, "meta.origins is not a derived_from mapping") from None


def max_disjoint(groups: Iterable[frozenset]) -> int:
    """Returns the largest number of groups that are pairwise disjoint (branch and bound)."""
    unique = sorted(set(groups), key=len)
    best = 0

    def search(rest: list[frozenset], taken: int) -> None:
        nonlocal best
        best = max(best, taken)
        if not rest or taken + len(rest) <= best:
            return
        first, others = rest[0], rest[1:]
        search([g for g in others if first.isdisjoint(g)], taken + 1)
        search(others, taken)

    search(unique, 0)
    return best


def origin_counts(origin_sets: list[frozenset[str]]) -> dict:
    """Returns ``paths``, ``origins``, ``independent_supports`` and ``echo`` of an artifact whose
    support sets rest on ``origin_sets`` (one origin set a support set; see the module docstring)."""
    distinct = frozenset().union(*origin_sets) if origin_sets else frozenset()
    paths = len(origin_sets)
    return {"paths": paths, "origins": len(distinct), "independent_supports": max_disjoint(origin_sets),
            "echo": paths > 1 and len(distinct) == 1}


#: the verdicts by balance of origins, in the order support, refute, undecided
VERDICTS = ("support", "refute", "undecided")


def verdict(supporting: int, refuting: int) -> str:
    """Returns the verdict by balance: ``support`` when more distinct origins support than
    refute, ``refute`` when fewer, ``undecided`` when as many."""
    return VERDICTS[0] if supporting > refuting else VERDICTS[1] if supporting < refuting else VERDICTS[2]


@dataclass(frozen=True)
class Balance:
    """The distinct evidential origins for and against a claim, and the verdict by their balance.

    ``exact``: both sides' labels are exact (else the counts are lower bounds and the verdict may
    differ); ``resolved``: after a deletion, whether the contradiction falls (None: no deletion)."""

    supporting: tuple[str, ...]
    refuting: tuple[str, ...]
    exact: bool = True
    resolved: bool | None = None

    @classmethod
    def of(cls, supporting: Iterable[frozenset[str]], refuting: Iterable[frozenset[str]],
           exact: bool = True, resolved: bool | None = None) -> "Balance":
        """Returns the balance of two sides given as the origin sets of their support sets."""
        union = lambda sets: tuple(sorted(frozenset().union(*sets)))  # noqa: E731
        return cls(union(supporting), union(refuting), exact, resolved)

    @property
    def verdict(self) -> str:
        return verdict(len(self.supporting), len(self.refuting))

    @property
    def shared(self) -> tuple[str, ...]:
        """The origins on both sides (they count on each, so they never tip the balance)."""
        return tuple(sorted(set(self.supporting) & set(self.refuting)))

    def to_json(self) -> dict:
        out = {"supporting": len(self.supporting), "refuting": len(self.refuting), "verdict": self.verdict,
               "supporting_origins": list(self.supporting), "refuting_origins": list(self.refuting),
               "shared_origins": list(self.shared), "exact": self.exact}
        if self.resolved is not None:
            out["resolved"] = self.resolved
        return out


def fewest_to_kill(groups: list[frozenset]) -> list[str]:
    """Returns a smallest set of elements meeting every group (a minimum hitting set), sorted;
    [] when there is no group (nothing to kill) and no group may be empty."""
    groups = list(set(groups))
    if not groups or any(not g for g in groups):
        return []
    for size in range(1, len(groups) + 1):
        found = _hit(groups, size, frozenset())
        if found is not None:
            return sorted(found)
    return []  # unreachable: one element of each group always hits


def _hit(groups: list[frozenset], size: int, chosen: frozenset) -> frozenset | None:
    missed = [g for g in groups if g.isdisjoint(chosen)]
    if not missed:
        return chosen
    if _disjoint_greedily(missed) > size:  # each of those pairwise disjoint groups needs its own element
        return None
    missed = min(missed, key=len)  # branch on the fewest elements
    for element in sorted(missed):
        found = _hit(groups, size - 1, chosen | {element})
        if found is not None:
            return found
    return None


def _disjoint_greedily(groups: list[frozenset]) -> int:
    """Returns the size of a pairwise disjoint subfamily picked greedily (a lower bound on any hitting set)."""
    used: set = set()
    count = 0
    for group in sorted(groups, key=len):
        if used.isdisjoint(group):
            used |= group
            count += 1
    return count
