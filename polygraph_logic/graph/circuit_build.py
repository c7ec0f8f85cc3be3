"""Building the circuit of a graph's capped labels: every derivation of every fact the cap truncated.

A fact whose label the cap truncated keeps its derivations (provenance/circuit.py), found by
running the stored rules that may derive it with its head bound (datalog/joins/join_plan.Plan.prove)
over the facts of the relations they read: each rule instance that derives it names the facts
of its body, and those whose label is not 1 (background knowledge) are the derivation's body.  A derivation whose body holds the fact itself is left out: it can
never be the first to make the fact hold.  Whatever engine built a graph, its circuit is
found this way from what the graph stores, so every engine's graph gets the same one.

``store_circuit`` writes the derivations of the version a graph reads (after a build);
``version_circuit`` finds those of a version being written, committed with it (an ``add``), and
``inherited_circuit`` marks one that adds no derivation (an applied deletion).
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Callable, Iterable, Iterator

from polygraph_logic.allocation import collector_paused
from polygraph_logic.datalog.joins.join_plan import Plan, Store
from polygraph_logic.datalog.program import body_atoms
from polygraph_logic.datalog.syntax import Constant, Variable
from polygraph_logic.graph.store.backend import write_circuit
from polygraph_logic.graph.store.circuit_rows import Row
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.questions import matching_rules, rule_groups

_NONE = frozenset()
#: how often (in facts) the progress of finding derivations is reported
CHUNK = 1000


class _Bodies:
    """Labels are the sets of body facts a derivation used: ``times`` is their union."""

    name = "bodies"

    def one(self):
        return _NONE

    def times(self, a, b):
        return a | b


def derivations(graph: Graph, facts: Iterable[tuple[int, str, tuple]],
                progress: Callable[[int], None] | None = None) -> Iterator[Row]:
    """Yields ``(fact, rule, body)`` for every derivation of ``facts`` (``(num, relation, args)``).

    The rules that may derive them are read once, and the facts of every relation those rules
    read are loaded into memory in one scan each (a fact's label there: the set of its own
    number, empty for background knowledge), so that each proof is a walk over in-memory
    indexes rather than a query per look-up."""
    facts = list(facts)
    if not facts:
        return
    groups = {relation: rule_groups(graph.rule_heads(relation)) for relation in {f[1] for f in facts}}
    candidates = [matching_rules(groups[relation], args) for _, relation, args in facts]
    rules = graph.rules_numbered(sorted({n for numbers in candidates for n in numbers}))
    read = {atom.relation for rule in rules.values() for atom in body_atoms(rule.body)}
    store = Store({relation: 0 for relation in read})
    for relation, args, num, background in graph.relation_facts(read, read_filters(rules, facts, candidates)):
        store.relations[relation][args] = _NONE if background else frozenset((num,))
    found: list[frozenset] = []
    goal: list = [None]

    def emit(relation: str, tup: tuple, body: frozenset) -> None:
        if tup == goal[0]:
            found.append(body)

    bodies = _Bodies()
    plans = {number: Plan(rule, store, bodies, emit, goal=True) for number, rule in rules.items()}
    for done, ((num, relation, args), numbers) in enumerate(zip(facts, candidates), 1):
        seen = set()
        for rule in numbers:
            goal[0] = args
            found.clear()
            plans[rule].prove(args)
            for body in found:
                if num not in body and body not in seen:  # a body holding the fact itself never fires first
                    seen.add(body)
                    yield num, rule, tuple(sorted(body))
        if progress is not None and done % CHUNK == 0:
            progress(done)
    if progress is not None:
        progress(len(facts))


def found_again(graph: Graph, numbers: Iterable[int]) -> list[Row]:
    """``derivations`` of the stored facts numbered ``numbers`` (a fact whose circuit is not all
    stored: circuit_rows.UNSTORED_RULE), from the rules the version read holds."""
    rows = graph.facts_numbered(numbers)
    return list(derivations(graph, [(num, relation, args) for num, relation, args, _, _ in rows]))


def completed(graph: Graph, facts: Iterable[int]) -> dict[int, list[tuple[int, tuple[int, ...]]]]:
    """``graph.derivations(facts)``, every derivation of each fact: those of a fact whose circuit is
    not all stored found again from the rules (``found_again``)."""
    facts = set(facts)
    found = graph.derivations(facts)
    unstored = graph.unstored(facts)
    if unstored:
        for num in unstored:
            found.pop(num, None)
        for num, rule, body in found_again(graph, unstored):
            found.setdefault(num, []).append((rule, body))
    return found


def read_filters(rules: dict, facts: list, candidates: list) -> dict[str, list[tuple[int, set]]]:
    """For each relation the rules read, per body atom over it an argument the atom fixes and its
    values (a head variable's, the capped facts' there, before a constant's): the only facts of
    it a proof can read are those one of them admits (at x40, the edges of the predicates the
    capped facts' rules name, not every edge; with hubs, the edges out of and into the asked
    facts' own ends, not every edge of a predicate)."""
    head_values: dict[int, dict[str, set]] = {}
    for (_, _, args), numbers in zip(facts, candidates):
        for number in numbers:
            seen = head_values.setdefault(number, {})
            for arg, value in zip(rules[number].head.args, args):
                if isinstance(arg, Variable):
                    seen.setdefault(arg.name, set()).add(value)
    allowed: dict[str, list[dict[int, tuple[bool, set]]]] = {}  # per atom: position -> (a constant?, values)
    for number, rule in rules.items():
        bound = head_values.get(number, {})
        for atom in body_atoms(rule.body):
            fixed = {k: (True, {arg.value}) if isinstance(arg, Constant) else (False, bound[arg.name])
                     for k, arg in enumerate(atom.args)
                     if isinstance(arg, Constant) or (isinstance(arg, Variable) and arg.name in bound)}
            allowed.setdefault(atom.relation, []).append(fixed)
    filters = {}
    for relation, atoms in allowed.items():
        if all(atoms):  # an atom that fixes nothing reads every fact of the relation
            chosen: dict[int, set] = {}
            for fixed in atoms:
                # a head variable's values before a constant's, a position the store keys (the
                # first argument, the third) before one it scans for (a predicate: most edges)
                k = min(fixed, key=lambda k: (fixed[k][0], k not in (0, 2), len(fixed[k][1])))
                chosen.setdefault(k, set()).update(fixed[k][1])
            filters[relation] = sorted(chosen.items())
    return filters


def store_circuit(path: str | Path, progress: Callable[[int, int], None] | None = None) -> int:
    """Finds and writes the derivations of every fact with a capped label at the latest version of
    the graph at ``path``, marking that version's circuit complete; returns how many were written."""
    # one version read (a snapshot: another writer's commit waits), its facts and derivations all live on
    with Graph(path, snapshot=True) as graph, collector_paused():
        version = graph.version_read()
        facts = graph.inexact_facts()
        report = None if progress is None else (lambda done: progress(done, len(facts)))
        rows = list(derivations(graph, facts, report))
    write_circuit(path, version, rows)
    return len(rows)


def gate_rows(circuit, nodes: list, labels) -> Iterator[Row]:
    """The derivations of every fact with an inexact label, read off an evaluation's circuit
    (provenance/gates.py) rather than found again: ``nodes`` lists each stored fact's node in
    the order of the facts' numbers (``()``: provenance one), ``labels`` each node's label.  A
    row as ``derivations`` yields it: body facts of label 1 left out, a body holding the fact
    itself left out, each body once."""
    if len(circuit.rules) != circuit.gate_count:
        raise ValueError("the circuit's gates do not record their rules: evaluate with gate_rules=True")
    number = array("q", bytes(8 * circuit.size))  # node -> its fact's number
    one = bytearray(circuit.size)  # node -> its label is 1 (never a body fact)
    inexact = []
    for num, node in enumerate(nodes, 1):
        if type(node) is int:
            number[node] = num
            label = labels[node]
            if label.is_one():
                one[node] = 1
            elif not label.exact:
                inexact.append((num, node))
    offsets, gates = circuit.by_head()
    ends, bodies, rules = circuit.ends, circuit.bodies, circuit.rules
    for num, node in inexact:
        seen = set()
        for i in range(offsets[node], offsets[node + 1]):
            g = gates[i]
            body = tuple(sorted({number[b] for b in bodies[ends[g - 1] if g else 0:ends[g]] if not one[b]}))
            if num not in body and body not in seen:
                seen.add(body)
                yield num, rules[g], body


def store_gates(path: str | Path, circuit, nodes: list, labels) -> int:
    """Writes ``gate_rows`` as the circuit of the latest version of the graph at ``path`` (a build
    evaluated as a circuit), marking it complete; returns how many derivations were written."""
    with Graph(path, snapshot=True) as graph:
        version = graph.version_read()
    with collector_paused():
        rows = list(gate_rows(circuit, nodes, labels))
    write_circuit(path, version, rows)
    return len(rows)


def version_circuit(store, reached: set[tuple[str, tuple]] | None = None) -> list[Row]:
    """The derivations of every capped fact of the version ``store`` reads (a Store open on a
    version being written: ``write_version(..., circuit=version_circuit)`` commits them with it).
    ``reached``: the ``(relation, args)`` facts that can have a derivation the version before did
    not (an incremental add's); a capped fact outside it has every derivation stored already."""
    graph = Graph(store.path, store=store)
    facts = graph.inexact_facts(reached)
    with collector_paused():
        return list(derivations(graph, facts))


def inherited_circuit(had: bool):
    """The ``circuit`` of a version that derives nothing new (an applied deletion): complete with
    no derivation of its own when the version before it had one (``had``), else none."""
    return lambda store: [] if had else None


__all__ = ["derivations", "gate_rows", "inherited_circuit", "store_circuit", "store_gates", "version_circuit"]
