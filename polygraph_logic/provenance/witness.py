"""Witness labels: one support set per fact, read off a circuit (gates.py) in one pass.

A capped label costs one product of labels per derivation, so its price follows the number of
alternative derivations (path multiplicity), not the closure. A witness costs one union per
derivation of the round that made the fact: the Boolean evaluation makes a fact's node in the
first round that derives it, from facts made in earlier rounds, so one pass in node order finds
every body's witness computed. A fact's witness is the assertion stating it, or the union of the
body witnesses of a derivation of that round whose body facts' witnesses are fewest in total (their
sizes summed over its distinct body facts); where several tie, the smallest of their unions (by
the cap's order: size, then the assertion ids in natural order): the same choice whichever engine
evaluates the rules, since every engine's semi-naive rounds find the same derivations.  The sums
are known before any union is made, so a fact with thousands of derivations (hubs shared by many
documents) costs the unions of the few that tie, not one each (the least union over all of them
was chosen before: at x40 with hubs, of 8.9 M derivations of one round 2.3 M tie, and the
witnesses' sizes summed over its 1.6 M facts differ by 0.03%).

A witness is a true support set (the fact is derivable from its assertions alone), so a fact
whose witness survives a deletion stands. It is *exact*, the whole minimal DNF, only when the
fact has one way to hold: background knowledge or the empty witness (label 1), or a single
stating assertion and no derivation, or derivations of one set of body facts (bodies holding
the fact itself aside; two rules, or one rule found twice, over the same facts are one way)
and no stating assertion, whose body facts are all exact. Every other fact keeps its
circuit: the verdicts a witness cannot settle are settled there (circuit.settle), exactly.
"""

from __future__ import annotations

from collections.abc import Callable

from polygraph_logic.provenance.gates import Circuit
from polygraph_logic.provenance.why import Polynomial, WhySemiring

_EMPTY = frozenset()


def _by_size(monomial: frozenset) -> tuple:
    return len(monomial), sorted(monomial)


def witness_labels(circuit: Circuit, key: Callable[[frozenset], object] | None = None,
                   ) -> tuple[list[frozenset], bytearray]:
    """Returns, per node, its witness (a set of assertion numbers) and whether it is exact;
    ``key`` orders candidate witnesses (the semiring table's ``set_key``: the cap's order;
    default: size, then the numbers)."""
    key = key or _by_size
    size = circuit.size
    offsets, gates = circuit.by_head()
    ends, bodies, flags, stated = circuit.ends, circuit.bodies, circuit.flags, circuit.stated
    # each round's nodes: [rounds[k], rounds[k + 1]); its derivations read nodes made before rounds[k]
    starts = [*circuit.rounds, size]
    witness: list[frozenset | None] = [None] * size
    exact = bytearray(size)
    base = Circuit.BASE
    made, before = 0, 0  # the round of ``node`` (its index in ``starts``) and its first node
    for node in range(size):
        while made < len(starts) - 1 and node >= starts[made]:
            before = starts[made]
            made += 1
        if flags[node] & base:
            witness[node], exact[node] = _EMPTY, 1
            continue
        numbers = stated.get(node)
        first_body = None  # the body facts of its first derivation; ``more``: another's differ
        more = False
        found, found_total = None, 0
        only = -1  # the gate of the only derivation, when it has one
        for i in range(offsets[node], offsets[node + 1]):
            g = gates[i]
            first, last = ends[g - 1] if g else 0, ends[g]
            if last - first == 1:  # one body fact (most derivations): its witness, no union
                b = bodies[first]
                if b == node:
                    continue
                if first_body is None:
                    first_body, only = b, g
                elif not more and first_body != b:
                    more = True
                if numbers or b >= before:
                    continue
                candidate = witness[b]
                total = len(candidate)
            else:
                body = bodies[first:last]
                if node in body:
                    continue
                facts = frozenset(body)
                single = next(iter(facts)) if len(facts) == 1 else facts
                if first_body is None:
                    first_body, only = single, g
                elif not more and first_body != single:
                    more = True
                if numbers or max(body, default=-1) >= before:
                    continue
                total = sum(len(witness[b]) for b in facts)
                if found is not None and total > found_total:
                    continue  # no union made: it cannot be chosen
                candidate = _EMPTY.union(*[witness[b] for b in facts])
            if found is None or total < found_total:
                found, found_key, found_total = candidate, None, total
            elif candidate != found:
                found_key = found_key or key(found)
                candidate_key = key(candidate)
                if candidate_key < found_key:
                    found, found_key = candidate, candidate_key
        ways = (len(numbers) if numbers else 0) + (first_body is not None) + more
        if numbers:
            found = frozenset((numbers[0],)) if len(numbers) == 1 else \
                min((frozenset((n,)) for n in numbers), key=key)
        elif found is None:
            raise ValueError(f"node {node} of the circuit has no derivation from the facts made before it "
                             "and no stating assertion: not a circuit a Boolean evaluation records")
        witness[node] = found
        if not found:
            exact[node] = 1
        elif ways == 1:
            exact[node] = 1 if numbers else all(exact[b] for b in circuit.gate_body(only))
    return witness, exact


def witness_polynomials(circuit: Circuit, semiring: WhySemiring) -> dict[int, Polynomial]:
    """Returns ``{node: label}``: each node's witness as a label of one support set (the
    semiring's 1 for the empty one), exact as ``witness_labels`` says."""
    witness, exact = witness_labels(circuit, semiring.table.set_key)
    table, one = semiring.table, semiring.one()
    # a witness passed on through one-fact bodies is one object: one label per object and flag
    made: dict[tuple[int, int], Polynomial] = {}
    labels = {}
    for node, (found, flag) in enumerate(zip(witness, exact)):
        if not found:
            labels[node] = one
            continue
        key = (id(found), flag)
        label = made.get(key)
        if label is None:
            label = made[key] = Polynomial(frozenset((found,)), flag == 1, table)
        labels[node] = label
    return labels


__all__ = ["witness_labels", "witness_polynomials"]
