"""Lazy facts derived on demand: a goal-directed, tabled evaluation of the lazy rules (datalog/lazy/part.py).

A question is a pattern (``edge("a", "RO:0002131", _)``).  Each *subgoal* (a relation and a
pattern) keeps a table of the lazy facts found for it; a rule whose head meets the subgoal
runs with the head's variables bound from it, its body atoms joined most-bound first, each
body atom read from the materialized facts (``stored``) and, where it meets a lazy pattern,
from the table of that subgoal (registered when first read).  A subgoal runs again when a
table it read gains a fact (a derivation names its body facts, not their labels, so only new
facts can give a subgoal new derivations): the query-subquery evaluation of the program's
goal-directed part, run to its fixpoint by a worklist, which holds every derivation of every
lazy fact the question reaches.

What it returns is a circuit (provenance/circuit.py): each lazy fact is a node (a negative
number) whose derivations are bodies of references, materialized facts by their stored
number and lazy facts by their node; a fact of label 1 (background knowledge) is left out
of a body.  A lazy fact the build stored anyway (a fact of a rule file) has that stored
fact as one more derivation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from polygraph_logic.datalog.lazy.part import LazyPart, Pattern, atom_pattern, unify
from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Rule, Variable

Ref = int  # a stored fact's number (positive) or a lazy fact's node (negative)
#: ``stored(relation, pattern)``: the materialized facts matching pattern, as (args, number or None for label 1)
Stored = Callable[[str, Pattern], Iterable[tuple[tuple, Ref | None]]]

_TESTS = {"!=": lambda a, b: a != b, "=": lambda a, b: a == b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _narrow(a: Pattern, b: Pattern) -> Pattern:
    """The pattern of the facts matching both (the patterns meet)."""
    return tuple(x if x is not None else y for x, y in zip(a, b))


class OnDemand:
    """The lazy facts of a graph's lazy part, derived for the questions asked (tables kept between questions)."""

    def __init__(self, part: LazyPart, stored: Stored):
        self.part = part
        self.stored = stored
        self.by_head: dict[str, list[Rule]] = {}
        for rule in part.goal_rules():
            self.by_head.setdefault(rule.head.relation, []).append(rule)
        self.tables: dict[tuple[str, Pattern], set[tuple]] = {}
        self.nodes: dict[tuple[str, tuple], Ref] = {}
        self.facts: dict[Ref, tuple[str, tuple]] = {}
        self.derivations: dict[Ref, set[frozenset]] = {}
        self._readers: dict[tuple[str, Pattern], set[tuple[str, Pattern]]] = {}  # table -> subgoals reading it
        self._dirty: dict[tuple[str, Pattern], None] = {}  # subgoals to run (again), in order
        self._running: tuple[str, Pattern] | None = None

    def ask(self, relation: str, pattern: Pattern) -> dict[tuple, Ref]:
        """The lazy facts of ``relation`` matching ``pattern``, each with its node; the
        derivations of every node reached are then in ``derivations``."""
        goals = [(relation, _narrow(p, pattern)) for p in self.part.patterns.meeting(relation, pattern)]
        for goal in goals:
            self._table(goal)
        while self._dirty:
            goal = next(iter(self._dirty))
            del self._dirty[goal]
            self._running = goal
            self._run(goal)
        self._running = None
        found = {}
        for goal in goals:
            for args in self.tables[goal]:
                found[args] = self.nodes[(relation, args)]
        return found

    def _table(self, goal: tuple[str, Pattern]) -> set[tuple]:
        table = self.tables.get(goal)
        if table is None:
            table = self.tables[goal] = set()
            self._readers[goal] = set()
            self._dirty[goal] = None
        if self._running is not None:
            self._readers[goal].add(self._running)
        return table

    def _node(self, relation: str, args: tuple) -> Ref:
        node = self.nodes.get((relation, args))
        if node is None:
            node = self.nodes[(relation, args)] = -(len(self.nodes) + 1)
            self.facts[node] = (relation, args)
            self.derivations[node] = set()
            for _, number in self.stored(relation, args):  # stored all the same (a rule file's fact)
                self.derivations[node].add(frozenset() if number is None else frozenset((number,)))
        return node

    def _run(self, goal: tuple[str, Pattern]) -> None:
        relation, pattern = goal
        table = self.tables[goal]
        for rule in self.by_head.get(relation, ()):
            binding = unify(rule.head, pattern)
            if binding is None:
                continue
            literals = list(rule.body)
            for values, body in self._join(literals, binding, frozenset()):
                args = atom_pattern(rule.head, values)
                if not self.part.patterns.covers(relation, args):
                    continue  # a guarded rule's materialized conclusion
                node = self._node(relation, args)
                if node in body:
                    continue  # a derivation through the fact itself never makes it hold first
                if args not in table:
                    table.add(args)
                    self._dirty.update(dict.fromkeys(self._readers[goal]))
                self.derivations[node].add(body)

    def _join(self, literals: list, binding: dict, body: frozenset) -> Iterator[tuple[dict, frozenset]]:
        if not literals:
            yield binding, body
            return
        for i, literal in enumerate(literals):  # comparisons as soon as both sides are known
            if isinstance(literal, Comparison):
                left, right = (_value(t, binding) for t in (literal.left, literal.right))
                if left is not _UNBOUND and right is not _UNBOUND:
                    if _TESTS[literal.op](left, right):
                        yield from self._join(literals[:i] + literals[i + 1:], binding, body)
                    return
        atoms = [(i, lit) for i, lit in enumerate(literals) if isinstance(lit, Atom)]
        if not atoms:
            return  # a comparison whose variable no atom binds: the rule is unsafe, nothing follows
        # the most bound atom first; of equally bound ones a materialized one (a look-up) before a
        # lazy one (a subgoal: the less bound, the more of the lazy relation it derives)
        meeting = self.part.patterns.meeting
        i, atom = max(atoms, key=lambda item: (self._bound(item[1], binding),
                                                not meeting(item[1].relation, atom_pattern(item[1], binding)),
                                                -item[0]))
        rest = literals[:i] + literals[i + 1:]
        for args, ref in self._matches(atom, atom_pattern(atom, binding)):
            extended = unify(atom, args)
            if extended is None or any(binding.get(k, v) != v for k, v in extended.items()):
                continue
            yield from self._join(rest, {**binding, **extended}, body if ref is None else body | {ref})

    @staticmethod
    def _bound(atom: Atom, binding: dict) -> int:
        return sum(1 for arg in atom.args if isinstance(arg, Constant) or
                   (isinstance(arg, Variable) and arg.name in binding))

    def _matches(self, atom: Atom, pattern: Pattern) -> Iterator[tuple[tuple, Ref | None]]:
        """The facts ``atom`` can match: materialized ones (a lazy one as its node) and lazy ones."""
        relation, seen = atom.relation, set()
        covers = self.part.patterns.covers
        for args, number in self.stored(relation, pattern):
            seen.add(args)
            yield args, (self._node(relation, args) if covers(relation, args) else number)
        for lazy in self.part.patterns.meeting(relation, pattern):
            for args in list(self._table((relation, _narrow(lazy, pattern)))):
                if args not in seen:
                    seen.add(args)
                    yield args, self.nodes[(relation, args)]


_UNBOUND = object()


def _value(term, binding: dict):
    if isinstance(term, Constant):
        return term.value
    if isinstance(term, Variable):
        return binding.get(term.name, _UNBOUND)
    return _UNBOUND


__all__ = ["OnDemand", "Ref", "Stored"]
