"""A rule body's independent part: literals that share no variable, even through others, with
the head or with the atom whose delta drives the plan.

``a(x) :- b(x), c(y), d(y).`` holds for every ``b(x)`` as soon as some ``y`` is in both ``c``
and ``d``: joined in line, ``c`` is scanned again for every ``b`` tuple (a cross product with
the head's bindings). For unit labels (nothing to multiply) the independent part is a
yes-or-no precondition: it is run until its first match, once per evaluation of the plan,
and not again while the sizes of its relations stay the same (a relation only grows within a
stratum; a subsumption that deletes tuples changes ``Store.generation``), nor at all once it
has a match (the relations it negates are of lower strata: a match stays one).
"""

from __future__ import annotations

from typing import Callable

from polygraph_logic.datalog.joins.step_order import literal_names
from polygraph_logic.datalog.syntax import Atom, Negation


def split_independent(body: tuple, anchors: set[str], keep=None) -> tuple[tuple, tuple]:
    """Returns ``(connected, independent)``: the literals that reach ``anchors`` through shared
    variables (and ``keep``, the driver), and the others when they hold an atom (else ``()``)."""
    reach, connected = set(anchors), {id(keep)}
    changed = True
    while changed:
        changed = False
        for literal in body:
            if id(literal) not in connected and literal_names(literal) & reach:
                connected.add(id(literal))
                reach |= literal_names(literal)
                changed = True
    independent = tuple(lit for lit in body if id(lit) not in connected)
    if not any(isinstance(lit, (Atom, Negation)) for lit in independent):
        return body, ()
    return tuple(lit for lit in body if id(lit) in connected), independent


class _Found(Exception):
    """Raised by a precondition's last step at its first match."""


def precondition(run_of: Callable, literals: tuple, store) -> Callable[[], bool]:
    """Returns ``() -> bool``: whether the independent ``literals`` have a match.
    ``run_of(final)`` compiles them into ``run(b, label)`` ending in ``final`` and returns it
    with the number of slots."""
    def found(b, label):
        raise _Found

    run, size = run_of(found)
    relations = sorted({(lit.atom if isinstance(lit, Negation) else lit).relation
                        for lit in literals if isinstance(lit, (Atom, Negation))})
    cache: list = [None, False]

    def holds() -> bool:
        if cache[1] and cache[0][0] == store.generation:
            return True  # a match stays one while nothing is removed (a negated relation is of a lower stratum)
        key = (store.generation, *(len(store.relations[name]) for name in relations))
        if cache[0] != key:
            try:
                run([None] * size, None)
                result = False
            except _Found:
                result = True
            cache[0], cache[1] = key, result
        return cache[1]

    return holds
