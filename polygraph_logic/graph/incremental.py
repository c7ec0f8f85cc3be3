"""Semi-naive evaluation seeded with new facts: the closure updated, not recomputed.

The store holds the facts a previous evaluation derived (with their labels) and the
new facts already merged in; ``evaluate_seeded`` runs each stratum from the facts whose
labels changed (and the program's new rules in full), so the work follows what the new
facts reach.  It uses evaluate.py's join plans and merge rule (``plus`` of the old label
and the new derivations), so a fact's label grows exactly as the reference engine grows it.

Whether the result equals a full re-evaluation, label for label, depends on the cap.
Without truncation the why semiring is a semiring (plus and times associative,
commutative, distributive, absorptive), so any order of derivation reaches the same
least fixpoint: the uncapped minimal DNF, exact.  Capped labels are not order free:

- ``exact`` is sticky: once a sum holds more than ``cap`` support sets, it stays
  inexact even when later, smaller sets absorb it back below the cap; an order that
  meets the absorbing sets first never truncates and stays exact;
- after a truncation, one arriving set that absorbs two or more kept sets lets a dropped
  set back into the smallest ``cap`` in one order but not in another;
- a product of a truncated label misses the products of its dropped sets, which can
  rank among the smallest of the product.

So the reference engine's labels depend on the order derivations arrive (the input
order, the rule order, the join plans, which follow relation sizes) exactly when some
sum or product on the way holds more than ``cap`` support sets.  ``add`` therefore:

- sums a triple stated again in input order, old assertions first, as a build's fact
  loading does, and derives each fact of a *ground* stratum (receipt rules: ``merge``,
  ``member``, ``summary``, ``sentence``; no variables, no recursion) again from scratch,
  its rules' products summed in rule order, as the reference engine's single round sums
  them: there a truncation is the build's own;
- elsewhere stops at the first truncation (``Truncated``), or at a fact offered, with its
  old support sets, more sets than the cap (``crowded``: another order could truncate),
  and ledger.py evaluates the union in full, in the rebuild's order, instead.  Labels
  truncated before (inexact inputs) may take part: without a truncation plus and times
  are a semiring over them, so the fixpoint and every exact flag are order free.

What the check cannot see: support sets a previous evaluation offered a fact and then
absorbed (the stored label keeps only the minimal ones), which a full evaluation in
another order could meet before the absorbing ones and truncate.  The tests compare
``add`` with a full build on random programs with caps 1 to 3 (hypothesis) and on the
paper-scale and GO graphs.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from polygraph_logic.datalog.evaluate import merge_round
from polygraph_logic.datalog.joins.join_plan import Plan, Store
from polygraph_logic.provenance.why import WhySemiring, _ONE_MONOMIALS
from polygraph_logic.datalog.syntax import Atom, Rule, Variable
from polygraph_logic.datalog.syntax import Constant


class Truncated(Exception):
    """The cap truncated a label outside a ground stratum: the seeded result may depend on order."""


class WatchedWhy(WhySemiring):
    """The why semiring, noting whether the cap truncated a label or an inexact label took part;
    with ``stop``, a truncation raises Truncated at once (the caller evaluates in full instead)."""

    def __init__(self, cap: int | None):
        super().__init__(cap)
        self.truncated = False
        self.inexact = False
        self.stop = True

    def _make(self, monomials, exact):
        monomials = monomials if isinstance(monomials, frozenset) else frozenset(monomials)
        if self.cap is not None and len(monomials) > self.cap and monomials != _ONE_MONOMIALS:
            self.truncated = True
            if self.stop:
                raise Truncated()
        return super()._make(monomials, exact)

    def plus(self, a, b):
        if not (a.exact and b.exact):
            self.inexact = True
        return super().plus(a, b)

    def times(self, a, b):
        if not (a.exact and b.exact):
            self.inexact = True
        return super().times(a, b)


class Watch:
    """What the seeded evaluation saw that could make its labels depend on order (see the module)."""

    def __init__(self, semiring: WatchedWhy):
        self.semiring = semiring
        self.offered: dict[tuple[str, tuple], set] = defaultdict(set)  # fact -> support sets derived for it
        self.crowded: tuple[str, tuple] | None = None
        # every fact a rule instance derived (label changed or not): only these can have a derivation
        # the graph did not have before (semi-naive: each new one reads a new or changed fact, or a new rule)
        self.derived: set[tuple[str, tuple]] = set()

    def reason(self) -> str | None:
        """Returns why the result may differ from a full evaluation's, or None when it cannot."""
        if self.semiring.truncated:
            return f"the cap ({self.semiring.cap}) truncated a label the new facts reach"
        if self.crowded is not None:
            relation, args = self.crowded
            return (f"{relation}{tuple(args)} was offered more support sets than the cap "
                    f"({self.semiring.cap}) holds; another order could truncate them")
        return None


