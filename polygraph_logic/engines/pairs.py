"""Two-atom rules driven by a delta, many shapes per join.

In a semi-naive round a two-atom rule joins its delta atom (small) with the whole
other atom (large).  Statement per shape, the large relation would be scanned and
hashed once per shape and per round: a cost that follows the relation, not the delta.
Here the delta sides of every shape that reads the other atom the same way (same
relation, same bound positions, head arguments taken from the same positions) are
united into one *driver*, and the driver is joined with the relation once: for the
compiled RO axioms (chains and transitivity in their few orientations) a round is a
handful of joins whatever the number of axioms.

``plan`` is a sql_plan.Plan and ``shape`` one of its shapes (sql_plan, this module's
only caller, imports it; it does not import sql_plan back).
"""

from __future__ import annotations


def driver(plan, shape, delta: int, older: frozenset[str] = frozenset()) -> tuple[tuple, str]:
    """The group key and driver statement of ``shape`` with body atom ``delta`` from the delta.

    The driver's columns: ``j{k}`` the value each bound position k of the other atom must
    hold, ``h{i}`` the head arguments the delta side gives, ``l0, e0`` the delta's label.
    ``older``: the relations whose atom before the delta atom reads only the facts made before
    the last round (Plan.fresh): a driver of the second atom says so (``od``), and joins those
    alone; the drivers of both atoms still share one join (two scans of the relation a round
    instead cost x40 without hubs 13.4 -> 17.2 s).
    """
    (relation, pattern), (other, other_pattern) = shape.body[delta], shape.body[1 - delta]
    sources = [f"{shape.table} AS p"] if shape.width else []
    sources.append(f"{plan.table(relation, delta=True)} AS t")
    where, bound = [], {}
    for k, item in enumerate(pattern):
        if item[0] == "p":
            where.append(f"t.k{k} = p.c{item[1]}")
        elif item[0] == "v":
            if item[1] in bound:
                where.append(f"t.k{k} = {bound[item[1]]}")
            else:
                bound[item[1]] = f"t.k{k}"
    signature, values, free = [], [], {}
    for k, item in enumerate(other_pattern):
        if item[0] == "p":
            signature.append("b")
            values.append(f"p.c{item[1]} AS j{k}")
        elif item[0] == "v" and item[1] in bound:
            signature.append("b")
            values.append(f"{bound[item[1]]} AS j{k}")
        elif item[0] == "v" and item[1] in free:
            signature.append(f"={free[item[1]]}")  # the same free variable again
        elif item[0] == "v":
            free[item[1]] = k
            signature.append("f")
        else:
            signature.append("_")
    heads, sources_of_head = [], []
    for i, item in enumerate(shape.head[1]):
        if item[0] == "p":
            heads.append(f"p.c{item[1]} AS h{i}")
            sources_of_head.append("d")
        elif item[1] in bound:
            heads.append(f"{bound[item[1]]} AS h{i}")
            sources_of_head.append("d")
        else:
            sources_of_head.append(free[item[1]])  # a position of the other atom
    # a rule instance whose delta atom is its head is left out where the plan asks (``self_free``):
    # the driver then carries that atom's keys, ``s{k}``
    itself = plan.self_free and relation == shape.head[0]
    key = (other, tuple(signature), tuple(sources_of_head), itself)
    own = [f"t.k{k} AS s{k}" for k in range(len(plan.keys(relation)))] if itself else []
    old = [] if plan.fresh is None else [f"{delta == 1 and other in older} AS od"]
    columns = (", ".join(filter(None, [*values, *heads, *own, *old, plan.atom("t", 0)])) or "1 AS u") + plan.rule_column(shape)
    text = (f"SELECT {columns} FROM {', '.join(sources)}"
            + (f" WHERE {' AND '.join(where)}" if where else ""))
    return key, text


def grouped(plan, head_relation: str, key: tuple, drivers: list[str]) -> str:
    """One join of the united ``drivers`` with the whole other atom: (keys, l0, e0, l1, e1)."""
    other, signature, sources_of_head, itself = key
    on = []
    for k, kind in enumerate(signature):
        if kind == "b":
            on.append(f"o.k{k} = g.j{k}")
        elif kind.startswith("="):
            on.append(f"o.k{k} = o.k{kind[1:]}")
    heads = [f"g.h{i}" if source == "d" else f"o.k{source}" for i, source in enumerate(sources_of_head)]
    heads = heads or ["0"]
    select = ", ".join(f"{h} AS {k}" for h, k in zip(heads, plan.keys(head_relation)))
    union = " UNION ALL ".join(drivers)
    join = f"JOIN {plan.table(other)} AS o ON {' AND '.join(on)}" if on else f"CROSS JOIN {plan.table(other)} AS o"
    apart = []  # ``self_free``: neither body atom is the head
    if itself:
        apart.append(" OR ".join(f"g.s{k} <> {h}" for k, h in enumerate(heads)))
    if plan.self_free and other == head_relation:
        apart.append(" OR ".join(f"o.k{k} <> {h}" for k, h in enumerate(heads)))
    if plan.fresh is not None:
        apart.append(f"NOT g.od OR o.id < {plan.fresh}")
    join += "".join(f" {'WHERE' if i == 0 else 'AND'} ({condition})" for i, condition in enumerate(apart))
    rule = ", g.rn AS rn" if plan.witness else ""
    labels = "" if plan.boolean else f", g.l0 AS l0, g.e0 AS e0, {plan.atom('o', 1)}"
    return f"SELECT {select}{labels}{rule} FROM ({union}) g {join}"
