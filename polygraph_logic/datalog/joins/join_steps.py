"""The steps of a join plan: one closure per body literal, chained.

Each step reads the slots bound before it, writes its own and calls the next step
with the label so far, in the order ``step_order.py`` gives; ``join_plan.py`` chains them. Aggregates compile
their own bodies with the same steps. A long plan (more than ``LONG`` steps) runs in a
loop instead, so the stack depth does not grow with the body (``compile_steps``).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

from polygraph_logic.datalog.joins.aggregate import NoValue, aggregate_getter, aggregate_variables
from polygraph_logic.datalog.joins.long_plans import filter_stage, run_stages
from polygraph_logic.datalog.joins.range_steps import ONE_MARK, fuse_ranges, range_step
from polygraph_logic.datalog.joins.step_order import literal_names, order
from polygraph_logic.errors import EvaluationError
from polygraph_logic.datalog.values.functions import call, operator_of, constraint, range_values
from polygraph_logic.datalog.checks.record_patterns import is_open_pattern, open_pattern
from polygraph_logic.datalog.values.record_values import STRUCTURED, NoMatch, structured_getter
from polygraph_logic.datalog.values.record_values import is_function as is_record_function
from polygraph_logic.datalog.checks.safety import assignment_target, existential
from polygraph_logic.datalog.syntax import (
    Aggregate,
    Arithmetic,
    Atom,
    Comparison,
    Constant,
    Constraint,
    Functor,
    Negation,
    Term,
    Variable,
    Wildcard,
)

Binding = list
Next = Callable[[Binding, Any], None]
Getter = Callable[[Binding], Any]



def getter(term: Term, slots: dict[str, int], context=None) -> Getter:
    """Returns ``b -> value`` for a term; ``context`` (store, semiring) compiles aggregates."""
    if isinstance(term, Constant):
        value = term.value
        return lambda b: value
    if isinstance(term, Variable):
        return operator.itemgetter(slots[term.name])
    if isinstance(term, Arithmetic):
        left, right = getter(term.left, slots, context), getter(term.right, slots, context)
        compute = operator_of(term.op, term.position, term.width)
        if isinstance(term.right, Constant):
            constant = term.right.value
            if isinstance(term.left, Variable):  # x + 1: the commonest, read from its slot at once
                slot = slots[term.left.name]
                return lambda b: compute(b[slot], constant)
            return lambda b: compute(left(b), constant)
        return lambda b: compute(left(b), right(b))
    if isinstance(term, Functor):
        if term.name == "autoinc":  # Souffle's counter: 0, 1, 2, ... over the whole evaluation
            counter = context[0].counter
            return lambda b: next(counter)
        args = [getter(arg, slots, context) for arg in term.args]
        name, position = term.name, term.position
        if is_record_function(name):
            return structured_getter(name, args, position)
        return lambda b: call(name, [get(b) for get in args], position)
    if isinstance(term, Aggregate):
        store, semiring = context
        target = getter(term.target, slots, context) if term.target is not None else None

        def compile_body(body, bound, final):
            atoms = [lit for lit in body if isinstance(lit, Atom)]
            chain = compile_steps(order(body, atoms, bound, store), slots, store, semiring, final, body)
            return lambda b: chain(b, ONE_MARK)

        return aggregate_getter(term, slots, aggregate_variables(term, literal_names), target, compile_body)
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
    def build(cls, atom: Atom, slots: dict[str, int], bound: set[str], context=None) -> "AtomMatch":
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
            key.append((pos, getter(arg, slots, context)))
        return cls(atom.relation, key, binds, repeats)

    def binder(self) -> Callable[[tuple, Binding], None] | None:
        """Returns ``(tup, b) -> None`` writing the new slots, for an atom with no known position
        and no repeated variable (every tuple matches); None otherwise."""
        if self.key or self.repeats:
            return None
        binds = self.binds
        if len(binds) == 1:
            (pos, slot), = binds

            def bind_one(tup, b):
                b[slot] = tup[pos]

            return bind_one
        positions, slots = [pos for pos, _ in binds], [slot for _, slot in binds]

        def bind(tup, b):
            for pos, slot in zip(positions, slots):
                b[slot] = tup[pos]

        return bind

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


@lru_cache(maxsize=None)
def key_of(positions: tuple[int, ...]) -> Callable[[tuple], tuple]:
    """``tup -> tuple of its values at positions``: an itemgetter, not a generator per tuple
    (building an index over a relation of a million tuples takes a third of the time); a binding's slots read the same way."""
    if not positions:
        return lambda tup: ()
    if len(positions) == 1:
        only = positions[0]
        return lambda tup: (tup[only],)
    return operator.itemgetter(*positions)


