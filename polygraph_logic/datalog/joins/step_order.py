"""The order of a join plan's steps: each filter as early as its variables are bound, then
the atom with the fewest expected matches per binding."""

from __future__ import annotations

import heapq
from typing import Any, Sequence

from polygraph_logic.datalog.checks.safety import assignment_target, existential, literal_terms, term_variables
from polygraph_logic.datalog.syntax import Aggregate, Arithmetic, Atom, Comparison, Constant, Constraint, Functor, \
    Negation, Variable, Wildcard
from polygraph_logic.errors import EvaluationError


def term_variables_of(atom: Atom) -> set[Variable]:
    return {v for arg in atom.args for v in term_variables(arg)}


def literal_names(literal) -> set[str]:
    """Returns every variable name a literal mentions, inside aggregates too."""
    names: set[str] = set()
    stack = list(literal_terms(literal))
    while stack:
        term = stack.pop()
        if isinstance(term, Variable):
            names.add(term.name)
        elif isinstance(term, Arithmetic):
            stack += [term.left, term.right]
        elif isinstance(term, Functor):
            stack += term.args
        elif isinstance(term, Aggregate):
            names.update(term.outer)
            if term.target is not None:
                stack.append(term.target)
            for inner in term.body:
                names |= literal_names(inner)
    return names


LOOKAHEAD = 8  # a body of at most this many atoms tries each atom first when the first step is a scan


def order(body: Sequence, atoms: list[Atom], bound: set[str], store=None, first: int | None = None,
          lookahead: bool = True):
    """Orders the remaining body greedily, filters as early as possible.

    With a ``store`` that estimates (``Store.estimate``), the next atom is the one with the
    fewest expected matches per binding (a fully bound atom, a membership test, first; an
    atom bound only by constants counts all its matching rows, so a join never starts a
    cross product when a connected atom is cheaper). Without one, the atom with the most
    bound arguments. Among equals, the one written first. Returns ``(kind, literal,
    bound_before)`` triples, kind one of atom, negation, compare, assign, constraint.

    An atom's rank depends only on which of its own variables are bound, so ranks sit in a
    heap and are computed again only for the atoms (and filters) that mention a variable
    just bound: n log n in the body length, not the quadratic rescan of every atom per step.

    When the first atom would be a scan, a body of at most ``LOOKAHEAD`` atoms is ordered
    once with each atom first, and the order with the fewest expected steps is taken
    (``cost``): the smallest relation scanned first may leave a cross product, where a
    larger one would bind, through ``v = c / (n + 1)``, the argument of a membership test
    (``catalan(n, v) :- choose(2 * n, n, c), naturals(v), v = c / (n + 1)``). ``first``
    forces the first atom (by its index in ``atoms``); ``lookahead=False``: the greedy order alone.
    """
    if lookahead and first is None and getattr(store, "estimate", None) is not None \
            and 1 < len(atoms) <= LOOKAHEAD:
        greedy = order(body, atoms, bound, store, lookahead=False)
        start = next(step[1] for step in greedy if step[0] == "atom")
        if not any(atom is start for atom in _scans(atoms, bound, store)):
            return greedy
        tried = [order(body, atoms, bound, store, i, lookahead=False) for i in range(len(atoms))]
        return min([greedy, *tried], key=lambda steps: cost(steps, store))
    estimate = getattr(store, "estimate", None)
    others = [lit for lit in body if not isinstance(lit, Atom)]
    free = {id(lit): existential(lit, body, None) for lit in others if isinstance(lit, Negation)}
    steps = []
    bound = set(bound)
    fresh: list[str] = []  # names bound since the ranks were last brought up to date

    atoms_of: dict[str, list[int]] = {}
    for i, atom in enumerate(atoms):
        for name in {v.name for v in term_variables_of(atom)}:
            atoms_of.setdefault(name, []).append(i)
    others_of: dict[str, list[int]] = {}
    for j, literal in enumerate(others):
        for name in literal_names(literal):
            others_of.setdefault(name, []).append(j)
    placed = [False] * len(others)

    def place_filters(candidates: list[int]) -> None:
        """Places every waiting filter that is ready, in passes over the body's order (as
        a rescan of all of them would), looking only at those a new binding concerns."""
        heap = sorted(set(candidates))
        while heap:
            later: list[int] = []
            current = -1
            while heap:
                j = heapq.heappop(heap)
                if j == current or placed[j]:
                    continue
                current = j
                literal = others[j]
                target = assignment_target(literal, bound)
                if target is not None:
                    steps.append(("assign", literal, frozenset(bound)))
                    bound.add(target.name)
                    fresh.append(target.name)
                    for k in others_of.get(target.name, ()):
                        if not placed[k]:
                            if k > j:
                                heapq.heappush(heap, k)
                            else:
                                later.append(k)
                elif _ready(literal, bound | free.get(id(literal), set())):
                    steps.append((_KIND[type(literal)], literal, frozenset(bound)))
                else:
                    continue
                placed[j] = True
            heap = sorted(set(later))
            heapq.heapify(heap)

    def rank(i: int) -> tuple:
        atom = atoms[i]
        ready = 0 if computable(atom, bound) else 1  # computable atoms before the others
        if estimate is None:
            return (ready, -_bound_args(atom, bound), i)
        return (ready, *_fanout(atom, bound, estimate), i)

    place_filters(list(range(len(others))))
    ranks = [rank(i) for i in range(len(atoms))]
    heap = list(ranks)
    heapq.heapify(heap)
    done = [False] * len(atoms)
    fresh.clear()
    while heap:
        if first is not None and not done[first]:
            i = first  # forced (order's lookahead); its heap entry is skipped as placed
        else:
            key = heapq.heappop(heap)
            i = key[-1]
            if done[i] or ranks[i] != key:
                continue  # placed already, or ranked again since this entry was pushed
        done[i] = True
        best = atoms[i]
        steps.append(("atom", best, frozenset(bound)))
        for name in {v.name for v in term_variables_of(best)}:
            if name not in bound:
                bound.add(name)
                fresh.append(name)
        waiting = [j for name in fresh for j in others_of.get(name, ()) if not placed[j]]
        if waiting:
            place_filters(waiting)
        touched = {k for name in fresh for k in atoms_of.get(name, ()) if not done[k]}
        fresh.clear()
        for k in touched:
            ranks[k] = rank(k)
            heapq.heappush(heap, ranks[k])
    if not all(placed):  # unreachable for a checked program; fail loudly rather than drop a filter
        literal = others[placed.index(False)]
        raise EvaluationError("internal_error", f"could not schedule {literal}", literal.position)
    return steps


