"""Lazy facts: what a graph build leaves unmaterialized, declared by ``.lazy``, derived on demand.

``.lazy edge(_, "RO:0002131", _)`` declares a *pattern* (constants and ``_``; ``.lazy rel`` is
the whole relation).  A relation whose closure is quadratic by nature (a symmetric chain
through hub entities) can then stay out of the graph and be answered when asked
(datalog/lazy/on_demand.py).  What follows from lazy facts is lazy too, so the declared patterns
are closed: a rule whose body atom unifies with a lazy pattern makes its head, under that
unifier, a lazy pattern (``close``).  Then every fact outside the patterns has all of its
derivations outside them, and the build's labels of those facts are exact as before.

The rules split three ways (``split``):

- *lazy* rules, whose head lies inside a pattern: left out of the build, run on demand;
- *guarded* rules, whose head meets a pattern without lying inside it (``edge(c, p, o) :-
  edge(m, p, o), member(m, c)`` meets ``edge(_, "RO:0002131", _)``): built with a guard
  ``p != "RO:0002131"`` for each pattern they meet, so the build derives none of the lazy
  facts, and also run on demand (without the guard) for the lazy ones;
- every other rule: built as before.

A pattern may meet a guarded rule's head at one argument only (where the head has a variable
and the pattern a constant); lazy and guarded rules are positive (atoms and comparisons),
since a fact derived on demand has a why-provenance label, which negation has not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from polygraph_logic.datalog.directives import LazyDeclaration
from polygraph_logic.datalog.checks.safety import aggregates_in, literal_terms
from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Negation, Rule, Variable, Wildcard
from polygraph_logic.errors import ProgramError

Pattern = tuple  # one value per argument, None for any value


def atom_pattern(atom: Atom, binding: dict[str, object] | None = None) -> Pattern:
    """The pattern of the facts ``atom`` can match: its constants, and its variables' values in ``binding``."""
    binding = binding or {}
    return tuple(arg.value if isinstance(arg, Constant) else
                 binding.get(arg.name) if isinstance(arg, Variable) else None for arg in atom.args)


def subsumes(general: Pattern, specific: Pattern) -> bool:
    """Whether every fact of ``specific`` is a fact of ``general``."""
    return all(g is None or g == s for g, s in zip(general, specific))


def meets(a: Pattern, b: Pattern) -> bool:
    """Whether some fact matches both patterns."""
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def matches(pattern: Pattern, args: tuple) -> bool:
    return all(p is None or p == v for p, v in zip(pattern, args))


def unify(atom: Atom, pattern: Pattern) -> dict[str, object] | None:
    """The values ``atom``'s variables take on the facts of ``pattern`` it can match (None: none)."""
    binding: dict[str, object] = {}
    for arg, value in zip(atom.args, pattern):
        if value is None:
            continue
        if isinstance(arg, Constant):
            if arg.value != value:
                return None
        elif isinstance(arg, Variable):
            if binding.setdefault(arg.name, value) != value:
                return None
    return binding


@dataclass
class Patterns:
    """Lazy patterns by relation, none subsumed by another."""

    by_relation: dict[str, list[Pattern]] = field(default_factory=dict)

    def add(self, relation: str, pattern: Pattern) -> bool:
        """Adds ``pattern`` unless one already covers it; returns whether it was added."""
        held = self.by_relation.setdefault(relation, [])
        if any(subsumes(p, pattern) for p in held):
            return False
        held[:] = [p for p in held if not subsumes(pattern, p)] + [pattern]
        return True

    def of(self, relation: str) -> list[Pattern]:
        return self.by_relation.get(relation, [])

    def covers(self, relation: str, args: tuple) -> bool:
        """Whether the fact ``relation(args)`` is lazy."""
        return any(matches(p, args) for p in self.of(relation))

    def inside(self, relation: str, pattern: Pattern) -> bool:
        return any(subsumes(p, pattern) for p in self.of(relation))

    def meeting(self, relation: str, pattern: Pattern) -> list[Pattern]:
        return [p for p in self.of(relation) if meets(p, pattern)]

    def __bool__(self) -> bool:
        return any(self.by_relation.values())

    def to_json(self) -> list:
        return [[relation, list(p)] for relation, held in sorted(self.by_relation.items()) for p in held]

    @classmethod
    def from_json(cls, rows) -> "Patterns":
        found = cls()
        for relation, values in rows:
            found.add(relation, tuple(values))
        return found


