"""Which variables of an aggregate are bound outside it: each aggregate's ``outer``, set once
a rule is parsed (``count : { e(x, y) }`` counts per ``x`` when the rule grounds ``x``)."""

from __future__ import annotations

from dataclasses import replace

from polygraph_logic.datalog.syntax import Aggregate, Arithmetic, Atom, Comparison, Functor, Negation, Rule, Variable


def scope_aggregates(rule: Rule) -> Rule:
    """Returns the rule with each aggregate's ``outer`` set, as Souffle scopes an aggregate's
    variables: those the rule grounds without this aggregate's value, and that its target
    does not name, are *injected* (they group it); the others are its own."""
    if not any(aggregates_of(lit) for lit in rule.body):
        return rule
    return Rule(rule.head, _scoped(rule.body, frozenset()), rule.position)


def _scoped(literals: tuple, given: frozenset) -> tuple:
    def scope(node):
        if isinstance(node, Aggregate):
            outside = grounded(literals, given, exclude=node)
            target = names(node.target) if node.target is not None else set()
            outer = frozenset(names(node) & outside - target)
            return replace(node, body=_scoped(node.body, outer), outer=tuple(sorted(outer)))
        return map_terms(node, scope)

    return tuple(scope(literal) for literal in literals)


def grounded(literals, given=frozenset(), exclude: Aggregate | None = None) -> set[str]:
    """Returns the variables a body grounds (``given`` bound before it): those of its positive
    atoms, and ``x`` of ``x = expr`` once ``expr``'s are; an aggregate's value counts as
    ground, but ``exclude``'s does not (is it injected into that one?)."""
    bound = set(given) | {a.name for lit in literals if isinstance(lit, Atom) for a in lit.args
                          if isinstance(a, Variable)}
    changed = True
    while changed:
        changed = False
        for lit in literals:
            if not isinstance(lit, Comparison) or lit.op != "=":
                continue
            for target, expr in ((lit.left, lit.right), (lit.right, lit.left)):
                if (isinstance(target, Variable) and target.name not in bound and not _holds(expr, exclude)
                        and names(expr, skip_aggregates=True) <= bound):
                    bound.add(target.name)
                    changed = True
    return bound


def _holds(term, aggregate) -> bool:
    if term is aggregate:
        return True
    return any(_holds(t, aggregate) for t in _subterms(term))


def _subterms(term) -> tuple:
    if isinstance(term, (Arithmetic, Comparison)):
        return (term.left, term.right)
    if isinstance(term, (Atom, Functor)):
        return term.args
    if isinstance(term, Negation):
        return (term.atom,)
    return ()


def map_terms(node, change):
    """Returns the node with ``change`` applied to its direct subterms."""
    if isinstance(node, (Arithmetic, Comparison)):
        return replace(node, left=change(node.left), right=change(node.right))
    if isinstance(node, (Functor, Atom)):
        return replace(node, args=tuple(change(a) for a in node.args))
    if isinstance(node, Negation):
        return replace(node, atom=change(node.atom))
    return node


def lift_head_aggregates(head: Atom) -> tuple[Atom, tuple]:
    """Returns the head with each aggregate in it (``r(count : { e(_) } - 1)``) replaced by a
    fresh variable, and the equations that bind those variables, for the rule's body."""
    equations: list = []

    def lift(term):
        if isinstance(term, Aggregate):
            value = Variable(f"_#g{len(equations) + 1}", term.position)
            equations.append(Comparison("=", value, term, term.position))
            return value
        if isinstance(term, Arithmetic):
            return replace(term, left=lift(term.left), right=lift(term.right))
        if isinstance(term, Functor):
            return replace(term, args=tuple(lift(a) for a in term.args))
        return term

    if not aggregates_of(head):
        return head, ()
    return replace(head, args=tuple(lift(a) for a in head.args)), tuple(equations)


def names(node, skip_aggregates: bool = False) -> set[str]:
    """Returns the variable names in a node (not those inside aggregates, with ``skip_aggregates``)."""
    if isinstance(node, Variable):
        return {node.name}
    if isinstance(node, Aggregate):
        if skip_aggregates:
            return set()
        found = set().union(*(names(lit) for lit in node.body))
        return found | (names(node.target) if node.target is not None else set())
    if isinstance(node, (Arithmetic, Comparison)):
        return names(node.left, skip_aggregates) | names(node.right, skip_aggregates)
    if isinstance(node, (Atom, Functor)):
        return set().union(*(names(a, skip_aggregates) for a in node.args))
    if isinstance(node, Negation):
        return names(node.atom, skip_aggregates)
    return set()


def aggregates_of(node) -> bool:
    """Whether a node holds an aggregate (outside any aggregate's body: that is enough)."""
    if isinstance(node, Aggregate):
        return True
    if isinstance(node, (Arithmetic, Comparison)):
        return aggregates_of(node.left) or aggregates_of(node.right)
    if isinstance(node, (Atom, Functor)):
        return any(aggregates_of(a) for a in node.args)
    return False


def counts_tuples(body: list) -> bool:
    """Whether an aggregate's body counts each tuple of its one atom, as Souffle's does when it
    does not materialise the body: no second atom, no aggregate or ``range`` inside, no
    variable repeated in the atom (otherwise it counts distinct bindings of named variables)."""
    atoms = [lit for lit in body if isinstance(lit, Atom)]

    def materialised(term) -> bool:
        return isinstance(term, Aggregate) or (isinstance(term, Functor) and term.name == "range")

    if len(atoms) != 1 or any(_has(lit, materialised) for lit in body):
        return False
    named = [a.name for a in atoms[0].args if isinstance(a, Variable)]
    return len(named) == len(set(named))


def _has(node, test) -> bool:
    if test(node):
        return True
    return any(_has(t, test) for t in _subterms(node))