def evaluate_seeded(rules: list[Rule], strata: list[frozenset[str]], store: Store, semiring: WatchedWhy,
                    changed: dict[str, dict[tuple, Any]], new_rules: list[Rule], old: dict,
                    program=None) -> tuple[dict, "Watch"]:
    """Updates ``store`` with what follows from the ``changed`` facts (already in the store,
    with their new labels) and from ``new_rules`` (run in full); returns every fact whose
    label changed, ``{relation: {tuple: label}}``, and the Watch (its ``reason()`` is None
    when the result equals a full evaluation's; else the evaluation stopped there).  ``old`` maps (relation, tuple) to the
    label before (absent for a new fact), for the crowding check of ``Watch``.  ``rules`` are the
    rules in memory (new ones last); ``program`` (stored_program.StoredProgram) reads the stored
    ground rules the changed facts reach, as they are reached."""
    watch = Watch(semiring)
    changed = {relation: dict(rows) for relation, rows in changed.items() if rows}
    try:
        _strata(rules, strata, store, semiring, changed, new_rules, old, watch, program or _NoGround())
    except Truncated:
        pass  # watch.reason() says so
    return changed, watch


class _NoGround:
    """A program whose rules are all in memory: no ground rule to read by atom."""

    order: dict = {}

    def heads(self) -> set:
        return set()


def _strata(rules, strata, store, semiring, changed, new_rules, old, watch, program) -> None:
    by_head: dict[str, list[Rule]] = defaultdict(list)
    for rule in rules:
        by_head[rule.head.relation].append(rule)
    fresh = {id(rule) for rule in new_rules}
    stored_heads = program.heads()
    for stratum in strata:
        stratum_rules = [rule for name in sorted(stratum) for rule in by_head.get(name, ())]
        stored = stratum & stored_heads  # relations of the stratum stored ground rules derive
        if not stratum_rules and not stored:
            continue
        if _ground(stratum, stratum_rules) and not any(program.reads[head] & stratum for head in stored):
            watch.derived.update(_ground_stratum(stratum_rules, fresh, store, semiring, changed, program, stored))
        else:
            _stratum(stratum, stratum_rules, fresh, store, semiring, changed, watch, old, program, stored)


def _ground(stratum, rules: list[Rule]) -> bool:
    """True for a stratum of ground rules that do not read the stratum (receipts: merge, member,
    summary, sentence): the reference engine derives each fact in one round, in rule order."""
    return all(not any(isinstance(arg, Variable) for atom in (rule.head, *rule.body) if isinstance(atom, Atom)
                       for arg in atom.args)
               and all(isinstance(lit, Atom) and lit.relation not in stratum for lit in rule.body)
               for rule in rules)


def _ground_stratum(rules, fresh, store, semiring, changed, program, stored) -> set:
    """Derives again, from scratch, every fact of a ground stratum that a new rule or a changed
    body fact reaches: its label is the sum of its rules' products in rule order, as the reference
    engine sums them (so a truncation by the cap is the one a full evaluation makes); returns them."""
    reaching = [rule for rule in rules
                if id(rule) in fresh or any(tuple(arg.value for arg in lit.args) in changed.get(lit.relation, ())
                                            for lit in rule.body)]
    if stored:
        reaching += program.reading(changed, stored)
    heads: dict[str, set] = defaultdict(set)
    for rule in reaching:
        heads[rule.head.relation].add(tuple(arg.value for arg in rule.head.args))
    reached = {(relation, tup) for relation, tuples in heads.items() for tup in tuples}
    candidates = [*rules, *(program.deriving(heads) if stored else ())]
    by_fact: dict[tuple, list[Rule]] = defaultdict(list)
    order, last = program.order, float("inf")
    for rule in sorted(candidates, key=lambda r: order.get(id(r), last)):  # stored rules by number, new ones after
        key = (rule.head.relation, tuple(arg.value for arg in rule.head.args))
        if key in reached:
            by_fact[key].append(rule)
    # every fact the rules read and derive, looked up at once (a folder answers a look-up in milliseconds)
    wanted: dict[str, dict] = defaultdict(dict)
    for (relation, tup), derived in by_fact.items():
        wanted[relation][tup] = None
        for rule in derived:
            for lit in rule.body:
                wanted[lit.relation][tuple(arg.value for arg in lit.args)] = None
    store.prefetch(wanted, least=1)
    truncated, inexact, stop = semiring.truncated, semiring.inexact, semiring.stop
    semiring.stop = False  # a ground stratum's sums are made in the reference engine's order
    for relation, tup in sorted(reached, key=repr):
        label = None

        def emit(_relation, _tup, value):
            nonlocal label
            label = value if label is None else semiring.plus(label, value)

        for rule in by_fact[(relation, tup)]:
            Plan(rule, store, semiring, emit).evaluate()
        rows = store.relations[relation]
        if label is None or rows.get(tup) == label:
            continue
        if tup in rows:
            rows[tup] = label
        else:
            store.add(relation, tup, label)
        changed.setdefault(relation, {})[tup] = label
    semiring.truncated, semiring.inexact, semiring.stop = truncated, inexact, stop
    return reached


