"""The verdicts of a what-if, decided on the rows a deletion touches (see whatif.py).

Every question here is one indexed query of the store (graph/store/questions.py): the touched artifacts with their labels,
the touched facts (for re-derivation), the stating assertions of a capped claim, the
edge fact behind a dead claim, and the sentences of the summaries concerned.
"""

from __future__ import annotations

from polygraph_logic.graph.goal_plans import stated_by
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.settling import by_numbers
from polygraph_logic.provenance.circuit import settle
from polygraph_logic.query.policies import layer_rules, trusts_sentences
from polygraph_logic.query.rederive import Rederiver
from polygraph_logic.query.revival import revived_in_store


def decide(graph: Graph, deleted: frozenset[int], outcome, rederiver=None) -> None:
    """Fills ``outcome`` (a whatif.Outcome) with the verdicts of deleting assertion numbers ``deleted``."""
    policy = outcome.policy
    rows, label_dead, inexact, fact_of, parts = outcome.rows, set(), set(), {}, {}
    outcome.decode_args = graph.args
    for num, id_, layer, fact, summary, args, blob, exact in graph.touched_artifacts(deleted):
        rows[num] = (id_, layer)
        fact_of[num] = fact
        if layer in ("claim", "edge"):
            outcome.raw_triples[num] = args  # decoded when read (Outcome.triple)
        if summary is not None:
            parts[num] = summary
        if not any(deleted.isdisjoint(group) for group in graph.decode(blob)):
            label_dead.add(num)
            if not exact:
                inexact.add(num)
    revived: set[int] = set()  # fact numbers re-derivation found alive
    if outcome.exact and policy != "flat":
        revived = _revived(graph, deleted, outcome, rederiver)
        label_dead = {n for n in label_dead if fact_of[n] not in revived}
    rules = layer_rules(policy)  # the layers that do not trust their labels (policies.py); None: flat, deployed
    if policy == "flat":
        dies = set(rows)
    elif policy == "deployed":
        dies = {n for n in label_dead if rows[n][1] == "claim"
                and (n not in inexact or deleted.issuperset(graph.stating(outcome.triple(n))))}
    else:
        dies = label_dead | {n for n in rows if rules.get(rows[n][1]) == "distrust"}
        if rules.get("summary") == "distrust-flat":  # a flat summary (no sentence points at it) when touched
            dies |= {n for n in rows if rows[n][1] == "summary" and n not in parts}
    uncertain = set()
    if not outcome.exact and policy not in ("flat", "deployed"):
        uncertain = dies & inexact
    if policy != "flat" and (rules or {}).get("edge") != "distrust":
        uncertain |= _demote(graph, deleted, dies, label_dead, outcome, revived)
    _trim_summaries(graph, parts, dies, trusts_sentences(rules), outcome)
    outcome.dead_ranks = dies
    outcome.uncertain_ranks = uncertain & dies


def _revived(graph: Graph, deleted: frozenset[int], outcome, rederiver) -> set[int]:
    """Settles dead verdicts on inexact labels, through the graph's circuit when it has one (else by
    re-derivation from the rules); returns the revived fact numbers."""
    if graph.has_circuit() and graph.store.checks_in_sql:
        return _settled_in_store(graph, deleted, outcome)
    dead: dict[tuple, int] = {}
    uncertain = set()
    for num, relation, args, blob, exact in graph.touched_facts(deleted):
        if not any(deleted.isdisjoint(group) for group in graph.decode(blob)):
            key = (relation, graph.args(args))
            dead[key] = num
            if not exact:
                uncertain.add(key)
    if not uncertain:
        return set()
    if graph.has_circuit():
        return _settled(graph, deleted, outcome, dead, uncertain)
    if rederiver is None:
        rederiver = Rederiver(graph)
    revived = rederiver.revive(uncertain, set(dead), deleted)
    outcome.settled, outcome.revived, outcome.settled_by = len(uncertain), len(revived), "rederivation"
    return {dead[key] for key in revived}


