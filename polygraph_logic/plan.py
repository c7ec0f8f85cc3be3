"""Join plans: a rule body compiled into a chain of closures over indexed relations.

A plan orders the body greedily (the atom with the most bound arguments next;
filters as soon as their variables are bound) and binds variables into slots of
one list, so a step writes its slots and the steps after it only read them.
"""

from __future__ import annotations

from typing import Any, Callable

from .safety import term_variables
from .steps import ONE_MARK, STEP, AtomMatch, Next, getter, literal_names, order, term_variables_of
from .syntax import Atom, Constant, Rule, Variable


class Store:
    """Relations as ``tuple -> label`` dicts, with hash indexes on bound positions."""

    def __init__(self, arities: dict[str, int]):
        self.relations: dict[str, dict[tuple, Any]] = {name: {} for name in arities}
        self._indexes: dict[str, dict[tuple[int, ...], dict[tuple, list[tuple]]]] = {
            name: {} for name in arities
        }

    def index(self, relation: str, positions: tuple[int, ...]) -> dict[tuple, list[tuple]]:
        """Returns (building once, then maintaining) the index of ``relation`` on ``positions``."""
        indexes = self._indexes[relation]
        found = indexes.get(positions)
        if found is None:
            found = {}
            for tup in self.relations[relation]:
                found.setdefault(tuple(tup[p] for p in positions), []).append(tup)
            indexes[positions] = found
        return found

    def add(self, relation: str, tup: tuple, label: Any) -> None:
        """Adds a new tuple (not yet present) and updates every index of its relation."""
        self.relations[relation][tup] = label
        for positions, index in self._indexes[relation].items():
            index.setdefault(tuple(tup[p] for p in positions), []).append(tup)


class Plan:
    """One rule compiled for evaluation, optionally driven by the delta of one body atom."""

    def __init__(self, rule: Rule, store: Store, semiring, emit: Callable[[str, tuple, Any], None],
                 delta_atom: int | None = None, goal: bool = False):
        self.rule = rule
        self.slots = _slots(rule)
        self.size = len(self.slots)
        atoms = [lit for lit in rule.body if isinstance(lit, Atom)]
        bound: set[str] = set()
        if goal:  # the head is given (see prove): its variables are bound before the body runs
            self.head_slots = [
                (pos, self.slots[arg.name]) if isinstance(arg, Variable) else (pos, arg)
                for pos, arg in enumerate(rule.head.args)
                if isinstance(arg, (Variable, Constant))
            ]
            bound = {arg.name for arg in rule.head.args if isinstance(arg, Variable)}
        self.driver: AtomMatch | None = None
        if delta_atom is not None:
            driver = atoms[delta_atom]
            self.driver = AtomMatch.build(driver, self.slots, bound)
            # the driver's known positions hold constants: the delta is looked up by them
            self.driver_positions = tuple(pos for pos, _ in self.driver.key)
            self.driver_key = tuple(get([]) for _, get in self.driver.key)
            bound |= {v.name for v in term_variables_of(driver)}
            atoms = atoms[:delta_atom] + atoms[delta_atom + 1:]
        steps = order(rule.body, atoms, bound)
        self.run = self._chain(steps, store, semiring, emit)

    def _chain(self, steps, store, semiring, emit) -> Next:
        head = self.rule.head
        relation = head.relation
        getters = [getter(arg, self.slots, (store, semiring)) for arg in head.args]
        one = semiring.one()

        def final(b, label):
            emit(relation, tuple(get(b) for get in getters), one if label is ONE_MARK else label)

        chain: Next = final
        for kind, literal, before in reversed(steps):
            chain = STEP[kind](literal, before, self.slots, store, semiring, chain, self.rule.body)
        return chain

    def prove(self, tup: tuple) -> None:
        """Runs the body with the head bound to ``tup`` (a plan built with ``goal=True``);
        every derivation found is emitted as usual."""
        b = [None] * self.size
        for pos, target in self.head_slots:
            if isinstance(target, Constant):
                if target.value != tup[pos]:
                    return
            elif b[target] is None:
                b[target] = tup[pos]
            elif b[target] != tup[pos]:
                return
        self.run(b, ONE_MARK)

    def evaluate(self, delta: dict[tuple, Any] | None = None,
                 delta_indexes: dict[tuple[int, ...], dict] | None = None) -> None:
        """Runs the plan: over every binding, or over the tuples of ``delta`` for its driver.

        ``delta_indexes`` caches indexes of this round's delta by position, shared by
        every plan driven by the same relation (many rules, one constant each).
        """
        b = [None] * self.size
        if self.driver is None:
            self.run(b, ONE_MARK)
            return
        matches, run = self.driver.matches, self.run
        if not self.driver_positions:
            for tup, label in delta.items():
                if matches(tup, b):
                    run(b, label)
            return
        positions = self.driver_positions
        index = delta_indexes.get(positions) if delta_indexes is not None else None
        if index is None:
            index = {}
            for tup in delta:
                index.setdefault(tuple(tup[p] for p in positions), []).append(tup)
            if delta_indexes is not None:
                delta_indexes[positions] = index
        for tup in index.get(self.driver_key, ()):
            if matches(tup, b):
                run(b, delta[tup])


def _slots(rule: Rule) -> dict[str, int]:
    names: dict[str, int] = {}
    for literal in rule.body:
        for name in sorted(literal_names(literal), key=lambda n: (n.startswith("_#"), n)):
            names.setdefault(name, len(names))
    for arg in rule.head.args:  # a head variable bound only by prove()'s goal
        for v in term_variables(arg):
            names.setdefault(v.name, len(names))
    return names
