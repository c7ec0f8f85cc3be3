"""Why-provenance as a circuit: the Boolean closure, set at a time, with one gate per derivation.

The relations fed by tracked facts are evaluated semi-naively over *facts*, not labels: a
fact enters the delta once, when it is new, and every rule instance that derives it, new or
not, is recorded as a gate of a ``Circuit`` (provenance/gates.py) naming the facts of its
body. So the evaluation costs the join output whatever the number of alternative
derivations, and the circuit holds the whole, uncapped provenance. Each fact of a tracked
relation is stored with its node number; facts of the other relations (background
knowledge, provenance one) are evaluated as the Boolean semiring does, with unit plans.

``CircuitModel`` reads like any Model: a fact's label, a sum of products capped for display,
is read off the circuit when asked for (provenance/gate_labels.py); a what-if propagates false
through the gates the deleted assertions reach, exactly (a fact on a cycle stands only on a
well-founded derivation), whatever the display cap dropped.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import count
from collections.abc import Iterator, Mapping
from typing import Any

from polygraph_logic.datalog.budget import Budget
from polygraph_logic.datalog.choice import Choice
from polygraph_logic.datalog.fixpoint import DeltaPlans, first_pass
from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.datalog.joins.join_steps import ONE_MARK
from polygraph_logic.datalog.model import Model, WhatIf
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.syntax import Rule
from polygraph_logic.provenance.gate_labels import gate_labels
from polygraph_logic.provenance.gates import Circuit
from polygraph_logic.provenance.why import Polynomial, WhySemiring
from polygraph_logic.provenance.witness import witness_polynomials

_NONE: tuple = ()  # the label of a fact with provenance one, and the body of a derivation using none


class Bodies:
    """What the join steps multiply while the circuit is recorded: a derivation's body so far.

    A stored fact's label is its node number (``()`` for provenance one); ``times`` appends a
    node to the body, so a rule instance arrives at the head with the nodes of its body."""

    name = "gates"
    tracks_provenance = True

    def one(self):
        return _NONE

    def zero(self):
        return None

    @staticmethod
    def times(body, node):
        if node is _NONE:
            return body
        if body is _NONE:
            return node
        if type(body) is int:
            return (body, node)
        return body + (node,)

    @staticmethod
    def plus(a, b):  # only facts of provenance one are ever summed (subsumption, choice): one
        return a


def load_facts(program: Program, store: Store, circuit: Circuit, choice: Choice | None) -> None:
    """Stores the program's facts: a node for each fact of a tracked relation (stated by its
    assertion, or held outright when it has none), ``()`` for the others."""
    for relation, table in program.fact_tables().items():
        rows = store.relations[relation]
        if relation not in program.tracked:
            kept = table.rows if choice is None else [t for t in table.rows if choice.admits(relation, t)]
            for tup in kept:
                if tup not in rows:
                    store.add(relation, tup, _NONE)
            continue
        variables = table.variables or [None] * len(table.rows)
        for tup, variable in zip(table.rows, variables):
            node = rows.get(tup)
            if node is None:
                node = circuit.node()
                store.add(relation, tup, node)
            if variable:
                circuit.state(node, variable)
            else:
                circuit.hold(node)


def circuit_fixpoint(stratum: frozenset[str], rules: list[Rule], store: Store, circuit: Circuit,
                     budget: Budget, numbers: Mapping[int, int] | None = None,
                     guards: frozenset[str] = frozenset()) -> int:
    """Runs one stratum of tracked relations to its Boolean fixpoint, recording every
    derivation as a gate; returns the number of rounds.  ``numbers``: ``id(rule) -> number``
    (the program's rules numbered from 1, as a graph stores them): each gate records its rule
    in ``circuit.rules`` (None: no rule recorded, a call less per derivation). ``guards``:
    relations whose facts have provenance one, stored without a node and derived without a gate
    (the magic-set rewriting's)."""
    relations = store.relations
    numbers_of = numbers or {}
    bodies = Bodies()
    pending: dict[str, dict[tuple, int]] = defaultdict(dict)
    held: dict[str, dict[tuple, tuple]] = defaultdict(dict)  # new facts of guards: provenance one
    new_node = count(circuit.size).__next__  # the nodes of new facts, made when merged (Circuit.nodes)
    # gates appended to the circuit's arrays in the plans' last step: no call per derivation
    head_append, ends_append, flat = circuit.heads.append, circuit.ends.append, circuit.bodies
    body_append, body_extend, rule_append = flat.append, flat.extend, circuit.rules.append
    circuit.forget_indexes()

    def finish(relation: str, head_key, rule: Rule | None = None) -> Any:
        """A plan's last step: ``emit`` for one head relation, inlined (one call less a derivation);
        ``rule``: the rule the plan runs, whose number (``numbers``) each gate records."""
        rows = relations[relation]
        number = -1 if rule is None else numbers_of.get(id(rule), -1)

        def record(b, body) -> None:
            tup = head_key(b)
            node = rows.get(tup)
            if node is None:
                bucket = pending[relation]
                node = bucket.get(tup)
                if node is None:
                    node = bucket[tup] = new_node()
            head_append(node)
            if type(body) is int:
                body_append(body)
            elif body is not ONE_MARK and body:
                body_extend(body)
            ends_append(len(flat))

        if numbers is None:  # rules not asked for: nothing more per derivation
            return record

        def record_rule(b, body) -> None:
            record(b, body)
            rule_append(number)

        return record_rule

    def emit(relation: str, tup: tuple, body: Any) -> None:
        """A derivation of ``relation(tup)``; the plans' last steps are ``finish``'s own."""
        finish(relation, lambda b: tup)(None, body)

    emit.finish = finish

    def emit_guard(relation: str, tup: tuple, body: Any) -> None:
        if tup not in relations[relation]:
            held[relation][tup] = _NONE

    def merge() -> dict[str, dict[tuple, int]]:
        nonlocal pending, held
        made = sum(len(bucket) for bucket in pending.values())
        if made:
            circuit.rounds.append(circuit.size)  # the round's facts: its derivations read none of them
            circuit.nodes(made)
        delta = {}
        for bucket_of in (pending, held):
            for relation, bucket in bucket_of.items():
                for tup, node in bucket.items():
                    store.add(relation, tup, node)
                delta[relation] = bucket
                budget.check_size(relation, len(relations[relation]), rules)
        pending, held = defaultdict(dict), defaultdict(dict)
        return delta

    guard = (guards, emit_guard) if guards else None
    first_pass(rules, store, bodies, emit, guard=guard)
    delta = merge()
    plans = DeltaPlans(stratum, rules, store, bodies, emit, guard=guard)
    rounds = 1
    while delta:
        plans.run(delta, budget)
        delta = merge()
        rounds += 1
    return rounds


class CircuitModel(Model):
    """A Model whose tracked facts are nodes of a circuit; labels are read off it on demand.

    ``semiring`` is the why semiring whose cap bounds the labels shown (a display limit:
    the circuit itself is never capped)."""

    def __init__(self, program: Program, semiring: WhySemiring, store: Store, circuit: Circuit):
        super().__init__(program, semiring, store)
        self.circuit = circuit
        self.witness = False  # labels: one support set per fact (provenance/witness.py), not capped sums
        self._labels: dict[int, Polynomial] | None = None

    def labels(self) -> dict[int, Polynomial]:
        """Returns every node's label, computed once, on the first reading of any label: a capped
        label depends on the order its cycle's labels were computed in, so every reading sees
        one pass over the whole circuit (a label read alone would see its own cone's)."""
        if self._labels is None:
            self._labels = (witness_polynomials(self.circuit, self.semiring) if self.witness
                            else gate_labels(self.circuit, self.semiring))
        return self._labels

    def node_label(self, node) -> Polynomial:
        """Returns the label of a stored fact's node (``()``: provenance one)."""
        if node is _NONE:
            return self.semiring.one()
        return self.labels()[node]

    def _rows(self, relation: str) -> Mapping[tuple, Any]:
        return _Labels(self, self.store.relations[relation])

    def _what_if(self, deleted: frozenset[str]) -> WhatIf:
        circuit = self.circuit
        numbers = self.semiring.table.numbers(deleted)
        cone = circuit.cone(circuit.roots(numbers))
        held = circuit.holding(cone, numbers)
        inside = set(cone)
        full = self.labels()
        recomputed = gate_labels(circuit, self.semiring, held, numbers, _Outside(full, inside)) if held else {}
        one = self.semiring.one()
        alive, dead = {}, {}
        for name, rows in self.store.relations.items():
            kept, lost = {}, []
            for tup, node in rows.items():
                if node is _NONE:
                    kept[tup] = one
                elif node not in inside:
                    kept[tup] = full[node]
                elif node in held:
                    kept[tup] = recomputed[node]
                else:
                    lost.append(tup)
            alive[name], dead[name] = kept, lost
        return WhatIf(deleted, alive, dead)


class _Labels(Mapping):
    """A relation's facts as ``tuple -> label``: the tuples stored, labels read off the circuit."""

    __slots__ = ("model", "rows")

    def __init__(self, model: CircuitModel, rows: dict):
        self.model, self.rows = model, rows

    def __getitem__(self, tup: tuple) -> Polynomial:
        return self.model.node_label(self.rows[tup])

    def __contains__(self, tup: object) -> bool:
        return tup in self.rows

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


class _Outside(Mapping):
    """The labels of the nodes outside a deletion's cone: what the deletion leaves as they were."""

    __slots__ = ("labels", "inside")

    def __init__(self, labels: dict[int, Polynomial], inside: set[int]):
        self.labels, self.inside = labels, inside

    def __getitem__(self, node: int) -> Polynomial:
        if node in self.inside:
            raise KeyError(node)
        return self.labels[node]

    def __contains__(self, node: object) -> bool:
        return node not in self.inside

    def __iter__(self):
        return (n for n in self.labels if n not in self.inside)

    def __len__(self) -> int:
        return len(self.labels) - len(self.inside)


__all__ = ["Bodies", "CircuitModel", "circuit_fixpoint", "load_facts"]
