"""The Boolean closure in SQL: relations as sets of keys, a round's new facts an anti-join.

A plan made with ``boolean`` (sql_plan.make_plan) carries no label: a body atom brings no
column into a join but its keys, a round's derivations are the heads' keys, and the facts
a round adds are those keys the relation does not hold yet (``merge``).  With nothing to
multiply, two more kinds of literal are a filter of the join and are planned here:

- a comparison by ``=`` or ``!=`` of variables the body's atoms bind and constants (values
  are interned integers, so equality is the values' equality; an order (``<``) is not, and is
  refused by name, as is ``x = expr`` binding a variable);
- a negated atom over a lower stratum (stratification puts it there), every variable bound
  by the body's atoms or ``_``: ``NOT EXISTS`` a row of its relation with those values.

``plan`` is a sql_plan.Plan (sql_plan imports this module; it does not import sql_plan back).
"""

from __future__ import annotations

from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Negation, Variable, Wildcard

#: the comparisons a Boolean plan filters on, and their SQL
OPERATORS = {"=": "=", "!=": "<>"}


def plannable(literal) -> bool:
    """Whether ``literal`` is planned as a filter of a Boolean plan (``lift`` says whether its
    variables are bound)."""
    if isinstance(literal, Negation):
        return True
    return (isinstance(literal, Comparison) and literal.op in OPERATORS
            and all(isinstance(side, (Variable, Constant)) for side in (literal.left, literal.right)))


def lift(rule, literals, variables: dict[str, int], params: list, pattern, unsupported) -> tuple[tuple, tuple]:
    """The comparisons and negated atoms of ``literals`` as a shape's ``tests`` and ``negated``:
    constants appended to ``params``, variables numbered as ``variables`` numbers the body's.
    ``pattern(atom)`` lifts a negated atom; ``unsupported(rule, reason)`` raises."""
    tests, negated = [], []
    for literal in literals:
        if isinstance(literal, Negation):
            atom = literal.atom
            for arg in atom.args:
                if isinstance(arg, Variable) and arg.name not in variables:
                    unsupported(rule, f"'{literal}' uses '{arg.name}', which no body atom binds")
                if not isinstance(arg, (Variable, Constant, Wildcard)):
                    unsupported(rule, f"the argument '{arg}' of '{literal}' is not a variable or a constant")
            negated.append((atom.relation, pattern(atom)))
            continue
        items = []
        for side in (literal.left, literal.right):
            if isinstance(side, Variable):
                if side.name not in variables:
                    unsupported(rule, f"'{literal}' compares (or binds) '{side.name}', which no body atom binds")
                items.append(("v", variables[side.name]))
            else:
                items.append(("p", len(params)))
                params.append(side.value)
        tests.append((literal.op, items[0], items[1]))
    return tuple(tests), tuple(negated)


def conditions(plan, shape, bound: dict[int, str]) -> list[str]:
    """The WHERE conditions of ``shape``'s tests and negated atoms, its variables at the columns
    ``bound`` names (the parameters of a shape with constants are ``p.c<n>``)."""
    def value(item: tuple) -> str:
        return bound[item[1]] if item[0] == "v" else f"p.c{item[1]}"

    found = [f"{value(left)} {OPERATORS[op]} {value(right)}" for op, left, right in shape.tests]
    for n, (relation, pattern) in enumerate(shape.negated):
        alias = f"n{n}"
        on = [f"{alias}.k{k} = {value(item)}" for k, item in enumerate(pattern) if item[0] != "_"]
        found.append(f"NOT EXISTS (SELECT 1 FROM {plan.table(relation)} AS {alias}"
                     + (f" WHERE {' AND '.join(on)})" if on else ")"))
    return found


def merge(plan, relation: str, contributions: str) -> str:
    """The facts of ``contributions`` (the round's derived keys) that ``relation`` does not hold."""
    keys = plan.keys(relation)
    on = " AND ".join(f"o.{k} = c.{k}" for k in keys)
    return (f"SELECT DISTINCT {', '.join(f'c.{k}' for k in keys)} FROM ({contributions}) c "
            f"WHERE NOT EXISTS (SELECT 1 FROM {plan.table(relation)} AS o WHERE {on})")


__all__ = ["OPERATORS", "conditions", "lift", "merge", "plannable"]
