"""The magic-set rewriting: rules specialised to the bindings the queries pass down.

Starting from the queries (``.output`` and ``.printsize`` relations, read whole), each rule of
a relation wanted with an *adornment* (one letter per argument: ``b`` bound, ``f`` free) is
copied for it, and each positive body atom is adorned by what is bound when it is reached,
left to right (Soufflé's SIPS): a variable of an atom to its left, a head argument at a ``b``
place, a constant, or a variable an equality ``x = expr`` gives from bound ones. An expression
argument is bound only when its variables come from body atoms: a value computed from the
head's binding alone (``gen(x + 1)`` in a rule for ``gen`` bound at ``x``) could feed itself and
grow without end, so it is not passed down.

An atom adorned ``bf`` of relation ``r`` reads ``r.bf``, a copy of ``r``'s rules guarded by the
relation ``magic.r.bf`` of the values wanted: each rule of ``r.bf`` starts with
``magic.r.bf(x)``, and each place ``r.bf(x, y)`` is read adds a *magic rule*
``magic.r.bf(x) :- <the guard of the rule it is read in>, <the atoms to its left>, <the
equalities among their variables>.`` The guards are Boolean: the engine gives their facts the
label one (``Program.guards``), so every fact of a copy has the label the unrewritten program
gives it. A relation wanted whole keeps its name and its rules (its atoms still adorned); a
relation no query reaches is not computed at all.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, replace
from typing import Iterable

from polygraph_logic.datalog.checks.declarations import Declarations
from polygraph_logic.datalog.checks.safety import aggregates_in, assignment_target, ground_value, term_variables
from polygraph_logic.datalog.magic.ignored import LeftAlone, inner_atoms, opaque
from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Fact, Rule, Variable, Wildcard


@dataclass(frozen=True)
class MagicSets:
    """The rewritten rules, the guard relations among their heads (their facts have label one),
    the copies the rewriting made (copy -> original), the rules as written, and the guards'
    seeds: the values a query asks for outright (``magic.r.bf("ed").``), facts of label one."""

    rules: list[Rule]
    guards: frozenset[str]
    copies: dict[str, str]
    original: tuple[Rule, ...] = ()
    facts: tuple[Fact, ...] = ()

    @property
    def generated(self) -> frozenset[str]:
        return self.guards | frozenset(self.copies)


def magic_sets(rules: list[Rule], queries: Iterable[str], alone: LeftAlone, declarations: Declarations,
               taken: Iterable[str]) -> MagicSets | None:
    """Returns ``rules`` rewritten for ``queries``; None when no relation would be specialised
    (``alone``: what is left alone; ``taken``: every relation name of the program).

    A relation wanted with no argument bound (``ff``) is derived whole anyway: it is then read
    whole at every binding (rewritten again without it), not derived a second time for each."""
    by_head: dict[str, list[Rule]] = defaultdict(list)
    for rule in rules:
        by_head[rule.head.relation].append(rule)
    whole = set(alone.unadorned)
    while True:
        names = _Names(set(taken) | set(by_head))
        out, wanted = _rewrite(by_head, queries, frozenset(whole), alone.closed, declarations, names)
        free = {relation for relation, pattern in wanted if pattern and "b" not in pattern}
        if free <= whole:
            break
        whole |= free
    if not names.copies:
        return None
    seeds = [rule for rule in out if not rule.body and all(_within(arg, set()) for arg in rule.head.args)]
    facts = tuple(Fact(Atom(r.head.relation, tuple(Constant(ground_value(a)) for a in r.head.args), r.head.position),
                       None, r.position) for r in seeds)
    return MagicSets([rule for rule in out if rule not in seeds], frozenset(names.guards), dict(names.copies),
                     tuple(rules), facts)


def _rewrite(by_head: dict[str, list[Rule]], queries: Iterable[str], unadorned: frozenset[str],
             closed: frozenset[str], declarations: Declarations, names: "_Names") -> tuple[list[Rule], set]:
    """The rules of every (relation, adornment) the queries reach, rewritten, and those pairs."""
    wanted = deque((query, "") for query in sorted(set(queries)))
    seen = set(wanted)
    out: dict[Rule, None] = {}
    while wanted:
        relation, pattern = wanted.popleft()
        for rule in by_head.get(relation, ()):
            if opaque(rule, declarations, closed):
                reads = [(atom.relation, "") for atom in inner_atoms(rule.body)]
                out[rule] = None
            else:
                adorned, magic, reads = _adorn(rule, pattern, unadorned, names)
                out[adorned] = None
                # magic.r.bf(x) :- magic.r.bf(x), ...: true when its body is, nothing to derive
                out.update(dict.fromkeys(m for m in magic if m.head not in m.body))
            for want in reads:
                if want not in seen:
                    seen.add(want)
                    wanted.append(want)
    return list(out), seen


def _adorn(rule: Rule, pattern: str, unadorned: frozenset[str], names: "_Names") -> tuple[Rule, list[Rule], list]:
    """Returns the rule's copy for ``pattern``, its magic rules, and the (relation, adornment)
    pairs it reads."""
    head = rule.head
    weak = {arg.name for arg, p in zip(head.args, pattern) if p == "b" and isinstance(arg, Variable)}
    equations = [lit for lit in rule.body if _is_equation(lit)]
    strong = _closed(set(), equations)
    guard = None
    if pattern:
        guard = Atom(names.guard(head.relation, pattern), _bound_part(head.args, pattern), head.position)
    left: list[Atom] = [guard] if guard is not None else []
    body, magic, reads = list(left), [], []
    for literal in rule.body:
        if not isinstance(literal, Atom):
            body.append(literal)
            reads += [(atom.relation, "") for atom in inner_atoms((literal,))]
            continue
        adornment = ""
        if literal.relation not in unadorned:
            adornment = "".join("b" if _bound(arg, strong, weak) else "f" for arg in literal.args)
        atom = literal
        if adornment:
            atom = Atom(names.copy(literal.relation, adornment), literal.args, literal.position)
            magic.append(_magic_rule(atom, names.guard(literal.relation, adornment), adornment, left, equations))
        reads.append((literal.relation, adornment))
        left.append(atom)
        body.append(atom)
        strong = _closed(strong | {arg.name for arg in literal.args if isinstance(arg, Variable)}, equations)
    copy_head = Atom(names.copy(head.relation, pattern), head.args, head.position) if pattern else head
    return Rule(copy_head, tuple(body), rule.position), magic, reads


def _magic_rule(atom: Atom, guard: str, adornment: str, left: list[Atom], equations: list[Comparison]) -> Rule:
    """``guard(bound arguments of atom) :- left atoms, the equalities among their variables.``
    An expression argument of a left atom whose variables they do not bind is dropped (``_``)."""
    relevant = _closed({arg.name for a in left for arg in a.args if isinstance(arg, Variable)}, equations)

    def usable(arg):
        if isinstance(arg, (Variable, Constant, Wildcard)) or _within(arg, relevant):
            return arg
        return Wildcard(getattr(arg, "position", None))

    body = [replace(a, args=tuple(usable(arg) for arg in a.args)) for a in left]
    body += [e for e in equations if _within(e.left, relevant) and _within(e.right, relevant)]
    return Rule(Atom(guard, _bound_part(atom.args, adornment), atom.position), tuple(body), atom.position)


def _bound_part(args: tuple, adornment: str) -> tuple:
    return tuple(arg for arg, p in zip(args, adornment) if p == "b")


def _bound(arg, strong: set[str], weak: set[str]) -> bool:
    """An argument is bound when it is a constant, a bound variable, or an expression of
    variables bound by body atoms (not by the head alone: see the module's docstring)."""
    if isinstance(arg, Constant):
        return True
    if isinstance(arg, Variable):
        return arg.name in strong or arg.name in weak
    if isinstance(arg, Wildcard) or any(True for _ in aggregates_in(arg)):
        return False
    return _within(arg, strong)


def _within(term, names: set[str]) -> bool:
    return all(v.name in names for v in term_variables(term))


def _is_equation(literal) -> bool:
    """``x = expr`` or ``expr = x`` with no aggregate: an equality that may bind (Soufflé's
    binding equalities; an aggregate's value is not passed down)."""
    return (isinstance(literal, Comparison) and literal.op == "="
            and (isinstance(literal.left, Variable) or isinstance(literal.right, Variable))
            and not any(True for side in (literal.left, literal.right) for _ in aggregates_in(side)))


def _closed(bound: set[str], equations: list[Comparison]) -> set[str]:
    """``bound`` with every variable the equalities give from it, as the engine's safety check binds them."""
    bound = set(bound)
    changed = True
    while changed:
        changed = False
        for equation in equations:
            target = assignment_target(equation, bound)
            if target is not None:
                bound.add(target.name)
                changed = True
    return bound


class _Names:
    """Names for the copies (``r.bf``) and guards (``magic.r.bf``), none a name the program uses."""

    def __init__(self, taken: set[str]):
        self.taken = taken
        self.made: dict[tuple, str] = {}
        self.copies: dict[str, str] = {}
        self.guards: set[str] = set()

    def copy(self, relation: str, adornment: str) -> str:
        name = self._name("copy", relation, adornment, f"{relation}.{adornment}")
        self.copies[name] = relation
        return name

    def guard(self, relation: str, adornment: str) -> str:
        name = self._name("guard", relation, adornment, f"magic.{relation}.{adornment}")
        self.guards.add(name)
        return name

    def _name(self, kind: str, relation: str, adornment: str, wanted: str) -> str:
        key = (kind, relation, adornment)
        found = self.made.get(key)
        if found is None:
            found, n = wanted, 1
            while found in self.taken:
                n += 1
                found = f"{wanted}_{n}"
            self.taken.add(found)
            self.made[key] = found
        return found


__all__ = ["MagicSets", "magic_sets"]
