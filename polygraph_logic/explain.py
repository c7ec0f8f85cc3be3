"""Why an artifact stands, why it fell, and how robust it is to retractions.

- ``why``: its support sets with each assertion's source and triple, and for a
  derived fact a derivation tree: the rules and facts that produce it from one
  support set.
- ``whynot``: after a deletion, which deleted assertions (and sources) broke each set.
- ``robustness``: the fewest sources whose retraction kills it (a minimum hitting set
  over the sources of its support sets), how many independent sources back it
  (support sets with pairwise disjoint sources), and an echo flag when several
  support sets all rest on one source: many paths, one origin.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from .graph.store import Graph, fact_key
from .rederive import FactKey, GoalPlans, stated_by
from .syntax import format_value
from .whatif import Deletion, as_graph, what_if


@dataclass
class Derivation:
    """A node of a derivation tree: a fact, the rule that produced it, and its premises.

    A leaf is stated by ``assertion`` (a source assertion) or is background (``rule``
    and ``assertion`` both None, no premises).
    """

    fact: FactKey
    rule: str | None = None
    assertion: str | None = None
    premises: list["Derivation"] = field(default_factory=list)

    def lines(self, indent: str = "") -> list[str]:
        """Returns the tree as indented text."""
        relation, args = self.fact
        text = f"{relation}({', '.join(format_value(v) for v in args)})"
        if self.assertion:
            text += f"   stated by {self.assertion}"
        elif self.rule is None:
            text += "   background"
        else:
            text += f"   by  {self.rule}"
        out = [indent + text]
        for premise in self.premises:
            out.extend(premise.lines(indent + "  "))
        return out


class _Found(Exception):
    pass


class _Witness:
    """Labels are the tuples of facts a derivation used."""

    name = "witness"

    def one(self):
        return ()

    def times(self, a, b):
        return a + b


class Explainer:
    """Explanations over one graph (rules planned on demand, facts read as proofs need them)."""

    def __init__(self, graph):
        self.graph = as_graph(graph)
        self._goal: tuple | None = None
        self._accept = None
        self._found: tuple | None = None
        self._labels: dict[FactKey, list[frozenset[int]] | None] = {}
        # each fact's value is the one-fact tuple of itself: a derivation's label lists its premises
        self.plans = GoalPlans(self.graph, lambda relation, args: ((relation, args),), _Witness(), self._emit)

    def _emit(self, relation, tup, used) -> None:
        if tup == self._goal and self._accept(used):
            self._found = used
            raise _Found

    def _label(self, fact: FactKey) -> list[frozenset[int]] | None:
        if fact not in self._labels:
            row = self.graph.query("SELECT label FROM facts WHERE relation = ? AND args = ?",
                                   (fact[0], fact_key(fact[1]))).fetchone()
            self._labels[fact] = None if row is None else [frozenset(g) for g in self.graph.decode(row[0])]
        return self._labels[fact]

    def derivation(self, fact: FactKey, support: frozenset[str]) -> Derivation | None:
        """Returns a derivation tree of ``fact`` from the assertions of ``support`` alone."""
        numbers = frozenset(self.graph.numbers("id", support))
        return self._derive(fact, numbers, frozenset())

    def _supported(self, fact: FactKey, numbers: frozenset[int]) -> bool:
        return any(group <= numbers for group in self._label(fact) or ())

    def _derive(self, fact: FactKey, numbers: frozenset[int], path: frozenset) -> Derivation | None:
        for number, assertion in sorted(stated_by(self.graph, fact).items()):
            if number in numbers:
                return Derivation(fact, assertion=assertion)
        if self._label(fact) == [frozenset()]:
            return Derivation(fact)  # background knowledge
        path = path | {fact}
        relation, args = fact
        for plan, text in self.plans.for_goal(relation, args):
            self._goal, self._found = args, None
            self._accept = lambda used: all(g not in path and self._supported(g, numbers) for g in used)
            try:
                plan.prove(args)
            except _Found:
                premises = [self._derive(g, numbers, path) for g in self._found]
                if all(p is not None for p in premises):
                    return Derivation(fact, rule=text, premises=premises)
        return None


def _triple(artifact) -> list | None:
    return list(artifact.fact[1]) if artifact.layer in ("claim", "edge") else None


def why(graph, artifact_id: str, explainer: Explainer | None = None, trees: int = 1) -> dict:
    """Returns an artifact's support sets with sources and triples, and derivation trees
    (for the first ``trees`` support sets) when the artifact is derived by rules."""
    graph = as_graph(graph)
    artifact = graph.artifact(artifact_id)
    label = graph.label(artifact)
    sets = []
    for support in label.support_sets():
        sets.append([_assertion(graph, a) for a in sorted(support)])
    result = {"artifact": artifact_id, "layer": artifact.layer, "triple": _triple(artifact), "label": str(label),
              "exact": label.exact, "support_sets": sets, "derivations": []}
    if explainer is not None:
        for support in label.support_sets()[:trees]:
            tree = explainer.derivation(artifact.fact, support)
            result["derivations"].append(tree)
    return result


def whynot(graph, artifact_id: str, deletion: Deletion, policy: str = "trust-all") -> dict:
    """Returns, for each support set, the deleted assertions and sources that broke it."""
    graph = as_graph(graph)
    artifact = graph.artifact(artifact_id)
    label = graph.label(artifact)
    outcome = what_if(graph, deletion, policy)
    deleted = outcome.deleted
    sets = []
    for support in label.support_sets():
        broken = sorted(a for a in support if a in deleted)
        sets.append({"support": sorted(support), "broken_by": broken,
                     "sources": sorted({graph.assertions[a].source for a in broken})})
    demoted = {d["artifact"] for d in outcome.demoted}
    status = "dead" if artifact_id in outcome.dead else "demoted" if artifact_id in demoted else "alive"
    return {"artifact": artifact_id, "layer": artifact.layer, "triple": _triple(artifact), "status": status,
            "policy": policy, "deletion": str(deletion), "exact": label.exact, "support_sets": sets}


def robustness(graph, artifact_id: str) -> dict:
    """Returns the fewest sources whose retraction kills the artifact, its independent sources,
    and the echo flag (see the module docstring); exact within the label's cap."""
    graph = as_graph(graph)
    label = graph.label(artifact_id)
    sources_of = {a: graph.assertions[a].source for support in label.support_sets() for a in support}
    source_sets = [frozenset(sources_of[a] for a in support) for support in label.support_sets()]
    sources = sorted(set().union(*source_sets)) if source_sets else []
    fewest: list[str] = []
    for size in range(1, len(sources) + 1):
        for chosen in itertools.combinations(sources, size):
            if all(group & set(chosen) for group in source_sets):
                fewest = list(chosen)
                break
        if fewest:
            break
    independent = _max_disjoint(source_sets)
    return {
        "artifact": artifact_id,
        "support_sets": len(source_sets),
        "sources": sources,
        "fewest_sources_to_kill": fewest,
        "independent_sources": independent,
        "echo": len(source_sets) >= 2 and independent == 1,
        "exact": label.exact,  # inexact: the true minimum may be larger
    }


def _max_disjoint(groups: list[frozenset]) -> int:
    """Returns the largest number of groups that are pairwise disjoint (brute force; <= cap groups)."""
    unique = list(dict.fromkeys(groups))
    for size in range(len(unique), 0, -1):
        for chosen in itertools.combinations(unique, size):
            if sum(len(g) for g in chosen) == len(frozenset().union(*chosen)):
                return size
    return 0


def top_sources(graph, limit: int = 10, policy: str = "trust-all") -> list[dict]:
    """Returns the sources whose retraction would kill the most artifacts, with counts per layer."""
    graph = as_graph(graph)
    rows = []
    for source in graph.distinct("source"):
        outcome = what_if(graph, Deletion(sources=(source,)), policy)
        layers = Counter(outcome.layer(n) for n in outcome.dead_ranks)
        rows.append({"source": source, "dead": len(outcome.dead_ranks), "by_layer": dict(layers)})
    rows.sort(key=lambda r: (-r["dead"], r["source"]))
    return rows[:limit]


def _assertion(graph: Graph, assertion_id: str) -> dict:
    a = graph.assertions[assertion_id]
    return {"id": a.id, "source": a.source, "triple": [a.subject, a.predicate, a.object]}
