"""Souffle's ``choice-domain``, and the refusal of what depends on evaluation order under provenance.

``.decl pick(x: number, y: number) choice-domain x`` keeps, for each ``x``, the first
``pick`` tuple that reaches the relation and drops later ones with the same ``x``; with
several keys (``choice-domain x, y``) a tuple is kept only if none of its keys is taken.
Which tuple comes first depends on the order of evaluation, as in Souffle; so does the
numbering of ``autoinc()``. Over background facts (provenance 1, as Souffle's input files
are) both run under every semiring and their facts have provenance 1; over tracked
(provenance-annotated) facts neither has a provenance that would not depend on that
order, and both are refused by name under the why and lineage semirings
(``refuse_order_dependent``), as aggregates are.
"""

from __future__ import annotations

from polygraph_logic.datalog.checks.declarations import Declarations
from polygraph_logic.datalog.program import Program, body_atoms
from polygraph_logic.datalog.checks.safety import aggregates_in, literal_terms
from polygraph_logic.datalog.syntax import Aggregate, Arithmetic, Functor
from polygraph_logic.errors import ProgramError


class Choice:
    """The keys of each relation declared with ``choice-domain`` and the key values taken so far."""

    def __init__(self, keys: dict[str, list[tuple[int, ...]]]):
        self.keys = keys
        self.taken: dict[str, list[set]] = {relation: [set() for _ in found] for relation, found in keys.items()}

    @classmethod
    def of(cls, declarations: Declarations) -> "Choice | None":
        """Returns the program's choice domains, or None when it declares none."""
        keys = {}
        for relation, declared in declarations.relations.items():
            if declared.choice:
                names = [a.name for a in declared.attributes]
                keys[relation] = [tuple(names.index(n) for n in key) for key in declared.choice]
        return cls(keys) if keys else None

    def admits(self, relation: str, tup: tuple) -> bool:
        """Returns whether a new tuple is kept (none of its keys taken), taking its keys if so."""
        keys = self.keys.get(relation)
        if keys is None:
            return True
        values = [tuple(tup[i] for i in key) for key in keys]
        taken = self.taken[relation]
        if any(value in seen for value, seen in zip(values, taken)):
            return False
        for value, seen in zip(values, taken):
            seen.add(value)
        return True


def refuse_order_dependent(program: Program) -> None:
    """Raises ProgramError for a ``choice-domain`` relation or an ``autoinc()`` rule that depends on tracked facts."""
    for declared in program.declarations.relations.values():
        if declared.choice and declared.relation in program.tracked:
            raise ProgramError("choice_over_tracked", f"{declared.relation} is declared with choice-domain and "
                               "depends on tracked (provenance-annotated) facts: which tuple it keeps depends on "
                               "the order of evaluation, so it has no why- or lineage-provenance. Evaluate with "
                               "--semiring boolean, or drop choice-domain and select one tuple with an aggregate "
                               "(min or max)", declared.position)
    for rule in program.rules:
        if not any(atom.relation in program.tracked for atom in body_atoms(rule.body)):
            continue
        for term in (*rule.head.args, *(t for lit in rule.body for t in _terms(lit))):
            counter = _autoinc(term)
            if counter is not None:
                raise ProgramError("autoinc_over_tracked", "autoinc() numbers the tuples of a rule over tracked "
                                   "(provenance-annotated) facts in the order evaluation meets them, so its values "
                                   "have no why- or lineage-provenance. Evaluate with --semiring boolean, or "
                                   "number with an aggregate (i = count : { r(y), y < x })", counter.position)


def refuse_recursive_autoinc(program: Program) -> None:
    """Raises ProgramError for ``autoinc()`` in a recursive rule, as Souffle does (its numbers
    would feed the rule that makes them, without end)."""
    stratum_of = {name: stratum for stratum in program.strata for name in stratum}
    for rule in program.rules:
        counter = next((c for t in (*rule.head.args, *(t for lit in rule.body for t in _terms(lit)))
                        if (c := _autoinc(t)) is not None), None)
        if counter is None:
            continue
        own = stratum_of.get(rule.head.relation, frozenset())
        if any(atom.relation in own for atom in body_atoms(rule.body)):
            raise ProgramError("autoinc_in_recursion", f"autoinc() in a recursive rule for {rule.head.relation}: "
                               "each new number would make a new fact and the rule would never stop; Souffle "
                               "refuses it too. Number the facts in a rule outside the recursion",
                               counter.position)


def _terms(literal):
    for term in literal_terms(literal):
        yield term
        for aggregate in aggregates_in(term):
            for inner in aggregate.body:
                yield from _terms(inner)


def _autoinc(term) -> Functor | None:
    if isinstance(term, Functor):
        if term.name == "autoinc":
            return term
        return next((found for arg in term.args if (found := _autoinc(arg)) is not None), None)
    if isinstance(term, Arithmetic):
        return _autoinc(term.left) or _autoinc(term.right)
    if isinstance(term, Aggregate) and term.target is not None:
        return _autoinc(term.target)
    return None
