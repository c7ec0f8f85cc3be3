"""Symbolic re-derivation of entailed edges, by our engine or by pyDatalog.

Edges follow from assertions and rules by a decision procedure, so they are re-derived
symbolically, never by a model. Both engines start from scratch: the facts are the
surviving assertions (``claim(s, p, o)`` and ``assertion(id)`` for each) plus every
stored fact whose label is 1 (background knowledge and what rules derive from it
alone, which no deletion can touch); the rules are the graph's stored rules
(Graph.rules_text(): the compiled receipts, the merge rules and the rule files). No
stored label takes part, so an edge label is graded against a derivation, not against
itself.

- ``ours``: a Boolean evaluation by polygraph_logic.datalog.evaluate (the engine that wrote the
  labels, but in another semiring and from scratch);
- ``pydatalog``: pyDatalog (polygraph_logic.datalog.pydatalog_engine), an independent engine,
  restricted and driven in rounds, because it is slow on the full RO rule set in two
  ways. First, most of the thousand-odd RO rules can never fire on a given graph, so
  pyDatalog gets only the rules that can: those with a derivation in an
  over-approximation of the closure that keeps each fact's constants only at argument
  positions where some rule names a constant (see can_fire). The restriction is sound
  (a dropped rule has a body atom that no derivable fact matches) and is computed
  without our engine, so a fact our engine misses cannot hide a rule from pyDatalog.
  Second, pyDatalog's top-down resolution slows down exponentially once several
  recursive chain rules (transitivity, property chains) share the one ``edge``
  relation: on the 250-assertion synthetic graph five of them took over 30 s, and all
  of them did not finish within ten minutes. So pyDatalog evaluates one round at a time: every rule with its
  head renamed (``next__edge``), hence non-recursive, over the facts known so far; a
  loop here adds what it derived and repeats until a round adds nothing (naive
  evaluation, 3.4 s on that graph). Every join and match is pyDatalog's; the loop only
  counts new facts. Negation stays correct because it may only range over
  background-only relations, whose facts are all among the stored background facts.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Iterable, Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.datalog.program import Program, parse_program
from polygraph_logic.datalog.syntax import Atom, Constant, Fact, Rule, Variable

ENGINES = ("ours", "pydatalog")
Triple = tuple[str, str, str]


def check_engine(engine: str) -> str:
    """Returns the edge oracle's name if known; raises PolygraphError naming the choices otherwise."""
    if engine not in ENGINES:
        raise PolygraphError("unknown_edge_oracle",
                             f"unknown edge oracle {engine!r}; choose one of: {', '.join(ENGINES)}")
    return engine


class EdgeRederivation:
    """The graph's rules and background facts, parsed once, for re-deriving edges per deletion."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.rules: list[Rule] = list(_parsed_rules(graph.rules_text(), f"{graph.path} (rules)"))
        self.background = [_fact(f.relation, f.args) for f in graph.facts() if f.support == ((),)]
        # deletion name -> (rules pyDatalog ran, all rules, rounds)
        self.fired: dict[str, tuple[int, int, int]] = {}

    def inputs(self, deleted: frozenset[str]) -> list[Fact]:
        """Returns the facts a from-scratch evaluation starts from once ``deleted`` are gone."""
        facts = list(self.background)
        for assertion in self.graph.assertions.values():
            if assertion.id not in deleted:
                facts.append(_fact("neg_edge" if assertion.negated else "claim", assertion.triple))
                facts.append(_fact("assertion", (assertion.id,)))
        return facts

    def edges(self, deleted: frozenset[str], engine: str, name: str = "") -> set[Triple]:
        """Returns every edge the engine derives from the surviving assertions."""
        facts = self.inputs(deleted)
        if check_engine(engine) == "ours":
            model = evaluate(Program.from_clauses([*facts, *self.rules]), "boolean")
            return set(model.boolean().get("edge", ()))
        live = can_fire(facts, self.rules)
        closure, rounds = pydatalog_rounds(facts, live)
        self.fired[name] = (len(live), len(self.rules), rounds)
        return closure.get("edge", set())


@lru_cache(maxsize=4)
def _parsed_rules(text: str, name: str) -> tuple[Rule, ...]:
    """Returns the rules of a graph's rule text, parsed and checked once per text (they are immutable)."""
    return tuple(parse_program(text, name).rules)


def pydatalog_rounds(facts: list[Fact], rules: list[Rule]) -> tuple[dict[str, set[tuple]], int]:
    """Returns pyDatalog's closure of the facts under the rules, and the rounds it took.

    Each round hands pyDatalog the facts known so far and the rules with renamed heads
    (so none is recursive), then adds what they derived; see the module docstring.
    """
    from polygraph_logic.datalog.pydatalog_engine import evaluate_with_pydatalog  # pyDatalog: loaded only when it is the engine asked for

    clash = sorted({r.head.relation for r in rules if r.head.relation.startswith(_NEXT)})
    if clash:
        raise PolygraphError("reserved_relation", f"relations named {_NEXT}... are reserved for the pyDatalog "
                                                  f"edge oracle: {', '.join(clash)}")
    step = [Rule(Atom(_NEXT + rule.head.relation, rule.head.args), rule.body) for rule in rules]
    known: dict[str, set[tuple]] = defaultdict(set)
    for fact in facts:
        known[fact.atom.relation].add(tuple(arg.value for arg in fact.atom.args))
    rounds = 0
    while True:
        rounds += 1
        current = [_fact(relation, row) for relation, rows in known.items() for row in rows]
        added = 0
        for name, rows in evaluate_with_pydatalog(current, step).items():
            if name.startswith(_NEXT):
                target = known[name[len(_NEXT):]]
                before = len(target)
                target |= rows
                added += len(target) - before
        if not added:
            return dict(known), rounds