def close(declared: list[LazyDeclaration], rules: list[Rule], arities: dict[str, int]) -> Patterns:
    """The declared patterns and every pattern a rule derives from facts of one of them."""
    patterns = Patterns()
    for item in declared:
        arity = arities.get(item.relation)
        if arity is None:
            raise ProgramError("unknown_relation", f"'{item}' names a relation no rule or fact uses", item.position)
        pattern = item.pattern if item.pattern is not None else (None,) * arity
        if len(pattern) != arity:
            raise ProgramError("arity_mismatch", f"'{item}' has {len(pattern)} arguments; {item.relation} has "
                               f"{arity}", item.position)
        patterns.add(item.relation, pattern)
    changed = True
    while changed:
        changed = False
        for rule in rules:
            for literal in rule.body:
                atom = literal.atom if isinstance(literal, Negation) else literal
                if not isinstance(atom, Atom):
                    continue
                for pattern in patterns.of(atom.relation):
                    binding = unify(atom, pattern)
                    if binding is None:
                        continue
                    if atom is not literal:
                        raise ProgramError("lazy_negation", f"'{rule}' negates {atom.relation} facts that are "
                                           "lazy: a lazy fact has no materialized truth to negate; leave the "
                                           "pattern materialized", rule.position)
                    changed |= patterns.add(rule.head.relation, atom_pattern(rule.head, binding))
            for aggregate in (a for lit in rule.body for t in literal_terms(lit) for a in aggregates_in(t)):
                for atom in (a for a in aggregate.body if isinstance(a, Atom)):
                    if patterns.meeting(atom.relation, atom_pattern(atom)):
                        raise ProgramError("lazy_aggregate", f"'{rule}' aggregates over lazy {atom.relation} "
                                           "facts; leave the pattern materialized", rule.position)
    return patterns


@dataclass
class LazyPart:
    """What a graph build leaves to on-demand derivation: the closed patterns and the rules deriving them."""

    declared: list[str]
    patterns: Patterns
    rules: list[Rule]

    def to_json(self) -> str:
        return json.dumps({"declared": self.declared, "patterns": self.patterns.to_json(),
                           "rules": [str(rule) for rule in self.rules]}, ensure_ascii=False)

    def goal_rules(self) -> list[Rule]:
        """The rules as on-demand derivation runs them: each specialized to every pattern its head
        meets (its head's variables bound to the pattern's constants throughout), since only
        facts inside the patterns are derived on demand."""
        found: dict[str, Rule] = {}
        for rule in self.rules:
            for pattern in self.patterns.meeting(rule.head.relation, atom_pattern(rule.head)):
                binding = unify(rule.head, pattern)
                if binding is not None:
                    special = _substituted(rule, binding)
                    found.setdefault(str(special), special)
        return list(found.values())

    def read_filters(self, rules: list[Rule]) -> dict[str, tuple[int, frozenset]]:
        """For each relation ``rules`` read whose every body atom (and every lazy pattern) holds a
        constant at one argument: that argument and the constants, the only facts of it they read."""
        atoms: dict[str, list[Pattern]] = {}
        for rule in rules:
            for literal in rule.body:
                if isinstance(literal, Atom):
                    atoms.setdefault(literal.relation, []).append(atom_pattern(literal))
        filters = {}
        for relation, patterns in atoms.items():
            patterns = patterns + self.patterns.of(relation)
            for k in range(len(patterns[0])):
                if all(p[k] is not None for p in patterns):
                    filters[relation] = (k, frozenset(p[k] for p in patterns))
                    break
        return filters

    @classmethod
    def from_json(cls, text: str) -> "LazyPart":
        from polygraph_logic.datalog.reading.source import parse_source  # the stored rules are parsed only when asked
        data = json.loads(text)
        rules = [c for c in parse_source("\n".join(data["rules"]), "(stored lazy rules)").clauses
                 if isinstance(c, Rule)]
        return cls(data["declared"], Patterns.from_json(data["patterns"]), rules)


