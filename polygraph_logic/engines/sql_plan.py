"""A stratified Datalog program under why-provenance, formulated as SQL statements.

Rules as data: the constants of a rule are lifted into parameters, and rules of one
*shape* (the same relations and variable pattern, different constants) become one
statement that joins a parameter table.  The 1,302 rules of rules/ro.dl (sub-property,
inverse, symmetric, transitive, chains of 2 and 3, SWRL) fall into 22 shapes, the rules
a receipt compiles to into one shape per number of cited assertions, and two-atom shapes
driven by a delta share joins (pairs.py): a semi-naive round is a fixed handful of joins
whatever the number of axioms.

Every value is interned to an integer (``Plan.values``): relations are tables of integer
columns ``k0..`` plus ``label`` and ``exact`` (see sql_labels.py).  A shape has one statement
per body atom of its stratum (that atom read from the round's delta, the others from the
whole relation, as evaluate.py's semi-naive plans) and one reading every atom whole (the
stratum's first round).  The product of the body's labels is taken in the Python
engine's order: the delta atom first, then the atom with the most bound variables (ties:
the one written first).  Under a cap, a round's derivations of one fact are summed as a
set (then capped), where the Python engine sums them one at a time and caps as it goes;
the two agree except where that engine's answer depends on the order of its facts (see
tests/test_engines.py, test_capped_sum_does_not_depend_on_fact_order).

Only what the SQL plan can evaluate exactly is planned: positive atoms over variables,
constants and wildcards, and ``variable != constant`` (the guard of a lazy pattern).  Any other rule raises ``PolygraphError(engine_unsupported)``
naming it, never a different answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.checks.record_types import record_use
from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Rule, Variable, Wildcard
from polygraph_logic.engines import sql_boolean, sql_labels as labels, sql_witness, pairs
from polygraph_logic.engines.dialect import Dialect

Pattern = tuple  # per argument: ("v", n) variable n, ("p", n) parameter n, ("_",) wildcard


@dataclass
class Shape:
    """Rules that differ only in their constants: one statement, one parameter table."""

    number: int
    head: tuple[str, Pattern]
    body: tuple[tuple[str, Pattern], ...]
    params: list[tuple[int, ...]] = field(default_factory=list)  # one row per rule (value ids)
    rules: list[Rule] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # per rule: its number (1 + its place in the program)
    filters: tuple[tuple[int, int], ...] = ()  # (variable, parameter): the variable's value is not the parameter's
    #: Boolean plans only: (op, item, item), op "=" or "!=", an item ("v", n) or ("p", n)
    tests: tuple[tuple[str, tuple, tuple], ...] = ()
    #: Boolean plans only: negated atoms (relation, pattern) over lower strata
    negated: tuple[tuple[str, Pattern], ...] = ()

    @property
    def table(self) -> str:
        return f"p{self.number}"

    @property
    def width(self) -> int:
        return len(self.params[0]) if self.params else 0


@dataclass
class Plan:
    """The SQL formulation of a program: its tables, values, and shapes stratum by stratum."""

    program: Program
    cap: int | None
    relations: dict[str, int]  # name -> table number
    values: dict = field(default_factory=dict)  # Value -> integer id
    held: int = 0  # ids of values not in ``values`` (``hold``)
    strata: list[tuple[frozenset[str], list[Shape]]] = field(default_factory=list)
    #: witness labels (sql_witness.py): an atom carries its fact's id and its witness's size, not a label
    witness: bool = False
    #: the Boolean semiring (sql_boolean.py): relations are sets of keys, no label at all
    boolean: bool = False
    #: leave out the rule instances whose body holds their head (``key_contributions``: such an
    #: instance is no way to hold the fact, sql_witness.settle)
    self_free: bool = False
    #: under witness labels, the first fact id of the last round's new facts (ids are given in
    #: order): a delta variant's body atoms before its delta atom read only the facts below it, so
    #: that a rule instance with several new body facts is found once a round (by the variant of
    #: its first), not once per new fact (x40 with 40 hubs, a round: 8.9 M derivations, 6.0 M
    #: distinct); None: every atom reads its whole relation
    fresh: int | None = None

    def atom(self, alias: str, n: int) -> str:
        """The columns body atom ``alias`` carries into a join, as the ``n``-th factor: its label
        and exactness (``l{n}``, ``e{n}``), or under ``witness`` its witness's size and its fact id
        (the witnesses themselves are read by id for the derivations that choose one only,
        sql_witness.chosen: a list carried through a join of tens of millions of rows cost a
        round of x40 with 40 hubs 12 of its 16 s)."""
        if self.boolean:
            return ""
        if self.witness:
            return f"len({alias}.label[1]) AS l{n}, {alias}.id AS e{n}"
        return f"{alias}.label AS l{n}, {alias}.exact AS e{n}"

    def rule_column(self, shape: Shape) -> str:
        """Under ``witness``, the column naming the rule each derivation applies (``rn``)."""
        if not self.witness:
            return ""
        return ", p.rn AS rn" if shape.width else f", {shape.numbers[0]} AS rn"

    def arity(self, relation: str) -> int:
        return self.program.arities[relation]

    def keys(self, relation: str) -> list[str]:
        """The key columns of a relation's table (one dummy column for arity 0)."""
        return [f"k{i}" for i in range(max(self.arity(relation), 1))]

    def table(self, relation: str, delta: bool = False) -> str:
        return f"{'d' if delta else 'r'}{self.relations[relation]}"

    def intern(self, value) -> int:
        found = self.values.get(value)
        if found is None:
            found = self.values[value] = len(self.values) + self.held
        return found

    def hold(self, count: int) -> int:
        """Reserves ``count`` ids for values an engine keeps to itself (native_inputs.py: the
        assertions' values stay in DuckDB); returns the first.  Later values come after them."""
        first = len(self.values) + self.held
        self.held += count
        return first

    def shapes(self) -> list[Shape]:
        return [shape for _, shapes in self.strata for shape in shapes]

    def variant(self, shape: Shape, delta: int | None, older: frozenset[str] = frozenset()) -> str:
        """The join deriving ``shape``'s head: (keys, l0, e0, l1, e1, ...) with the body's
        labels in product order, body atom ``delta`` read from the delta (None: all whole);
        under ``witness`` (keys, l0, e0, ..., rn): witnesses' sizes, fact ids and the rule's number.
        ``older``: the relations whose atoms before the delta atom read only their facts made
        before the last round (``fresh``)."""
        head_relation, head_pattern = shape.head
        sources, where, bound = [], [], {}
        if shape.width:
            sources.append(f"{shape.table} AS p")
        for i, (relation, pattern) in enumerate(shape.body):
            sources.append(f"{self.table(relation, i == delta)} AS t{i}")
            if delta is not None and i < delta and relation in older:
                where.append(f"t{i}.id < {self.fresh}")
            for k, item in enumerate(pattern):
                column = f"t{i}.k{k}"
                if item[0] == "p":
                    where.append(f"{column} = p.c{item[1]}")
                elif item[0] == "v":
                    if item[1] in bound:
                        where.append(f"{column} = {bound[item[1]]}")
                    else:
                        bound[item[1]] = column
        where += [f"{bound[variable]} <> p.c{param}" for variable, param in shape.filters]
        where += sql_boolean.conditions(self, shape, bound)
        heads = [f"p.c{item[1]}" if item[0] == "p" else bound[item[1]] for item in head_pattern] or ["0"]
        if self.self_free:  # no body atom is the head
            where += [f"({' OR '.join(f't{i}.k{k} <> {h}' for k, h in enumerate(heads))})"
                      for i, (relation, _) in enumerate(shape.body) if relation == head_relation]
        select = ", ".join(f"{h} AS {k}" for h, k in zip(heads, self.keys(head_relation)))
        order = product_order([pattern for _, pattern in shape.body], delta)
        columns = ", ".join(filter(None, [select, *(self.atom(f"t{i}", n) for n, i in enumerate(order))]))
        return (f"SELECT {columns}{self.rule_column(shape)} FROM {', '.join(sources)}"
                + (f" WHERE {' AND '.join(where)}" if where else ""))

    def fold(self, d: Dialect, text: str, keys: list[str], atoms: int, restrict: str | None = None) -> str:
        """Wraps ``text`` (keys, l0, e0, ...) into (keys, label, exact): the product of the
        labels left to right, each step minimised and capped as WhySemiring.times.  Under
        ``witness``, the derivations with their bodies' witnesses and fact ids, of the heads in
        ``restrict`` only if given (sql_witness.derivations)."""
        if self.boolean:  # nothing to multiply: the keys are the derivations
            return text
        if self.witness:
            return sql_witness.derivations(text, keys, atoms, restrict)
        if atoms == 1:
            return f"SELECT {', '.join(keys)}, l0 AS label, e0 AS exact FROM ({text}) s"
        for n in range(1, atoms):
            rest = [f"{c}{m}" for m in range(n + 1, atoms) for c in "le"]
            first = "l0 AS l, e0 AS le" if n == 1 else "label AS l, exact AS le"
            text = f"SELECT {', '.join(keys + rest)}, {first}, l{n} AS r, e{n} AS re FROM ({text}) f{n}"
            text = labels.times(d, text, keys + rest, self.cap)
        return text

    def contributions(self, d: Dialect, shapes: list[Shape], relation: str,
                      deltas: set[str] | None, joins: int | None = None,
                      present: Callable[[str, int], frozenset | None] | None = None,
                      restrict: str | None = None) -> list[str]:
        """Every derivation of ``relation`` this round as (keys, label, exact), in parts whose
        union is the round's derivations (none when there is none).

        ``deltas`` names the relations whose delta is not empty (None: the first round).
        The joins of bodies of one length are united before their labels are multiplied,
        so a round multiplies once per body length, not once per rule shape; two-atom
        rules driven by a delta share joins (pairs.py).  ``joins``: at most that many joins
        united in a part (None: no bound), since each join holds a hash table while its
        statement runs.  ``present(relation, k)``: the values column ``k`` of that relation's
        delta holds (None: not known); a shape's delta variant is left out when none of its
        rules' constants at that atom are all present, as its join would find nothing
        (``feasible``).  ``restrict``: under ``witness``, only the derivations of the heads that
        table holds (``fold``)."""
        by_length: dict[int, list[str]] = {}
        pair_groups: dict[tuple, list[str]] = {}
        older = frozenset(deltas) if deltas is not None and self.fresh is not None else frozenset()
        for shape in shapes:
            if shape.head[0] != relation:
                continue
            variants = [None] if deltas is None else [
                i for i, (body_relation, _) in enumerate(shape.body)
                if body_relation in deltas and (present is None or feasible(shape, i, present))]
            for i in variants:
                if i is not None and len(shape.body) == 2 and not (shape.filters or shape.tests or shape.negated):
                    key, text = pairs.driver(self, shape, i, older)
                    pair_groups.setdefault(key, []).append(text)
                else:
                    by_length.setdefault(len(shape.body), []).append(self.variant(shape, i, older))
        for key, drivers in pair_groups.items():
            by_length.setdefault(2, []).append(pairs.grouped(self, relation, key, drivers))
        keys = self.keys(relation)
        parts = []
        for n, texts in sorted(by_length.items()):
            step = len(texts) if joins is None or n == 1 else joins
            parts += [self.fold(d, " UNION ALL ".join(texts[i:i + step]), keys, n, restrict)
                      for i in range(0, len(texts), step)]
        return parts

    def key_contributions(self, *args, **named) -> list[str]:
        """``contributions`` as the Boolean closure makes them: the heads' keys alone, no label, no
        body, and none whose body holds its head (sql_witness: which facts a round derives, before
        the derivations of its new ones)."""
        saved = self.witness, self.boolean, self.self_free
        self.witness, self.boolean, self.self_free = False, True, True
        try:
            return self.contributions(*args, **named)
        finally:
            self.witness, self.boolean, self.self_free = saved

    def merge(self, d: Dialect, relation: str, contributions: str) -> str:
        """The changed facts of ``relation``: the round's sum (pending) added to the old label."""
        if self.boolean:
            return sql_boolean.merge(self, relation, contributions)
        if d.materialized is not None:
            return self._merge_by_case(d, relation, contributions)
        keys = self.keys(relation)
        pending = labels.plus_group(d, contributions, keys, self.cap)
        on = " AND ".join(f"g.{k} = o.{k}" for k in keys)
        joined = (f"SELECT {', '.join(f'g.{k}' for k in keys)}, "
                  f"CASE WHEN o.label IS NULL THEN g.label "
                  f"ELSE {d('distinct', d('concat', 'o.label', 'g.label'))} END AS p, "
                  f"(g.exact AND coalesce(o.exact, TRUE)) AS e, o.label AS old, o.exact AS olde "
                  f"FROM ({pending}) g LEFT JOIN {self.table(relation)} o ON {on}")
        merged = labels.normalize(d, joined, keys + ["old", "olde"], self.cap)
        return (f"SELECT {', '.join(keys)}, label, exact FROM ({merged}) m "
                f"WHERE old IS NULL OR label <> old OR exact <> olde")

    def _merge_by_case(self, d: Dialect, relation: str, contributions: str) -> str:
        """``merge`` normalising only where a label can change: a fact derived once this round
        has its derivation's label as its sum (every derived label is normalised already), and
        a new fact's label is its sum.  So only the derivations of facts derived more than once
        are collected into lists and summed (collecting every fact's took most of a merge: x40,
        round 3 of the edge stratum, 342,313 derivations of 262,681 facts, 62,070 derived more
        than once), and the old label is added only to facts that had one and whose sum is not
        that label again.  The same labels as the one pass; it reads the derivations three times
        and its intermediate tables twice, so only where they are materialised (DuckDB)."""
        keys = self.keys(relation)
        cols = ", ".join(keys)
        using = f"USING ({cols})"
        on = " AND ".join(f"g.{k} = o.{k}" for k in keys)
        summed = labels.normalize(d, f"SELECT {cols}, {d('distinct', d('flatten', d('collect', 'label')))} AS p, "
                                     f"bool_and(exact) AS e FROM c SEMI JOIN m {using} GROUP BY {cols}", keys, self.cap)
        kept = ", ".join(keys + ["old", "olde"])
        joined = (f"SELECT {kept}, {d('distinct', d('concat', 'old', 'label'))} AS p, (exact AND olde) AS e "
                  f"FROM j WHERE old IS NOT NULL AND NOT (label = old AND (exact OR NOT olde))")
        merged = labels.normalize(d, joined, keys + ["old", "olde"], self.cap)
        return (f"WITH c AS NOT {d.materialized}({contributions}), "  # a table: read, not copied
                f"m AS {d.materialized}(SELECT {cols} FROM c GROUP BY {cols} HAVING count(*) > 1), "
                f"g AS (SELECT {cols}, label, exact FROM c ANTI JOIN m {using} UNION ALL SELECT * FROM ({summed}) q), "
                f"j AS {d.materialized}(SELECT {', '.join(f'g.{k}' for k in keys)}, g.label, g.exact, "
                f"o.label AS old, o.exact AS olde FROM g LEFT JOIN {self.table(relation)} o ON {on}) "
                f"SELECT {cols}, label, exact FROM j WHERE old IS NULL UNION ALL "
                f"SELECT {cols}, label, exact FROM ({merged}) n WHERE label <> old OR exact <> olde")


