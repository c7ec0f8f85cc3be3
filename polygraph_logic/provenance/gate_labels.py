"""Sums of products read off a circuit (gates.py): the display of its facts' provenance.

A node's label is the sum of the assertions stating it (one for background knowledge) and,
for each gate, the product of its body nodes' labels, in the why semiring given (capped or
not). On a cyclic circuit that is a least fixpoint, reached by Kleene iteration from zero:
nodes are first computed in the order they were made (a fact's first derivation uses older
facts, so that order is nearly topological), then any node whose label changed after a later
node read it is recomputed, and so on, until nothing changes. Uncapped, the result is the
why-provenance of each fact; capped, each label keeps the smallest support sets, as the
semi-naive evaluation in the why semiring does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from polygraph_logic.provenance.gates import Circuit
from polygraph_logic.provenance.why import Polynomial, WhySemiring


def gate_labels(circuit: Circuit, semiring: WhySemiring, targets: Iterable[int] | None = None,
                deleted: frozenset[int] = frozenset(), known: Mapping[int, Polynomial] | None = None,
                ) -> dict[int, Polynomial]:
    """Returns ``{node: label}`` for ``targets`` and every node their gates read (default: every node).

    ``deleted``: assertion numbers set to false. ``known``: labels taken as given (nodes
    whose label the deletion cannot change), not recomputed and not returned.
    """
    known = known or {}
    nodes = range(circuit.size) if targets is None else sorted(_needed(circuit, targets, known))
    inside = set(nodes) if targets is not None else None
    offsets, gates = circuit.by_head()
    ends, bodies, flags, stated, heads = circuit.ends, circuit.bodies, circuit.flags, circuit.stated, circuit.heads
    plus, times, zero, one = semiring.plus, semiring.times, semiring.zero(), semiring.one()
    variables: dict[int, Polynomial] = {}
    table = semiring.table
    label: dict[int, Polynomial] = {}
    get = label.get

    def value(b: int) -> Polynomial:
        found = get(b)
        if found is not None:
            return found
        return known.get(b, zero)

    def compute(node: int) -> Polynomial:
        if flags[node] & Circuit.BASE:
            return one
        total = zero
        for number in stated.get(node, ()):
            if number not in deleted:
                var = variables.get(number)
                if var is None:
                    var = variables[number] = Polynomial(frozenset({frozenset({number})}), True, table)
                total = plus(total, var)
        for i in range(offsets[node], offsets[node + 1]):
            g = gates[i]
            product = one
            for b in bodies[ends[g - 1] if g else 0:ends[g]]:
                product = times(product, value(b))
                if product is zero:
                    break
            if product is not zero:
                total = plus(total, product)
                if total is one:
                    break
        return total

    by_body_offsets, by_body = circuit.by_body()
    pending: set[int] = set()
    for node in nodes:
        label[node] = compute(node)
        if label[node] is not zero:  # readers made before it read zero: they compute again
            for i in range(by_body_offsets[node], by_body_offsets[node + 1]):
                head = heads[by_body[i]]
                if head < node and (inside is None or head in inside):
                    pending.add(head)
    while pending:
        work, pending = sorted(pending), set()
        for node in work:
            new = compute(node)
            if new == label[node]:
                continue
            label[node] = new
            for i in range(by_body_offsets[node], by_body_offsets[node + 1]):
                head = heads[by_body[i]]
                if inside is None or head in inside:
                    pending.add(head)
    return label


def _needed(circuit: Circuit, targets: Iterable[int], known: Mapping[int, Polynomial]) -> set[int]:
    """Returns the targets and every node their gates reach, stopping at ``known`` nodes."""
    offsets, gates = circuit.by_head()
    ends, bodies = circuit.ends, circuit.bodies
    seen: set[int] = set()
    stack = [t for t in targets if t not in known]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for i in range(offsets[node], offsets[node + 1]):
            g = gates[i]
            for b in bodies[ends[g - 1] if g else 0:ends[g]]:
                if b not in seen and b not in known:
                    stack.append(b)
    return seen


__all__ = ["gate_labels"]