def _settled(graph: Graph, deleted: frozenset[int], outcome, dead: dict[tuple, int], uncertain: set[tuple]) -> set[int]:
    """The least fixpoint of the stored circuit over the open facts (provenance/circuit.py): an open
    fact holds when a surviving assertion states it or some derivation's body facts all hold; a
    body fact holds unless its label died or the version read no longer has it."""
    open_facts = {dead[key] for key in uncertain}
    from polygraph_logic.graph.circuit_build import completed  # noqa: PLC0415  (the rules' reader loads the parser: only when a marked circuit is read)
    derivations = {fact: [body for _, body in found] for fact, found in completed(graph, open_facts).items()}
    known_dead = set(dead.values())
    bodies = {b for found in derivations.values() for body in found for b in body} - known_dead
    known_dead |= bodies - graph.facts_present(bodies)
    stated = {dead[key] for key in uncertain if set(stated_by(graph, key)) - deleted}
    holding = settle(open_facts, known_dead, stated, derivations)
    outcome.settled, outcome.revived, outcome.settled_by = len(open_facts), len(holding), "circuit"
    return holding


def _settled_in_store(graph: Graph, deleted: frozenset[int], outcome) -> set[int]:
    """``_settled`` asked of a store that answers in SQL (a folder): the store finds the open facts
    and the derivations that can still fire, and only those reach Python (revival.revived_in_store;
    the derivations of every open fact read into memory grew past 16 GB on a 2,440-source deletion
    of the x40 graph with hubs)."""
    holding, opened = revived_in_store(graph, by_numbers(deleted))
    if opened:
        outcome.settled, outcome.revived, outcome.settled_by = opened, len(holding), "circuit"
    return holding


def _demote(graph: Graph, deleted: frozenset[int], dies: set[int], label_dead: set[int], outcome,
            revived: set[int]) -> set[int]:
    """Moves claims that died by their label but whose triple is still entailed (as an edge) from
    ``dies`` to ``outcome.demotions``; returns the claims whose edge label is capped and dead (uncertain)."""
    uncertain = set()
    # the claim's stored arguments are the edge fact's key too: one query for every candidate
    claims = {outcome.raw_triples[n]: n for n in dies & label_dead if outcome.rows[n][1] == "claim"}
    if not claims:
        return uncertain
    rows = graph.edge_rows(claims)
    for args, fact, blob, exact in sorted(rows, key=lambda row: claims[row[0]]):
        n = claims[args]
        surviving = [g for g in graph.decode(blob) if deleted.isdisjoint(g)]
        if surviving or fact in revived:
            names = graph.names(x for g in surviving for x in g)
            outcome.demotions[n] = {"artifact": outcome.rows[n][0], "triple": outcome.triple(n),
                                    "support": [[names[x] for x in g] for g in surviving],
                                    "rederived": not surviving}
            dies.discard(n)
        elif not exact and not outcome.exact:
            uncertain.add(n)
    return uncertain


def _trim_summaries(graph: Graph, parts: dict[int, int], dies: set[int], trusting: bool, outcome) -> None:
    """Keeps a sentence-level summary with its dead sentences dropped while any sentence stands;
    a removed summary takes its sentences with it (``outcome.rows`` and ``dies`` are updated).

    Only the summaries whose own row or a sentence's row is touched are looked at; ``trusting``
    False (policies.trusts_sentences), a summary dies by its own verdict and takes its sentences."""
    if not parts:
        return
    rows = outcome.rows
    members: dict[int, list[tuple[int, str]]] = {}
    names: dict[int, str] = {}
    for summary, num, id_, layer in graph.summary_parts(parts.values()):
        if layer == "sentence":
            members.setdefault(summary, []).append((num, id_))
        else:
            names[summary] = id_
    for summary in sorted(names, key=names.get):
        sentences = members.get(summary, [])
        dead = [n for n, _ in sentences if n in dies]
        removed = len(dead) == len(sentences) if trusting else summary in dies
        if summary in rows:
            dies.discard(summary)
            if removed:
                dies.add(summary)
        if removed:
            for n, id_ in sentences:
                rows.setdefault(n, (id_, "sentence"))
                dies.add(n)
        status = "removed" if removed else ("trimmed" if dead else "kept")
        outcome.summaries[names[summary]] = {"status": status, "sentences": len(sentences),
                                             "dead_sentences": len(dead)}
