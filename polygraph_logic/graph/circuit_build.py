"""Building the circuit of a graph's capped labels: every derivation of every fact the cap truncated.

A fact whose label the cap truncated keeps its derivations (provenance/circuit.py), found by
asking the stored rules for it, head bound (goal_plans.py): each rule instance that derives
it names the facts of its body, and those whose label is not 1 (background knowledge) are
the derivation's body.  A derivation whose body holds the fact itself is left out: it can
never be the first to make the fact hold.  Whatever engine built a graph, its circuit is
found this way from what the graph stores, so every engine's graph gets the same one.

``store_circuit`` writes the derivations of the version a graph reads (after a build or an
``add``); ``inherit_circuit`` marks a version that adds no derivation (an applied deletion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator

from polygraph_logic.graph.goal_plans import GoalPlans
from polygraph_logic.graph.store.circuit_rows import Row, write_file_circuit, write_folder_circuit
from polygraph_logic.graph.store.folder_layout import is_folder
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import fact_key

_NONE = frozenset()
#: facts whose derivations are found before their body facts are numbered in one query each
CHUNK = 500


class _Bodies:
    """Labels are the sets of body facts a derivation used: ``times`` is their union."""

    name = "bodies"

    def one(self):
        return _NONE

    def times(self, a, b):
        return a | b


def derivations(graph: Graph, facts: Iterable[tuple[int, str, tuple]],
                progress: Callable[[int], None] | None = None) -> Iterator[Row]:
    """Yields ``(fact, rule, body)`` for every derivation of ``facts`` (``(num, relation, args)``)."""
    found: list[frozenset] = []
    goal: list = [None]

    def emit(relation: str, tup: tuple, body: frozenset) -> None:
        if tup == goal[0]:
            found.append(body)

    plans = GoalPlans(graph, lambda relation, args: frozenset(((relation, args),)), _Bodies(), emit)
    numbers: dict[tuple[str, tuple], int | None] = {}  # body fact -> number (None: its label is 1)
    facts = list(facts)
    for start in range(0, len(facts), CHUNK):
        chunk = []
        for num, relation, args in facts[start:start + CHUNK]:
            for rule, (plan, _) in plans.numbered(relation, args):
                goal[0] = args
                found.clear()
                plan.prove(args)
                chunk.extend((num, rule, body) for body in dict.fromkeys(found))
        _number(graph, {key for _, _, body in chunk for key in body if key not in numbers}, numbers)
        seen = set()
        for num, rule, body in chunk:
            if any(key not in numbers for key in body):
                continue  # a body fact the graph does not hold (never the case for rules over stored facts)
            numbered = tuple(sorted({numbers[key] for key in body} - {None}))
            if num in numbered or (num, rule, numbered) in seen:
                continue
            seen.add((num, rule, numbered))
            yield num, rule, numbered
        if progress is not None:
            progress(min(start + CHUNK, len(facts)))


def _number(graph: Graph, keys: set, numbers: dict) -> None:
    """Adds the numbers of the facts ``keys`` to ``numbers`` (None for a fact whose label is 1)."""
    by_relation: dict[str, dict[str, tuple]] = {}
    for relation, args in keys:
        by_relation.setdefault(relation, {})[fact_key(args)] = args
    for relation, wanted in by_relation.items():
        for args_key, (num, label) in graph.fact_numbers(relation, sorted(wanted)).items():
            if args_key in wanted:
                numbers[(relation, wanted[args_key])] = None if graph.decode(label) == [[]] else num


def store_circuit(path: str | Path, progress: Callable[[int, int], None] | None = None) -> int:
    """Finds and writes the derivations of every fact with a capped label at the latest version of
    the graph at ``path``, marking that version's circuit complete; returns how many were written."""
    with Graph(path) as graph:
        version = graph.version_read()
        facts = graph.inexact_facts()
        report = None if progress is None else (lambda done: progress(done, len(facts)))
        rows = list(derivations(graph, facts, report))
    (write_folder_circuit if is_folder(path) else write_file_circuit)(path, version, rows)
    return len(rows)


def inherit_circuit(path: str | Path) -> bool:
    """Marks the latest version's circuit complete when the version before it has one (a version
    that derives nothing new: an applied deletion); returns whether it did."""
    with Graph(path) as graph:
        version = graph.version_read()
    with Graph(path, at=version - 1) as before:
        if not before.has_circuit():
            return False
    (write_folder_circuit if is_folder(path) else write_file_circuit)(path, version, ())
    return True


__all__ = ["derivations", "inherit_circuit", "store_circuit"]