def _stratum(stratum, rules, fresh, store, semiring, changed, watch, old, program, stored) -> None:
    plus = semiring.plus
    cap = semiring.cap
    pending: dict[str, dict[tuple, Any]] = defaultdict(dict)
    probing = [False]
    derived = watch.derived

    def emit(relation: str, tup: tuple, label: Any) -> None:
        if probing[0]:  # a probe only notes what the joins look up (LazyStore.probing)
            return
        derived.add((relation, tup))
        bucket = pending[relation]
        previous = bucket.get(tup)
        bucket[tup] = label if previous is None else plus(previous, label)
        if cap is not None and watch.crowded is None:
            offered = watch.offered[(relation, tup)]
            offered.update(label.monomials)
            before = old.get((relation, tup))
            if len(offered | before.monomials if before is not None else offered) > cap:
                watch.crowded = (relation, tup)
                raise Truncated()

    plans: dict[tuple[int, int], Plan] = {}
    drivers = [(rule, j, atom, _constants(atom)) for rule in rules if id(rule) not in fresh
               for j, atom in enumerate(lit for lit in rule.body if isinstance(lit, Atom))]

    loaded: set[int] = set()

    def variants(delta, relations):
        """The plans driven by a delta atom some delta tuple can match (made once, when first needed:
        of a thousand ontology rules, a round's delta meets a few)."""
        if stored:  # the stored ground rules of the stratum this delta reaches, read now
            for rule in program.reading({r: rows for r, rows in delta.items() if r in relations}, stored):
                if id(rule) not in loaded:
                    loaded.add(id(rule))
                    drivers.extend((rule, j, atom, _constants(atom))
                                   for j, atom in enumerate(lit for lit in rule.body if isinstance(lit, Atom)))
        present = {relation: _present(rows) for relation, rows in delta.items() if relation in relations}
        out = []
        for rule, j, atom, constants in drivers:
            seen = present.get(atom.relation)
            if seen is None or any(value not in seen.get(pos, ()) for pos, value in constants):
                continue
            plan = plans.get((id(rule), j))
            if plan is None:
                plan = plans[(id(rule), j)] = Plan(rule, store, semiring, emit, delta_atom=j)
            out.append((plan, atom.relation))
        return out

    for rule in rules:
        if id(rule) in fresh:
            Plan(rule, store, semiring, emit).evaluate()
    delta, relations = changed, set(changed)
    while True:
        indexes: dict[str, dict] = defaultdict(dict)
        chosen = variants(delta, relations)
        _probe(store, chosen, delta, indexes, probing)
        for plan, relation in chosen:
            plan.evaluate(delta[relation], indexes[relation])
        store.prefetch(pending)
        delta = merge_round(pending, store, plus)
        pending = defaultdict(dict)
        if not delta:
            return
        for relation, rows in delta.items():
            changed.setdefault(relation, {}).update(rows)
        relations = stratum


def _probe(store, chosen, delta, indexes, probing: list) -> None:
    """Runs a round's joins without deriving anything, as long as they look up keys a store read
    on demand does not know yet, and reads those in one query an index (LazyStore.fetch_wanted):
    a join of n atoms notes its keys in at most n probes."""
    if not getattr(store, "batched", False):  # a graph file's indexes answer a look-up in microseconds
        return
    for _ in range(MAX_PROBES):
        probing[0] = store.probing = True
        try:
            for plan, relation in chosen:
                plan.evaluate(delta[relation], indexes[relation])
        finally:
            probing[0] = store.probing = False
        if not store.fetch_wanted():
            return


#: probes a round makes at most (each reads the keys one more join step asks for)
MAX_PROBES = 4


def _constants(atom: Atom) -> tuple[tuple[int, object], ...]:
    return tuple((pos, arg.value) for pos, arg in enumerate(atom.args) if isinstance(arg, Constant))


def _present(rows: dict) -> dict[int, set]:
    """Returns, per argument position, the values the tuples hold (to skip plans no tuple can drive)."""
    present: dict[int, set] = defaultdict(set)
    for tup in rows:
        for pos, value in enumerate(tup):
            present[pos].add(value)
    return present
