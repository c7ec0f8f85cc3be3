"""Assertions and receipts compiled into one Datalog program.

The program's relations:

- ``claim(s, p, o)``: one tracked fact per assertion (variable = assertion id); a
  triple stated by several assertions is one claim whose label is their sum.
- ``neg_edge(s, p, o)``: one tracked fact per negated assertion (``"negated": true``, a
  GPAD/GAF ``NOT`` annotation): the source states the triple does NOT hold.  It is not a
  claim nor an edge and supports nothing positive; rules (``rules/contradictions.dl``)
  pair it with an ``edge`` of the same triple into a ``contradiction``.
- ``assertion(id)``: the same variable again, so receipts can cite assertions.
- ``edge(s, p, o)``: every claim is an edge; ontology rules (``rules/ro.dl``) and the
  merge rules below entail more.
- ``merge(id)``, ``member(m, c)``: a merge receipt is one rule per support set; each
  member ``m`` of a merged group points at its canonical entity ``c`` with the
  merge's label, and an edge about a member is entailed for the canonical entity.
- ``summary(id)``, ``sentence(id)``: a flat summary receipt is one rule per support
  set; a sentence-level summary is one ``sentence`` artifact per sentence and the
  summary is their conjunction (the product of their labels).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.syntax import Atom, Clause, Constant, Fact, Rule, Variable
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.records import Receipt

#: the rules that carry edges across merged entities (both argument positions)
MERGE_RULES = """\
edge(c, p, o) :- edge(m, p, o), member(m, c).
edge(s, p, c) :- edge(s, p, m), member(m, c).
"""
#: the same for negated triples (a NOT about a member holds for the canonical entity)
NEG_MERGE_RULES = """\
neg_edge(c, p, o) :- neg_edge(m, p, o), member(m, c).
neg_edge(s, p, c) :- neg_edge(s, p, m), member(m, c).
"""


#: one Constant per value (they are immutable): inputs repeat their predicates, entities and ids
_constant = lru_cache(maxsize=1 << 16, typed=True)(Constant)


def _atom(relation: str, *values, constant=_constant) -> Atom:
    return Atom(relation, tuple(v if isinstance(v, Variable) else constant(v) for v in values))


@dataclass
class CompiledInputs:
    """The clauses the inputs became, grouped for display, and what compiling counted."""

    assertions: list[Fact] = field(default_factory=list)
    merges: list[Clause] = field(default_factory=list)
    summaries: list[Clause] = field(default_factory=list)
    bridge: list[Rule] = field(default_factory=list)
    over_cap: int = 0  # receipts (or sentences) with more support sets than the cap

    def clauses(self) -> list[Clause]:
        return [*self.assertions, *self.bridge, *self.merges, *self.summaries]

    def program(self, *more: Program, tables: dict | None = None, tracked=()) -> Program:
        """Returns the checked program of these clauses plus any rule-file programs
        (``tables``: fact tables of more ground facts, taken over; ``tracked``: relations
        whose tracked facts an engine loads itself)."""
        clauses = self.clauses()
        for extra in more:
            clauses += [*extra.facts, *extra.rules]
        return Program.from_clauses(clauses, tables, tracked)

    def to_text(self) -> str:
        """Returns the program as rule-language text, sections commented."""
        sections = [
            ("assertions: one provenance variable each; claims are the distinct triples (neg_edge: "
             "negated assertions)", self.assertions),
            ("every claim is an edge; edges about merged members hold for the canonical entity",
             self.bridge),
            ("merges: one rule per support set; members point at the canonical entity", self.merges),
            ("summaries: one rule per support set; sentence-level summaries are the conjunction "
             "of their sentences", self.summaries),
        ]
        out = []
        for title, clauses in sections:
            if clauses:
                out.append(f"// {title}")
                out.extend(str(c) for c in clauses)
                out.append("")
        return "\n".join(out)


def compile_inputs(assertions: Iterable[Assertion], receipts: Iterable[Receipt],
                   cap: int | None = 8, negated: bool = False) -> CompiledInputs:
    """Compiles assertions and receipts into clauses (see the module docstring);
    ``negated``: some assertion is negated, whether or not ``assertions`` holds it."""
    from polygraph_logic.datalog.program import parse_program  # parsing the fixed merge rules once is clearest

    compiled = CompiledInputs()
    for a in assertions:
        relation = "neg_edge" if a.negated else "claim"
        negated |= a.negated
        compiled.assertions.append(Fact(_atom(relation, a.subject, a.predicate, a.object), a.id))
        compiled.assertions.append(Fact(_atom("assertion", a.id), a.id))
    s, p, o = Variable("s"), Variable("p"), Variable("o")
    compiled.bridge.append(Rule(_atom("edge", s, p, o), (_atom("claim", s, p, o),)))
    compiled.bridge.extend(parse_program(MERGE_RULES).rules)
    if negated:  # only then: a program without negated assertions is unchanged
        compiled.bridge.extend(parse_program(NEG_MERGE_RULES).rules)
    for receipt in receipts:
        over, rows = receipt_rules(receipt, cap)
        compiled.over_cap += over
        into = compiled.merges if receipt.layer == "merge" else compiled.summaries
        into.extend(rule_of(*row) for row in rows)
    return compiled


#: one rule of a receipt: head relation and values, body relation and the values of its atoms
ReceiptRule = tuple[str, tuple, str, tuple]


def rule_of(head: str, head_values: tuple, body: str, body_values: tuple, shared: bool = True) -> Rule:
    """The Rule of a receipt rule row: ``head(values...) :- body(v1), body(v2), ...``.

    ``shared``: its Constants are the cache's, one per value (a program that lives on shares
    them); False makes new ones, for rules made only to be written and dropped (the cache
    would keep up to 65,536 of them alive, about 20 MB at x40, after the rules are gone)."""
    constant = _constant if shared else Constant
    return Rule(_atom(head, *head_values, constant=constant),
                tuple(_atom(body, v, constant=constant) for v in body_values))


def receipt_rules(receipt: Receipt, cap) -> tuple[int, list[ReceiptRule]]:
    """A receipt's rules as rows (rule_of makes each a Rule), and how many of its labels (the
    receipt's, or its sentences') have more support sets than the cap.

    A merge is one rule per support set, its cited assertions sorted, then one ``member`` rule
    per member other than the canonical entity; a flat summary one rule per support set; a
    sentence-level summary one ``sentence`` rule per support set of each sentence, then the
    summary as the conjunction of its sentences."""
    artifact, rows = receipt.artifact, []
    if receipt.layer == "merge":
        rows += [("merge", (artifact,), "assertion", tuple(sorted(s))) for s in receipt.support]
        canonical = receipt.content["canonical"]
        rows += [("member", (member, canonical), "merge", (artifact,))
                 for member in dict.fromkeys(receipt.content["members"]) if member != canonical]
        return _over(receipt.support, cap), rows
    if not receipt.sentences:
        rows += [("summary", (artifact,), "assertion", tuple(sorted(s))) for s in receipt.support]
        return _over(receipt.support, cap), rows
    over = 0
    for i, sentence in enumerate(receipt.sentences, 1):
        over += _over(sentence.support, cap)
        rows += [("sentence", (receipt.sentence_id(i),), "assertion", tuple(sorted(s))) for s in sentence.support]
    rows.append(("summary", (artifact,), "sentence",
                 tuple(receipt.sentence_id(i) for i in range(1, len(receipt.sentences) + 1))))
    return over, rows


def _over(support, cap) -> int:
    return int(cap is not None and len(support) > cap)