def _substituted(rule: Rule, binding: dict) -> Rule:
    """``rule`` with the variables of ``binding`` replaced by their values."""
    def term(t):
        return Constant(binding[t.name]) if isinstance(t, Variable) and t.name in binding else t

    def literal(item):
        if isinstance(item, Atom):
            return replace(item, args=tuple(map(term, item.args)))
        if isinstance(item, Comparison):
            return replace(item, left=term(item.left), right=term(item.right))
        return item
    return replace(rule, head=literal(rule.head), body=tuple(map(literal, rule.body)))


def _check_positive(rule: Rule, pattern: Pattern) -> None:
    for literal in rule.body:
        if isinstance(literal, Atom) or (isinstance(literal, Comparison) and all(
                isinstance(t, (Variable, Constant)) for t in (literal.left, literal.right))):
            continue
        raise ProgramError("lazy_rule", f"'{rule}' derives lazy facts ({rule.head.relation}{_show(pattern)}) "
                           f"but '{literal}' is not an atom or a comparison of variables and constants: lazy "
                           "facts are derived on demand by positive rules", rule.position)
    for arg in rule.head.args:
        if not isinstance(arg, (Variable, Constant, Wildcard)):
            raise ProgramError("lazy_rule", f"'{rule}' derives lazy facts with the computed argument '{arg}': "
                               "lazy facts are derived on demand by rules over variables and constants",
                               rule.position)


def _show(pattern: Pattern) -> str:
    return "(" + ", ".join("_" if v is None else json.dumps(v) for v in pattern) + ")"


def _guard(rule: Rule, met: list[Pattern]) -> Rule:
    """``rule`` with a comparison excluding each pattern it meets (at the one argument where it does)."""
    guards = []
    for pattern in met:
        open_positions = [k for k, (arg, value) in enumerate(zip(rule.head.args, pattern))
                          if value is not None and not isinstance(arg, Constant)]
        if len(open_positions) != 1 or not isinstance(rule.head.args[open_positions[0]], Variable):
            raise ProgramError("lazy_split", f"the lazy pattern {rule.head.relation}{_show(pattern)} meets the "
                               f"conclusions of '{rule}' at {len(open_positions)} arguments; a pattern may split "
                               "a rule's conclusions at one variable argument: declare a pattern with one "
                               "constant there, or the whole relation", rule.position)
        k = open_positions[0]
        guards.append(Comparison("!=", rule.head.args[k], Constant(pattern[k]), rule.position))
    return replace(rule, body=(*rule.body, *guards))


def split(rules: list[Rule], declared: list[LazyDeclaration], arities: dict[str, int]) -> tuple[list[Rule], LazyPart | None]:
    """The rules a build evaluates (guarded where they meet a lazy pattern) and the lazy part (None: nothing lazy)."""
    if not declared:
        return rules, None
    patterns = close(declared, rules, arities)
    built, on_demand = [], []
    for rule in rules:
        head = atom_pattern(rule.head)
        met = patterns.meeting(rule.head.relation, head)
        if not met:
            built.append(rule)
            continue
        _check_positive(rule, met[0])
        on_demand.append(rule)
        if not patterns.inside(rule.head.relation, head):
            built.append(_guard(rule, met))
    return built, LazyPart([str(d) for d in declared], patterns, on_demand)


__all__ = ["LazyPart", "Pattern", "Patterns", "atom_pattern", "close", "matches", "meets", "split", "subsumes",
           "unify"]
