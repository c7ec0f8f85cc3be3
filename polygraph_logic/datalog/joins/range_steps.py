"""Range steps: an atom followed by a comparison of one of its new variables with a value
known before it, read from a sorted index instead of matched tuple by tuple.

``factor(x, f) :- num(x), num(f), f <= x / 2, x % f = 0.`` scans ``num`` for every ``x`` and
drops the ``f`` above ``x / 2``. Fused, the step ``num(f), f <= x / 2`` computes ``x / 2``
once per binding and visits only the tuples at or below it, found by bisection in the
relation's tuples sorted on ``f`` (``Store.sorted_index``; per key when other arguments are
known). The comparison is then true of every tuple visited and is not run.

A relation of the stratum being evaluated changes every round: it is matched as before
(sorting it again each round could cost more than the look-ups save). The sorted index
holds integers only: a column with any other value (a string, a float, a
record) or a bound value that is not an integer runs the atom and the comparison as
before, so a comparison that would refuse its values (a number with a string) still does.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from typing import Any

from polygraph_logic.datalog.joins.aggregate import NoValue
from polygraph_logic.datalog.joins.step_order import literal_names
from polygraph_logic.datalog.syntax import Atom, Comparison, Variable
from polygraph_logic.datalog.values.record_values import NoMatch

ONE_MARK = object()  # "no label yet" (join_steps reads it from here): the first atom's label is taken as is
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def fuse_ranges(steps: list, store) -> list:
    """Returns the steps with each eligible ``("atom", A, before), ("compare", C, _)`` pair made
    one ``("range", (A, C, variable, op), before)`` step, ``op`` the comparison read as
    ``variable op value``."""
    out: list = []
    i = 0
    while i < len(steps):
        kind, literal, before = steps[i]
        fused = _eligible(literal, steps[i + 1], before, store) \
            if kind == "atom" and i + 1 < len(steps) and steps[i + 1][0] == "compare" else None
        if fused is None:
            out.append(steps[i])
            i += 1
            continue
        out.append(("range", fused, before))
        i += 2
    return out


def _eligible(atom: Atom, step, before, store):
    compare: Comparison = step[1]
    if compare.op not in _MIRROR or type(store.relations.get(atom.relation)) is not dict \
            or not callable(getattr(store, "sorted_index", None)):
        return None
    new = literal_names(atom) - before
    for variable, other, op in ((compare.left, compare.right, compare.op),
                                (compare.right, compare.left, _MIRROR[compare.op])):
        if not isinstance(variable, Variable) or variable.name not in new:
            continue
        if _names(other) - before:
            continue  # the value compared with is known only after the atom
        places = [pos for pos, arg in enumerate(atom.args) if isinstance(arg, Variable) and arg.name == variable.name]
        if len(places) == 1:
            return atom, compare, variable, op, places[0]
    return None


def _names(term) -> set[str]:
    return literal_names(Comparison("=", term, term))  # a term's variables, inside aggregates too


def range_step(match, value, key, fused, store, semiring, then, unit: bool, fallback):
    """``(b, label) -> None`` for a fused atom and comparison (``join_steps.compile_range`` builds
    the parts: the atom's ``match``, the compared ``value`` and the atom's ``key`` as getters of
    the binding): the tuples of the atom whose variable stands in ``op`` to the value, from
    the sorted index; ``fallback`` (the atom step followed by the comparison step) where the
    index or the value is not of integers. ``unit``: labels are not read."""
    atom, _, _, op, place = fused
    positions = tuple(pos for pos, _ in match.key)
    binds, repeats = match.binds, match.repeats
    relation, rows, times = atom.relation, store.relations[atom.relation], semiring.times

    def ranged(b, label):
        try:
            bound = value(b)
        except (NoValue, NoMatch):
            return
        index = store.sorted_index(relation, positions, place) if type(bound) is int else None
        if index is None:
            fallback(b, label)
            return
        found = index.get(key(b))
        if found is None:
            return
        values, tuples = found
        if op == "<":
            chosen = tuples[:bisect_left(values, bound)]
        elif op == "<=":
            chosen = tuples[:bisect_right(values, bound)]
        elif op == ">":
            chosen = tuples[bisect_right(values, bound):]
        else:
            chosen = tuples[bisect_left(values, bound):]
        for tup in chosen:
            if repeats and any(tup[p] != tup[q] for p, q in repeats):
                continue
            for pos, slot in binds:
                b[slot] = tup[pos]
            if unit:
                then(b, label)
            else:
                lab = rows[tup]
                then(b, lab if label is ONE_MARK else times(label, lab))

    return ranged


def sorted_index(rows: dict[tuple, Any], positions: tuple[int, ...], place: int) -> dict | None:
    """Returns ``key -> (values, tuples)``: the tuples of ``rows`` grouped by their values at
    ``positions``, each group sorted on its value at ``place`` (ties in the relation's order),
    ``values`` those values; None when a value at ``place`` is not an integer."""
    column = operator.itemgetter(place)
    if any(type(v) is not int for v in map(column, rows)):
        return None
    ordered = sorted(rows, key=column)
    if not positions:
        return {(): (list(map(column, ordered)), ordered)}
    key_at = operator.itemgetter(*positions) if len(positions) > 1 else (lambda tup, p=positions[0]: (tup[p],))
    groups: dict[tuple, tuple[list, list]] = {}
    for tup in ordered:
        values, tuples = groups.setdefault(key_at(tup), ([], []))
        values.append(tup[place])
        tuples.append(tup)
    return groups
