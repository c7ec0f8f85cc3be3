"""A checked program: arities agree, declarations hold, rules are safe, negation is stratified."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.reading.components import expand_components
from polygraph_logic.datalog.checks.declarations import Declarations
from polygraph_logic.datalog.directives import Declaration, IODirective, Pragma, TypeDeclaration
from polygraph_logic.errors import ProgramError
from polygraph_logic.files import read_utf8
from polygraph_logic.datalog.reading.float_constants import float_constants, integer_widths
from polygraph_logic.datalog.checks.record_types import float_fields
from polygraph_logic.datalog.fact_table import FactTable, FactView, merge_tables, tables_from_facts
from polygraph_logic.datalog.values.functions import CONSTRAINTS
from polygraph_logic.datalog.checks.safety import (
    aggregates_in,
    check_safety,
    ground_value,
    literal_terms,
)
from polygraph_logic.datalog.reading.includes import read_source
from polygraph_logic.datalog.checks.souffle_checks import check_souffle_rules
from polygraph_logic.datalog.inline import inline_relations
from polygraph_logic.datalog.magic import MagicSets, excluded, left_alone, magic_request, magic_sets, settings
from polygraph_logic.datalog.reading.souffle_syntax import Subsumption, check_subsumptions
from polygraph_logic.datalog.reading.souffle_input import needed_relations, read_inputs
from polygraph_logic.datalog.checks.stratify import stratify
from polygraph_logic.datalog.syntax import Atom, Clause, Constant, Constraint, Fact, Negation, Rule, Variable


@dataclass
class Program:
    """Facts, rules and declarations that passed every check, with their strata.

    ``facts`` holds the ground facts (a ``FactView`` over one table per relation, or a
    plain list of ``Fact``); ``strata`` lists, bottom up, the sets of relations that are
    evaluated together (one strongly connected component each). ``domain_size`` is the
    width of its values (32 or 64, datalog/values/domain.py), the one in force when it was checked.
    ``magic``: what the magic-set rewriting made when the program asked for it (datalog/magic/):
    ``rules`` are then the rewritten rules, and the facts of ``guards`` have label one.
    """

    facts: Sequence[Fact] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    arities: dict[str, int] = field(default_factory=dict)
    strata: list[frozenset[str]] = field(default_factory=list)
    tracked: frozenset[str] = frozenset()
    warnings: list[str] = field(default_factory=list)
    declarations: Declarations = field(default_factory=Declarations)
    subsumptions: list[Subsumption] = field(default_factory=list)
    domain_size: int = domain.DEFAULT
    magic: MagicSets | None = None

    @property
    def guards(self) -> frozenset[str]:
        """The magic-set rewriting's guard relations: their facts have label one (none without it)."""
        return self.magic.guards if self.magic is not None else frozenset()

    @classmethod
    def from_clauses(cls, clauses: Iterable, tables: dict[str, FactTable] | None = None,
                     tracked: Iterable[str] = (), overrides: Mapping[str, str] | None = None,
                     magic: bool = True) -> "Program":
        """Checks clauses (facts, rules, directives) and fact tables; returns the program or raises ProgramError.

        ``tracked``: relations whose tracked facts are loaded by an engine, not held here.
        ``overrides``: settings given outside the text (Soufflé's command line), each overriding
        the program's ``.pragma`` of that key (``{"magic-transform": "*"}``). ``magic=False``: no
        magic-set rewriting, whatever the program asks (a graph keeps every relation)."""
        facts, rules, directives, subsumptions, pragmas = [], [], [], [], []
        for clause in expand_components(list(clauses)):
            if isinstance(clause, Fact):
                facts.append(clause)
            elif isinstance(clause, Rule):
                rules.append(clause)
            elif isinstance(clause, Subsumption):
                subsumptions.append(clause)
            elif isinstance(clause, Pragma):
                pragmas.append(clause)
            else:
                directives.append(clause)
        values = settings(pragmas, overrides)
        check_subsumptions(subsumptions)
        deletions = [s.rule() for s in subsumptions]  # checked, typed and stratified as rules
        declarations = Declarations.collect(directives)
        floats = any("float" in declarations.kinds(name) for name in declarations.relations)
        if floats:  # integer constants in float places are floats, as Souffle types them
            facts = [f if all(isinstance(a, Constant) for a in f.atom.args)
                     else float_constants(f, declarations.kinds) for f in facts]
        if declarations.relations:  # computed facts wrap to the domain's width as rules do (see integer_widths)
            facts = [f if all(isinstance(a, Constant) for a in f.atom.args)
                     else replace(f, atom=integer_widths(Rule(f.atom, ()), declarations.kinds).head) for f in facts]
        tables = dict(tables or {})  # the tables are taken over, not copied
        merge_tables(tables, tables_from_facts(_ground(f) for f in facts))
        defined = set(tables) | {r.head.relation for r in rules} | set(declarations.relations)
        rules = [_with_constraints(rule, defined) for rule in rules]
        inline = {name for name, d in declarations.relations.items() if "inline" in d.qualifiers}
        inline -= excluded(values, declarations.relations.values())  # as Soufflé: kept from magic, not inlined
        if inline:
            rules = inline_relations(rules, inline, set(tables))
        rules += _eqrel_rules(declarations, rules)
        deletions = [_with_constraints(rule, defined) for rule in deletions]
        if floats:
            rules = [float_constants(rule, declarations.kinds) for rule in rules]
            deletions = [float_constants(rule, declarations.kinds) for rule in deletions]
        if declarations.relations:  # Souffle's integers of its width where its types say number or unsigned
            rules = [integer_widths(rule, declarations.kinds) for rule in rules]
            deletions = [integer_widths(rule, declarations.kinds) for rule in deletions]
        program = cls(facts=FactView(tables), rules=rules, declarations=declarations,
                      subsumptions=[Subsumption.from_rule(rule) for rule in deletions], domain_size=domain.size())
        program.arities = _check_arities(tables, rules + deletions, declarations)
        declarations.check(tables, rules + deletions, facts)
        check_souffle_rules(rules, declarations)
        floaty = declarations.structures.floaty() if declarations.structures else set()
        if floaty:  # integer constants in float fields of records and ADTs are floats
            rules = program.rules = [float_fields(r, declarations.structures, declarations.kinds, floaty) for r in rules]
        for rule in rules + deletions:
            check_safety(rule)
        program.warnings = _undefined_relations(tables, rules, declarations)
        request = magic_request(values, declarations.relations.values()) if magic else None
        if request is not None:
            alone = left_alone(rules, deletions, request, declarations, tables)
            queries = {d.relation for d in declarations.io if d.kind in ("output", "printsize")}
            program.magic = magic_sets(rules, queries, alone, declarations, program.arities)
            if program.magic is not None:
                merge_tables(tables, tables_from_facts(program.magic.facts))  # the guards' seeds: label one
                program.arities = _check_arities(tables, rules + program.magic.rules + deletions, declarations)
                rules = program.rules = program.magic.rules
                for rule in rules:  # a rewriting that binds what the engine cannot is a bug: said here
                    check_safety(rule)
        program.strata = stratify(rules + deletions, program.arities)
        program.tracked = _tracked_relations(tables, rules, tracked, program.guards)
        return program

    def fact_tables(self) -> dict[str, FactTable]:
        """Returns the ground facts as one table per relation."""
        if isinstance(self.facts, FactView):
            return self.facts.tables
        return tables_from_facts(self.facts)

    def directives(self) -> list:
        """Returns the program's declarations and I/O directives."""
        found = self.declarations
        return [*found.types.values(), *found.relations.values(), *found.io]

    def combine(self, other: "Program") -> "Program":
        """Returns the program holding the clauses of both (checked again; the rules as written,
        not rewritten for magic sets)."""
        tables: dict[str, FactTable] = {}
        for program in (self, other):  # a guard's seeds are the rewriting's, not the program's facts
            merge_tables(tables, {n: t for n, t in program.fact_tables().items() if n not in program.guards},
                         adopt=False)
        generated = set(_eqrel_rules(self.declarations, [])) | set(_eqrel_rules(other.declarations, []))
        rules = [r for r in [*self.written_rules(), *other.written_rules()] if r not in generated]
        with domain.using(self.domain_size):
            return Program.from_clauses([*rules, *self.subsumptions, *other.subsumptions, *self.directives(),
                                         *other.directives()], tables)

    def written_rules(self) -> list[Rule]:
        """Returns the rules before the magic-set rewriting (``rules`` when it did not apply)."""
        return list(self.magic.original) if self.magic is not None else self.rules

    def assertion_ids(self) -> list[str]:
        """Returns the provenance variables of tracked facts, in order of appearance."""
        seen: dict[str, None] = {}
        for table in self.fact_tables().values():
            if table.variables is not None:
                seen.update(dict.fromkeys(v for v in table.variables if v))
        return list(seen)

    def check_provenance_negation(self) -> None:
        """Raises ProgramError if a negation or an aggregate ranges over a relation fed by tracked facts.

        A provenance polynomial cannot express the non-monotone effect that deleting
        a source has through negation or aggregation; over background-only relations
        both are fine (their facts have provenance 1).
        """
        for rule in self.rules:
            for literal in rule.body:
                if isinstance(literal, Negation) and literal.atom.relation in self.tracked:
                    raise ProgramError(
                        "negation_over_tracked",
                        f"'{literal}' negates {literal.atom.relation}, which depends on tracked "
                        "(provenance-annotated) facts; provenance semirings are monotone and cannot "
                        "express it. Evaluate with --semiring boolean, or negate background-only relations",
                        literal.position,
                    )
                for term in literal_terms(literal):
                    for aggregate in aggregates_in(term):
                        for atom in _body_atoms(aggregate.body):
                            if atom.relation in self.tracked:
                                raise ProgramError(
                                    "aggregate_over_tracked",
                                    f"'{aggregate.op}' aggregates over {atom.relation}, which depends on "
                                    "tracked (provenance-annotated) facts; a count or sum has no "
                                    "why-provenance. Evaluate with --semiring boolean, or aggregate "
                                    "background-only relations",
                                    aggregate.position,
                                )

    def __str__(self) -> str:
        return "\n".join(str(c) for c in [*self.directives(), *self.facts, *self.rules, *self.subsumptions])