def tuple_getter(terms: Sequence[Term], slots: dict[str, int], context=None) -> Callable[[Binding], tuple]:
    """Returns ``b -> tuple of the terms' values``: an itemgetter over the slots when every
    term is a variable, else one getter per term."""
    if all(isinstance(t, Variable) for t in terms):
        return key_of(tuple(slots[t.name] for t in terms))
    return tuple_of([getter(t, slots, context) for t in terms])


def tuple_of(getters: Sequence[Getter]) -> Callable[[Binding], tuple]:
    """Returns ``b -> tuple of the getters' values``: one call per value for up to four (the
    atoms of the RO rules have three), not a generator per tuple (half the time of a look-up)."""
    if len(getters) == 1:
        g0, = getters
        return lambda b: (g0(b),)
    if len(getters) == 2:
        g0, g1 = getters
        return lambda b: (g0(b), g1(b))
    if len(getters) == 3:
        g0, g1, g2 = getters
        return lambda b: (g0(b), g1(b), g2(b))
    if len(getters) == 4:
        g0, g1, g2, g3 = getters
        return lambda b: (g0(b), g1(b), g2(b), g3(b))
    getters = list(getters)
    return lambda b: tuple(get(b) for get in getters)


def _atom_step(atom: Atom, before, slots, store, semiring, then: Next, body=()) -> Next:
    match = AtomMatch.build(atom, slots, set(before), (store, semiring))
    rows = store.relations[atom.relation]
    times = semiring.times
    if not match.key:
        matches = match.matches

        def scan(b, label):
            for tup, lab in rows.items():
                if matches(tup, b):
                    then(b, lab if label is ONE_MARK else times(label, lab))

        return scan
    positions = tuple(pos for pos, _ in match.key)
    key = tuple_of([get for _, get in match.key])
    if len(positions) == len(atom.args):  # fully bound: a membership test
        def member(b, label):
            lab = rows.get(key(b))
            if lab is not None:
                then(b, lab if label is ONE_MARK else times(label, lab))

        return member
    index = store.index(atom.relation, positions)
    binds, repeats = match.binds, match.repeats

    def lookup(b, label):
        for tup in index.get(key(b), ()):
            if repeats and any(tup[p] != tup[q] for p, q in repeats):
                continue
            for pos, slot in binds:
                b[slot] = tup[pos]
            lab = rows[tup]
            then(b, lab if label is ONE_MARK else times(label, lab))

    return lookup


def _negation_step(literal: Negation, before, slots, store, semiring, then: Next, body=()) -> Next:
    """``!atom``: no tuple matches the bound arguments; variables that occur only here are
    existential (any value), a repeated one must repeat in the tuple."""
    atom = literal.atom
    free = existential(literal, body, None) if body else set()
    context = (store, semiring)
    known, repeats, first, patterns = [], [], {}, []
    for pos, arg in enumerate(atom.args):
        if isinstance(arg, Wildcard):
            continue
        if is_open_pattern(arg, free):
            patterns.append((pos, open_pattern(arg, free, lambda t: getter(t, slots, context))))
            continue
        if isinstance(arg, Variable) and arg.name in free:
            if arg.name in first:
                repeats.append((pos, first[arg.name]))
            else:
                first[arg.name] = pos
            continue
        known.append((pos, getter(arg, slots, context)))
    rows = store.relations[atom.relation]
    if patterns:
        return _open_negation(store, atom.relation, known, repeats, first, patterns, then)
    key = tuple_getter([atom.args[pos] for pos, _ in known], slots, context)
    if len(known) == len(atom.args):
        def absent(b, label):
            if key(b) not in rows:
                then(b, label)

        return absent
    index = store.index(atom.relation, tuple(pos for pos, _ in known))
    if repeats:
        def absent_repeated(b, label):
            for tup in index.get(key(b), ()):
                if all(tup[p] == tup[q] for p, q in repeats):
                    return
            then(b, label)

        return absent_repeated

    def absent_any(b, label):
        if not index.get(key(b)):
            then(b, label)

    return absent_any


