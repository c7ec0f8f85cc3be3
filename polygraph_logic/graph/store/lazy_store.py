"""plan.Store over a graph file, read on demand: what a seeded evaluation touches, not the graph.

A seeded evaluation (incremental.py) starts from a few new facts; its joins look up
the stored facts that share an argument with them.  ``LazyStore`` answers each lookup
with one indexed query on the ``facts`` table (``k0..k2`` hold the first three
arguments), decodes the labels it reads into the evaluation's semiring, and keeps them:
new and changed facts live in memory beside them, exactly as plan.Store holds facts.
The label each fact had on disk is kept in ``old`` (the ledger's crowding check).

It has no size estimates, so plans join in the order the rule states; the order does
not change an uncapped result, and a capped one is checked by incremental.Watch.

A look-up costs a query (a folder's, milliseconds), so a round's joins are first run
``probing``: a key not known yet is noted in ``wanted`` and found empty, and ``fetch_wanted``
then reads every noted key of an index in one query (the joins' next steps note theirs on the
next probe); the round itself then asks the graph nothing it has not read.
"""

from __future__ import annotations

from typing import Any

from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.provenance.why import Polynomial
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import bad_graph, fact_key


class LazyStore(Store):
    """``relations``, ``index`` and ``add`` as plan.Store has them, filled from a graph file on demand."""

    estimate = None  # steps.order then keeps the body's order (no statistics to read)

    def __init__(self, arities: dict[str, int], graph: Graph, semiring):
        super().__init__(arities)
        self.graph = graph
        self.semiring = semiring
        self.relations = {name: _Relation(self, name) for name in arities}
        self.old: dict[tuple[str, tuple], Any] = {}
        self._names: dict[int, str] = {}  # assertion number -> id, read for the labels fetched (names_for)
        self._labels: dict[tuple, Polynomial] = {}  # many facts share a label (the edges one claim entails)
        self.added: dict[str, list[tuple]] = {}
        # look-ups are worth batching where one costs a query of its own (a folder: Store.point_reads)
        self.batched = not graph.store.point_reads
        self.probing = False
        # while probing, the keys asked of each index (relation, positions) and the tuples asked of
        # each relation (relation, None) that are not known yet
        self.wanted: dict[tuple[str, tuple | None], set] = {}

    def fetch_wanted(self) -> bool:
        """Reads what probing noted, one query an index (and one a relation for whole tuples);
        returns whether anything was noted."""
        wanted, self.wanted = self.wanted, {}
        for (relation, positions), keys in wanted.items():
            if positions is None:
                self.prefetch({relation: dict.fromkeys(keys)}, least=1)
            elif len(keys) == 1:
                self.index(relation, positions).get(next(iter(keys)))
            else:
                self.index(relation, positions).fill(keys)
        return bool(wanted)

    def add(self, relation: str, tup: tuple, label: Any) -> None:
        """Adds a new tuple (as plan.Store does) and remembers it for index keys asked for later."""
        self.added.setdefault(relation, []).append(tup)
        super().add(relation, tup, label)

    def index(self, relation: str, positions: tuple[int, ...]) -> "_Index":
        indexes = self._indexes.setdefault(relation, {})
        found = indexes.get(positions)
        if found is None:
            found = indexes[positions] = _Index(self, relation, positions)
        return found

    def names_for(self, blobs) -> None:
        """Reads, in one query, the ids of the assertion numbers in stored labels ``blobs`` not known
        yet (an add reads the few the facts it touches name, not every assertion of the graph)."""
        names, unknown = self._names, set()
        for blob in blobs:
            unknown.update(n for group in self.graph.decode(blob) for n in group if n not in names)
        if unknown:
            names.update(self.graph.names(unknown))
            missing = unknown - names.keys()
            if missing:
                raise bad_graph(self.graph.path, f"a stored label names assertion number {min(missing)}, "
                                "which the graph does not have")

    def label(self, blob: bytes, exact) -> Polynomial:
        """Returns a stored label as a polynomial of the evaluation's semiring."""
        found = self._labels.get((blob, exact))
        if found is None:
            groups = self.graph.decode(blob)
            if groups == [[]]:
                found = self.semiring.one()
            else:
                intern, names = self.semiring.table.intern, self._names
                found = Polynomial(frozenset(frozenset(intern(names[n]) for n in g) for g in groups), bool(exact),
                                   self.semiring.table)
            self._labels[(blob, exact)] = found
        return found

    def fetch(self, relation: str, rows_read) -> list[tuple]:
        """Keeps the stored facts ``rows_read`` (args, label, exact) of ``relation``; returns their tuples."""
        rows = self.relations[relation]
        found = []
        rows_read = list(rows_read)
        self.names_for(blob for _, blob, exact in rows_read if (blob, exact) not in self._labels)
        for args, blob, exact in rows_read:
            tup = self.graph.args(args)
            if not dict.__contains__(rows, tup):
                label = self.label(blob, exact)
                dict.__setitem__(rows, tup, label)
                self.old[(relation, tup)] = label
            found.append(tup)
        return found


    def prefetch(self, pending: dict[str, dict[tuple, Any]], least: int = 2) -> None:
        """Reads at once the stored rows of the tuples a round derived (``{relation: {tuple: label}}``)
        that are not known yet, so that merging them asks the graph nothing more (a folder answers
        one look-up in milliseconds; a file's index in microseconds, and one read serves both)."""
        for relation, bucket in pending.items():
            rows = self.relations[relation]
            if rows.complete:
                continue
            unknown = [tup for tup in bucket if not dict.__contains__(rows, tup) and tup not in rows.absent]
            if len(unknown) < least:
                continue
            self.fetch(relation, self.graph.facts_named(relation, [fact_key(tup) for tup in unknown]))
            rows.absent.update(tup for tup in unknown if not dict.__contains__(rows, tup))


