"""Building a graph: load inputs, compile, evaluate with why-provenance, collect artifacts."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from polygraph_logic.allocation import collector_paused
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.circuit_eval import CircuitModel
from polygraph_logic.datalog.evaluate import Model, StratumStats, evaluate, tuple_key
from polygraph_logic.datalog.lazy.part import LazyPart, split
from polygraph_logic.datalog.program import Program, load_program
from polygraph_logic.datalog.checks.record_types import record_use
from polygraph_logic.datalog.values.record_values import STRUCTURED
from polygraph_logic.datalog.syntax import format_value
from polygraph_logic.datalog.checks.stratify import stratify
from polygraph_logic.graph.artifact_rule import is_artifact
from polygraph_logic.graph.artifact_ids import IdsGiven
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.circuit_build import store_circuit, store_gates
from polygraph_logic.graph.compile import CompiledInputs, compile_inputs
from polygraph_logic.graph.contradiction_layer import contradiction_artifacts
from polygraph_logic.graph.records import Receipt, given_assertions, given_receipts, load_inputs
from polygraph_logic.graph.store.rows import Artifact, StoredFact
from polygraph_logic.graph.store.writer import write_graph
from polygraph_logic.graph.store.versions import file_entry


#: how a build labels facts: ``capped``, the smallest ``cap`` support sets of each; ``witness``, one
#: support set each (one of the round that made it) and the circuit of every fact with more
#: (provenance/witness.py)
LABELS = ("capped", "witness")


def build_meta(cap: int | None, rule_files: list[str], over_cap: int, origins=None,
               lazy: LazyPart | None = None, labels: str = "capped") -> dict[str, str]:
    """The meta rows that record how a graph was built (the graph file's, a tables folder's);
    ``lazy``: the patterns and rules left to on-demand derivation (datalog/lazy/part.py);
    ``labels``: one of LABELS (recorded when not the default)."""
    meta = {
        "cap": "none" if cap is None else str(cap),
        "rule_files": json.dumps(rule_files),
        "receipts_over_cap": str(over_cap),
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if origins:
        meta["origins"] = origins.to_json()
    if lazy is not None:
        meta["lazy"] = lazy.to_json()
    if labels != "capped":
        meta["labels"] = labels
    return meta


@dataclass
class Build:
    """A built graph in memory (the evaluated model) and what building it cost.

    Artifacts are collected from the model as they are written (``write``), so a
    build never holds them all; ``artifacts`` collects them into a list when asked.
    """

    assertions: list[Assertion]
    receipts: list[Receipt]
    cap: int | None
    rule_files: list[str]
    over_cap: int
    model: Model | None = field(default=None, repr=False)
    seconds: dict[str, float] = field(default_factory=dict)
    tally: "Tally | None" = field(default=None, repr=False)
    origins: object = None  # origins.Origins: the derived_from mapping stored with the graph
    inputs: list = field(default_factory=list)  # the input files (versions.file_entry), recorded as version 1
    circuit: bool = True  # write stores the derivations of the capped facts (circuit_build.py)
    lazy: LazyPart | None = None  # what the build left to on-demand derivation (datalog/lazy/part.py)
    labels: str = "capped"  # one of LABELS: witness labels come with the circuit of the evaluation
    #: each written fact's circuit node, in the facts' order (a circuit's model, once written)
    _nodes: list | None = field(default=None, init=False, repr=False)

    @cached_property
    def artifacts(self) -> list[Artifact]:
        tally = Tally()
        artifacts = list(iter_artifacts(self.model, self.receipts, tally))
        self.tally = self.tally or tally
        return artifacts

    @property
    def background_edges(self) -> int:
        return self._tally().background

    def _tally(self) -> "Tally":
        if self.tally is None:
            self.artifacts  # noqa: B018  (collects, and tallies as it goes)
        return self.tally

    def counts(self) -> dict[str, int]:
        return dict(self._tally().layers)

    def truncated(self) -> int:
        return self._tally().inexact

    def write(self, path: str | Path, progress: Callable[[str, int], None] | None = None) -> None:
        """Persists the graph atomically (see store.write_graph), collecting artifacts as it goes."""
        meta = build_meta(self.cap, self.rule_files, self.over_cap, self.origins, self.lazy, self.labels)
        started = time.perf_counter()
        facts, rules = (), ()
        self._nodes = [] if isinstance(self.model, CircuitModel) else None
        if self.model is not None:
            facts = self._stored_facts(self.model, self._nodes)
            rules = self.model.program.rules
        tally = Tally()
        if "artifacts" in self.__dict__:
            artifacts = self.artifacts
        else:
            artifacts = iter_artifacts(self.model, self.receipts, tally)
            self.tally = tally
        meta["background_edges"] = lambda: str(self._tally().background)
        write_graph(path, self.assertions, artifacts, meta, facts, rules, progress,
                    version={"action": "build", "inputs": self.inputs}, finish=self._circuit)
        self.seconds["write"] = time.perf_counter() - started

    @staticmethod
    def _stored_facts(model: Model, nodes: list | None) -> Iterator[StoredFact]:
        """Every fact of ``model``, numbered by relation name, then arguments in tuple_key's order:
        as DuckDB and Spark number them, so that every engine writes the same rows.  ``nodes``
        (a circuit's model): gets each fact's node, in that order (``()`` for provenance one)."""
        support = supports(model)
        if nodes is not None:  # a circuit's model: its labels by node, read once
            labels, one = model.labels(), model.semiring.one()
        for name in sorted(model.relations()):
            if nodes is None:
                relation = model.facts(name)
                for tup in _ordered(relation):
                    label = relation[tup]
                    yield StoredFact(name, tup, support(label), label.exact)
                continue
            raw = model.store.relations[name]
            for tup in _ordered(raw):
                node = raw[tup]
                nodes.append(node)
                label = labels[node] if type(node) is int else one
                yield StoredFact(name, tup, support(label), label.exact)

    def _circuit(self, path: Path) -> None:
        """Stores the circuit of the inexact labels in the written file (timed: ``seconds["circuit"]``),
        unless ``circuit`` is False: the evaluation's own gates when it recorded them, else the
        derivations found again from the stored rules (circuit_build.py)."""
        if not self.circuit:
            return
        started = time.perf_counter()
        if self._nodes is not None:
            store_gates(path, self.model.circuit, self._nodes, self.model.labels())
        else:
            store_circuit(path)
        self.seconds["circuit"] = time.perf_counter() - started


@dataclass
class Tally:
    """What collecting artifacts counted: artifacts per layer, inexact labels, background-only edges."""

    layers: Counter = field(default_factory=Counter)
    inexact: int = 0
    background: int = 0

    def add(self, artifact: Artifact) -> Artifact:
        self.layers[artifact.layer] += 1
        self.inexact += not artifact.exact
        return artifact


def build_python(
    assertions: str | Path | list[Assertion],
    receipts: str | Path | list[Receipt] | None = None,
    rules: Iterable[str | Path] = (),
    cap: int | None = 8,
    progress: Callable[[StratumStats], None] | None = None,
    labels: str = "capped",
) -> Build:
    """The Build of the inputs (paths or records) and rule files evaluated by the Python engine
    under why-provenance capped at ``cap``: the public ``build_graph``'s (engine_build.py)
    ``engine="python"``, for the modules below it (the ledger, replay).  ``labels="witness"``:
    the Boolean closure with one gate per derivation (circuit_eval.py), each fact labelled by
    one support set (provenance/witness.py) and the gates written as the graph's circuit."""
    p = prepare_build(assertions, receipts, rules, cap)
    started = time.perf_counter()
    witness = labels == "witness"
    with collector_paused():  # the circuit and its labels all live on (allocation.py)
        model = evaluate(p.program, "why", cap=cap, progress=progress, circuit=witness, gate_rules=witness)
        if witness:
            model.witness = True
            model.labels()
    p.seconds["evaluate"] = time.perf_counter() - started
    build = p.build(model)
    build.labels = labels
    return build


@dataclass
class PreparedBuild:
    """A build's inputs loaded and compiled, before evaluation (any engine evaluates ``program``)."""

    assertions: list[Assertion]
    receipts: list[Receipt]
    cap: int | None
    rule_files: list[str]
    compiled: CompiledInputs
    program: Program
    inputs: list[dict]
    seconds: dict[str, float]
    lazy: LazyPart | None = None  # the patterns and rules ``program`` leaves out (datalog/lazy/part.py)

    def build(self, model: Model) -> Build:
        """The Build of ``model``, the evaluated ``program``."""
        return Build(self.assertions, self.receipts, self.cap, self.rule_files, self.compiled.over_cap,
                     model, self.seconds, inputs=self.inputs, lazy=self.lazy)


def prepare_build(assertions, receipts=None, rules: Iterable[str | Path] = (), cap: int | None = 8) -> PreparedBuild:
    """The loading and compiling steps of ``build_graph`` (seconds["load"], seconds["compile"]),
    with the cyclic collector paused: they make objects that all live on (allocation.py)."""
    with collector_paused():
        return _prepare_build(assertions, receipts, rules, cap)


def _refuse_unkept(program: Program) -> None:
    """Refuses what a graph cannot keep: it stores its rules to add assertions later, and a
    subsumption or a choice-domain would not be applied to what is added."""
    where = [(s.position, f"a subsumption of {s.relation}") for s in program.subsumptions]
    where += [(d.position, f"{d.relation}'s choice-domain") for d in program.declarations.relations.values()
              if d.choice]
    if where:
        position, what = where[0]
        raise PolygraphError("unsupported_in_graph", f"{what}: a graph keeps its rules to add assertions later, "
                             "and would not apply it to them; evaluate the program with polygraph eval",
                             position)


def _prepare_build(assertions, receipts, rules: Iterable[str | Path], cap: int | None) -> PreparedBuild:
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    paths = [(role, f) for role, f in (("assertions", assertions), ("receipts", receipts))
             if isinstance(f, (str, Path))]
    if isinstance(assertions, (str, Path)) and isinstance(receipts, (str, Path)):
        assertions, receipts = load_inputs(assertions, receipts)  # both files' problems at once
    assertions = given_assertions(assertions)
    receipts = given_receipts(receipts, {a.id for a in assertions})
    rule_files = [str(r) for r in rules]
    inputs = input_files(paths, assertions, receipts)
    seconds["load"] = time.perf_counter() - started

    started = time.perf_counter()
    compiled = compile_inputs(assertions, receipts, cap)
    extra = rule_programs(rule_files)
    program, lazy = without_lazy(compiled.program(*extra), extra)
    _refuse_unkept(program)
    seconds["compile"] = time.perf_counter() - started

    return PreparedBuild(assertions, receipts, cap, rule_files, compiled, program, inputs, seconds, lazy)


def rule_programs(rule_files: list[str]) -> list[Program]:
    """The rule files as one program (none without files); tracked facts in them are an error.

    The program of the same files, unchanged (path, size and modification time), is parsed
    and checked once per process (rules/ro.dl: 0.1-0.2 s): a notebook, the ledger and the
    tests build again and again from the same rules.  Builds only read the program."""
    extra = [_rule_program(_file_keys(rule_files))] if rule_files else []
    if extra:
        _refuse_records(extra[0])
    for fact in extra[0].facts if extra else ():
        if fact.variable:
            raise PolygraphError(
                "tracked_fact_in_rules", f"rule files may hold background facts only; '{fact}' is tracked: "
                "state it as an assertion (assertions.jsonl) so that it has a source", fact.position)
    return extra


def _refuse_records(program: Program) -> None:
    """A graph stores symbols and numbers: rule files that build records or ADT values are refused by name."""
    found = record_use(program.rules, program.declarations)
    what, position = (f"'{found[1]}': {found[0]}", found[1].position) if found else (None, None)
    for table in program.fact_tables().values() if found is None else ():
        for i, row in enumerate(table.rows):
            if any(isinstance(v, STRUCTURED) for v in row):
                what = f"the fact {table.relation}({', '.join(map(format_value, row))}) holds a record or ADT value"
                position = table.position(i)
                break
        if what:
            break
    if what:
        raise PolygraphError("engine_unsupported", f"a graph stores symbols and numbers, not records or ADT "
                             f"values: {what}; evaluate the rules with polygraph eval", position)


def _file_keys(rule_files: list[str]) -> tuple:
    """Each file's resolved path, size and modification time (a file that cannot be read: its
    name only, so that loading it says why)."""
    keys = []
    for name in rule_files:
        try:
            stat = os.stat(name)
            keys.append((str(Path(name).resolve()), stat.st_size, stat.st_mtime_ns))
        except OSError:
            keys.append((str(name), None, None))
    return tuple(keys)


@lru_cache(maxsize=8)
def _rule_program(keys: tuple) -> Program:
    if any(size is None for _, size, _ in keys):
        _rule_program.cache_clear()  # nothing of a failed read is kept
    return load_program(*(path for path, _, _ in keys), magic=False)  # a graph keeps every relation


def without_lazy(program: Program, extra: list[Program]) -> tuple[Program, LazyPart | None]:
    """``program`` without what the rule files' ``.lazy`` declarations leave to on-demand
    derivation (datalog/lazy/part.py: lazy rules out, guarded rules guarded), and that lazy part."""
    declared = [item for more in extra for item in more.declarations.lazy]
    rules, lazy = split(program.rules, declared, program.arities)
    if lazy is None:
        return program, None
    return replace(program, rules=rules, strata=stratify(rules, program.arities)), lazy


def input_files(paths, assertions: list, receipts: list) -> list[dict]:
    """Returns the input files as the history records them (name, sha256, records)."""
    counts = {"assertions": len(assertions), "receipts": len(receipts)}
    return [file_entry(path, role, counts[role]) for role, path in paths]


#: distinct labels kept converted by ``supports`` (memory stays bounded)
_SUPPORTS = 400_000


def supports(model: Model) -> Callable[[object], tuple[tuple[str, ...], ...]]:
    """Returns ``label -> support sets`` (tuples of assertion ids, ordered as ``semiring.to_json``
    orders them), converting each distinct label once while a bounded cache holds it: a
    graph's facts share few labels (the synthetic graph: 3,923 among 32,469 facts at ×1,
    155,158 among 1,282,984 at ×40, whose write the 400,000 entries keep whole)."""
    semiring = model.semiring
    to_json, table = semiring.to_json, getattr(semiring, "table", None)
    cache: dict = {}

    def support(label) -> tuple[tuple[str, ...], ...]:
        key = getattr(label, "monomials", None)  # a why-provenance label: its sets of variable numbers
        if key is None or label.table is not table:
            return tuple(map(tuple, to_json(label)))
        found = cache.get(key)
        if found is None:
            if len(cache) >= _SUPPORTS:
                cache.clear()
            found = cache[key] = tuple(map(tuple, to_json(label)))
        return found
    return support


def iter_artifacts(model: Model, receipts: list[Receipt], tally: Tally | None = None) -> Iterator[Artifact]:
    """Yields the artifacts of an evaluated model, one at a time, counting them in ``tally``.

    Claims are the ``claim`` facts; entailed edges are the ``edge`` facts that are not
    claims and rest on at least one assertion (edges of background knowledge alone are
    part of the ontology, not of the graph); merges, summaries and sentences are the
    facts their receipts compiled into; contradictions are the ``contradiction`` facts
    that rest on an assertion (contradiction_layer.py).
    """
    tally = tally if tally is not None else Tally()
    support = supports(model)
    claims = _rows(model, "claim")
    claim_ids, edge_ids = IdsGiven(), IdsGiven()  # the short digest unless one listed before holds it (artifact_ids.py)
    for triple, label in _sorted(claims):
        yield tally.add(Artifact(claim_ids.id("claim", triple), "claim", _content(triple),
                                 support(label), label.exact))
    by_id = {r.artifact: r for r in receipts}
    for layer in ("merge", "summary"):
        for (artifact_id,), label in _sorted(_rows(model, layer)):
            if artifact_id not in by_id:
                raise PolygraphError("bad_program", f"{layer}({artifact_id!r}) comes from no receipt (a rule "
                                                    f"derives it): a {layer} is an artifact only as its receipt "
                                                    "states it")
            yield tally.add(Artifact(artifact_id, layer, by_id[artifact_id].content,
                                     support(label), label.exact))
    for receipt in receipts:
        for i, sentence in enumerate(receipt.sentences, 1):
            label = model.label("sentence", (receipt.sentence_id(i),))
            content = {"summary": receipt.artifact, "index": i, "text": sentence.text}
            yield tally.add(Artifact(receipt.sentence_id(i), "sentence", content,
                                     support(label), label.exact))
    for triple, label in _sorted(_rows(model, "edge")):
        claimed = triple in claims
        if not is_artifact("edge", label.is_one(), claimed):
            tally.background += not claimed  # an edge of the ontology alone
            continue
        yield tally.add(Artifact(edge_ids.id("edge", triple), "edge", _content(triple), support(label), label.exact))
    yield from contradiction_artifacts(model, tally)


def _rows(model: Model, relation: str):
    return model.facts(relation) if relation in model.store.relations else {}


def _plain(rows) -> bool:
    """Whether every argument is a string without the character below every other: tuple_key
    orders such strings as they are, and so does one string of them joined by that character
    (one comparison of strings per pair, not one of tuples)."""
    return all(type(v) is str and "\0" not in v for args in rows for v in args)


def _sorted(rows):
    if _plain(rows):
        return sorted(rows.items(), key=lambda item: "\0".join(item[0]))
    return sorted(rows.items(), key=lambda item: tuple_key(item[0]))


def _ordered(rows) -> list:
    """The tuples of ``rows`` in tuple_key's order."""
    return sorted(rows, key="\0".join) if _plain(rows) else sorted(rows, key=tuple_key)


def _content(triple: Sequence[str]) -> dict:
    subject, predicate, object_ = triple
    return {"subject": subject, "predicate": predicate, "object": object_}