def feasible(shape: Shape, delta: int, present: Callable[[str, int], frozenset | None]) -> bool:
    """Whether a rule of ``shape`` can match a fact of the delta of body atom ``delta``: some
    rule's constants at that atom are all among the values the delta holds there (a column
    whose values are not known, ``present`` None, rules nothing out).  A late round's delta
    holds a few predicates, and most of the 1,302 RO axioms' shapes none of theirs."""
    relation, pattern = shape.body[delta]
    columns = []
    for k, item in enumerate(pattern):
        if item[0] == "p":
            values = present(relation, k)
            if values is not None:
                columns.append((item[1], values))
    return not columns or any(all(row[n] in values for n, values in columns) for row in shape.params)


def product_order(patterns: list[Pattern], delta: int | None) -> list[int]:
    """The order the Python engine multiplies body labels in (see steps.order without a store)."""
    remaining = list(range(len(patterns)))
    first = delta if delta is not None else 0
    order, bound = [first], set()
    remaining.remove(first)
    bound |= {item[1] for item in patterns[first] if item[0] == "v"}
    while remaining:
        def score(i):
            items = patterns[i]
            known = sum(1 for item in items if item[0] == "p" or (item[0] == "v" and item[1] in bound))
            return -known
        best = min(remaining, key=lambda i: (score(i), i))
        order.append(best)
        remaining.remove(best)
        bound |= {item[1] for item in patterns[best] if item[0] == "v"}
    return order


