"""The atoms of a side of a contradiction: the assertions that state it, not those that carry it.

A side's label holds every assertion its fact needs: the claims that state the relation, and
the evidence of the merges that carry those claims onto the side's entities.  The balance of
origins (contradictions.py) counts, as GraphEcho does, the origins of the stating assertions
only.  An assertion is an atom of the side ``edge(x, P, y)`` when its own triple ``(s, Q, o)``
says P or a sub-property of it (the program's rules ``edge(X, P, Y) :- edge(X, Q, Y)``, closed
transitively) between x and y, each read as its merge's canonical entity; of a negated side
``neg_edge(x, P, y)`` when it denies P itself between them.  A support set with no atom (a side
entailed through a chain of edges, say) counts whole, as its label says.
"""

from __future__ import annotations

from collections import defaultdict

from polygraph_logic.datalog.syntax import Atom, Constant, Variable


class Atoms:
    """The atoms of sides of a graph's contradictions (merges, rules and triples read once, when first needed)."""

    def __init__(self, graph):
        self.graph = graph
        self._canonical: dict[str, str] | None = None
        self._subs: dict[str, set[str]] | None = None
        self._below: dict[str, frozenset[str]] = {}
        self._triples: dict[str, tuple] = {}

    def of(self, side: dict, support) -> frozenset[str]:
        """The atoms of ``side`` (a contradiction side: subject, predicate, object, negated) in one
        support set; the whole set when none of its assertions states the side."""
        self._read(support)
        name = self._name
        wanted = (name(side["subject"]), name(side["object"]))
        says = {side["predicate"]} if side["negated"] else self._sub_properties(side["predicate"])
        found = frozenset(a for a in support if (t := self._triples.get(a)) is not None
                          and t[3] == bool(side["negated"]) and t[1] in says and (name(t[0]), name(t[2])) == wanted)
        return found or frozenset(support)

    def _read(self, support) -> None:
        missing = [a for a in support if a not in self._triples]
        if missing:
            for name, (_, assertion) in self.graph.assertions.named(missing).items():
                self._triples[name] = (assertion.subject, assertion.predicate, assertion.object,
                                       bool(assertion.negated))

    def _name(self, entity: str) -> str:
        if self._canonical is None:
            self._canonical = {}
            for merge in self.graph.artifacts("merge"):
                canonical = merge.content.get("canonical")
                for member in merge.content.get("members", ()):
                    if isinstance(canonical, str) and isinstance(member, str):
                        self._canonical[member] = canonical
        return self._canonical.get(entity, entity)

    def _sub_properties(self, predicate: str) -> frozenset[str]:
        """``predicate`` and every property the rules make a sub-property of it, transitively."""
        if self._subs is None:
            self._subs = defaultdict(set)
            graph = self.graph
            rules = graph.general_rules_numbered().values() if graph.ground_rules_indexed() else graph.rules()
            for rule in rules:
                if _sub_property(rule):
                    self._subs[rule.head.args[1].value].add(rule.body[0].args[1].value)
        found = self._below.get(predicate)
        if found is None:
            seen, todo = {predicate}, [predicate]
            while todo:
                for sub in self._subs.get(todo.pop(), ()):
                    if sub not in seen:
                        seen.add(sub)
                        todo.append(sub)
            found = self._below[predicate] = frozenset(seen)
        return found


def _sub_property(rule) -> bool:
    """``edge(X, "P", Y) :- edge(X, "Q", Y).``: Q a sub-property of P."""
    if rule.head.relation != "edge" or len(rule.body) != 1 or not isinstance(rule.body[0], Atom):
        return False
    head, body = rule.head.args, rule.body[0].args
    return (rule.body[0].relation == "edge" and len(head) == len(body) == 3
            and all(isinstance(t, Variable) for t in (head[0], head[2], body[0], body[2]))
            and head[0] == body[0] and head[2] == body[2] and head[0] != head[2]
            and isinstance(head[1], Constant) and isinstance(body[1], Constant))


__all__ = ["Atoms"]