def _scans(atoms: list[Atom], bound: set[str], store) -> list[Atom]:
    """The atoms that would be scanned if placed now (no argument known)."""
    return [atom for atom in atoms if _fanout(atom, bound, store.estimate)[0] == 1]


def cost(steps, store) -> float:
    """The expected work of ordered steps: the bindings each step sees, summed; an atom
    multiplies them by its expected matches (a membership test by at most one)."""
    rows, total = 1.0, 0.0
    for kind, literal, before in steps:
        total += rows
        if kind == "atom":
            flag, matches = _fanout(literal, before, store.estimate)
            rows *= 1.0 if matches < 0 else matches
    return total + rows


_KIND = {Negation: "negation", Comparison: "compare", Constraint: "constraint"}


def _ready(literal, bound: set[str]) -> bool:
    return all(v.name in bound for t in literal_terms(literal) for v in term_variables(t))


def computable(atom: Atom, bound: set[str]) -> bool:
    """True when every argument that is an expression can be computed from bound variables."""
    return all(
        all(v.name in bound for v in term_variables(arg))
        for arg in atom.args
        if not isinstance(arg, (Variable, Wildcard, Constant))
    )


def _fanout(atom: Atom, bound: set[str], estimate) -> tuple[int, float]:
    """Ranks ``atom`` as the next step: (0 for a lookup, 1 for a full scan; expected matches per
    binding, -1 for a membership test). A scan comes last whatever the sizes: a relation
    of the stratum being evaluated may be empty when the plan is made and large later."""
    constants: dict[int, Any] = {}
    known: list[int] = []
    free = 0
    for pos, arg in enumerate(atom.args):
        if isinstance(arg, Constant):
            constants[pos] = arg.value
        elif isinstance(arg, Wildcard) or not all(v.name in bound for v in term_variables(arg)):
            free += 1
        else:
            known.append(pos)
    if not free:
        return 0, -1.0
    return (0 if constants or known else 1), estimate(atom.relation, constants, tuple(known))


def _bound_args(atom: Atom, bound: set[str]) -> int:
    return sum(
        1
        for arg in atom.args
        if isinstance(arg, Constant)
        or (not isinstance(arg, Wildcard) and all(v.name in bound for v in term_variables(arg)))
    )
