"""Witness labels: one support set per fact, read off a circuit (gates.py) in one pass.

A capped label costs one product of labels per derivation, so its price follows the number of
alternative derivations (path multiplicity), not the closure. A witness costs one union per fact:
the assertion stating it, or the union of the witnesses of the body of its first derivation. The
Boolean evaluation makes a fact's node when its first derivation fires, from facts it already
holds, so every body node of that derivation is older than the fact and one pass in node order
computes them all.

A witness is a true support set (the fact is derivable from its assertions alone), so a fact
whose witness survives a deletion stands. It is *exact*, the whole minimal DNF, only when the
fact has one way to hold: background knowledge or the empty witness (label 1), or a single
stating assertion and no derivation, or a single derivation (bodies holding the fact itself
aside) and no stating assertion whose body facts are all exact. Every other fact keeps its
circuit: the verdicts a witness cannot settle are settled there (circuit.settle), exactly.
"""

from __future__ import annotations

from polygraph_logic.provenance.gates import Circuit
from polygraph_logic.provenance.why import Polynomial, WhySemiring

_EMPTY = frozenset()


def witness_labels(circuit: Circuit) -> tuple[list[frozenset], bytearray]:
    """Returns, per node, its witness (a set of assertion numbers) and whether it is exact."""
    size = circuit.size
    offsets, gates = circuit.by_head()
    ends, bodies, flags, stated = circuit.ends, circuit.bodies, circuit.flags, circuit.stated
    witness: list[frozenset | None] = [None] * size
    exact = bytearray(size)
    late = []  # nodes whose first derivations read a node not computed yet (not made by a Boolean pass)
    for node in range(size):
        if not _compute(node, witness, exact, offsets, gates, ends, bodies, flags, stated):
            late.append(node)
    while late:  # a circuit built otherwise: compute what can be, until nothing more can
        waiting = [node for node in late if not _compute(node, witness, exact, offsets, gates, ends, bodies,
                                                         flags, stated)]
        if len(waiting) == len(late):
            raise ValueError(f"{len(late)} node(s) of the circuit have no well-founded derivation")
        late = waiting
    return witness, exact


def _compute(node, witness, exact, offsets, gates, ends, bodies, flags, stated) -> bool:
    """Sets ``node``'s witness and exactness; False when no derivation of it can be read yet."""
    if flags[node] & Circuit.BASE:
        witness[node], exact[node] = _EMPTY, 1
        return True
    numbers = stated.get(node, ())
    ways = len(numbers)
    first = None
    one_way = None  # the body of the only derivation, when it has one
    for i in range(offsets[node], offsets[node + 1]):
        g = gates[i]
        body = bodies[ends[g - 1] if g else 0:ends[g]]
        if node in body:
            continue
        ways += 1
        one_way = body
        if first is None and not numbers and all(witness[b] is not None for b in body):
            first = _EMPTY.union(*(witness[b] for b in body))
    if numbers:
        found = frozenset((min(numbers),))
    elif first is not None:
        found = first
    elif ways:
        return False
    else:  # no Boolean evaluation makes a node nothing derives or states
        raise ValueError(f"node {node} of the circuit has no derivation and no stating assertion")
    witness[node] = found
    if not found:
        exact[node] = 1
    elif ways == 1:
        exact[node] = 1 if numbers else all(exact[b] for b in one_way)
    return True


def witness_polynomials(circuit: Circuit, semiring: WhySemiring) -> dict[int, Polynomial]:
    """Returns ``{node: label}``: each node's witness as a label of one support set (the
    semiring's 1 for the empty one), exact as ``witness_labels`` says."""
    witness, exact = witness_labels(circuit)
    table, one = semiring.table, semiring.one()
    made: dict[tuple, Polynomial] = {}
    labels = {}
    for node, (found, flag) in enumerate(zip(witness, exact)):
        if not found:
            labels[node] = one
            continue
        key = (found, flag)
        label = made.get(key)
        if label is None:
            label = made[key] = Polynomial(frozenset((found,)), bool(flag), table)
        labels[node] = label
    return labels


__all__ = ["witness_labels", "witness_polynomials"]
