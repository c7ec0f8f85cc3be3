"""Join steps for unit labels: every fact's label is one (the Boolean semiring, or a program
with no tracked fact), so a plan carries no labels at all.

With nothing to multiply, a step only binds slots and calls the next one, and two things
follow that ``join_steps`` cannot do for a semiring that counts derivations:

- an atom whose new variables nothing after it reads (``r(x) :- e(x, _), !b(x, _)``:
  the ``_`` of ``e``; ``unreach(x) :- node(x), !reach(x)``; ``p(x) :- a(x, y), b(y, _)``:
  ``b``) is an existence test: the first matching tuple is enough, the others would derive
  the same head again (a semi-join, as Soufflé's existence checks);
- lookup keys and head tuples are read from the slots by ``operator.itemgetter``, not a
  generator per tuple; a last atom made of plain variables makes its head tuples in C
  (``zip`` of a column of the matches and the values bound before) and tests them there.

Long plans, negations (they pass the label on untouched) and the steps that are not atoms
are those of ``join_steps``.
"""

from __future__ import annotations

from itertools import filterfalse, repeat
from operator import itemgetter

from polygraph_logic.datalog.joins.join_steps import LONG, STEP, AtomMatch, Next, compile_range, compile_steps, \
    tuple_getter
from polygraph_logic.datalog.joins.range_steps import fuse_ranges
from polygraph_logic.datalog.joins.step_order import literal_names
from polygraph_logic.datalog.syntax import Atom, Constant, Variable


def compile_unit_steps(steps, slots, store, semiring, final: Next, body=(), keep: set[str] | None = None,
                       head: tuple | None = None) -> Next:
    """Compiles ordered steps into ``run(b, label)`` for unit labels (the label passed on is
    never read). ``keep``: the names ``final`` reads; an atom binding none of them nor any
    name a later step reads is an existence test. ``head``: ``(emit, relation, key, rows,
    one, head arguments)``, what ``final`` does, so that a last atom looked up by an index emits the head
    itself (one call less per derivation). A long plan is ``join_steps``'s."""
    if len(steps) > LONG:
        return compile_steps(steps, slots, store, semiring, final, body)
    needed = set(keep) if keep is not None else None
    chain = final
    for n, (kind, literal, before) in enumerate(reversed(fuse_ranges(steps, store))):
        if kind == "range":
            def atom_step(atom, before, slots, store, semiring, then, body=()):
                return _unit_atom_step(atom, before, slots, store, semiring, then, False)

            chain = compile_range(literal, before, slots, store, semiring, chain, body, True, atom_step)
            if needed is not None:
                needed |= literal_names(literal[0]) | literal_names(literal[1])
            continue
        if kind == "atom":
            once = needed is not None and not (literal_names(literal) - before) & needed
            fused = _emitting_lookup(literal, before, slots, store, semiring, head) \
                if n == 0 and head is not None and not once else None
            chain = fused or _unit_atom_step(literal, before, slots, store, semiring, chain, once)
        else:  # a negation passes the label on untouched: join_steps's step serves
            chain = STEP[kind](literal, before, slots, store, semiring, chain, body)
        if needed is not None:
            needed |= literal_names(literal)
    return chain


def _unit_atom_step(atom: Atom, before, slots, store, semiring, then: Next, once: bool) -> Next:
    match = AtomMatch.build(atom, slots, set(before), (store, semiring))
    rows = store.relations[atom.relation]
    if not match.key:
        matches = match.matches

        def scan(b, label):
            for tup in rows:
                if matches(tup, b):
                    then(b, label)
                    if once:
                        return

        return scan
    positions = tuple(pos for pos, _ in match.key)
    key = tuple_getter([atom.args[pos] for pos in positions], slots, (store, semiring))
    if len(positions) == len(atom.args):  # fully bound: a membership test
        def member(b, label):
            if key(b) in rows:
                then(b, label)

        return member
    index = store.index(atom.relation, positions)
    binds, repeats = match.binds, match.repeats
    if once and not repeats:
        def exists(b, label):
            if index.get(key(b)):
                then(b, label)

        return exists
    if len(binds) == 1 and not repeats:
        (pos, slot), = binds

        def lookup_one(b, label):
            for tup in index.get(key(b), ()):
                b[slot] = tup[pos]
                then(b, label)

        return lookup_one

    def lookup(b, label):
        for tup in index.get(key(b), ()):
            if repeats and any(tup[p] != tup[q] for p, q in repeats):
                continue
            for pos, slot in binds:
                b[slot] = tup[pos]
            then(b, label)
            if once:
                return

    return lookup


def _bulk_heads(head_args, slots, binds):
    """Returns ``(b, bucket) -> iterator of head tuples``, one per tuple of ``bucket`` in its
    order, when every head argument is a constant, a slot bound before the last atom, or a
    position of its tuples (``binds``); None when one is an expression."""
    from_tuple = {slot: pos for pos, slot in binds}
    columns = []  # (position in the matched tuple, None) or (None, slot or constant holder)
    for arg in head_args:
        if isinstance(arg, Constant):
            columns.append((None, None, arg.value))
        elif isinstance(arg, Variable) and slots[arg.name] in from_tuple:
            columns.append((itemgetter(from_tuple[slots[arg.name]]), None, None))
        elif isinstance(arg, Variable):
            columns.append((None, slots[arg.name], None))
        else:
            return None

    def heads(b, bucket):
        n = len(bucket)
        return zip(*[map(get, bucket) if get is not None else repeat(b[slot] if slot is not None else value, n)
                     for get, slot, value in columns])

    return heads


def _emitting_lookup(atom: Atom, before, slots, store, semiring, head: tuple) -> Next | None:
    """The last atom of a plan, looked up by an index, emitting the head for each match
    (None when the atom is a scan or a membership test)."""
    match = AtomMatch.build(atom, slots, set(before), (store, semiring))
    positions = tuple(pos for pos, _ in match.key)
    if not positions or len(positions) == len(atom.args):
        return None
    key = tuple_getter([atom.args[pos] for pos in positions], slots, (store, semiring))
    index = store.index(atom.relation, positions)
    binds, repeats = match.binds, match.repeats
    emit, relation, head_key, rows, one, head_args = head
    bulk = _bulk_heads(head_args, slots, binds) if head_args is not None and not repeats else None
    if bulk is not None:
        def lookup_emit_bulk(b, label):
            bucket = index.get(key(b))
            if bucket is None:
                return
            # the head tuples made and tested in C: a column of the matches, or a value repeated
            for derived in filterfalse(rows.__contains__, bulk(b, bucket)):
                emit(relation, derived, one)

        return lookup_emit_bulk
    if len(binds) == 1 and not repeats:
        (pos, slot), = binds

        def lookup_emit_one(b, label):
            for tup in index.get(key(b), ()):
                b[slot] = tup[pos]
                derived = head_key(b)
                if derived not in rows:  # a known fact's label is one already
                    emit(relation, derived, one)

        return lookup_emit_one

    def lookup_emit(b, label):
        for tup in index.get(key(b), ()):
            if repeats and any(tup[p] != tup[q] for p, q in repeats):
                continue
            for pos, slot in binds:
                b[slot] = tup[pos]
            derived = head_key(b)
            if derived not in rows:
                emit(relation, derived, one)

    return lookup_emit

