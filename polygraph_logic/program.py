"""A checked program: arities agree, rules are safe, negation is stratified."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .errors import EvaluationError, Position, ProgramError
from .syntax import (
    Arithmetic,
    Atom,
    Clause,
    Comparison,
    Constant,
    Fact,
    Negation,
    Rule,
    Term,
    Value,
    Variable,
    Wildcard,
    parse_clauses,
)


def term_variables(term: Term) -> Iterator[Variable]:
    """Yields the variables of a term, left to right (wildcards excluded)."""
    if isinstance(term, Variable):
        yield term
    elif isinstance(term, Arithmetic):
        yield from term_variables(term.left)
        yield from term_variables(term.right)


def arithmetic(op: str, left: int, right: int, position: Position | None) -> int:
    """Applies an integer operator; division is floor division, as in Python."""
    if not isinstance(left, int) or not isinstance(right, int):
        raise EvaluationError(
            "type_error", f"arithmetic '{op}' needs integers, got {left!r} and {right!r}", position
        )
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        raise EvaluationError("division_by_zero", f"division by zero ({left} / 0)", position)
    return left // right


def ground_value(term: Term) -> Value:
    """Returns the value of a variable-free term, or raises ProgramError."""
    if isinstance(term, Constant):
        return term.value
    if isinstance(term, Arithmetic):
        return arithmetic(term.op, ground_value(term.left), ground_value(term.right), term.position)
    raise ProgramError(
        "unbound_variable",
        f"a fact must be ground, but {term} is a {'wildcard' if isinstance(term, Wildcard) else 'variable'}",
        term.position,
    )


@dataclass
class Program:
    """Facts and rules that passed every check, with their strata.

    ``facts`` hold ground tuples; ``strata`` lists, bottom up, the sets of relations
    that are evaluated together (one strongly connected component each).
    """

    facts: list[Fact] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    arities: dict[str, int] = field(default_factory=dict)
    strata: list[frozenset[str]] = field(default_factory=list)
    tracked: frozenset[str] = frozenset()
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_clauses(cls, clauses: Iterable[Clause]) -> "Program":
        """Checks clauses and returns the program they form; raises ProgramError."""
        facts, rules = [], []
        for clause in clauses:
            (facts if isinstance(clause, Fact) else rules).append(clause)
        program = cls(facts=facts, rules=rules)
        program.arities = _check_arities(facts, rules)
        program.facts = [_ground(fact) for fact in facts]
        for rule in rules:
            check_safety(rule)
        program.strata = _stratify(rules, program.arities)
        program.tracked = _tracked_relations(program.facts, rules)
        program.warnings = _undefined_relations(program.facts, rules)
        return program

    def combine(self, other: "Program") -> "Program":
        """Returns the program holding the clauses of both (checked again)."""
        return Program.from_clauses([*self.facts, *self.rules, *other.facts, *other.rules])

    def assertion_ids(self) -> list[str]:
        """Returns the provenance variables of tracked facts, in order of appearance."""
        seen = dict.fromkeys(f.variable for f in self.facts if f.variable)
        return list(seen)

    def check_provenance_negation(self) -> None:
        """Raises ProgramError if a negated atom ranges over a relation fed by tracked facts.

        A provenance polynomial cannot express the non-monotone effect that deleting
        a source has through negation; negating background-only relations is fine.
        """
        for rule in self.rules:
            for literal in rule.body:
                if isinstance(literal, Negation) and literal.atom.relation in self.tracked:
                    raise ProgramError(
                        "negation_over_tracked",
                        f"'{literal}' negates {literal.atom.relation}, which depends on tracked "
                        "(provenance-annotated) facts; provenance semirings are monotone and cannot "
                        "express it. Evaluate with --semiring boolean, or negate background-only relations",
                        literal.position,
                    )

    def __str__(self) -> str:
        return "\n".join(str(c) for c in [*self.facts, *self.rules])


def parse_program(text: str, file: str = "<string>") -> Program:
    """Parses and checks program text."""
    return Program.from_clauses(parse_clauses(text, file))


def load_program(*paths: str | Path) -> Program:
    """Reads, parses and checks one or more rule files as a single program."""
    clauses: list[Clause] = []
    for path in paths:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ProgramError("file_error", f"cannot read {path}: {error.strerror}") from None
        clauses.extend(parse_clauses(text, str(path)))
    return Program.from_clauses(clauses)


def _atoms(rule: Rule) -> Iterator[Atom]:
    yield rule.head
    for literal in rule.body:
        if isinstance(literal, Atom):
            yield literal
        elif isinstance(literal, Negation):
            yield literal.atom


def _check_arities(facts: list[Fact], rules: list[Rule]) -> dict[str, int]:
    first: dict[str, Atom] = {}
    atoms = [f.atom for f in facts] + [a for r in rules for a in _atoms(r)]
    for atom in atoms:
        seen = first.setdefault(atom.relation, atom)
        if seen.arity != atom.arity:
            raise ProgramError(
                "arity_mismatch",
                f"{atom.relation} is used with {atom.arity} argument(s) here but with "
                f"{seen.arity} at {seen.position}",
                atom.position,
            )
    return {name: atom.arity for name, atom in first.items()}


def _ground(fact: Fact) -> Fact:
    args = tuple(Constant(ground_value(arg)) for arg in fact.atom.args)
    return Fact(Atom(fact.atom.relation, args, fact.atom.position), fact.variable, fact.position)


def check_safety(rule: Rule) -> None:
    """Raises ProgramError(unbound_variable) unless every variable is bound by a positive atom.

    A comparison ``x = expr`` binds ``x`` once ``expr``'s variables are bound, as in Souffle.
    """
    bound = {
        v.name
        for literal in rule.body
        if isinstance(literal, Atom)
        for arg in literal.args
        if isinstance(arg, Variable)
        for v in (arg,)
    }
    changed = True
    while changed:
        changed = False
        for literal in rule.body:
            target = assignment_target(literal, bound)
            if target is not None:
                bound.add(target.name)
                changed = True

    def require(term: Term, where: str) -> None:
        for v in term_variables(term):
            if v.name not in bound:
                raise ProgramError(
                    "unbound_variable",
                    f"variable {v.name} in {where} is not bound by a positive body atom",
                    v.position,
                )

    for arg in rule.head.args:
        if isinstance(arg, Wildcard):
            raise ProgramError("unbound_variable", "'_' cannot appear in a rule head", arg.position)
        require(arg, f"the head {rule.head}")
    for literal in rule.body:
        if isinstance(literal, Negation):
            for arg in literal.atom.args:
                require(arg, f"the negation {literal}")
        elif isinstance(literal, Comparison):
            require(literal.left, f"the comparison {literal}")
            require(literal.right, f"the comparison {literal}")
        else:
            for arg in literal.args:
                if isinstance(arg, Arithmetic):
                    require(arg, f"the expression {arg}")


def assignment_target(literal, bound: set[str]) -> Variable | None:
    """Returns ``x`` if the literal is ``x = expr`` (either side) binding an unbound ``x``."""
    if not isinstance(literal, Comparison) or literal.op != "=":
        return None
    for target, expr in ((literal.left, literal.right), (literal.right, literal.left)):
        if (
            isinstance(target, Variable)
            and target.name not in bound
            and all(v.name in bound for v in term_variables(expr))
            and not isinstance(expr, Wildcard)
        ):
            return target
    return None


def _stratify(rules: list[Rule], arities: dict[str, int]) -> list[frozenset[str]]:
    """Returns strongly connected components bottom up; rejects negation inside one."""
    edges: dict[str, set[str]] = defaultdict(set)  # body relation -> head relations
    negative: dict[tuple[str, str], Negation] = {}
    for rule in rules:
        for literal in rule.body:
            if isinstance(literal, Atom):
                edges[literal.relation].add(rule.head.relation)
            elif isinstance(literal, Negation):
                edges[literal.atom.relation].add(rule.head.relation)
                negative.setdefault((literal.atom.relation, rule.head.relation), literal)
    components = _tarjan(sorted(arities), edges)
    where = {name: i for i, comp in enumerate(components) for name in comp}
    for (body, head), literal in negative.items():
        if where[body] == where[head]:
            cycle = _path(head, body, edges, components[where[head]])
            shown = " -> ".join([body, *cycle])
            raise ProgramError(
                "cyclic_negation",
                f"not stratifiable: {head} depends negatively on {body}, which depends on {head} "
                f"(cycle {shown}); negation may not occur inside recursion",
                literal.position,
            )
    return components


def _tarjan(nodes: list[str], edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components in reverse topological order of ``edges`` reversed,
    i.e. every component comes after the components it depends on."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[frozenset[str]] = []
    for root in nodes:
        if root in index:
            continue
        # iterative Tarjan: (node, iterator over successors)
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                result.append(frozenset(component))
    # Tarjan emits sinks of the body->head graph first; heads depend on bodies, so reverse.
    result.reverse()
    return result


def _path(start: str, goal: str, edges: dict[str, set[str]], within: frozenset[str]) -> list[str]:
    """Returns a shortest dependency path start -> ... -> goal inside one component."""
    previous = {start: None}
    queue = [start]
    for node in queue:
        if node == goal:
            break
        for succ in sorted(edges.get(node, ())):
            if succ in within and succ not in previous:
                previous[succ] = node
                queue.append(succ)
    path, node = [], goal
    while node is not None:
        path.append(node)
        node = previous[node]
    return path[::-1]


def _tracked_relations(facts: list[Fact], rules: list[Rule]) -> frozenset[str]:
    tracked = {f.atom.relation for f in facts if f.variable}
    changed = True
    while changed:
        changed = False
        for rule in rules:
            if rule.head.relation in tracked:
                continue
            if any(a.relation in tracked for a in _atoms(rule) if a is not rule.head):
                tracked.add(rule.head.relation)
                changed = True
    return frozenset(tracked)


def _undefined_relations(facts: list[Fact], rules: list[Rule]) -> list[str]:
    defined = {f.atom.relation for f in facts} | {r.head.relation for r in rules}
    warnings = []
    reported = set()
    for rule in rules:
        for atom in _atoms(rule):
            if atom.relation not in defined and atom.relation not in reported:
                reported.add(atom.relation)
                warnings.append(
                    f"{atom.position}: warning: {atom.relation} has no facts and no rules; it is empty"
                )
    return warnings
