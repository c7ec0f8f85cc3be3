"""Questions by pattern (``edge("a", "RO:0002131", _)``): stored facts, and lazy ones derived on demand.

A graph built with ``.lazy`` declarations (datalog/lazy/part.py) stores the patterns and rules it
left out.  ``ask`` answers a pattern with every fact that matches it: a stored fact with its
label, a lazy one derived on demand (datalog/lazy/on_demand.py) over the stored facts of the
relations the lazy rules read, loaded once.  Each answer's support sets are the minimal DNF
of its circuit (the lazy derivations, then the stored circuit of capped labels), and under a
deletion its verdict follows from them: it holds when a support set survives.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.datalog.lazy.part import LazyPart, Pattern
from polygraph_logic.datalog.lazy.on_demand import OnDemand
from polygraph_logic.datalog.reading.source import parse_source
from polygraph_logic.datalog.syntax import Atom, Constant, Rule, format_value
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import fact_key
from polygraph_logic.query.circuit_support import BUDGET, FactRows, expand_nodes


def lazy_part(graph: Graph) -> LazyPart | None:
    """What the graph's build left to on-demand derivation (None: nothing)."""
    text = graph.meta.get("lazy")
    return LazyPart.from_json(text) if text else None


def parse_question(text: str) -> tuple[str, Pattern]:
    """``rel("a", _, x)`` as its relation and pattern (a variable or ``_``: any value)."""
    try:
        clauses = parse_source(f"question() :- {text.strip().rstrip('.')}.", "(question)").clauses
    except PolygraphError as error:
        raise PolygraphError("bad_argument", f"'{text}' is not an atom such as edge(\"a\", \"RO:0002131\", _): "
                                             f"{error.message}") from None
    rule = clauses[0] if clauses else None
    if not isinstance(rule, Rule) or len(rule.body) != 1 or not isinstance(rule.body[0], Atom):
        raise PolygraphError("bad_argument", f"'{text}' is not one atom such as edge(\"a\", \"RO:0002131\", _)")
    atom = rule.body[0]
    return atom.relation, tuple(arg.value if isinstance(arg, Constant) else None for arg in atom.args)