class _Relation(dict):
    """One relation: the tuples read so far and those the evaluation added; a miss asks the file."""

    def __init__(self, store: LazyStore, relation: str):
        super().__init__()
        self.store, self.relation = store, relation
        self.absent: set[tuple] = set()
        self.complete = False

    def get(self, tup, default=None):
        if dict.__contains__(self, tup):
            return dict.__getitem__(self, tup)
        if self.complete or tup in self.absent:
            return default
        if self.store.probing:
            self.store.wanted.setdefault((self.relation, None), set()).add(tup)
            return default
        graph = self.store.graph
        if not self.store.fetch(self.relation, graph.query("SELECT args, label, exact FROM facts WHERE relation = ? "
                                                           "AND args = ?", (self.relation, fact_key(tup)))):
            self.absent.add(tup)
            return default
        return dict.__getitem__(self, tup)

    def __contains__(self, tup) -> bool:
        return self.get(tup) is not None

    def __getitem__(self, tup):
        label = self.get(tup)
        if label is None:
            raise KeyError(tup)
        return label

    def _everything(self) -> None:
        if not self.complete:
            self.store.fetch(self.relation, self.store.graph.bound_facts(self.relation, (), "args, label, exact"))
            self.complete = True

    def items(self):
        self._everything()
        return dict.items(self)

    def __iter__(self):
        self._everything()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._everything()
        return dict.__len__(self)


class _Index(dict):
    """The tuples of one relation by the values at some positions; a key not yet seen asks the file.

    Tuples the evaluation adds under a key not yet asked for wait in ``pending`` and join
    the stored ones when the key is first asked for."""

    def __init__(self, store: LazyStore, relation: str, positions: tuple[int, ...]):
        super().__init__()
        self.store, self.relation, self.positions = store, relation, positions
        self.pending: dict[tuple, list[tuple]] = {}
        for tup in store.added.get(relation, ()):  # added before this index was made
            self.pending.setdefault(tuple(tup[p] for p in positions), []).append(tup)

    def get(self, key, default=()):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        if self.store.probing:
            self.store.wanted.setdefault((self.relation, self.positions), set()).add(key)
            return default
        found = self.store.fetch(self.relation, self.store.graph.bound_facts(self.relation, zip(self.positions, key),
                                                                             "args, label, exact"))
        self._file([key], found)
        return dict.__getitem__(self, key) or default

    def fill(self, keys) -> None:
        """Reads the stored tuples of every key of ``keys`` not known yet, in one query."""
        keys = [key for key in keys if not dict.__contains__(self, key)]
        if keys:
            self._file(keys, self.store.fetch(self.relation, self.store.graph.bound_facts_among(
                self.relation, self.positions, keys, "args, label, exact")))

    def _file(self, keys, found: list[tuple]) -> None:
        """Files the tuples read (``found``, a superset) under the ``keys`` they hold, with the
        tuples the evaluation added under those keys meanwhile."""
        positions = self.positions
        wanted = {key: {} for key in keys}
        for tup in found:
            if all(p < len(tup) for p in positions):
                key = tuple(tup[p] for p in positions)
                bucket = wanted.get(key)
                if bucket is not None and all(type(tup[p]) is type(v) for p, v in zip(positions, key)):
                    bucket[tup] = None
        for key, tuples in wanted.items():
            tuples.update(dict.fromkeys(self.pending.pop(key, ())))
            dict.setdefault(self, key, list(tuples))

    def setdefault(self, key, default=None):
        """Where plan.Store.add files a new tuple: under a key asked for already, or pending."""
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self.pending.setdefault(key, [])
