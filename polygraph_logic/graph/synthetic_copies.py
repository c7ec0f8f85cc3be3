"""The synthetic graph grown by copies: disjoint copies of its shape, optionally sharing hub entities.

``generate_copies`` makes scale measurements (x10, x40, x400: every copy a graph of the paper's
shape, names prefixed ``copyK/``); ``share_hubs`` joins the copies at their busiest places and
wholes, as the hub entities of a real graph join its parts (a cell's nucleus, an organ).
"""

from __future__ import annotations

from collections import Counter

from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.records import Receipt, Sentence
from polygraph_logic.graph.synthetic import SyntheticGraph, generate


def generate_copies(copies: int, seed: int = 0, hubs: int = 0, hub_sides: str = "hub", hub_cycles: str = "keep",
                    **parameters) -> SyntheticGraph:
    """Returns ``generate(seed, **parameters)`` and ``copies - 1`` disjoint copies of its shape.

    Copy k is ``generate(seed + k, **parameters)`` with every name (assertion, source, entity,
    artifact) prefixed ``copyK/``: the graph grows ``copies`` times, in time linear in it, and
    a deletion in the first copy touches what it touches in ``generate(seed, ...)`` alone.
    One copy is ``generate(seed, **parameters)`` itself.  With ``hubs``, the copies share the
    ``hubs`` busiest places and wholes of the first copy (``share_hubs``): hub entities, as
    every real graph has; ``hub_sides`` and ``hub_cycles`` say how (``share_hubs``).
    """
    if copies < 1:
        raise ValueError(f"need copies >= 1, got {copies}")
    if hubs < 0:
        raise ValueError(f"need hubs >= 0, got {hubs}")
    graph = _copies(copies, seed, **parameters)
    if hubs:
        graph = share_hubs(graph, hubs, hub_sides, hub_cycles)
        graph.parameters["hubs"] = hubs
        if hub_sides != "hub":
            graph.parameters.update(hub_sides=hub_sides, hub_cycles=hub_cycles)
    return graph


#: where a hub sits in an assertion, per predicate: located_in and part_of objects, has_part subjects
HUB_SIDES = {"RO:0001025": "object", "BFO:0000050": "object", "BFO:0000051": "subject"}


def share_hubs(graph: SyntheticGraph, hubs: int, sides: str = "hub", cycles: str = "keep") -> SyntheticGraph:
    """The copies with the ``hubs`` busiest located_in / part_of targets of the first copy shared
    (their copy prefix dropped), so that every copy's edges meet there.

    ``sides="hub"``: in a later copy a hub is shared on its hub side only (the whole of part_of,
    the place of located_in); the copy's own edges out of an entity named like a hub stay with
    its own entity.  ``sides="both"``: shared on both sides, as a graph merged from many
    documents shares "nucleus" or "apoptosis": every copy's edges into and out of a hub meet
    there, and the copies' differing hierarchies among the hubs meet too.  That can join hubs
    into part_of / located_in cycles (at x40 with 40 hubs, 22 hubs part of each other), as
    extraction noise does; ``cycles="break"`` leaves unshared (with the copy's own entity) each
    edge between two hubs that would close such a cycle, ``"keep"`` keeps them."""
    if sides not in ("hub", "both"):
        raise ValueError(f"hub sides must be 'hub' or 'both', got {sides!r}")
    if cycles not in ("keep", "break"):
        raise ValueError(f"hub cycles must be 'keep' or 'break', got {cycles!r}")
    degree: Counter = Counter()
    for a in graph.assertions:
        side = HUB_SIDES.get(a.predicate)
        if side and not a.id.startswith("copy"):
            degree[getattr(a, side)] += 1
    shared = {name for name, _ in degree.most_common(hubs)}

    def unprefix(name: str) -> str:
        head, _, rest = name.partition("/")
        return rest if head.startswith("copy") and rest in shared else name

    def renamed(a: Assertion) -> Assertion:
        side = HUB_SIDES.get(a.predicate) if a.id.startswith("copy") and sides == "hub" else None
        subject = a.subject if side == "object" else unprefix(a.subject)
        obj = a.object if side == "subject" else unprefix(a.object)
        return Assertion(a.id, a.source, subject, a.predicate, obj, a.text)

    out = [renamed(a) for a in graph.assertions]
    if sides == "both" and cycles == "break":
        out = [b if b is a or not _closes_cycle(b, shared, above) else a
               for above in [{}] for a, b in zip(graph.assertions, out)]
    graph.assertions = out
    return graph


#: the containment predicates a hub hierarchy is made of (has_part is part_of read backwards)
_UPWARD = {"RO:0001025": False, "BFO:0000050": False, "BFO:0000051": True}


def _closes_cycle(a: Assertion, shared: set[str], above: dict[str, set[str]]) -> bool:
    """Whether the containment edge ``a`` between two shared hubs closes a cycle with the edges
    among hubs kept before it (``above``: hub -> hubs it is directly in or part of; updated)."""
    backwards = _UPWARD.get(a.predicate)
    if backwards is None or a.subject not in shared or a.object not in shared:
        return False
    low, high = (a.object, a.subject) if backwards else (a.subject, a.object)
    stack, seen = [high], set()
    while stack:  # is low above high already?
        node = stack.pop()
        if node == low:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(above.get(node, ()))
    above.setdefault(low, set()).add(high)
    return False


def _copies(copies: int, seed: int, **parameters) -> SyntheticGraph:
    base = generate(seed, **parameters)
    if copies == 1:
        return base
    assertions, receipts, retracted = list(base.assertions), list(base.receipts), list(base.retracted)
    for k in range(1, copies):
        other, tag = generate(seed + k, **parameters), f"copy{k}/"

        def sets(groups, tag=tag):
            return tuple(frozenset(tag + a for a in group) for group in groups)

        assertions += [Assertion(tag + a.id, tag + a.source, tag + a.subject, a.predicate, tag + a.object, a.text)
                       for a in other.assertions]
        for r in other.receipts:
            content = {key: tag + value if key in ("canonical", "hub") else
                       [tag + v for v in value] if key in ("members", "entities") else value
                       for key, value in r.content.items()}
            sentences = tuple(Sentence(s.text, sets(s.support)) for s in r.sentences)
            receipts.append(Receipt(tag + r.artifact, r.layer, content, sets(r.support), sentences))
        retracted += [tag + source for source in other.retracted]
    return SyntheticGraph({**base.parameters, "copies": copies}, assertions, receipts, retracted)
