"""Writing regenerated artifacts as one version: a deletion applied, rewritten receipts added.

``regenerate_version(path, receipts, outcome, replaced)`` appends ONE version to the graph
at ``path`` holding

1. what the deletion does (``outcome``, a whatif.Outcome, as ``apply_version`` writes it:
   deleted assertions and dead artifacts retired, labels restricted to the support sets
   that survive); None when the deletion was applied by the version before (the graph's
   last version is an applied deletion), and
2. the receipts of ``receipts`` (a JSON Lines file), checked exactly as ``add --receipts``
   checks them (graph/ledger.py: every problem at its file and line, nothing written if
   there is one) and, in addition, refused when they cite an assertion the deletion
   removes; their facts are evaluated incrementally from the graph's stored facts, and
   every new label is restricted to the surviving assertions, so the version is the graph
   that applying the deletion and then adding the receipts gives, in one step, and
3. the artifacts ``replaced`` retired: the trimmed summaries the new receipts rewrite (with
   their surviving sentences), which would otherwise stand beside their rewrites.

Where ``add`` would re-evaluate in full (a program that negates or aggregates over
assertions, a label the cap truncates in an order-dependent way), this refuses with
``needs_full_evaluation`` and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.graph.circuit_build import version_circuit
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.json_lines import read_records
from polygraph_logic.graph.artifact_ids import graph_id, long_id, triple_id
from polygraph_logic.graph.ledger import _cited, _inputs, _load, evaluate_new
from polygraph_logic.graph.ledger_write import write_incremental
from polygraph_logic.graph.records import LoadError
from polygraph_logic.graph.store.backend import write_version
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.version_write import VersionWriter
from polygraph_logic.graph.store.versions import command_line, release
from polygraph_logic.query.applied import AppliedRows, applied_rows
from polygraph_logic.query.whatif import Outcome


@dataclass
class RegeneratedVersion:
    """What ``regenerate_version`` wrote: the version, the receipts added, the artifacts added,
    retired by the deletion, replaced, and kept alive by a rewrite."""

    version: int
    receipts: int = 0
    artifacts: int = 0
    deleted_assertions: int = 0
    dropped: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    changed: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return dict(self.__dict__)


def cited_deleted(receipts: str | Path, deleted: frozenset[str]) -> list[PolygraphError]:
    """Returns an error, at its file and line, for each receipt that cites a deleted assertion."""
    problems = []
    for number, record in read_records(Path(receipts), []):
        if not isinstance(record, dict):
            continue
        hit = sorted({name for name in _cited(record) if name in deleted})
        if hit:
            problems.append(PolygraphError(
                "retracted_citation", f"receipt {record.get('artifact')!r} cites {', '.join(hit)}, which the "
                "deletion removes; a regenerated artifact may cite only evidence that still stands",
                Position(str(receipts), number, 1)))
    return problems


def regenerate_version(path: str | Path, receipts: str | Path, outcome: Outcome | None = None,
                       replaced: tuple[str, ...] = (), deleted: frozenset[str] = frozenset(), *,
                       record: dict | None = None, command: str | None = None) -> RegeneratedVersion:
    """Appends one version: ``outcome``'s deletion applied, ``receipts`` added, ``replaced`` retired
    (see the module docstring); returns what it wrote. ``deleted``: assertions the receipts may
    not cite besides ``outcome``'s (those of a deletion applied before); ``record``: fields for
    the version's record (what asked for it)."""
    path = Path(path)
    deleted = frozenset(deleted) | (outcome.deleted if outcome is not None else frozenset())
    with Graph(path, snapshot=True) as graph:
        if graph.at is not None:
            raise PolygraphError("bad_argument", "regenerate appends to the latest version")
        expected = graph.version_read()
        try:
            _, new_receipts = _load(graph, None, receipts)
        except LoadError as error:  # the ledger's problems, and the citations of deleted evidence
            raise LoadError(sorted([*error.problems, *cited_deleted(receipts, deleted)],
                                   key=lambda p: p.position.line if p.position else 0)) from None
        problems = cited_deleted(receipts, deleted)
        if problems:
            raise LoadError(problems)
        missing = [a for a in replaced if not graph.has_artifact(a)]
        if missing:
            raise PolygraphError("unknown_artifact", f"cannot replace {', '.join(missing)}: not in {path}")
        # a trimmed summary's sentences: linked to it, or (after an applied deletion, which gives the
        # summary a new row) named by its content
        retiring = list(dict.fromkeys(i for a in replaced for i in (
            a, *graph.sentence_ids(a), *graph.artifact(a).content.get("sentences_kept", ()))))
        rows = applied_rows(graph, outcome) if outcome is not None else AppliedRows([], [], [], [])
        cap = graph.semiring.cap
        compiled = compile_inputs([], new_receipts, cap)
        new_rules, reason, state = evaluate_new(graph, compiled, cap)
        if reason:
            raise PolygraphError("needs_full_evaluation", f"the regenerated receipts need the graph evaluated in "
                                 f"full ({reason}); nothing was written")
        _restrict(state, deleted)
        added = {(relation, tup) for relation, facts in state.changed.items() for tup in facts}
        dead = set(rows.dead)
        revived = {_revived_id(graph, relation, tup, dead) for relation, tup in added}
    dropped = [a for a in rows.dead if a not in revived]
    report = RegeneratedVersion(0, receipts=len(new_receipts), deleted_assertions=len(rows.assertions),
                                dropped=dropped, replaced=list(replaced))

    def write(writer: VersionWriter) -> None:
        writer.prefetch(facts=[(relation, args) for relation, args, *_ in rows.facts],
                        artifacts=[*rows.dead, *retiring, *(a for a, _ in rows.contents)])
        for num in rows.assertions:
            writer.retire_assertion(num)
        for artifact_id in dict.fromkeys([*dropped, *retiring]):
            writer.retire_artifact(artifact_id)
        for relation, args, groups, exact in rows.facts:
            if (relation, args) not in added:  # a label the new receipts change is written below
                writer.fact(relation, args, groups, exact)
        for artifact_id, content in rows.contents:
            if artifact_id not in retiring:
                writer.replace_content(artifact_id, content)
        among = {name for facts in state.changed.values() for label in facts.values()
                 for names in state.semiring.to_json(label) for name in names}
        numbers = writer.assertion_numbers(among)
        writer.rules(new_rules)
        written = write_incremental(writer, state, numbers, new_receipts)
        report.artifacts, report.changed = written.artifacts, written.changed
        writer.link_summaries()

    entry = {"action": "regenerate", "inputs": _inputs(None, receipts, [], new_receipts),
             "cap": "none" if cap is None else str(cap), "release": release(), **(record or {}),
             "replaced": list(replaced), "deleted_assertions": len(rows.assertions),
             "dropped_artifacts": len(dropped)}
    if outcome is not None:
        entry["policy"] = outcome.policy
        named = outcome.deletion
        entry["deletion"] = {k: list(getattr(named, k)) for k in ("sources", "relations", "assertions", "kinds")
                             if getattr(named, k, ())}
    reached = state.reached()
    report.version = write_version(path, "regenerate", command or command_line(), entry, write, expected,
                                   lambda store: version_circuit(store, reached))
    return report


def _revived_id(graph: Graph, relation: str, tup: tuple, dead: set[str]) -> str | None:
    """The id of the artifact of a fact the receipts derive again, if a dead artifact may have it:
    a claim's or edge's id is its short digest or, when another artifact held that first, the long
    one (artifact_ids.py), and the graph says which."""
    if relation not in ("claim", "edge"):
        return tup[0]
    if not {triple_id(relation, tup), long_id(relation, tup)} & dead:
        return None
    return graph_id(graph, relation, tup)


def _restrict(state, deleted: frozenset[str]) -> None:
    """Drops the support sets that name a deleted assertion from every label the receipts changed
    (a rewritten merge may join with a claim the deletion removes); a label left empty is not written."""
    if not deleted:
        return
    for relation in list(state.changed):
        facts = state.changed[relation]
        for tup, label in list(facts.items()):
            kept = label.restrict(deleted)
            if kept.is_zero():
                del facts[tup]
            else:
                facts[tup] = kept
        if not facts:
            del state.changed[relation]


__all__ = ["RegeneratedVersion", "cited_deleted", "regenerate_version"]