def _open_negation(store, relation: str, known, repeats, first, patterns, then: Next) -> Next:
    """``!p([x, _])``: no candidate tuple (looked up by its known positions) matches the
    open record or ADT patterns, with free variables the same wherever they repeat."""
    rows = store.relations[relation]
    getters = [get for _, get in known]
    index = store.index(relation, tuple(pos for pos, _ in known)) if known else None

    def absent_match(b, label):
        candidates = index.get(tuple(get(b) for get in getters), ()) if index is not None else rows
        for tup in candidates:
            if repeats and not all(tup[p] == tup[q] for p, q in repeats):
                continue
            local = {name: tup[pos] for name, pos in first.items()}
            if all(match(tup[pos], b, local) for pos, match in patterns):
                return
        then(b, label)

    return absent_match


def _compare_step(literal: Comparison, before, slots, store, semiring, then: Next, body=()) -> Next:
    context = (store, semiring)
    if literal.op == "=" and (_is_range(literal.left) or _is_range(literal.right)):
        return _range_test(literal, slots, context, then)
    left, right = getter(literal.left, slots, context), getter(literal.right, slots, context)
    test, op, position = _COMPARE[literal.op], literal.op, literal.position
    if op in ("=", "!="):
        def equal(b, label):
            try:
                lv, rv = left(b), right(b)
            except (NoValue, NoMatch):
                return
            if test(lv, rv):
                then(b, label)

        return equal

    if isinstance(literal.right, Constant) and type(literal.right.value) is int:
        bound = literal.right.value  # x < 1000: one value to read per binding

        def compare_constant(b, label):
            try:
                lv = left(b)
            except (NoValue, NoMatch):
                return
            if type(lv) is not int:
                _check_ordered(lv, bound, op, position)
            if test(lv, bound):
                then(b, label)

        return compare_constant

    def compare(b, label):
        try:
            lv, rv = left(b), right(b)
        except (NoValue, NoMatch):
            return
        if not (type(lv) is int and type(rv) is int):  # two integers compare: the common case, checked first
            _check_ordered(lv, rv, op, position)
        if test(lv, rv):
            then(b, label)

    return compare


def _check_ordered(lv, rv, op: str, position) -> None:
    """Refuses an ordering (``<``, ``<=``, ...) of a number and a string, or of a record or ADT value."""
    if isinstance(lv, str) != isinstance(rv, str) or isinstance(lv, STRUCTURED) or isinstance(rv, STRUCTURED):
        raise EvaluationError(
            "type_error", f"cannot compare {lv} {op} {rv} (only numbers with numbers and strings with "
            "strings; records and ADT values only with = and !=)", position
        )


def _constraint_step(literal: Constraint, before, slots, store, semiring, then: Next, body=()) -> Next:
    context = (store, semiring)
    first, second = (getter(arg, slots, context) for arg in literal.args)
    pattern = literal.args[0].value if isinstance(literal.args[0], Constant) else None
    test = constraint(literal.name, literal.position, literal.negated, pattern)

    def check(b, label):
        if test(first(b), second(b)):
            then(b, label)

    return check


def _assign_step(literal: Comparison, before, slots, store, semiring, then: Next, body=()) -> Next:
    target = assignment_target(literal, set(before))
    expr = literal.right if literal.left is target else literal.left
    if _is_range(expr):
        return _range_step(literal, before, slots, store, semiring, then)
    slot, get = slots[target.name], getter(expr, slots, (store, semiring))

    def assign(b, label):
        try:
            b[slot] = get(b)
        except (NoValue, NoMatch):
            return
        then(b, label)

    return assign


def _is_range(term) -> bool:
    return isinstance(term, Functor) and term.name == "range"


def _range_parts(literal: Comparison, before, slots, store, semiring):
    target = assignment_target(literal, set(before))
    expr = literal.right if literal.left is target else literal.left
    return slots[target.name], [getter(arg, slots, (store, semiring)) for arg in expr.args], expr.position


def _range_test(literal: Comparison, slots, context, then: Next) -> Next:
    """``x = range(...)`` with ``x`` bound already: holds when ``x`` is one of the values."""
    expr, other = (literal.left, literal.right) if _is_range(literal.left) else (literal.right, literal.left)
    value, args = getter(other, slots, context), [getter(arg, slots, context) for arg in expr.args]

    def member(b, label):
        if value(b) in range_values([get(b) for get in args], expr.position):
            then(b, label)

    return member


def _range_step(literal: Comparison, before, slots, store, semiring, then: Next) -> Next:
    """``x = range(from, to[, step])``: binds ``x`` to each value in turn (Souffle's range)."""
    slot, args, position = _range_parts(literal, before, slots, store, semiring)

    def each(b, label):
        for value in range_values([get(b) for get in args], position):
            b[slot] = value
            then(b, label)

    return each


