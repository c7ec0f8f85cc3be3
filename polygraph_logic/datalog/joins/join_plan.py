"""Join plans: a rule body compiled into a chain of closures over indexed relations.

A plan orders the body greedily (the atom with the most bound arguments next;
filters as soon as their variables are bound) and binds variables into slots of
one list, so a step writes its slots and the steps after it only read them.
"""

from __future__ import annotations

from itertools import count
from typing import Any, Callable

from polygraph_logic.datalog.joins.join_steps import ONE_MARK, AtomMatch, Next, compile_steps, key_of, tuple_getter
from polygraph_logic.datalog.joins.step_order import computable, literal_names, order, term_variables_of
from polygraph_logic.datalog.checks.safety import term_variables
from polygraph_logic.datalog.joins.independent import precondition, split_independent
from polygraph_logic.datalog.joins.range_steps import sorted_index
from polygraph_logic.datalog.joins.unit_steps import compile_unit_steps
from polygraph_logic.datalog.syntax import Arithmetic, Atom, Comparison, Constant, Negation, Rule, Variable, Wildcard


class Store:
    """Relations as ``tuple -> label`` dicts, with hash indexes on bound positions."""

    def __init__(self, arities: dict[str, int]):
        self.relations: dict[str, dict[tuple, Any]] = {name: {} for name in arities}
        self._indexes: dict[str, dict[tuple[int, ...], dict[tuple, list[tuple]]]] = {
            name: {} for name in arities
        }
        self._statistics: dict[str, tuple[int, list[tuple], dict]] = {}  # relation -> (size, sample, counters)
        self._sorted: dict[tuple, tuple] = {}  # (relation, positions, place) -> ((size, generation), index)
        self.deriving: frozenset[str] = frozenset()  # the relations of the stratum being evaluated
        self.counter = count()  # autoinc()'s numbers
        self.generation = 0  # counts the removals (subsumption): a relation then may shrink

    def index(self, relation: str, positions: tuple[int, ...]) -> dict[tuple, list[tuple]]:
        """Returns (building once, then maintaining) the index of ``relation`` on ``positions``."""
        indexes = self._indexes[relation]
        found = indexes.get(positions)
        if found is None:
            found = {}
            key = key_of(positions)
            for tup in self.relations[relation]:
                found.setdefault(key(tup), []).append(tup)
            indexes[positions] = found
        return found

    def sorted_index(self, relation: str, positions: tuple[int, ...], place: int) -> dict | None:
        """Returns (building once, and again when the relation has changed) the index of
        ``relation`` on ``positions`` with each group sorted on ``place`` (range_steps.py);
        None for a relation being derived (``deriving``): it changes every round, and sorting
        it again each round could cost more than the look-ups it saves."""
        if relation in self.deriving:
            return None
        rows = self.relations[relation]
        stamp = (len(rows), self.generation)
        cached = self._sorted.get((relation, positions, place))
        if cached is None or cached[0] != stamp:
            cached = self._sorted[(relation, positions, place)] = (stamp, sorted_index(rows, positions, place))
        return cached[1]

    def estimate(self, relation: str, constants: dict[int, Any], known: tuple[int, ...]) -> float:
        """Returns the expected number of tuples of ``relation`` that match a binding with
        ``constants`` (position -> value) and values at the ``known`` positions.

        Counted on a sample of at most ``SAMPLE`` tuples (taken evenly over the relation,
        kept while its size stays the same), so planning costs no index and no full scan.
        """
        rows = self.relations[relation]
        n = len(rows)
        if n == 0:
            return 0.0
        if not constants and not known:
            return float(n)
        sample, counters = self._sample(relation, n)
        scale = n / len(sample)
        matching = float(n)
        if constants:
            positions = tuple(sorted(constants))
            seen = self._counter(counters, sample, positions).get(tuple(constants[p] for p in positions), 0)
            # a value absent from the sample is rarer than one tuple in `scale`
            matching = seen * scale if seen else (0.0 if scale == 1 else min(n, scale) / 2)
        if not known:
            return matching
        positions = tuple(sorted({*constants, *known}))
        counter = self._counter(counters, sample, positions)
        # distinct keys of the whole relation from the sample's (the GEE estimator: a key
        # seen once in the sample stands for sqrt(n / sample) keys)
        once = sum(1 for count in counter.values() if count == 1)
        distinct = (scale ** 0.5) * once + (len(counter) - once)
        return min(matching, n / max(distinct, 1.0))

    SAMPLE = 2048

    def _sample(self, relation: str, n: int) -> tuple[list[tuple], dict]:
        cached = self._statistics.get(relation)
        if cached is None or cached[0] != n:
            rows = list(self.relations[relation])
            sample = rows if n <= self.SAMPLE else rows[::n // self.SAMPLE]
            cached = self._statistics[relation] = (n, sample, {})
        return cached[1], cached[2]

    @staticmethod
    def _counter(counters: dict, sample: list[tuple], positions: tuple[int, ...]) -> dict:
        found = counters.get(positions)
        if found is None:
            found = counters[positions] = {}
            key_at = key_of(positions)
            for tup in sample:
                key = key_at(tup)
                found[key] = found.get(key, 0) + 1
        return found

    def forget_statistics(self) -> None:
        """Drops the samples ``estimate`` keeps (once planning is over)."""
        self._statistics.clear()

    def add(self, relation: str, tup: tuple, label: Any) -> None:
        """Adds a new tuple (not yet present) and updates every index of its relation."""
        self.relations[relation][tup] = label
        for positions, index in self._indexes[relation].items():
            index.setdefault(key_of(positions)(tup), []).append(tup)

    def add_all(self, relation: str, items: dict[tuple, Any]) -> None:
        """Adds new tuples (none present yet) with their labels, in their order, as ``add`` would
        one by one: at once when the relation is a dict and ``add`` is this class's."""
        rows = self.relations[relation]
        if type(self).add is not Store.add or type(rows) is not dict:
            for tup, label in items.items():
                self.add(relation, tup, label)
            return
        rows.update(items)
        for positions, index in self._indexes[relation].items():
            key = key_of(positions)
            for tup in items:
                index.setdefault(key(tup), []).append(tup)

    def remove(self, relation: str, tuples: set[tuple]) -> None:
        """Removes tuples (those a subsumption deletes) from a relation and its indexes."""
        rows = self.relations[relation]
        self.generation += 1
        for tup in tuples:
            rows.pop(tup, None)
        for positions, index in self._indexes[relation].items():
            key_at = key_of(positions)
            for tup in tuples:
                key = key_at(tup)
                bucket = index.get(key)
                if bucket is not None and tup in bucket:
                    bucket.remove(tup)
                    if not bucket:
                        del index[key]


def _plain_atoms(rule: Rule) -> bool:
    """True when every argument of the body's atoms and negations is a variable, a constant
    or ``_``: the unit steps look such atoms up by key; a record or ADT pattern
    (``p([x, _])``) is matched by ``join_steps``'s steps."""
    atoms = (lit.atom if isinstance(lit, Negation) else lit for lit in rule.body)
    return all(isinstance(arg, (Variable, Constant, Wildcard))
               for atom in atoms if isinstance(atom, Atom) for arg in atom.args)


class Plan:
    """One rule compiled for evaluation, optionally driven by the delta of one body atom."""

    def __init__(self, rule: Rule, store: Store, semiring, emit: Callable[[str, tuple, Any], None],
                 delta_atom: int | None = None, goal: bool = False, unit: bool = False):
        """``unit``: every label is the semiring's one (see unit_steps.py); the plan passes
        no labels, and emits one. An ``emit`` with a ``finish(relation, head_key, rule)`` attribute
        makes the plan's last step itself: ``finish`` returns ``(b, label) -> None``."""
        self.rule = rule
        self.unit = unit and _plain_atoms(rule)
        bound: set[str] = set()
        if goal:  # the head is given (see prove): its variables are bound before the body runs
            bound = {arg.name for arg in rule.head.args if isinstance(arg, Variable)}
        body, self.check = rule.body, None
        if self.unit and not goal:  # an independent part runs once, as a precondition
            body, delta_atom = self._precondition(rule, delta_atom, store, semiring)
        self.body, steps = _planned(body, delta_atom, bound, store)
        self.slots = _slots(Rule(rule.head, self.body, rule.position))
        self.size = len(self.slots)
        if goal:
            self.head_slots = [
                (pos, self.slots[arg.name]) if isinstance(arg, Variable) else (pos, arg)
                for pos, arg in enumerate(rule.head.args)
                if isinstance(arg, (Variable, Constant))
            ]
        self.driver: AtomMatch | None = None
        self.bind = None  # the driver's binder when every delta tuple matches it (AtomMatch.binder)
        if delta_atom is not None:
            driver = [lit for lit in self.body if isinstance(lit, Atom)][delta_atom]
            self.driver = AtomMatch.build(driver, self.slots, bound)
            # the driver's known positions hold constants: the delta is looked up by them
            self.driver_positions = tuple(pos for pos, _ in self.driver.key)
            self.driver_key = tuple(get([]) for _, get in self.driver.key)
            self.bind = self.driver.binder() if not self.driver_positions else None
        self.run = self._chain(steps, store, semiring, emit)
        self.over_delta = self._over_delta() if self.bind is not None else None

    def _over_delta(self) -> Callable[[dict], None]:
        """``evaluate(delta)`` for a driver that every delta tuple matches, as one closure: a
        round of a long recursion may have one fact, and then the calls are what it costs."""
        check, size, bind, run = self.check, self.size, self.bind, self.run

        def over_delta(delta: dict) -> None:
            if check is not None and not check():
                return
            b = [None] * size
            for tup, label in delta.items():
                bind(tup, b)
                run(b, label)

        return over_delta

    def _precondition(self, rule: Rule, delta_atom: int | None, store: Store, semiring) -> tuple:
        """Returns the body less its independent part, and the driver's index in it; sets
        ``check`` to the part's precondition (see independent.py)."""
        atoms = [lit for lit in rule.body if isinstance(lit, Atom)]
        driver = atoms[delta_atom] if delta_atom is not None else None
        anchors = {v.name for arg in rule.head.args for v in term_variables(arg)}
        if driver is not None:
            anchors |= literal_names(driver)
        body, independent = split_independent(rule.body, anchors, driver)
        if not independent:
            return rule.body, delta_atom

        def run_of(final):
            part, steps = _planned(independent, None, set(), store)
            slots = _slots(Rule(Atom(rule.head.relation, ()), part, rule.position))
            return compile_unit_steps(steps, slots, store, semiring, final, part, set()), len(slots)

        self.check = precondition(run_of, independent, store)
        if driver is not None:
            delta_atom = [lit for lit in body if isinstance(lit, Atom)].index(driver)
        return body, delta_atom

    def _chain(self, steps, store, semiring, emit) -> Next:
        head = self.rule.head
        relation = head.relation
        one = semiring.one()
        if self.unit:
            key = tuple_getter(head.args, self.slots, (store, semiring))
            rows = store.relations[relation]

            def emit_one(b, label):
                tup = key(b)
                if tup not in rows:  # a known fact's label is one already: nothing to add
                    emit(relation, tup, one)

            keep = {v.name for arg in head.args for v in term_variables(arg)}
            return compile_unit_steps(steps, self.slots, store, semiring, emit_one, self.body, keep,
                                      (emit, relation, key, rows, one, head.args))
        head_key = tuple_getter(head.args, self.slots, (store, semiring))
        finish = getattr(emit, "finish", None)
        if finish is not None:  # the emitter makes the last step itself (circuit_eval.py)
            return compile_steps(steps, self.slots, store, semiring, finish(relation, head_key, self.rule), self.body)

        def final(b, label):
            emit(relation, head_key(b), one if label is ONE_MARK else label)

        return compile_steps(steps, self.slots, store, semiring, final, self.body)

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
        if self.check is not None and not self.check():
            return
        b = [None] * self.size
        if self.driver is None:
            self.run(b, ONE_MARK)
            return
        matches, run = self.driver.matches, self.run
        if not self.driver_positions:
            bind = self.bind
            if bind is not None:  # every argument a distinct variable: nothing to check
                for tup, label in delta.items():
                    bind(tup, b)
                    run(b, label)
                return
            for tup, label in delta.items():
                if matches(tup, b):
                    run(b, label)
            return
        positions = self.driver_positions
        index = delta_indexes.get(positions) if delta_indexes is not None else None
        if index is None:
            index = {}
            key = key_of(positions)
            for tup in delta:
                index.setdefault(key(tup), []).append(tup)
            if delta_indexes is not None:
                delta_indexes[positions] = index
        for tup in index.get(self.driver_key, ()):
            if matches(tup, b):
                run(b, delta[tup])


def _planned(body: tuple, delta_atom: int | None, bound: set[str], store) -> tuple[tuple, list]:
    """Returns the body to run and its ordered steps (the driver of a delta left out).

    An atom's expression argument (``r(y + 1, b)``) is a lookup key once ``y`` is bound. An
    atom that must be matched before (the driver of a delta, or one of two atoms that each
    bind the other's variable: ``a(x + 1, y), b(y + 1, x)``) has those arguments lifted
    into fresh variables (``lift_expressions``) and is planned again.
    """
    atoms = [lit for lit in body if isinstance(lit, Atom)]
    if delta_atom is not None and not computable(atoms[delta_atom], bound):
        body = lift_expressions(body, {id(atoms[delta_atom])})
    while True:
        atoms = [lit for lit in body if isinstance(lit, Atom)]
        known = set(bound)
        if delta_atom is not None:
            known |= {v.name for v in term_variables_of(atoms[delta_atom])}
            atoms = atoms[:delta_atom] + atoms[delta_atom + 1:]
        steps = order(body, atoms, known, store)
        stuck = {id(lit) for kind, lit, before in steps if kind == "atom" and not computable(lit, before)}
        if not stuck:
            return body, steps
        body = lift_expressions(body, stuck)


def lift_expressions(body: tuple, which: set[int]) -> tuple:
    """Returns the body with every expression argument of the atoms in ``which`` (by ``id``)
    replaced by a fresh variable that a comparison equates with it: ``r(y + 1, b)`` becomes
    ``r(_#e0, b), _#e0 = y + 1``, which can be matched before ``y`` is bound."""
    fresh = count(sum(1 for lit in body if isinstance(lit, Comparison)
                      and isinstance(lit.left, Variable) and lit.left.name.startswith("_#e")))
    out: list = []
    for literal in body:
        if not isinstance(literal, Atom) or id(literal) not in which:
            out.append(literal)
            continue
        args, equations = [], []
        for arg in literal.args:
            if isinstance(arg, (Variable, Wildcard, Constant)):
                args.append(arg)
                continue
            variable = Variable(f"_#e{next(fresh)}", getattr(arg, "position", None))
            args.append(variable)
            equations.append(Comparison("=", variable, arg, literal.position))
            inverse = _inverse(variable, arg)
            if inverse is not None:
                equations.append(Comparison("=", inverse[0], inverse[1], literal.position))
        out.append(Atom(literal.relation, tuple(args), literal.position))
        out.extend(equations)
    return tuple(out)


def _inverse(variable: Variable, arg) -> tuple[Variable, Arithmetic] | None:
    """For ``_#e0 = k + c`` (or ``k - c``, ``c + k``, ``c - k``) over integers of a width, returns
    ``(k, _#e0 - c)`` (...): ``k`` computed from the lifted variable, so that an atom over ``k``
    is looked up by it once ``r(_#e0, b)`` is matched (adding ``c`` is one-to-one on the
    integers of a width; the equation itself stays, and checks the value)."""
    if not isinstance(arg, Arithmetic) or arg.op not in ("+", "-") or arg.width not in ("number", "unsigned"):
        return None
    left, right = arg.left, arg.right
    def integer(term):
        return isinstance(term, Constant) and type(term.value) is int

    if isinstance(left, Variable) and integer(right):  # e = k + c: k = e - c; e = k - c: k = e + c
        return left, Arithmetic("-" if arg.op == "+" else "+", variable, right, arg.position, arg.width)
    if integer(left) and isinstance(right, Variable):  # e = c + k: k = e - c; e = c - k: k = c - e
        if arg.op == "+":
            return right, Arithmetic("-", variable, left, arg.position, arg.width)
        return right, Arithmetic("-", left, variable, arg.position, arg.width)
    return None


def _slots(rule: Rule) -> dict[str, int]:
    names: dict[str, int] = {}
    for literal in rule.body:
        for name in sorted(literal_names(literal), key=lambda n: (n.startswith("_#"), n)):
            names.setdefault(name, len(names))
    for arg in rule.head.args:  # a head variable bound only by prove()'s goal
        for v in term_variables(arg):
            names.setdefault(v.name, len(names))
    return names