def make_plan(program: Program, cap: int | None, witness: bool = False, boolean: bool = False) -> Plan:
    """Plans ``program``; raises PolygraphError(engine_unsupported) naming a rule it cannot plan.
    ``witness``: the plan of witness labels (sql_witness.py) instead of capped ones; ``boolean``:
    the Boolean closure alone (sql_boolean.py), which also plans ``=`` and ``!=`` between
    variables and constants and negated atoms."""
    _refuse_records(program)
    for item in program.subsumptions:
        raise PolygraphError("engine_unsupported", f"a subsumption of {item.relation}: this engine does not delete "
                             "tuples; evaluate with the default engine", item.position)
    for declared in program.declarations.relations.values():
        if declared.choice:
            raise PolygraphError("engine_unsupported", f"{declared.relation} is declared with choice-domain, which "
                                 "this engine does not keep; evaluate with the default engine", declared.position)
    plan = Plan(program, cap, {name: i for i, name in enumerate(sorted(program.arities))}, witness=witness,
                boolean=boolean)
    by_head: dict[str, list[tuple[int, Rule]]] = {}
    for number, rule in enumerate(program.rules, 1):
        by_head.setdefault(rule.head.relation, []).append((number, rule))
    count = 0
    for stratum in program.strata:
        shapes: dict[tuple, Shape] = {}
        for name in sorted(stratum):
            for number, rule in by_head.get(name, ()):
                key, params = _lift(rule, boolean)
                shape = shapes.get(key)
                if shape is None:
                    shape = shapes[key] = Shape(count, key[0], key[1], filters=key[2], tests=key[3], negated=key[4])
                    count += 1
                shape.params.append(tuple(plan.intern(v) for v in params))
                shape.rules.append(rule)
                shape.numbers.append(number)
        if shapes:
            plan.strata.append((stratum, list(shapes.values())))
    return plan