def parse_program(text: str, file: str = "<string>", include_dirs: Sequence[str | Path] = (),
                  macros: Sequence[str] = (), domain_size: int = domain.DEFAULT,
                  overrides: Mapping[str, str] | None = None) -> Program:
    """Parses and checks program text (through the C preprocessor when it has ``#`` lines or
    ``macros``, Soufflé's ``-M`` values, are given; ``include_dirs`` are its ``-I``;
    ``domain_size``: the width of its values, 32 or 64, as Soufflé's build chooses;
    ``overrides``: settings overriding its ``.pragma`` ones, as ``Program.from_clauses``)."""
    with domain.using(domain_size):
        source = read_source(text, file, include_dirs, macros)
        return Program.from_clauses(source.clauses, source.tables, overrides=overrides)


def load_program(*paths: str | Path, fact_dir: str | Path | None = None,
                 include_dirs: Sequence[str | Path] = (), macros: Sequence[str] = (),
                 domain_size: int = domain.DEFAULT, overrides: Mapping[str, str] | None = None,
                 magic: bool = True) -> Program:
    """Reads, parses and checks one or more rule files as a single program.

    With ``fact_dir``, the relations named by ``.input`` directives are read from it
    (``REL.facts``, tab-separated, as Souffle's ``-F``). A file with ``#`` lines, or any
    file when ``macros`` are given, goes through the C preprocessor first, as Soufflé's
    do (``include_dirs``: its ``-I``; ``macros``: its ``-M``, such as ``"N=3 DEBUG"``);
    ``.include "file"`` reads another file in place. ``domain_size`` is the width of its
    values, 32 (Soufflé's default build) or 64 (its SOUFFLE_DOMAIN_64BIT build): integer
    wrapping and ranges, float precision and text, ``RAM_DOMAIN_SIZE`` (datalog/values/domain.py).
    ``overrides`` and ``magic``: Soufflé's settings given outside the text, and whether the
    magic-set rewriting may apply (``Program.from_clauses``).
    """
    with domain.using(domain_size):
        return _load(paths, fact_dir, include_dirs, macros, overrides, magic)


