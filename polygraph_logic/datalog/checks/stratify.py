"""Stratification: relations grouped into strongly connected components, bottom up.

Negation and aggregation must look only at lower strata (no cycle through them).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

from polygraph_logic.errors import ProgramError
from polygraph_logic.datalog.checks.safety import aggregates_in, literal_terms
from polygraph_logic.datalog.syntax import Atom, Negation, Rule


def dependencies(body) -> Iterator[tuple[str, bool, object]]:
    """Yields ``(relation, negative, literal)`` for every relation a body reads.

    Relations read inside an aggregate count as negative: the aggregate needs them complete.
    """
    for literal in body:
        if isinstance(literal, Atom):
            yield literal.relation, False, literal
        elif isinstance(literal, Negation):
            yield literal.atom.relation, True, literal
        for term in literal_terms(literal):
            for aggregate in aggregates_in(term):
                for relation, _, _ in dependencies(aggregate.body):
                    yield relation, True, aggregate


def stratify(rules: list[Rule], arities: dict[str, int]) -> list[frozenset[str]]:
    """Returns strongly connected components bottom up; rejects negation inside one."""
    edges: dict[str, set[str]] = defaultdict(set)  # body relation -> head relations
    negative: dict[tuple[str, str], object] = {}
    for rule in rules:
        for relation, is_negative, literal in dependencies(rule.body):
            edges[relation].add(rule.head.relation)
            if is_negative:
                negative.setdefault((relation, rule.head.relation), literal)
    components = _tarjan(sorted(arities), edges)
    where = {name: i for i, comp in enumerate(components) for name in comp}
    for (body, head), literal in negative.items():
        if where[body] == where[head]:
            cycle = _path(head, body, edges, components[where[head]])
            shown = " -> ".join([body, *cycle])
            raise ProgramError(
                "cyclic_negation",
                f"not stratifiable: {head} depends negatively on {body}, which depends on {head} "
                f"(cycle {shown}); negation and aggregates may not occur inside recursion",
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
