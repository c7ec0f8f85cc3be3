"""Growing a graph by versions: ``add`` new assertions and receipts, evaluated incrementally.

    report = add("g.graph", assertions="new.jsonl", receipts="new-receipts.jsonl")
    report.version, report.mode, report.changed      # 2, "incremental", {"edge": 130, ...}

New records are checked against the graph (the same errors as ``build``, at the file's
line), then the closure is updated from the new facts only (incremental.py): the facts
the program's rules can join are loaded from the store, the new facts seed a
semi-naive evaluation, and only the facts whose labels changed are written, as a new
version (version_write.py).  The result is the graph a full build from the union of the
inputs would be, label for label; where the cap makes the labels depend on the order
derivations arrive (incremental.py says when), or where a negation or an aggregate
ranges over tracked relations, ``add`` re-evaluates the union in full, in the rebuild's
order, from the recorded inputs, and says so (``mode = "full"``, ``reason``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from polygraph_logic.graph.circuit_build import version_circuit
from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.datalog.checks.stratify import stratify
from polygraph_logic.datalog.syntax import Atom, Negation, Rule
from polygraph_logic.graph.build import input_files
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.incremental import WatchedWhy, evaluate_seeded
from polygraph_logic.graph.store.lazy_store import LazyStore
from polygraph_logic.graph.json_lines import read_records
from polygraph_logic.graph.ledger_write import AddReport, write_full, write_incremental
from polygraph_logic.graph.records import (LoadError, Receipt, _sentence_id_clashes, _stated_ids, load_assertions,
                                          load_receipts, receipt_records)
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.stored_program import StoredProgram
from polygraph_logic.graph.store.rows import fact_key
from polygraph_logic.graph.store.backend import write_version
from polygraph_logic.graph.store.version_write import VersionWriter
from polygraph_logic.graph.store.versions import command_line, file_entry, release, sha256
from polygraph_logic.graph.authorization import as_policy, unauthorized_records
from polygraph_logic.datalog.program import _body_atoms, aggregates_in, literal_terms

#: the relations new records become (compile.py)
SEEDS = ("claim", "neg_edge", "assertion", "merge", "member", "summary", "sentence")


#: how many times an add computed against a version another writer superseded starts again
ATTEMPTS = 3


def add(graph_path: str | Path, assertions: str | Path | None = None, receipts: str | Path | None = None,
        progress: Callable[[str], None] | None = None, full: bool = False, command: str | None = None,
        authorization: str | Path | None = None) -> AddReport:
    """Appends a version holding new assertions and receipts (files) to a graph; returns what it did.
    ``authorization``: a policy file (graph/authorization.py): every new assertion it does not
    authorize is refused at its file and line (``unauthorized``), with the files' other problems.

    The version is computed against the latest one and written only if that is still the latest
    (another writer's version in between: computed again, up to ATTEMPTS times), so two adds at
    once give the graph the same two adds give one after the other."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _add(graph_path, assertions, receipts, progress, full, command, authorization)
        except PolygraphError as error:
            # a version written while this add read its own (a snapshot): refused at the write (check_parent)
            if error.code != "concurrent_write" or attempt == ATTEMPTS:
                raise
            (progress or (lambda message: None))("another command wrote a version meanwhile: computing again")
    raise AssertionError("unreachable")


def _add(graph_path, assertions, receipts, progress, full, command, authorization=None) -> AddReport:
    say = progress or (lambda message: None)
    with Graph(graph_path, snapshot=True) as graph:  # one version read, whatever another writer commits
        if graph.at is not None:
            raise PolygraphError("bad_argument", "add appends to the latest version")
        expected = graph.version_read()
        policy = as_policy(authorization) if authorization is not None else None
        new_assertions, new_receipts = _load(graph, assertions, receipts, policy)
        cap = graph.semiring.cap
        compiled = compile_inputs(new_assertions, new_receipts, cap)
        new_rules, reason, state = evaluate_new(graph, compiled, cap, say, full)
        record = {"action": "add", "inputs": _inputs(assertions, receipts, new_assertions, new_receipts),
                  "cap": "none" if cap is None else str(cap), "release": release()}
        if policy is not None and isinstance(authorization, (str, Path)):
            record["inputs"].append(file_entry(authorization, "authorization", len(policy.rules)))
    written: list[AddReport] = []

    def write(writer: VersionWriter) -> None:
        numbers = {a.id: writer.assertion(a) for a in new_assertions}
        # an incremental add writes the labels it changed: only the assertions they name are looked up
        among = None if reason is not None else {name for rows in state.changed.values() for label in rows.values()
                                                 for names in state.semiring.to_json(label) for name in names}
        numbers.update(writer.assertion_numbers(None if among is None else among - numbers.keys()))
        writer.rules(new_rules)
        if reason is None:
            report = write_incremental(writer, state, numbers, new_receipts)
        else:
            say(f"re-evaluating in full: {reason}")
            report = write_full(writer, graph_path, new_assertions, new_receipts, numbers, cap, reason,
                                (recorded_receipts(graph_path), recorded_rules(graph_path)))
        report.reason = reason
        report.assertions, report.receipts = len(new_assertions), len(new_receipts)
        writer.link_summaries()
        record.update(mode=report.mode, reason=reason)
        written.append(report)

    # the derivations of the facts capped at this version are committed with it: of those an
    # incremental add reached (any other capped fact has every derivation stored already), else of all
    reached = state.reached() if reason is None else None
    version = write_version(graph_path, "add", command or command_line(), record, write, expected,
                            lambda store: version_circuit(store, reached))
    written[0].version = version
    return written[0]


# --- checking the new records -----------------------------------------------------------
def _load(graph: Graph, assertions, receipts, policy=None):
    """Returns the new assertions and receipts, checked alone and against the graph; raises one
    LoadError listing every problem of both files (the assertions file's first, each in line order),
    as ``build`` does.  Receipts are checked against every id the assertions file states, on good
    lines or bad ones, so that a bad assertion line is reported once, not again by each receipt
    citing it."""
    problems: list[PolygraphError] = []
    new_assertions, stated = [], set()
    if assertions is not None:
        found: list[PolygraphError] = []
        try:
            new_assertions = load_assertions(assertions, known_ids=graph.assertions)
        except LoadError as error:
            found.extend(error.problems)
        stated = _stated_ids(Path(assertions))
        lines = [(n, r["id"]) for n, r in read_records(Path(assertions), [])
                 if isinstance(r, dict) and isinstance(r.get("id"), str)]
        present = set(graph.numbers("id", {name for _, name in lines}).values())
        found += [PolygraphError("duplicate_assertion", f"assertion id {name!r} is already in the graph {graph.path}",
                                 Position(str(assertions), n, 1)) for n, name in lines if name in present]
        if policy is not None:
            found += unauthorized_records(assertions, policy)
        problems += sorted(found, key=_line)
    new_receipts: list[Receipt] = []
    if receipts is not None:
        found = []
        new_receipts = list(receipt_records(receipts, found, _KnownIds(graph, stated, receipts), {}))
        found += _sentence_id_clashes(new_receipts)
        named = [(n, r["artifact"]) for n, r in read_records(Path(receipts), [])  # bad lines' ids too
                 if isinstance(r, dict) and isinstance(r.get("artifact"), str)]
        named += [(r.position.line, r.sentence_id(i)) for r in new_receipts for i in range(1, len(r.sentences) + 1)]
        present = graph.artifacts_present(name for _, name in named)  # in one read
        found += [PolygraphError("duplicate_artifact", f"artifact {name!r} is already in the graph {graph.path}",
                                 Position(str(receipts), n, 1)) for n, name in named if name in present]
        problems += sorted(found, key=_line)
    if problems:
        raise LoadError(problems)
    return new_assertions, new_receipts


def _line(problem: PolygraphError) -> int:
    return problem.position.line if problem.position else 0


class _KnownIds(set):
    """The new assertion ids, and the graph's: those a receipts file cites read at once (a folder
    answers one look-up in milliseconds), any other looked up one at a time (indexed)."""

    def __init__(self, graph: Graph, new: set[str], receipts: str | Path | None = None):
        super().__init__(new)
        self.graph = graph
        self.asked: set[str] = set()
        if receipts is not None:
            cited = {name for _, record in read_records(Path(receipts), []) if isinstance(record, dict)
                     for name in _cited(record)} - new
            self.asked = cited
            self.update(graph.numbers("id", cited).values())

    def __contains__(self, name) -> bool:
        return super().__contains__(name) or (name not in self.asked and name in self.graph.assertions)


def _cited(record: dict) -> Iterator[str]:
    """The texts a receipt record names as assertions (its support sets' and its sentences')."""
    sentences = record.get("sentences")
    lists = [s.get("support") for s in sentences if isinstance(s, dict)] if isinstance(sentences, list) else []
    for sets in [record.get("support"), *lists]:
        for group in sets if isinstance(sets, list) else ():
            if isinstance(group, list):
                yield from (name for name in group if isinstance(name, str))


def _inputs(assertions, receipts, new_assertions, new_receipts) -> list[dict]:
    paths = [(role, f) for role, f in (("assertions", assertions), ("receipts", receipts)) if f is not None]
    return input_files(paths, new_assertions, new_receipts)


# --- when the order of derivations matters ----------------------------------------------
def _order_dependent(rules: list[Rule]) -> str | None:
    """Returns why the program needs a full re-evaluation (negation or aggregates over tracked relations)."""
    tracked = set(SEEDS)
    grown = True
    while grown:
        grown = False
        for rule in rules:
            if rule.head.relation not in tracked and any(
                    isinstance(lit, Atom) and lit.relation in tracked for lit in rule.body):
                tracked.add(rule.head.relation)
                grown = True
    for rule in rules:
        for literal in rule.body:
            if isinstance(literal, Negation) and literal.atom.relation in tracked:
                return f"'{rule}' negates {literal.atom.relation}, which depends on assertions"
            for term in literal_terms(literal):
                for aggregate in aggregates_in(term):
                    if any(atom.relation in tracked for atom in _body_atoms(aggregate.body)):
                        return f"'{rule}' aggregates over relations that depend on assertions"
    return None


# --- the incremental path ---------------------------------------------------------------
@dataclass
class _State:
    semiring: WatchedWhy
    store: LazyStore
    changed: dict
    reason: str | None
    derived: set = field(default_factory=set)  # the facts a rule instance derived (Watch.derived)

    def reached(self) -> set[tuple[str, tuple]]:
        """The facts that may have a derivation the graph did not have: those derived, and the new facts."""
        return self.derived | {(relation, tup) for relation, rows in self.changed.items() for tup in rows}


def evaluate_new(graph: Graph, compiled, cap, say=lambda message: None, full: bool = False):
    """Returns ``(new rules, reason, state)`` for new records (``compiled``) against a graph: the
    rules it does not hold yet; why they need a full evaluation (None when they do not); and the
    incremental evaluation's state (None when a reason was found before it)."""
    program = StoredProgram(graph)
    new_rules = program.unstored([*compiled.bridge, *compiled.merges, *compiled.summaries])
    if full:
        return new_rules, "asked for a full re-evaluation", None
    reason = _order_dependent([*program.general, *program.proxies, *new_rules])
    if reason is not None:
        return new_rules, reason, None
    say("evaluating from the new facts")
    state = _incremental(graph, program, new_rules, compiled, cap)
    return new_rules, state.reason, state


def _incremental(graph: Graph, program: StoredProgram, new_rules: list[Rule], compiled, cap) -> _State:
    rules = [*program.general, *new_rules]  # and the stored ground rules, read as the new facts reach them
    arities = _arities([*rules, *program.proxies], compiled)
    semiring = WatchedWhy(cap)
    store = LazyStore(arities, graph, semiring)
    changed: dict[str, dict] = defaultdict(dict)
    # a triple stated again: its label is the sum in input order, old assertions first, as a build
    # sums it (so a truncation by the cap here is the build's own)
    semiring.stop = False
    seeds: dict[str, dict] = defaultdict(dict)
    for fact in compiled.assertions:
        seeds[fact.atom.relation][tuple(arg.value for arg in fact.atom.args)] = None
    store.prefetch(seeds, least=1)  # whether each is stored already, in one query a relation
    for fact in compiled.assertions:
        relation, tup = fact.atom.relation, tuple(arg.value for arg in fact.atom.args)
        label = semiring.variable(fact.variable)
        previous = store.relations[relation].get(tup)
        if previous is None:
            store.add(relation, tup, label)
        else:
            label = store.relations[relation][tup] = semiring.plus(previous, label)
        changed[relation][tup] = label
    semiring.stop, semiring.truncated = True, False
    strata = stratify([*rules, *program.proxies], arities)
    changed, watch = evaluate_seeded(rules, strata, store, semiring, changed, new_rules, store.old, program)
    return _State(semiring, store, changed, watch.reason(), watch.derived)


def _arities(rules: list[Rule], compiled) -> dict[str, int]:
    arities = {}
    for rule in rules:
        for atom in (rule.head, *(lit for lit in rule.body if isinstance(lit, Atom)),
                     *(lit.atom for lit in rule.body if isinstance(lit, Negation))):
            arities.setdefault(atom.relation, len(atom.args))
    for fact in compiled.assertions:
        arities.setdefault(fact.atom.relation, len(fact.atom.args))
    return arities


def recorded_receipts(graph_path) -> list:
    """Returns the receipts of every recorded input file, in version order (hashes checked)."""
    receipts = []
    for entry in recorded(graph_path, "receipts"):
        with Graph(graph_path) as graph:
            ids = _KnownIds(graph, set(), entry["file"])
            receipts.extend(load_receipts(entry["file"], ids))
    return receipts


def recorded_rules(graph_path) -> list[str]:
    """Returns the recorded rule files of version 1 (hashes checked)."""
    with Graph(graph_path) as graph:
        rows = graph.version_rows()
    files = rows[0]["record"].get("rules", [])
    for entry in files:
        _check(entry, 1)
    return [entry["file"] for entry in files]


def recorded(graph_path, role: str) -> list[dict]:
    """Returns the recorded input files of a role across versions, each checked against its hash."""
    with Graph(graph_path) as graph:
        rows = graph.version_rows()
    out = []
    for row in rows:
        for entry in row["record"].get("inputs", []):
            if entry["role"] == role:
                _check(entry, row["version"])
                out.append(entry)
    return out


def _check(entry: dict, version: int) -> None:
    found = sha256(entry["file"])
    if found is None:
        raise PolygraphError("input_changed", f"{entry['file']} (recorded by version {version}) is missing")
    if found != entry["sha256"]:
        raise PolygraphError("input_changed", f"{entry['file']} changed since version {version} recorded it "
                                              f"(sha256 {found[:12]}..., recorded {entry['sha256'][:12]}...)")


__all__ = ["AddReport", "add", "fact_key"]