def _lift(rule: Rule, boolean: bool = False) -> tuple[tuple, list]:
    """Returns the rule's shape key (constants lifted into parameters) and its constants;
    ``boolean``: comparisons by ``=`` and ``!=`` and negated atoms are planned too."""
    variables: dict[str, int] = {}
    params: list = []

    def pattern(atom: Atom, head: bool) -> Pattern:
        items = []
        for arg in atom.args:
            if isinstance(arg, Constant):
                items.append(("p", len(params)))
                params.append(arg.value)
            elif isinstance(arg, Variable) and not (head and arg.name not in variables):
                items.append(("v", variables.setdefault(arg.name, len(variables))))
            elif isinstance(arg, Wildcard) and not head:
                items.append(("_",))
            else:
                _unsupported(rule, f"the argument '{arg}' is not a variable or a constant")
        return tuple(items)

    body, excluded, later = [], [], []
    for literal in rule.body:
        if _is_exclusion(literal):
            excluded.append(literal)
            continue
        if boolean and sql_boolean.plannable(literal):
            later.append(literal)
            continue
        if not isinstance(literal, Atom):
            _unsupported(rule, f"'{literal}' is not an atom, a negated atom or = and != of variables and constants "
                               "(an order, arithmetic and aggregates are not planned)" if boolean else
                               f"'{literal}' is not a positive atom (negation, comparisons other than "
                               "variable != constant, assignment and constraints are not planned)")
        body.append((literal.relation, pattern(literal, False)))
    if not body:
        _unsupported(rule, "a rule without body atoms")
    filters = []
    for literal in excluded:  # after the body, so that the parameters of the atoms come first
        variable, constant = (literal.left, literal.right) if isinstance(literal.left, Variable) else (
            literal.right, literal.left)
        if variable.name not in variables:
            _unsupported(rule, f"'{literal}' compares a variable no body atom binds")
        filters.append((variables[variable.name], len(params)))
        params.append(constant.value)
    tests, negated = sql_boolean.lift(rule, later, variables, params, lambda atom: pattern(atom, False), _unsupported)
    head = (rule.head.relation, pattern(rule.head, True))
    return (head, tuple(body), tuple(filters), tests, negated), params


def _refuse_records(program: Program) -> None:
    """Records and ADT values are not planned: a rule that builds or matches one, or a
    relation with a column of a record or ADT type, is refused by name."""
    found = record_use(program.rules, program.declarations)
    if found is not None:
        what, where = found
        raise PolygraphError("engine_unsupported", f"the SQL engine cannot evaluate '{where}': {what}; "
                             "use --engine python", where.position)


def _is_exclusion(literal) -> bool:
    """``x != "c"`` (or ``"c" != x``): the guard a lazy pattern puts on a rule (datalog/lazy/part.py)."""
    return (isinstance(literal, Comparison) and literal.op == "!=" and
            {type(literal.left), type(literal.right)} == {Variable, Constant})


def _unsupported(rule: Rule, reason: str):
    raise PolygraphError(
        "engine_unsupported",
        f"the SQL engine cannot evaluate '{rule}': {reason}; use --engine python", rule.position)