def _load(paths, fact_dir, include_dirs, macros, overrides=None, magic=True) -> Program:
    clauses: list[Clause] = []
    tables: dict[str, FactTable] = {}
    for path in paths:
        path = Path(path)
        source = read_source(read_utf8(path), str(path), include_dirs, macros)
        clauses.extend(source.clauses)
        merge_tables(tables, source.tables)
    clauses = expand_components(clauses)
    if fact_dir is not None:
        declarations = Declarations.collect(c for c in clauses if isinstance(c, (Declaration, TypeDeclaration, IODirective)))
        merge_tables(tables, read_inputs(declarations, fact_dir, needed_relations(clauses, declarations)))
    return Program.from_clauses(clauses, tables, overrides=overrides, magic=magic)


def _ground(fact: Fact) -> Fact:
    if all(isinstance(arg, Constant) for arg in fact.atom.args):
        return fact
    args = tuple(Constant(ground_value(arg)) for arg in fact.atom.args)
    return Fact(Atom(fact.atom.relation, args, fact.atom.position), fact.variable, fact.position)


def _with_constraints(rule: Rule, defined: set[str]) -> Rule:
    """Reads ``contains(a, b)`` and ``match(a, b)``, negated or not, as Souffle's string tests,
    unless the program defines a relation of that name."""
    def test(literal):
        atom = literal.atom if isinstance(literal, Negation) else literal
        if isinstance(atom, Atom) and atom.relation in CONSTRAINTS and atom.relation not in defined \
                and atom.arity == CONSTRAINTS[atom.relation]:
            return Constraint(atom.relation, atom.args, atom.position or literal.position,
                              negated=isinstance(literal, Negation))
        return literal

    body = tuple(test(literal) for literal in rule.body)
    return rule if body == rule.body else Rule(rule.head, body, rule.position)