class LazyFacts:
    """A graph's stored facts of the relations its lazy rules read, and the on-demand evaluator over them."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.part = lazy_part(graph)
        self.store = None
        self.engine = None
        if self.part is not None:
            rules = self.part.goal_rules()
            read = {atom.relation for rule in rules for atom in rule.body if isinstance(atom, Atom)}
            read |= set(self.part.patterns.by_relation)
            self.store = Store({relation: 0 for relation in read})
            # only the facts the rules can read: at x40, the edges of a few predicates of a million
            filters = {r: f for r, f in self.part.read_filters(rules).items() if r in read}
            for relation, args, num, background in graph.relation_facts(read, filters):
                self.store.relations[relation][args] = None if background else num
            self.engine = OnDemand(self.part, self._stored)

    def _stored(self, relation: str, pattern: Pattern):
        rows = self.store.relations.get(relation)
        if not rows:
            return ()
        positions = tuple(k for k, v in enumerate(pattern) if v is not None)
        if len(positions) == len(pattern):
            return ((pattern, rows[pattern]),) if pattern in rows else ()
        if not positions:
            return rows.items()
        index = self.store.index(relation, positions)
        return ((args, rows[args]) for args in index.get(tuple(pattern[k] for k in positions), ()))

    def is_lazy(self, relation: str, pattern: Pattern) -> bool:
        return self.part is not None and bool(self.part.patterns.meeting(relation, pattern))


@dataclass
class Answer:
    """One fact matching a question: its support sets (assertion ids) and verdict."""

    relation: str
    args: tuple
    lazy: bool
    support_sets: list[list[str]]
    complete: bool
    holds: bool | None  # under the deletion asked about (None: the expansion was cut short and no set survives)

    def to_json(self, sets: int | None = None) -> dict:
        shown = self.support_sets if sets is None else self.support_sets[:sets]
        return {"fact": f"{self.relation}({', '.join(map(format_value, self.args))})", "relation": self.relation,
                "args": list(self.args), "lazy": self.lazy, "support_set_count": len(self.support_sets),
                "complete": self.complete, "support_sets": shown,
                "verdict": {True: "holds", False: "falls", None: "uncertain"}[self.holds]}


def ask(graph: Graph, question: str, deletion=None, facts: LazyFacts | None = None,
        budget: int = BUDGET) -> list[Answer]:
    """The facts matching ``question`` (an atom; variables and ``_`` match anything), stored
    and lazy, sorted; with ``deletion`` (a whatif.Deletion), each one's verdict under it
    (``answers``, held whole)."""
    return list(answers(graph, question, deletion, facts, budget))


def answers(graph: Graph, question: str, deletion=None, facts: LazyFacts | None = None,
            budget: int = BUDGET) -> Iterator[Answer]:
    """``ask``'s answers streamed in their order: the stored facts read in the order of their
    arguments' text a batch at a time (each batch's circuits expanded together and its assertions'
    ids read in one look-up), merged with the lazy ones (a lazy fact answers for a stored one of
    the same arguments), so that memory is bounded by a batch whatever the number of answers."""
    relation, pattern = parse_question(question)
    facts = facts or LazyFacts(graph)
    deleted = set(deletion.viewed(graph).numbers(graph)) if deletion is not None else set()
    lazy_roots: dict[tuple, int] = {}
    lazy_bodies = {}
    if facts.is_lazy(relation, pattern):
        lazy_bodies = facts.engine.derivations
        lazy_roots = dict(facts.engine.ask(relation, pattern).items())
    lazy = sorted(((fact_key(args), args, node, True) for args, node in lazy_roots.items()))
    stored = ((fact_key(args), args, num, False) for args, num in _stored(graph, relation, pattern)
              if args not in lazy_roots)
    merged, size = heapq.merge(lazy, stored, key=lambda entry: entry[0]), 100
    while chunk := list(itertools.islice(merged, size)):
        found = expand_nodes(graph, [entry[2] for entry in chunk], lazy_bodies, budget, FactRows(graph))
        names = graph.names({n for _, _, node, _ in chunk for m in found[node].sets for n in m})
        for _, args, node, is_lazy in chunk:
            expansion = found[node]
            alive = any(m.isdisjoint(deleted) for m in expansion.sets)
            yield Answer(relation, args, is_lazy, [sorted(names[n] for n in m) for m in expansion.sets],
                         expansion.complete, True if alive else (False if expansion.complete else None))
        size = min(size * 4, 2_000)


#: the most stored facts ``ask`` reads in one query (a page, ordered by arguments)
PAGE = 50_000


def _stored(graph: Graph, relation: str, pattern: Pattern):
    """``(args, number)`` of the stored facts of ``relation`` matching ``pattern`` (those whose
    label is 1 too: background knowledge holds whatever is deleted), in the order of their
    arguments' text: through the store's indexes on the bound arguments (as ``why`` finds a
    fact), every fact of the relation only when none is."""
    bound = [(k, v) for k, v in enumerate(pattern) if v is not None]
    after, size = None, 100
    while True:  # a page at a time after the last one read (a top-N query: no sort of the whole relation)
        page = graph.bound_facts(relation, bound, "args, num", limit=size, ordered=True, after=after).fetchall()
        for text, num in page:
            args = graph.args(text)
            if len(args) == len(pattern) and all(p is None or p == v for p, v in zip(pattern, args)):
                yield args, num
        if len(page) < size:
            return
        after, size = page[-1][0], min(size * 4, PAGE)


__all__ = ["Answer", "LazyFacts", "answers", "ask", "lazy_part", "parse_question"]
