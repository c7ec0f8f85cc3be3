"""A stored program's rules as an ``add`` needs them: the few its new facts reach, not every one.

A graph built from receipts holds a rule per merge, sentence and summary (x40: 34,569 rules, of
which 1,300 are the ontology's): loading them all took an ``add`` 1.6 of its 4.9 s and grows with
the graph.  Those rules are *ground* (constants only, a body of positive atoms), and a graph keeps
each ground rule's atoms in a look-up (stored_rules.ground_atoms, ``rule_atoms``), so that:

- the rules with a variable (or a negation, a comparison...) are read whole (``general``);
- a ground rule is read when a fact it reads changes (``reading``), and every ground rule deriving
  a fact when that fact must be derived again from scratch (``deriving``);
- stratification sees each kind of ground dependency once (``proxies``: a rule
  ``head(_, ...) :- body(_, ...)`` for each pair of relations a ground rule joins).

A graph written before the look-up existed reads every rule as general, as an add did before.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from polygraph_logic.datalog.syntax import Atom, Rule, Variable
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.stored_rules import ground_atoms


class StoredProgram:
    """The rules of ``graph``: ``general`` in memory, ground ones read by atom (see the module)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.indexed = graph.ground_rules_indexed()
        #: the order in which the reference engine meets each stored rule: its number
        self.order: dict[int, int] = {}
        if not self.indexed:
            self.general = graph.rules()
            self.order.update((id(rule), n) for n, rule in enumerate(self.general, 1))
            self.proxies: list[Rule] = []
            self.reads: dict[str, set[str]] = {}
            return
        numbered = graph.general_rules_numbered()
        self.general = list(numbered.values())
        self.order.update((id(rule), num) for num, rule in numbered.items())
        arity: dict[str, int] = {}
        self.reads = defaultdict(set)  # head relation -> the relations its ground rules read
        for head, relation, atom_arity in graph.ground_dependencies():
            arity[relation or head] = atom_arity
            if relation is not None:
                self.reads[head].add(relation)
        self.proxies = [_proxy(head, arity[head], relation, arity[relation])
                        for head in sorted(self.reads) for relation in sorted(self.reads[head])]
        self._loaded: dict[int, Rule] = {}

    def heads(self) -> set[str]:
        """The relations some ground rule (read by atom) derives."""
        return set(self.reads)

    def reading(self, facts: dict[str, Iterable[tuple]], heads: set[str]) -> list[Rule]:
        """The ground rules deriving a relation of ``heads`` whose body reads one of ``facts``
        (``{relation: tuples}``), in rule order."""
        read = {relation for head in heads for relation in self.reads.get(head, ())}
        wanted = {relation: tuples for relation, tuples in facts.items() if relation in read and tuples}
        if not wanted:
            return []
        return [rule for rule in self._rules(self.graph.ground_rules(wanted, body=True)) if rule.head.relation in heads]

    def deriving(self, facts: dict[str, Iterable[tuple]]) -> list[Rule]:
        """The ground rules whose head is one of ``facts``, in rule order."""
        wanted = {relation: tuples for relation, tuples in facts.items() if relation in self.reads}
        return self._rules(self.graph.ground_rules(wanted, body=False)) if wanted else []

    def unstored(self, rules: list[Rule]) -> list[Rule]:
        """Those of ``rules`` the program does not hold already (as text), in order."""
        ground = [rule for rule in rules if self.indexed and ground_atoms(rule) is not None]
        heads: dict[str, list[tuple]] = defaultdict(list)
        for rule in ground:
            heads[rule.head.relation].append(tuple(arg.value for arg in rule.head.args))
        held = {str(rule) for rule in self.deriving(heads)} if ground else set()
        if len(ground) < len(rules):
            held.update(str(rule) for rule in self.general)
        return [rule for rule in rules if str(rule) not in held]

    def _rules(self, numbered: dict[int, Rule]) -> list[Rule]:
        out = []
        for num in sorted(numbered):
            rule = self._loaded.get(num)
            if rule is None:  # one object per stored rule, however often it is read
                rule = self._loaded[num] = numbered[num]
                self.order[id(rule)] = num
            out.append(rule)
        return out


def _proxy(head: str, head_arity: int, relation: str, arity: int) -> Rule:
    """``head(_0, ...) :- relation(_0, ...)``: a dependency, for stratification only."""
    return Rule(Atom(head, tuple(Variable(f"_h{i}") for i in range(head_arity))),
                (Atom(relation, tuple(Variable(f"_b{i}") for i in range(arity))),))


__all__ = ["StoredProgram"]