def _eqrel_rules(declarations: Declarations, rules: list[Rule]) -> list[Rule]:
    """Rules that make each ``eqrel`` relation an equivalence (symmetric, transitive, reflexive)."""
    out = []
    for d in declarations.relations.values():
        if "eqrel" not in d.qualifiers:
            continue
        x, y, z = (Variable(n, d.position) for n in "xyz")

        def atom(a, b):
            return Atom(d.relation, (a, b), d.position)

        out += [Rule(atom(x, y), (atom(y, x),), d.position),
                Rule(atom(x, z), (atom(x, y), atom(y, z)), d.position),
                Rule(atom(x, x), (atom(x, y),), d.position)]
    return [r for r in out if r not in rules]


def _body_atoms(body) -> Iterator[Atom]:
    for literal in body:
        if isinstance(literal, Atom):
            yield literal
        elif isinstance(literal, Negation):
            yield literal.atom
        for term in literal_terms(literal):
            for aggregate in aggregates_in(term):
                yield from _body_atoms(aggregate.body)


#: every atom a rule body reads: positive, negated and inside aggregates
body_atoms = _body_atoms


def _atoms(rule: Rule) -> Iterator[Atom]:
    yield rule.head
    yield from _body_atoms(rule.body)


def _check_arities(tables: dict[str, FactTable], rules: list[Rule], declarations: Declarations) -> dict[str, int]:
    first: dict[str, tuple[int, object]] = {
        name: (d.arity, f"its .decl at {d.position}") for name, d in declarations.relations.items()
    }
    for name, table in tables.items():
        seen = first.setdefault(name, (table.arity, table.position(0)))
        if seen[0] != table.arity:
            raise ProgramError("arity_mismatch", f"{name} is used with {table.arity} argument(s) here but "
                               f"with {seen[0]} at {seen[1]}", table.position(0))
    for atom in (a for r in rules for a in _atoms(r)):
        seen = first.setdefault(atom.relation, (atom.arity, atom.position))
        if seen[0] != atom.arity:
            raise ProgramError(
                "arity_mismatch",
                f"{atom.relation} is used with {atom.arity} argument(s) here but with {seen[0]} at {seen[1]}",
                atom.position,
            )
    return {name: arity for name, (arity, _) in first.items()}


def _tracked_relations(tables: dict[str, FactTable], rules: list[Rule], given: Iterable[str] = (),
                       guards: frozenset[str] = frozenset()) -> frozenset[str]:
    """The relations fed by tracked facts (a guard never is: its facts have label one)."""
    tracked = {name for name, t in tables.items() if t.variables is not None and any(t.variables)} | set(given)
    changed = True
    while changed:
        changed = False
        for rule in rules:
            if rule.head.relation in tracked or rule.head.relation in guards:
                continue
            if any(a.relation in tracked for a in _body_atoms(rule.body)):
                tracked.add(rule.head.relation)
                changed = True
    return frozenset(tracked)


def _undefined_relations(tables, rules: list[Rule], declarations: Declarations) -> list[str]:
    inputs = {d.relation for d in declarations.io if d.kind == "input"}
    defined = set(tables) | {r.head.relation for r in rules} | inputs
    warnings = []
    reported = set()
    for rule in rules:
        for atom in _atoms(rule):
            if atom.relation not in defined and atom.relation not in reported:
                reported.add(atom.relation)
                warnings.append(
                    f"{atom.position}: warning: {atom.relation} has no facts and no rules; it is empty"
                )
    return warnings
