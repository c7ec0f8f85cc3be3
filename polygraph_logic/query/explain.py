"""Why an artifact stands, why it fell, and how robust it is to retractions.

- ``why``: its support sets with each assertion's source and triple, and for a
  derived fact a derivation tree: the rules and facts that produce it from one
  support set.
- ``whynot``: after a deletion, which deleted assertions (and sources) broke each set.
- ``robustness``: the fewest sources whose retraction kills it (a minimum hitting set
  over the sources of its support sets), how many of its support sets share no source
  (support sets with pairwise disjoint sources), and over evidential origins (``derived_from``
  collapses sources into origins, see origins.py): its ``paths``, its distinct ``origins``
  (the design's N_prov), its ``independent_supports`` (support sets with no origin in
  common), the fewest origins that kill it, and an echo flag when it has several paths and
  one origin.

``why`` and ``robustness`` take distrusted kinds (kinds.py): a support set holding an
assertion of a distrusted kind cannot support; it is listed, marked, and not counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.fact_store import ScopedFacts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import layer_order
from polygraph_logic.graph.kinds import check_kinds
from polygraph_logic.query.circuit_support import expanded
from polygraph_logic.query.origins import Origins, fewest_to_kill, graph_origins, max_disjoint, origin_counts
from polygraph_logic.graph.goal_plans import FactKey, GoalPlans, stated_by
from polygraph_logic.datalog.syntax import format_value
from polygraph_logic.query.whatif import Deletion, as_graph, what_if
from polygraph_logic.query.rests_on import rests_on  # noqa: F401  (re-exported: it lived here)
from polygraph_logic.query.whatif_batch import SourceWhatIfs


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
        self._stating: dict | None = None  # the support set's assertions, with a scope
        # each fact's value is the one-fact tuple of itself: a derivation's label lists its premises
        witness = lambda relation, args: ((relation, args),)  # noqa: E731
        # where one row costs a row group (a folder), a derivation's premises are read at once (its scope)
        self._scoped = None if self.graph.store.point_reads else ScopedFacts(witness)
        self.plans = GoalPlans(self.graph, witness, _Witness(), self._emit, self._scoped)

    def _emit(self, relation, tup, used) -> None:
        if tup == self._goal and self._accept(used):
            self._found = used
            raise _Found

    def _label(self, fact: FactKey) -> list[frozenset[int]] | None:
        if fact not in self._labels:
            blob = self.graph.fact_label(*fact)
            self._labels[fact] = None if blob is None else [frozenset(g) for g in self.graph.decode(blob)]
        return self._labels[fact]

    def derivation(self, fact: FactKey, support: frozenset[str]) -> Derivation | None:
        """Returns a derivation tree of ``fact`` from the assertions of ``support`` alone."""
        numbers = frozenset(self.graph.numbers("id", support))
        self._stating = None
        if self._scoped is not None:
            self._scope(numbers)
        return self._derive(fact, numbers, frozenset())

    def _scope(self, numbers: frozenset[int]) -> None:
        """Reads at once the facts a derivation from ``numbers`` may use (those with a support set
        inside them, and background facts) into the scoped store, and their labels; without a
        scope (the graph cannot tell), every rule looks its facts up in the graph."""
        rows = self.graph.support_scope(numbers)
        if rows is None:
            self.plans.scoped = self._scoped = None
            return
        facts = []
        for _num, relation, args, blob in rows:
            fact = (relation, self.graph.args(args))
            label = [frozenset(g) for g in self.graph.decode(blob)]
            self._labels[fact] = label
            if any(group <= numbers for group in label):
                facts.append(fact)
        self._scoped.scope(facts)
        self._stating = self.graph.assertions.numbered(numbers)

    def _supported(self, fact: FactKey, numbers: frozenset[int]) -> bool:
        return any(group <= numbers for group in self._label(fact) or ())

    def _derive(self, fact: FactKey, numbers: frozenset[int], path: frozenset) -> Derivation | None:
        # with a scope, the support set's assertions: all a derivation from it may cite
        for number, assertion in sorted(stated_by(self.graph, fact, self._stating).items()):
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


def why(graph, artifact_id: str, explainer: Explainer | None = None, trees: int = 1,
        distrust: tuple[str, ...] = (), sets: int | None = None) -> dict:
    """Returns an artifact's support sets with sources, kinds and triples, and derivation trees
    (for the first ``trees`` support sets) when the artifact is derived by rules.  With
    ``distrust`` (kinds), ``distrusted`` marks each set holding an assertion of those kinds
    and ``stands`` says whether any other set supports the artifact.  With ``sets``, at most
    that many support sets, the smallest first; for a capped label they are expanded from the
    graph's circuit (circuit_support.py), and ``expanded`` says how many there are in all and
    whether the expansion is complete."""
    graph = as_graph(graph)
    distrust = check_kinds(distrust)
    artifact = graph.artifact(artifact_id)
    label = graph.label(artifact)
    supports, expansion = label.support_sets(), None
    if sets is not None and not label.exact:
        found = expanded(graph, artifact.fact)
        if found is not None:
            supports = _named_sets(graph, found.sets)
            expansion = {"support_sets": len(supports), "complete": found.complete}
    supports = supports if sets is None else supports[:sets]
    named = graph.assertions.named({a for support in supports for a in support})
    listed = [[_assertion(named[a][1]) for a in sorted(support)] for support in supports]
    result = {"artifact": artifact_id, "layer": artifact.layer, "triple": _triple(artifact), "label": str(label),
              "exact": label.exact, "support_sets": listed, "derivations": []}
    if expansion is not None:
        result["expanded"] = expansion
    if distrust:
        marks = [any(a["kind"] in distrust for a in support) for support in listed]
        result.update(distrusted_kinds=list(distrust), distrusted=marks, stands=not all(marks))
    if explainer is not None:
        for support in supports[:trees]:
            tree = explainer.derivation(artifact.fact, support)
            result["derivations"].append(tree)
    return result


def full_support(graph, artifact) -> tuple[list[frozenset], bool]:
    """An artifact's support sets (assertion ids) and whether they are all of them: an exact
    label's, else every minimal support set expanded from the graph's circuit when the expansion
    completes (circuit_support.py), else the label's own (capped, or one witness)."""
    label = graph.label(artifact)
    if label.exact:
        return label.support_sets(), True
    found = expanded(graph, artifact.fact)
    if found is None or not found.complete:
        return label.support_sets(), False
    return _named_sets(graph, found.sets), True


