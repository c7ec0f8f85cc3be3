"""Soufflé's ``inline`` relations: each positive call replaced by the relation's rule bodies.

A relation declared ``inline`` is not materialised in Soufflé: every atom that calls it is
replaced by each of its rules' bodies in turn (one copy of the calling rule per rule), the
rule's head arguments unified with the call's. So an inline rule may leave variables to its
caller: ``cross(a, b, v) :- v = a * b.`` alone binds nothing, yet ``r(x, v) :- n(x),
cross(x, 2, v).`` is ``r(x, v) :- n(x), v = x * 2.``. A relation is inlined here when every
call to it is a positive atom of a rule body and it has no facts; otherwise it is evaluated
as any relation (its rules must then be safe on their own).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from polygraph_logic.datalog.checks.record_patterns import STRUCTURED, match
from polygraph_logic.datalog.checks.safety import literal_terms, term_variables
from polygraph_logic.datalog.rewrite import rewrite
from polygraph_logic.datalog.syntax import Aggregate, Atom, Comparison, Negation, Rule, Variable, Wildcard

_ROUNDS = 32  # an inline relation calling another: Soufflé refuses cycles, we stop here


def inline_relations(rules: list[Rule], inline: set[str], facts: set[str]) -> list[Rule]:
    """Returns the rules with every inlinable relation's calls replaced by its bodies and its
    own rules dropped."""
    names = {name for name in inline - facts if _only_positive_calls(name, rules)}
    for _ in range(_ROUNDS):
        bodies = {name: [r for r in rules if r.head.relation == name] for name in names}
        if not any(isinstance(l, Atom) and l.relation in names for r in rules for l in r.body):
            break
        out = []
        for rule in rules:
            if rule.head.relation in names and _calls(rule, names & {rule.head.relation}):
                out.append(rule)  # recursive: left as it is
            else:
                out.extend(_expand(rule, names, bodies))
        rules = out
    return [r for r in rules if r.head.relation not in names]


def _calls(rule: Rule, names: set[str]) -> bool:
    return any(isinstance(l, Atom) and l.relation in names for l in rule.body)


def _only_positive_calls(name: str, rules: list[Rule]) -> bool:
    for rule in rules:
        for literal in rule.body:
            if isinstance(literal, Negation) and literal.atom.relation == name:
                return False
            for term in literal_terms(literal):
                if _in_aggregate(term, name):
                    return False
    return True


def _in_aggregate(term, name: str) -> bool:
    found = []

    def look(node):
        if isinstance(node, Aggregate) and any(
                (isinstance(l, Atom) and l.relation == name) or (isinstance(l, Negation) and l.atom.relation == name)
                for l in node.body):
            found.append(node)
        return node

    rewrite(term, look)
    return bool(found)


def _expand(rule: Rule, names: set[str], bodies: dict[str, list[Rule]]) -> list[Rule]:
    """Returns the copies of ``rule`` with its first call to an inline relation replaced."""
    for index, literal in enumerate(rule.body):
        if isinstance(literal, Atom) and literal.relation in names:
            break
    else:
        return [rule]
    taken = _variable_names(rule)
    out = []
    for inlined in bodies[literal.relation]:
        body = _unify(literal, inlined, taken)
        out.append(Rule(rule.head, rule.body[:index] + body + rule.body[index + 1:], rule.position))
    return out


def _variable_names(rule: Rule) -> set[str]:
    names = set()

    def note(node):
        if isinstance(node, Variable):
            names.add(node.name)
        elif isinstance(node, Aggregate):
            names.update(node.outer)
        return node

    rewrite((rule.head, rule.body), note)
    return names


def _unify(call: Atom, inlined: Rule, taken: set[str]) -> tuple:
    """Returns the inlined rule's body, its variables renamed apart from ``taken`` and its head
    arguments bound to the call's (a repeated or non-variable head argument as an equation)."""
    counter = itertools.count(1)

    def fresh(name: str) -> str:
        candidate = name
        while candidate in taken:
            candidate = f"{name}_{next(counter)}"
        taken.add(candidate)
        return candidate

    renamed = {name: fresh(name) for name in sorted(_variable_names(inlined))}
    mapping, equations, patterns = {}, [], []
    for head_arg, call_arg in zip(inlined.head.args, call.args):
        if isinstance(call_arg, Wildcard):
            call_arg = Variable(fresh("_#i"), call_arg.position)
        if isinstance(head_arg, Variable) and head_arg.name not in mapping:
            mapping[head_arg.name] = call_arg
        elif isinstance(head_arg, STRUCTURED):  # matched field by field, as the parser matches patterns
            if not isinstance(call_arg, Variable):
                value = Variable(fresh("_#i"), call.position)
                equations.append(Comparison("=", value, call_arg, call.position))
                call_arg = value
            patterns.append((head_arg, call_arg))
        elif not isinstance(head_arg, Wildcard):
            equations.append(Comparison("=", head_arg, call_arg, call.position))
    for name, new in renamed.items():
        mapping.setdefault(name, Variable(new))

    def substitute(node):
        if isinstance(node, Variable) and node.name in mapping:
            target = mapping[node.name]
            return replace(target, position=node.position) if isinstance(target, Variable) else target
        if isinstance(node, Aggregate):
            outer = tuple(v.name for name in node.outer for v in term_variables(mapping.get(name, Variable(name))))
            return replace(node, outer=outer)
        return node

    # the head argument's side of an equation is in the inlined rule's names; the call's is not
    equations = [replace(e, left=rewrite(e.left, substitute)) for e in equations]
    numbers = (n for n in itertools.count(1) if not any(f"_#{k}{n}" in taken for k in "rfw"))
    for pattern, value in patterns:
        equations.extend(match(rewrite(pattern, substitute), value, numbers))
    return tuple(equations) + tuple(rewrite(inlined.body, substitute))