_NEXT = "next__"  # the prefix of a rule head within one round


def _fact(relation: str, args: Iterable) -> Fact:
    return Fact(Atom(relation, tuple(Constant(v) for v in args)))


class _Any:
    """An argument the abstraction forgot: it stands for every value."""

    def __repr__(self) -> str:
        return "*"


ANY = _Any()


def can_fire(facts: list[Fact], rules: list[Rule]) -> list[Rule]:
    """Returns the rules (in order) that have a derivation in an over-approximation of the closure.

    Each fact keeps its value only at argument positions where some rule has a constant
    (elsewhere it becomes ANY, which matches anything); rules are then applied to these
    abstract facts to a fixpoint, ignoring negations and comparisons (which can only
    block a derivation). Every concrete derivation has an abstract counterpart, so a rule
    left out cannot fire on the facts.
    """
    relevant = _relevant_positions(rules)

    def abstract(relation: str, values: tuple) -> tuple:
        keep = relevant.get(relation, ())
        return tuple(v if i in keep else ANY for i, v in enumerate(values))

    known = _AbstractFacts()
    for fact in facts:
        known.add(fact.atom.relation, abstract(fact.atom.relation, tuple(a.value for a in fact.atom.args)))
    live: set[int] = set()
    changed = True
    while changed:
        changed = False
        for number, rule in enumerate(rules):
            for binding in _matches(list(_positive(rule)), known, {}):
                live.add(number)
                head = tuple(_value(arg, binding) for arg in rule.head.args)
                changed |= known.add(rule.head.relation, abstract(rule.head.relation, head))
    return [rule for number, rule in enumerate(rules) if number in live]


def _relevant_positions(rules: list[Rule]) -> dict[str, set[int]]:
    """Returns, per relation, the argument positions whose values the abstraction keeps.

    A position is kept where some rule names a constant, and where a rule copies a
    value into a kept position of its head (``edge(s, p, o) :- claim(s, p, o)`` keeps
    claim's predicate because edge's is kept), to a fixpoint.
    """
    relevant: dict[str, set[int]] = defaultdict(set)
    for rule in rules:
        for atom in (rule.head, *_positive(rule)):
            relevant[atom.relation].update(i for i, arg in enumerate(atom.args) if isinstance(arg, Constant))
    changed = True
    while changed:
        changed = False
        for rule in rules:
            kept = {arg.name for i, arg in enumerate(rule.head.args)
                    if isinstance(arg, Variable) and i in relevant[rule.head.relation]}
            for atom in _positive(rule):
                for i, arg in enumerate(atom.args):
                    if isinstance(arg, Variable) and arg.name in kept and i not in relevant[atom.relation]:
                        relevant[atom.relation].add(i)
                        changed = True
    return relevant


def _positive(rule: Rule) -> Iterator[Atom]:
    return (literal for literal in rule.body if isinstance(literal, Atom))


class _AbstractFacts:
    """Abstract facts per relation, indexed by (position, value) for atoms with constants."""

    def __init__(self):
        self.rows: dict[str, set[tuple]] = defaultdict(set)
        self.by_value: dict[tuple[str, int], dict] = {}

    def add(self, relation: str, row: tuple) -> bool:
        if row in self.rows[relation]:
            return False
        self.rows[relation].add(row)
        for position, value in enumerate(row):
            index = self.by_value.get((relation, position))
            if index is not None:
                index.setdefault(value, []).append(row)
        return True

    def candidates(self, atom: Atom) -> Iterable[tuple]:
        for position, arg in enumerate(atom.args):
            if isinstance(arg, Constant):
                index = self.by_value.get((atom.relation, position))
                if index is None:
                    index = self.by_value[atom.relation, position] = {}
                    for row in self.rows[atom.relation]:
                        index.setdefault(row[position], []).append(row)
                return [*index.get(arg.value, ()), *index.get(ANY, ())]
        return list(self.rows.get(atom.relation, ()))


def _matches(atoms: list[Atom], known: _AbstractFacts, binding: dict) -> Iterator[dict]:
    """Yields the variable bindings under which every atom matches an abstract fact."""
    if not atoms:
        yield binding
        return
    atom, rest = atoms[0], atoms[1:]
    for row in known.candidates(atom):
        extended = _unify(atom, row, binding)
        if extended is not None:
            yield from _matches(rest, known, extended)


def _unify(atom: Atom, row: tuple, binding: dict) -> dict | None:
    extended = dict(binding)
    for arg, value in zip(atom.args, row):
        if isinstance(arg, Constant):
            if value is not ANY and value != arg.value:
                return None
        elif isinstance(arg, Variable):
            bound = extended.get(arg.name, ANY)
            if bound is ANY:
                extended[arg.name] = value  # narrowing ANY to a value keeps every concrete match
            elif value is not ANY and value != bound:
                return None
        # wildcards and arithmetic match anything
    return extended


def _value(arg, binding: dict):
    if isinstance(arg, Constant):
        return arg.value
    if isinstance(arg, Variable):
        return binding.get(arg.name, ANY)
    return ANY  # arithmetic (or a wildcard): any value
