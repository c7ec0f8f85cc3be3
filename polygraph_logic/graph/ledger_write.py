"""Writing an added version: the facts and artifacts that changed (``ledger.add``'s second half).

``write_incremental`` writes what the incremental evaluation changed; ``write_full`` writes what
differs between the graph and the union of its recorded inputs evaluated in full (the inputs a
graph's versions recorded: ``recorded_receipts``, ``recorded_rules``).  A claim's, edge's or
contradiction's id is given against what the graph holds (artifact_ids.new_id): an id once
given never changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.artifact_ids import DIGESTED, held_by, long_id, new_id, stored_id, triple_id
from polygraph_logic.graph.artifact_rule import is_artifact
from polygraph_logic.graph.build import build_python, iter_artifacts
from polygraph_logic.graph.contradiction_layer import content as contradiction_content
from polygraph_logic.graph.records import Receipt
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.label_codec import encode_label
from polygraph_logic.graph.store.rows import fact_key
from polygraph_logic.graph.store.version_write import VersionWriter


@dataclass
class AddReport:
    """What ``add`` did: the version written, how (incremental or full, and why), what changed."""

    version: int
    mode: str
    reason: str | None = None
    assertions: int = 0
    receipts: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # relation -> facts new or with a changed label
    artifacts: int = 0  # artifacts added
    retired: int = 0  # artifacts removed (an entailed edge now stated: a claim)

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _groups(semiring, label, numbers: dict[str, int]) -> list[list[int]]:
    return [[numbers[name] for name in names] for names in semiring.to_json(label)]


def write_incremental(writer: VersionWriter, state, numbers, receipts) -> AddReport:
    """Writes the facts the incremental evaluation changed (``state``: ledger._State) and the
    artifacts they make or retire."""
    report = AddReport(0, "incremental")
    semiring, claims = state.semiring, state.store.relations.get("claim", {})
    by_id = {r.artifact: r for r in receipts}
    contents = {s_id: {"summary": r.artifact, "index": i, "text": s.text}
                for r in receipts for i, s in enumerate(r.sentences, 1) for s_id in (r.sentence_id(i),)}
    # what the loop below asks of the store, read at once (a folder answers a look-up in milliseconds):
    # each changed fact's row, whether each changed edge is stated, the ids a new claim, edge or
    # contradiction may take and a new claim's entailed edge may hold (artifact_ids.py)
    digested = [(layer, tup) for layer in ("claim", "edge", "contradiction") for tup in state.changed.get(layer, ())]
    new_claims = state.changed.get("claim", ())
    writer.prefetch(facts=[*((relation, tup) for relation, rows in state.changed.items() for tup in rows),
                           *(("claim", tup) for tup in state.changed.get("edge", ())),
                           *(("edge", tup) for tup in new_claims)],
                    artifacts=[*(made(layer, tup) for layer, tup in [*digested, *(("edge", t) for t in new_claims)]
                                 for made in (triple_id, long_id))])
    for relation in sorted(state.changed):
        rows = state.changed[relation]
        report.changed[relation] = len(rows)
        for tup, label in rows.items():
            num, before = writer.fact(relation, tup, _groups(semiring, label, numbers), label.exact)
            if before is not None or not is_artifact(relation, label.is_one(), relation == "edge"
                                                                      and _is_claim(writer, claims, tup)):
                continue
            if relation == "claim":
                writer.artifact(new_id("claim", tup, held_by(writer.artifact_fact, num)), "claim", _content(tup), num)
                report.artifacts += 1
                edge = writer.fact_number("edge", tup)
                entailed = None if edge is None else stored_id("edge", tup, held_by(writer.artifact_fact, edge))
                if entailed is not None:
                    writer.retire_artifact(entailed)
                    report.retired += 1
            elif relation == "edge":
                writer.artifact(new_id("edge", tup, held_by(writer.artifact_fact, num)), "edge", _content(tup), num)
                report.artifacts += 1
            elif relation == "sentence":
                writer.artifact(tup[0], "sentence", contents[tup[0]], num)
                report.artifacts += 1
            elif relation == "contradiction":  # as build writes it (contradiction_layer.py)
                writer.artifact(new_id("contradiction", tup, held_by(writer.artifact_fact, num)), "contradiction",
                                contradiction_content(tup), num)
                report.artifacts += 1
            else:
                writer.artifact(tup[0], relation, by_id[tup[0]].content, num)
                report.artifacts += 1
    return report


def _is_claim(writer: VersionWriter, claims: dict, triple: tuple) -> bool:
    """True when the triple is stated (a claim now, in memory, or stored before)."""
    return dict.__contains__(claims, triple) or writer.has_fact("claim", triple)


def _content(triple) -> dict:
    subject, predicate, object_ = triple
    return {"subject": subject, "predicate": predicate, "object": object_}


# --- the full path ----------------------------------------------------------------------
def write_full(writer: VersionWriter, graph_path, new_assertions, new_receipts, numbers, cap,
               reason: str, recorded: tuple[list[Receipt], list[str]]) -> AddReport:
    """Evaluates the union of the recorded inputs (``recorded``: the graph's recorded receipts and rule
    files, ledger.recorded_receipts and recorded_rules) as ``build`` would and writes what differs."""
    report = AddReport(0, "full")
    receipts, rule_files = recorded
    with Graph(graph_path) as graph:
        assertions = list(graph.assertions.values())
        present = graph.artifacts_present(r.artifact for r in receipts)
        receipts = [r for r in receipts if r.artifact in present]
        labels = graph.meta.get("labels", "capped")  # a witness graph is evaluated to witness labels again
        stored = graph.layer_count("merge", "summary")
        if len(receipts) < stored:  # built from records in memory, or before versions were recorded
            raise PolygraphError("unrecorded_inputs", f"{graph_path} must be evaluated in full ({reason}), but its "
                                                      "receipts were not recorded as files; rebuild it with "
                                                      "`polygraph build` from the files, then add")
    build = build_python([*assertions, *new_assertions], [*receipts, *new_receipts], rule_files, cap, labels=labels)
    model = build.model
    semiring = model.semiring
    rows = writer.fact_rows()
    facts, changes = {}, []
    for name in model.relations():
        for tup, label in model.facts(name).items():
            groups = _groups(semiring, label, numbers)
            row = rows.get((name, fact_key(tup)))
            if row is not None:
                facts[(name, tup)] = row[0]
                if row[1] == encode_label(groups) and row[2] == int(label.exact):
                    continue
            changes.append((name, tup, groups, label.exact, row))
            report.changed[name] = report.changed.get(name, 0) + 1
    facts.update(writer.facts(changes))
    stored = writer.artifact_ids()
    current = set()
    listed = list(iter_artifacts(model, [*receipts, *new_receipts]))
    # a claim's, edge's or contradiction's id is the one the graph gave it, or one given against what
    # the graph holds (artifact_ids.new_id): the listing's own ids are those of a graph built at once
    writer.prefetch(artifacts=[made(a.layer, a.fact[1]) for a in listed if a.layer in DIGESTED
                               for made in (triple_id, long_id)])
    for artifact in listed:
        relation, args = artifact.fact
        fact = facts[(relation, tuple(args))]
        artifact_id = artifact.id
        if artifact.layer in DIGESTED:
            artifact_id = new_id(artifact.layer, tuple(args), held_by(writer.artifact_fact, fact))
        current.add(artifact_id)
        if artifact_id not in stored:
            writer.artifact(artifact_id, artifact.layer, artifact.content, fact)
            report.artifacts += 1
    for artifact_id in sorted(stored - current):
        writer.retire_artifact(artifact_id)
        report.retired += 1
    return report


__all__ = ["AddReport", "write_full", "write_incremental"]