def _range_expander(literal: Comparison, before, slots, store, semiring):
    """The range step of a long plan: a stage that yields once per value."""
    slot, args, position = _range_parts(literal, before, slots, store, semiring)

    def stage(b, label):
        for value in range_values([get(b) for get in args], position):
            b[slot] = value
            yield label

    return stage


STEP = {"atom": _atom_step, "negation": _negation_step, "compare": _compare_step, "assign": _assign_step,
         "constraint": _constraint_step}


# a plan with more steps runs in a loop (see compile_steps), not as nested calls: a hundred
# frames is a tenth of Python's default stack, and an inlined rule of sixty steps (a record
# pattern takes three) runs as a chain, nearly twice as fast as the loop
LONG = 100


def compile_steps(steps, slots, store, semiring, final: Next, body=()) -> Next:
    """Compiles ordered steps into ``run(b, label)`` ending in ``final(b, label)``.

    A short plan is a chain of closures, each calling the next (the fastest in Python). A
    long one would take one stack frame per step, and a body of a thousand atoms (a receipt
    with a large support set) would overflow the stack: its steps run in a loop over an
    explicit stack of iterators, and consecutive steps that bind nothing (membership tests,
    negations, comparisons, assignments) are merged into one stage that checks them in turn.
    """
    if len(steps) <= LONG:
        chain = final
        for kind, literal, before in reversed(fuse_ranges(steps, store)):
            if kind == "range":
                chain = compile_range(literal, before, slots, store, semiring, chain, body)
            else:
                chain = STEP[kind](literal, before, slots, store, semiring, chain, body)
        return chain
    stages: list[Callable[[Binding, Any], Any]] = []
    filters: list[Next] = []
    out: list = []

    def collect(b, label):
        out.append(label)

    def close_filters():
        if filters:
            stages.append(filter_stage(list(filters), out))
            filters.clear()

    for kind, literal, before in steps:
        if kind == "atom" and not _is_membership(literal, before, slots):
            close_filters()
            stages.append(_atom_expander(literal, before, slots, store, semiring))
        elif kind == "assign" and (_is_range(literal.left) or _is_range(literal.right)):
            close_filters()
            stages.append(_range_expander(literal, before, slots, store, semiring))
        else:
            filters.append(STEP[kind](literal, before, slots, store, semiring, collect, body))
    close_filters()
    return run_stages(stages, final)


def compile_range(fused, before, slots, store, semiring, then: Next, body=(), unit: bool = False,
                  atom_step=None) -> Next:
    """A fused atom and comparison (range_steps.py) as one step, with its fallback: ``atom_step``
    (by default this module's step for an atom) followed by the comparison step."""
    atom, compare, variable = fused[0], fused[1], fused[2]
    context = (store, semiring)
    checked = _compare_step(compare, before | literal_names(atom), slots, store, semiring, then, body)
    fallback = (atom_step or _atom_step)(atom, before, slots, store, semiring, checked, body)
    match = AtomMatch.build(atom, slots, set(before), context)
    value = getter(compare.right if compare.left is variable else compare.left, slots, context)
    key = tuple_of([get for _, get in match.key]) if match.key else (lambda b: ())
    return range_step(match, value, key, fused, store, semiring, then, unit, fallback)


def _is_membership(atom: Atom, before, slots) -> bool:
    match = AtomMatch.build(atom, slots, set(before))
    return not match.binds and not match.repeats and len(match.key) == len(atom.args)


def _atom_expander(atom: Atom, before, slots, store, semiring):
    """The atom step of a long plan: ``(b, label) -> iterator of labels``, writing the
    slots of each match into ``b`` before yielding its label."""
    match = AtomMatch.build(atom, slots, set(before), (store, semiring))
    rows = store.relations[atom.relation]
    times = semiring.times
    if not match.key:
        matches = match.matches

        def scan(b, label):
            for tup, lab in rows.items():
                if matches(tup, b):
                    yield lab if label is ONE_MARK else times(label, lab)

        return scan
    positions = tuple(pos for pos, _ in match.key)
    key = tuple_of([get for _, get in match.key])
    index = store.index(atom.relation, positions)
    binds, repeats = match.binds, match.repeats

    def lookup(b, label):
        for tup in index.get(key(b), ()):
            if repeats and any(tup[p] != tup[q] for p, q in repeats):
                continue
            for pos, slot in binds:
                b[slot] = tup[pos]
            lab = rows[tup]
            yield lab if label is ONE_MARK else times(label, lab)

    return lookup
