"""The graph's stored facts behind plan.Store's interface, read on demand.

Goal-directed proofs (plan.Plan.prove) look facts up by relation and bound
arguments; here each lookup is one indexed query on the ``facts`` table (columns
``k0..k2`` hold the first three arguments), cached for the life of the store.  What a
fact is worth (live or not, a witness, ...) is the caller's ``value`` function, so
one store serves re-derivation and explanations alike.

``ScopedFacts`` holds in memory the facts one support set can use (those its assertions
support, and background knowledge), for explanations on a graph folder: there a look-up is
tens of milliseconds, and a proof makes a hundred.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Iterator

from polygraph_logic.graph.store.graph_file import Graph

from polygraph_logic.graph.store.rows import fact_key

Value = Callable[[str, tuple], Any]


class FactStore:
    """``relations[name]`` and ``index(name, positions)`` as plan.Store has them, over a graph file."""

    def __init__(self, graph: Graph, value: Value):
        self.graph = graph
        self.value = value
        self.relations = _Relations(self, _Relation)
        self._exists: dict[tuple[str, tuple], bool] = {}
        self._lookups: dict[tuple, list[tuple]] = {}
        self._buckets: dict[tuple, bool] = {}

    BUCKET = 256  # membership tests load the tuples sharing the first two arguments, up to this many

    def exists(self, relation: str, args: tuple) -> bool:
        key = (relation, args)
        found = self._exists.get(key)
        if found is None:
            if len(args) >= 2 and self._bucket(relation, args[0], args[1]):
                found = self._exists.get(key, False)  # the whole bucket is known now
            else:
                found = self.graph.query("SELECT 1 FROM facts WHERE relation = ? AND args = ?",
                                         (relation, fact_key(args))).fetchone() is not None
            self._exists[key] = found
        return found

    def _bucket(self, relation: str, first, second) -> bool:
        """Loads every tuple of ``relation`` starting with ``first, second`` when there are at most
        BUCKET of them (a proof tests many such tuples: one query instead of one each); returns
        whether it did."""
        key = (relation, first, second)
        loaded = self._buckets.get(key)
        if loaded is None:
            rows = self.graph.bound_facts(relation, ((0, first), (1, second)), limit=self.BUCKET + 1).fetchall()
            loaded = len(rows) <= self.BUCKET
            if loaded:
                for row in rows:
                    self._exists[(relation, self.graph.args(row[0]))] = True
            self._buckets[key] = loaded
        return loaded

    def lookup(self, relation: str, positions: tuple[int, ...], key: tuple) -> list[tuple]:
        """Returns the stored tuples of ``relation`` whose ``positions`` hold ``key``."""
        cache_key = (relation, positions, key)
        found = self._lookups.get(cache_key)
        if found is None:
            # in fact order, whichever index answered: a proof takes the first derivation it meets,
            # and a file, a folder and a scope (ScopedFacts) then meet the same one
            rows = sorted(self.graph.bound_facts(relation, zip(positions, key), "num, args"))
            found = [tup for tup in (self.graph.args(row[1]) for row in rows)
                     if len(tup) > max(positions, default=-1)
                     and all(tup[p] == v and type(tup[p]) is type(v) for p, v in zip(positions, key))]
            self._lookups[cache_key] = found
            for tup in found:
                self._exists[(relation, tup)] = True
        return found

    def index(self, relation: str, positions: tuple[int, ...]) -> "_Lookup":
        return _Lookup(self, relation, positions)


class ScopedFacts:
    """plan.Store's interface over the facts of one scope, set by ``scope`` and replaced by the
    next: plans built once over it read whichever scope is current.  A scope is the facts a
    derivation from one support set may use (positive premises only: a rule with a negation
    or an aggregate must see every fact, and is planned over a FactStore)."""

    estimate = None  # no statistics: plans keep the body's order, as over a FactStore

    def __init__(self, value: Value):
        self.value = value
        self.relations = _Relations(self, _ScopedRelation)
        self.tuples: dict[str, dict[tuple, None]] = {}
        self.indexes: dict[tuple, dict[tuple, list[tuple]]] = {}

    def scope(self, facts) -> None:
        """Makes ``facts`` (``(relation, tuple)`` pairs, in fact order: look-ups yield them so) the scope."""
        self.tuples, self.indexes = {}, {}
        for relation, tup in facts:
            self.tuples.setdefault(relation, {})[tup] = None

    def lookup(self, relation: str, positions: tuple[int, ...], key: tuple) -> list[tuple]:
        index = self.indexes.get((relation, positions))
        if index is None:
            index = self.indexes[(relation, positions)] = {}
            for tup in self.tuples.get(relation, ()):
                if len(tup) > max(positions, default=-1):
                    index.setdefault(tuple(tup[p] for p in positions), []).append(tup)
        return [tup for tup in index.get(key, ())
                if all(type(tup[p]) is type(v) for p, v in zip(positions, key))]

    def index(self, relation: str, positions: tuple[int, ...]) -> "_Lookup":
        return _Lookup(self, relation, positions)


class _ScopedRelation(Mapping):
    """One relation of the current scope: ``tuple -> value``."""

    def __init__(self, store: ScopedFacts, relation: str):
        self.store, self.relation = store, relation

    def _tuples(self) -> dict:
        return self.store.tuples.get(self.relation, {})

    def __getitem__(self, tup):
        if tup not in self._tuples():
            raise KeyError(tup)
        return self.store.value(self.relation, tup)

    def __iter__(self) -> Iterator[tuple]:
        return iter(list(self._tuples()))

    def __len__(self) -> int:
        return len(self._tuples())


class _Relations(dict):
    """Any relation name gives its lazy view, made by ``view(store, relation)`` (rules may
    mention relations with no facts)."""

    def __init__(self, store, view):
        super().__init__()
        self.store, self.view = store, view

    def __missing__(self, relation: str):
        made = self[relation] = self.view(self.store, relation)
        return made


class _Relation(Mapping):
    """One relation: ``tuple -> value`` for the tuples the file holds."""

    def __init__(self, store: FactStore, relation: str):
        self.store = store
        self.relation = relation

    def get(self, tup, default=None):
        if self.store.exists(self.relation, tup):
            return self.store.value(self.relation, tup)
        return default

    def __getitem__(self, tup):
        if not self.store.exists(self.relation, tup):
            raise KeyError(tup)
        return self.store.value(self.relation, tup)

    def __contains__(self, tup) -> bool:
        return self.store.exists(self.relation, tup)

    def __iter__(self) -> Iterator[tuple]:
        for row in self.store.graph.query("SELECT args FROM facts WHERE relation = ?", (self.relation,)):
            yield self.store.graph.args(row[0])

    def __len__(self) -> int:
        return self.store.graph.query("SELECT COUNT(*) FROM facts WHERE relation = ?", (self.relation,)).fetchone()[0]

    def items(self):
        value = self.store.value
        return ((tup, value(self.relation, tup)) for tup in self)


class _Lookup:
    """An index of one relation on some positions: ``get(key, ())`` queries the file."""

    def __init__(self, store: FactStore, relation: str, positions: tuple[int, ...]):
        self.store, self.relation, self.positions = store, relation, positions

    def get(self, key: tuple, default=()):
        return self.store.lookup(self.relation, self.positions, key) or default
