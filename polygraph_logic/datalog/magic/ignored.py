"""What the magic-set rewriting leaves alone, and why.

Two kinds of relation, after Soufflé's weakly and strongly ignored relations:

- *unadorned*: never specialised to a binding; computed whole wherever it is read. These are
  the relations the request does not name or excludes, the queries (``.output``, ``.printsize``:
  a user reads them whole), ``.input`` relations and those holding facts or defined without a
  body atom (nothing to save), a ``choice-domain`` relation (which tuple a choice keeps depends
  on what is derived, and in what order), the head of a clause with ``/`` or ``%`` (a magic rule
  drops the comparisons that guard a division) or comparing floats, and every closed relation;
  and a relation read somewhere with no argument bound (adorn.py finds those).
  Their rules still pass bindings on to the atoms they read ("sideways").
- *closed*: a relation read under a negation or inside an aggregate, the head of a clause with
  ``autoinc()`` (its numbers follow the derivations), one with a subsumption, and everything
  these read, transitively. Their rules are kept as written, so no magic relation feeds them:
  a negation never waits on a relation that itself waits on a query's context (the cycles
  Soufflé's negative and positive labelling break by copying strata), and a count or a sum
  sees the whole relation.

A clause is *opaque* when no bindings pass through it: a closed relation's, or one with a
division or a float comparison; its atoms read whole relations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from polygraph_logic.datalog.checks.declarations import Declarations
from polygraph_logic.datalog.checks.safety import aggregates_in, literal_terms
from polygraph_logic.datalog.magic.request import MagicRequest
from polygraph_logic.datalog.rewrite import rewrite
from polygraph_logic.datalog.syntax import Arithmetic, Atom, Comparison, Constant, Functor, Negation, Rule


@dataclass(frozen=True)
class LeftAlone:
    """The relations the rewriting never specialises (``unadorned``), and among them those whose
    rules it keeps as written (``closed``)."""

    unadorned: frozenset[str]
    closed: frozenset[str]


def left_alone(rules: list[Rule], deletions: list[Rule], request: MagicRequest, declarations: Declarations,
               facts: Iterable[str]) -> LeftAlone:
    """Returns what the rewriting of ``rules`` leaves alone (``deletions``: the subsumptions' rules;
    ``facts``: the relations holding facts)."""
    seeds = {r.head.relation for r in deletions}
    seeds |= {name for name, d in declarations.relations.items() if d.choice}
    for rule in rules:
        if _calls(rule, "autoinc"):
            seeds.add(rule.head.relation)
        for literal in rule.body:
            if isinstance(literal, Negation):
                seeds.add(literal.atom.relation)
            for term in literal_terms(literal):
                for aggregate in aggregates_in(term):
                    seeds |= {atom.relation for atom in inner_atoms(aggregate.body)}
    closed = _read_by(seeds, [*rules, *deletions])
    unadorned = set(closed) | set(facts)
    unadorned |= {d.relation for d in declarations.io if d.kind in ("input", "output", "printsize")}
    with_atoms = {r.head.relation for r in rules if any(True for _ in inner_atoms(r.body))}
    relations = {r.head.relation for r in rules} | {a.relation for r in rules for a in inner_atoms(r.body)}
    unadorned |= {name for name in relations if name not in with_atoms or not request.allows(name)}
    unadorned |= {r.head.relation for r in rules if opaque(r, declarations, frozenset())}
    return LeftAlone(frozenset(unadorned), frozenset(closed))


def opaque(rule: Rule, declarations: Declarations, closed: frozenset[str]) -> bool:
    """True when no bindings pass through ``rule``: a closed relation's, or one with ``/`` or ``%``
    or a comparison over floats."""
    if rule.head.relation in closed:
        return True
    found = {"division": False, "float": False}

    def look(node):
        if isinstance(node, Arithmetic) and node.op in ("/", "%"):
            found["division"] = True
        elif isinstance(node, Constant) and isinstance(node.value, float):
            found["float"] = True
        elif isinstance(node, Atom) and "float" in (declarations.kinds(node.relation) or ()):
            found["float"] = True
        return node

    rewrite((rule.head, rule.body), look)
    return found["division"] or (found["float"] and any(isinstance(lit, Comparison) for lit in rule.body))


def inner_atoms(body) -> Iterable[Atom]:
    """Every atom a body reads: positive, negated, and inside aggregates."""
    for literal in body:
        if isinstance(literal, Atom):
            yield literal
        elif isinstance(literal, Negation):
            yield literal.atom
        for term in literal_terms(literal):
            for aggregate in aggregates_in(term):
                yield from inner_atoms(aggregate.body)


def _read_by(seeds: set[str], rules: list[Rule]) -> frozenset[str]:
    """``seeds`` and every relation their rules read, transitively."""
    reads: dict[str, set[str]] = {}
    for rule in rules:
        reads.setdefault(rule.head.relation, set()).update(a.relation for a in inner_atoms(rule.body))
    found, todo = set(seeds), list(seeds)
    while todo:
        for name in reads.get(todo.pop(), ()):
            if name not in found:
                found.add(name)
                todo.append(name)
    return frozenset(found)


def _calls(rule: Rule, name: str) -> bool:
    found = []

    def look(node):
        if isinstance(node, Functor) and node.name == name:
            found.append(node)
        return node

    rewrite((rule.head, rule.body), look)
    return bool(found)


__all__ = ["LeftAlone", "inner_atoms", "left_alone", "opaque"]
