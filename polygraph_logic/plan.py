"""Join plans: a rule body compiled into a chain of closures over indexed relations.

A plan orders the body greedily (the atom with the most bound arguments next;
filters as soon as their variables are bound) and binds variables into slots of
one list, so a step writes its slots and the steps after it only read them.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .errors import EvaluationError
from .program import arithmetic, assignment_target, term_variables
from .syntax import Arithmetic, Atom, Comparison, Constant, Negation, Rule, Term, Variable, Wildcard

Binding = list
Next = Callable[[Binding, Any], None]
Getter = Callable[[Binding], Any]


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


def _getter(term: Term, slots: dict[str, int]) -> Getter:
    if isinstance(term, Constant):
        value = term.value
        return lambda b: value
    if isinstance(term, Variable):
        return operator.itemgetter(slots[term.name])
    if isinstance(term, Arithmetic):
        left, right = _getter(term.left, slots), _getter(term.right, slots)
        op, position = term.op, term.position
        return lambda b: arithmetic(op, left(b), right(b), position)
    raise AssertionError(f"no value for {term}")  # wildcards never reach here: checked by program


_COMPARE = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass
class AtomMatch:
    """How one body atom meets the current binding: which positions are looked up,
    which bind new slots, and which must equal an earlier position of the same atom."""

    relation: str
    key: list[tuple[int, Getter]]  # positions whose value is known before the scan
    binds: list[tuple[int, int]]  # (position, slot) newly bound by this atom
    repeats: list[tuple[int, int]]  # (position, earlier position) for repeated variables

    @classmethod
    def build(cls, atom: Atom, slots: dict[str, int], bound: set[str]) -> "AtomMatch":
        key, binds, repeats, first = [], [], [], {}
        for pos, arg in enumerate(atom.args):
            if isinstance(arg, Wildcard):
                continue
            if isinstance(arg, Variable) and arg.name not in bound:
                if arg.name in first:
                    repeats.append((pos, first[arg.name]))
                else:
                    first[arg.name] = pos
                    binds.append((pos, slots[arg.name]))
                continue
            key.append((pos, _getter(arg, slots)))
        return cls(atom.relation, key, binds, repeats)

    def matches(self, tup: tuple, b: Binding) -> bool:
        """Checks a candidate tuple against known values; on success writes its new slots."""
        for pos, get in self.key:
            if tup[pos] != get(b):
                return False
        for pos, earlier in self.repeats:
            if tup[pos] != tup[earlier]:
                return False
        for pos, slot in self.binds:
            b[slot] = tup[pos]
        return True


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
        steps = _order(rule.body, atoms, bound)
        self.run = self._chain(steps, store, semiring, emit)

    def _chain(self, steps, store, semiring, emit) -> Next:
        head = self.rule.head
        relation = head.relation
        getters = [_getter(arg, self.slots) for arg in head.args]
        one = semiring.one()

        def final(b, label):
            emit(relation, tuple(get(b) for get in getters), one if label is _ONE_MARK else label)

        chain: Next = final
        for kind, literal, before in reversed(steps):
            chain = _STEP[kind](literal, before, self.slots, store, semiring, chain)
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
        self.run(b, _ONE_MARK)

    def evaluate(self, delta: dict[tuple, Any] | None = None,
                 delta_indexes: dict[tuple[int, ...], dict] | None = None) -> None:
        """Runs the plan: over every binding, or over the tuples of ``delta`` for its driver.

        ``delta_indexes`` caches indexes of this round's delta by position, shared by
        every plan driven by the same relation (many rules, one constant each).
        """
        b = [None] * self.size
        if self.driver is None:
            self.run(b, _ONE_MARK)
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


_ONE_MARK = object()  # "no label yet": the first atom's label is taken as is


def term_variables_of(atom: Atom) -> set[Variable]:
    return {v for arg in atom.args for v in term_variables(arg)}


def _slots(rule: Rule) -> dict[str, int]:
    names: dict[str, int] = {}
    for literal in rule.body:
        atom = literal.atom if isinstance(literal, Negation) else literal
        terms = atom.args if isinstance(atom, Atom) else (literal.left, literal.right)
        for term in terms:
            for v in term_variables(term):
                names.setdefault(v.name, len(names))
    return names


def _order(body: Sequence, atoms: list[Atom], bound: set[str]):
    """Orders the remaining body: greedy on bound arguments, filters as early as possible.

    Returns ``(kind, literal, bound_before)`` triples, kind one of atom, negation,
    compare, assign.
    """
    pending_atoms = list(atoms)
    others = [lit for lit in body if not isinstance(lit, Atom)]
    steps = []
    bound = set(bound)

    def place_filters():
        progress = True
        while progress:
            progress = False
            for literal in list(others):
                target = assignment_target(literal, bound)
                if target is not None:
                    steps.append(("assign", literal, frozenset(bound)))
                    bound.add(target.name)
                elif _ready(literal, bound):
                    kind = "negation" if isinstance(literal, Negation) else "compare"
                    steps.append((kind, literal, frozenset(bound)))
                else:
                    continue
                others.remove(literal)
                progress = True

    place_filters()
    while pending_atoms:
        best = max(pending_atoms, key=lambda a: (_bound_args(a, bound), -pending_atoms.index(a)))
        pending_atoms.remove(best)
        steps.append(("atom", best, frozenset(bound)))
        bound |= {v.name for v in term_variables_of(best)}
        place_filters()
    if others:  # unreachable for a checked program; fail loudly rather than drop a filter
        raise EvaluationError("internal_error", f"could not schedule {others[0]}", others[0].position)
    return steps


def _ready(literal, bound: set[str]) -> bool:
    terms = literal.atom.args if isinstance(literal, Negation) else (literal.left, literal.right)
    return all(v.name in bound for t in terms for v in term_variables(t))


def _bound_args(atom: Atom, bound: set[str]) -> int:
    return sum(
        1
        for arg in atom.args
        if isinstance(arg, Constant)
        or (not isinstance(arg, Wildcard) and all(v.name in bound for v in term_variables(arg)))
    )


def _atom_step(atom: Atom, before, slots, store: Store, semiring, then: Next) -> Next:
    match = AtomMatch.build(atom, slots, set(before))
    rows = store.relations[atom.relation]
    times = semiring.times
    if not match.key:
        matches = match.matches

        def scan(b, label):
            for tup, lab in rows.items():
                if matches(tup, b):
                    then(b, lab if label is _ONE_MARK else times(label, lab))

        return scan
    positions = tuple(pos for pos, _ in match.key)
    getters = [get for _, get in match.key]
    if len(positions) == len(atom.args):  # fully bound: a membership test
        def member(b, label):
            lab = rows.get(tuple(get(b) for get in getters))
            if lab is not None:
                then(b, lab if label is _ONE_MARK else times(label, lab))

        return member
    index = store.index(atom.relation, positions)
    binds, repeats = match.binds, match.repeats

    def lookup(b, label):
        for tup in index.get(tuple(get(b) for get in getters), ()):
            if repeats and any(tup[p] != tup[q] for p, q in repeats):
                continue
            for pos, slot in binds:
                b[slot] = tup[pos]
            lab = rows[tup]
            then(b, lab if label is _ONE_MARK else times(label, lab))

    return lookup


def _negation_step(literal: Negation, before, slots, store: Store, semiring, then: Next) -> Next:
    atom = literal.atom
    known = [(pos, _getter(arg, slots)) for pos, arg in enumerate(atom.args) if not isinstance(arg, Wildcard)]
    rows = store.relations[atom.relation]
    getters = [get for _, get in known]
    if len(known) == len(atom.args):
        def absent(b, label):
            if tuple(get(b) for get in getters) not in rows:
                then(b, label)

        return absent
    index = store.index(atom.relation, tuple(pos for pos, _ in known))

    def absent_any(b, label):
        if not index.get(tuple(get(b) for get in getters)):
            then(b, label)

    return absent_any


def _compare_step(literal: Comparison, before, slots, store, semiring, then: Next) -> Next:
    left, right = _getter(literal.left, slots), _getter(literal.right, slots)
    test, op, position = _COMPARE[literal.op], literal.op, literal.position

    def compare(b, label):
        lv, rv = left(b), right(b)
        if op not in ("=", "!=") and type(lv) is not type(rv):
            raise EvaluationError(
                "type_error", f"cannot compare {lv!r} {op} {rv!r} (a string and an integer)", position
            )
        if test(lv, rv):
            then(b, label)

    return compare


def _assign_step(literal: Comparison, before, slots, store, semiring, then: Next) -> Next:
    target = assignment_target(literal, set(before))
    expr = literal.right if literal.left is target else literal.left
    slot, get = slots[target.name], _getter(expr, slots)

    def assign(b, label):
        b[slot] = get(b)
        then(b, label)

    return assign


_STEP = {"atom": _atom_step, "negation": _negation_step, "compare": _compare_step, "assign": _assign_step}