def _named_sets(graph, sets) -> list[frozenset]:
    """Support sets of assertion numbers (an expansion's) as sets of assertion ids."""
    names = graph.names({n for m in sets for n in m})
    return [frozenset(names[n] for n in m) for m in sets]


def whynot(graph, artifact_id: str, deletion: Deletion, policy: str = "trust-all") -> dict:
    """Returns, for each support set (all of them, expanded from the circuit when the label is
    capped), the deleted assertions and sources that broke it."""
    graph = as_graph(graph)
    artifact = graph.artifact(artifact_id)
    supports, exact = full_support(graph, artifact)
    outcome = what_if(graph, deletion, policy)
    deleted = outcome.deleted
    source = graph.sources_of(a for support in supports for a in support if a in deleted)
    sets = []
    for support in supports:
        broken = sorted(a for a in support if a in deleted)
        sets.append({"support": sorted(support), "broken_by": broken,
                     "sources": sorted({source[a] for a in broken})})
    demoted = {d["artifact"] for d in outcome.demoted}
    status = "dead" if artifact_id in outcome.dead else "demoted" if artifact_id in demoted else "alive"
    return {"artifact": artifact_id, "layer": artifact.layer, "triple": _triple(artifact), "status": status,
            "policy": policy, "deletion": str(deletion), "exact": exact, "support_sets": sets}


def robustness(graph, artifact_id: str, origins: "Origins | str | None" = None,
               distrust: tuple[str, ...] = ()) -> dict:
    """Returns the fewest sources (and origins) whose retraction kills the artifact, its
    support sets with no source in common, its paths, distinct origins and independent supports
    (support sets with no origin in common: sources of one origin are not independent), and the echo
    flag (see the module docstring and origins.py).  A capped label's support sets are all
    expanded from the graph's circuit; where that cannot be done whole (``exact`` false) every
    count is a lower bound (``lower_bounds``).  ``origins`` overrides the graph's stored
    ``derived_from`` mapping; support sets holding a ``distrust`` kind are not counted."""
    graph = as_graph(graph)
    distrust = check_kinds(distrust)
    origins = graph_origins(graph, origins)
    supports, exact = full_support(graph, graph.artifact(artifact_id))
    distrusted = 0
    if distrust:
        kind = graph.kinds_of((a for support in supports for a in support))
        trusted = [s for s in supports if not any(kind[a] in distrust for a in s)]
        distrusted, supports = len(supports) - len(trusted), trusted
    sources_of = graph.sources_of(a for support in supports for a in support)
    source_sets = [frozenset(sources_of[a] for a in support) for support in supports]
    origin_sets = [origins.origin_set(group) for group in source_sets]
    sources = sorted(set().union(*source_sets)) if source_sets else []
    counts = origin_counts(origin_sets)
    result = {
        "artifact": artifact_id,
        "support_sets": len(source_sets),
        "sources": sources,
        "fewest_sources_to_kill": fewest_to_kill(source_sets),
        "independent_sources": max_disjoint(source_sets),
        "paths": counts["paths"],
        "paths_counted": "support_sets",  # why-provenance keeps no derivation multiplicity
        "origins": counts["origins"],
        "independent_supports": counts["independent_supports"],
        "origin_clusters": origins.clusters(sources),
        "fewest_origins_to_kill": fewest_to_kill(origin_sets),
        "echo": counts["echo"],
        "exact": exact,
        "lower_bounds": not exact,  # a capped label not expanded lists only its smallest support sets
    }
    if distrust:
        result.update(distrusted_kinds=list(distrust), distrusted_sets=distrusted)
    return result


