"""Provenance circuits: a fact's provenance as the OR of its derivations, each the AND of its body facts.

A capped label (why.py) keeps at most ``cap`` support sets; where more exist, the label is
*inexact* and the fact keeps its circuit instead: every derivation of it (a rule instance,
named by the facts of its body whose provenance is not 1) and the assertions that state it
outright.  Body facts are nodes of the same circuit, so sub-circuits are shared, and a
recursive program gives a cyclic circuit read by least fixpoint: a fact holds when an
assertion stating it survives or some derivation's body facts all hold, and nothing holds
that this does not force.  That fixpoint's minimal DNF is the uncapped label (the
why-provenance of the program), which ``expand`` computes on demand.

Facts are numbers.  Facts with an exact label are leaves here: their label decides them.
Nothing in this module reads a graph; graph/circuit_build.py finds the gates and
graph/store/circuit_rows.py stores them.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Collection, Mapping, Sequence

from polygraph_logic.provenance.why import minimal

Body = tuple[int, ...]
Monomial = frozenset  # of assertion numbers


def settle(open_facts: Collection[int], dead: Collection[int], stated: Collection[int],
           derivations: Mapping[int, Sequence[Body]]) -> set[int]:
    """Returns the facts of ``open_facts`` that still hold once a deletion is applied.

    ``open_facts``: facts whose capped label lost every kept support set (their verdict is open);
    ``dead``: every fact known not to hold or open (a body fact outside ``dead`` holds);
    ``stated``: open facts a surviving assertion states (they hold outright);
    ``derivations``: each open fact's derivation bodies.

    The least fixpoint, by counting: each derivation waits on its body facts that do not hold
    yet and fires when the last of them comes to hold, so every derivation is looked at
    once per body fact: linear in the size of the circuit the open facts reach.
    """
    holding: set[int] = set()
    ready: list[int] = [f for f in open_facts if f in stated]
    waiting: dict[int, list[int]] = defaultdict(list)  # body fact -> derivations waiting on it
    heads: list[int] = []
    missing: list[int] = []  # per derivation, its body facts not holding yet
    for head in open_facts:
        if head in stated:
            continue
        for body in derivations.get(head, ()):
            blockers = {b for b in body if b in dead}
            if not blockers:
                ready.append(head)
                break
            for b in blockers:
                waiting[b].append(len(heads))
            heads.append(head)
            missing.append(len(blockers))
    while ready:
        fact = ready.pop()
        if fact in holding:
            continue
        holding.add(fact)
        for d in waiting.pop(fact, ()):
            missing[d] -= 1
            if missing[d] == 0 and heads[d] not in holding:
                ready.append(heads[d])
    return holding


class Expansion:
    """The minimal support sets of one fact, expanded from its circuit (``expand``)."""

    __slots__ = ("sets", "complete")

    def __init__(self, sets: list[Monomial], complete: bool):
        self.sets = sets  # smallest first; all of them when complete
        self.complete = complete  # False: the budget stopped the expansion (a lower bound)


def expand(root: int, label: Callable[[int], Sequence[Monomial] | Expansion | None],
           circuit: Callable[[Collection[int]], Mapping[int, tuple[Sequence[Monomial], Sequence[Body]]]],
           budget: int = 10_000) -> Expansion:
    """Returns the minimal DNF of fact ``root``: the least fixpoint of its circuit (``expand_many``
    of one root)."""
    return expand_many([root], label, circuit, budget)[root]


def expand_many(roots: Collection[int], label: Callable[[int], Sequence[Monomial] | Expansion | None],
                circuit: Callable[[Collection[int]], Mapping[int, tuple[Sequence[Monomial], Sequence[Body]]]],
                budget: int = 10_000) -> dict[int, Expansion]:
    """Returns ``{root: its minimal DNF}``: the least fixpoint of the circuit the roots reach.

    ``label(f)``: f's support sets when its stored label is exact (the full DNF), an
    ``Expansion`` when they are known only in part (incomplete: a lower bound), else None;
    ``circuit(facts)``: for facts with an inexact label, ``{fact: (stated, bodies)}``: the
    singleton sets of the assertions stating it and its derivation bodies.  The cone is read a
    level at a time for every root at once (one ``circuit`` call a level, however many roots).
    ``budget`` bounds the support sets kept per fact; past it the smallest are kept and a root
    whose cone holds such a fact is said incomplete (every set it lists is still a true support
    set only when complete; incomplete sets are sufficient but may not be minimal).
    """
    gates: dict[int, tuple[Sequence[Monomial], Sequence[Body]]] = {}
    known: dict[int, list[Monomial]] = {}
    partial: set[int] = set()  # facts whose sets are a lower bound (a capped leaf, or past the budget)
    frontier = list(roots)
    while frontier:  # the cone of facts with inexact labels that the roots' circuits reach
        asked = []
        for fact in frontier:
            if fact in gates or fact in known:
                continue
            stored = label(fact)
            if stored is None:
                asked.append(fact)
                gates[fact] = ((), ())  # a fact with no stored gate has no derivation (nothing holds it)
            elif isinstance(stored, Expansion):
                known[fact] = list(stored.sets)
                if not stored.complete:
                    partial.add(fact)
            else:
                known[fact] = list(stored)
        frontier = []
        for fact, gate in (circuit(asked) if asked else {}).items():
            gates[fact] = gate
            frontier.extend(b for body in gate[1] for b in body if b not in gates and b not in known)
    _least_fixpoint(gates, known, partial, budget)
    return {root: _expansion(root, gates, known, partial) for root in roots}


def _least_fixpoint(gates, known: dict[int, list[Monomial]], partial: set[int], budget: int) -> None:
    """Puts every gate's least-fixpoint DNF into ``known``, semi-naively: each support set a fact
    gains is multiplied once into the bodies that read the fact (with the other body facts'
    sets known so far), and what is not absorbed is the next change; a fact cut to ``budget``
    sets joins ``partial``.  Each set is propagated once, so the work follows the sets found, not
    the times a fact is looked at again (a chaotic iteration recomputing whole products took
    seconds to minutes on small cyclic circuits)."""
    users: dict[int, list[tuple[int, Body]]] = defaultdict(list)  # body fact -> (gate, body) reading it
    for fact, (_, bodies) in gates.items():
        known[fact] = []
        for body in bodies:
            for b in set(body):
                if b in gates:
                    users[b].append((fact, body))
    changes: deque[tuple[int, list[Monomial]]] = deque()
    for fact, (stated, bodies) in gates.items():  # what holds before any gate fact has a set
        candidates = list(stated)
        for body in bodies:
            if not any(b in gates for b in body):
                candidates.extend(_product([known.get(b) for b in body]))
        _gain(fact, candidates, known, partial, budget, changes)
    while changes:
        fact, new = changes.popleft()
        for user, body in users.get(fact, ()):
            candidates: list[Monomial] = []
            for i, b in enumerate(body):
                if b == fact and body.index(b) == i:  # a body fact read twice is one factor
                    candidates.extend(_product([new if c == fact else known.get(c) for c in body]))
            _gain(user, candidates, known, partial, budget, changes)


def _product(factors: list) -> list[Monomial]:
    """The minimal unions of one set from each factor (an absent or empty factor: none)."""
    product = [frozenset()]
    for factor in factors:
        if not factor:
            return []
        product = minimal(m | n for m in product for n in factor)
    return product


def _gain(fact: int, candidates: list[Monomial], known, partial: set[int], budget: int, changes) -> None:
    """Adds to ``known[fact]`` the candidates no set of it absorbs (dropping the sets they absorb),
    cut to the ``budget`` smallest; what it gained is queued as a change."""
    if not candidates:
        return
    sets = known[fact]
    gained = [m for m in minimal(candidates) if not any(k <= m for k in sets)]
    if not gained:
        return
    merged = minimal([*gained, *sets])
    if len(merged) > budget:
        merged = sorted(merged, key=lambda m: (len(m), sorted(m)))[:budget]
        partial.add(fact)
        kept = set(merged)
        gained = [m for m in gained if m in kept]
        if not gained:
            known[fact] = merged
            return
    known[fact] = merged
    changes.append((fact, gained))


def _expansion(root: int, gates, known: dict[int, list[Monomial]], partial: set[int]) -> Expansion:
    """``root``'s sets, smallest first, complete unless a fact of its cone is partial."""
    complete, seen, stack = True, {root}, [root]
    while stack and partial:
        fact = stack.pop()
        if fact in partial:
            complete = False
            break
        for body in gates.get(fact, ((), ()))[1]:
            stack.extend(b for b in body if b not in seen and not seen.add(b))
    return Expansion(sorted(known.get(root, ()), key=lambda m: (len(m), sorted(m))), complete)


__all__ = ["Body", "Expansion", "expand", "expand_many", "minimal", "settle"]