def top_sources(graph, limit: int = 10, policy: str = "trust-all", by: str = "source",
                origins: "Origins | str | None" = None, beyond: Deletion | None = None) -> list[dict]:
    """Returns the sources (``by="origin"``: the evidential origins, each retracting every
    source derived from it) whose retraction would kill the most artifacts, with counts per layer;
    with ``beyond`` (a deletion under way), those it does not retract yet, ranked by what each
    kills on top of it (the artifacts standing under it that retracting the source too kills)."""
    graph = as_graph(graph)
    if by not in ("source", "origin"):
        raise PolygraphError("bad_argument", f"rank by 'source' or 'origin', not {by!r}")
    if by == "source" and policy == "trust-all" and not beyond:
        return _top_by_bounds(graph, limit)
    if by == "source":
        groups = {source: [source] for source in graph.distinct("source")}
    else:
        groups = graph_origins(graph, origins).clusters(graph.distinct("source"))
    base = beyond or Deletion()
    dead_now = set(what_if(graph, base, policy).dead_ranks) if beyond else set()
    rows = []
    for name, sources in groups.items():
        if beyond and set(sources) <= set(beyond.sources):
            continue
        outcome = what_if(graph, base + Deletion(sources=tuple(sources)), policy)
        killed = outcome.dead_ranks - dead_now
        row = {by: name, "dead": len(killed), "by_layer": _by_layer(outcome, killed)}
        if by == "origin":
            row["sources"] = sources
        rows.append(row)
    rows.sort(key=lambda r: (-r["dead"], r[by]))
    return rows[:limit]


def _by_layer(outcome, ranks=None) -> dict[str, int]:
    """How many artifacts died per layer (of ``ranks``, by default all the dead), in layer order
    (whatever order the rows were read in)."""
    layers = Counter(outcome.layer(n) for n in (outcome.dead_ranks if ranks is None else ranks))
    return {layer: layers[layer] for layer in sorted(layers, key=layer_order)}


#: the fewest what-ifs whose rows top-sources reads at once (whatif_batch.py)
BATCH = 4


def _top_by_bounds(graph: Graph, limit: int) -> list[dict]:
    """top_sources under trust-all without a what-if per source: every source's label kills
    (one pass over the labels, graph.label_kills) bound its dead count from above, so the
    sources are evaluated in falling order of their bounds until no bound left can reach the
    ``limit``-th count found (ties broken by name, as the full ranking breaks them); the rows of
    the what-ifs still needed are read a batch of sources at a time (whatif_batch.py).  The same
    rows as a what-if for every source."""
    bounds = graph.label_kills()
    order = sorted(graph.distinct("source"), key=lambda s: (-bounds.get(s, 0), s))
    rows: list[dict] = []
    batch = None
    for at, source in enumerate(order):
        bound = bounds.get(source, 0)
        if len(rows) >= limit:
            kth = sorted(rows, key=lambda r: (-r["dead"], r["source"]))[limit - 1]
            if bound < kth["dead"] or (bound == kth["dead"] and source > kth["source"]):
                break
        if bound == 0:  # nothing of it can die: no what-if to run
            rows.append({"source": source, "dead": 0, "by_layer": {}})
            continue
        if batch is None or source not in batch.deleted:
            # the rows of as many what-ifs as the ranking still needs, read at once
            batch = SourceWhatIfs(graph, [s for s in order[at:at + max(limit - len(rows), BATCH)] if bounds.get(s, 0)])
        outcome = batch.outcome(source)
        rows.append({"source": source, "dead": len(outcome.dead_ranks), "by_layer": _by_layer(outcome)})
    rows.sort(key=lambda r: (-r["dead"], r["source"]))
    return rows[:limit]


def _assertion(a) -> dict:
    negated = {"negated": True} if a.negated else {}  # it denies the triple (a NOT annotation)
    return {"id": a.id, "source": a.source, "kind": a.kind, "triple": [a.subject, a.predicate, a.object], **negated}
