"""What applying a deletion changes, as rows: the deleted assertions, the dead artifacts, the
labels restricted to the support sets that survive, and the new content of trimmed summaries.

``apply_version`` (replay.py) writes these rows as an applied deletion's version, and
``regenerate_version`` (regenerated.py) writes them with the regenerated artifacts as one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import Artifact
from polygraph_logic.query.whatif import Outcome


@dataclass
class AppliedRows:
    """What applying a deletion changes, as rows: assertions and artifacts to drop, labels to write."""

    assertions: list[int]
    dead: list[str]
    facts: list[tuple[str, tuple, list[list[int]], bool]]
    contents: list[tuple[str, dict]]  # trimmed summaries: their new content


def applied_rows(graph: Graph, outcome: Outcome) -> AppliedRows:
    """Returns the rows an applied deletion changes (see Session.apply)."""
    deleted = outcome.deleted
    gone = set(graph.numbers("id", deleted))
    dead = sorted(set(outcome.dead))
    trimmed = sorted(s for s, entry in outcome.summaries.items() if entry["status"] == "trimmed")
    numbers = graph.assertion_numbers()
    labels: dict[tuple[str, tuple], tuple[list[list[int]], bool]] = {}
    for _, relation, args, blob, exact in graph.touched_facts(gone):
        groups = [g for g in graph.decode(blob) if gone.isdisjoint(g)]
        labels[(relation, graph.args(args))] = (groups, bool(exact))
    contents = []
    for summary_id in trimmed:
        artifact = _trimmed(graph.artifact(summary_id), graph, deleted, set(dead))
        contents.append((summary_id, artifact.content))
        labels[artifact.fact] = ([[numbers[a] for a in g] for g in artifact.support], artifact.exact)
    facts = [(relation, args, groups, exact) for (relation, args), (groups, exact) in labels.items()]
    return AppliedRows(sorted(gone), dead, facts, contents)


def write_applied(writer, rows: AppliedRows) -> None:
    """Writes an applied deletion's rows through a form's version writer (VersionWriter's interface)."""
    writer.prefetch(facts=[(relation, args) for relation, args, *_ in rows.facts],
                    artifacts=[*rows.dead, *(artifact_id for artifact_id, _ in rows.contents)])
    for num in rows.assertions:
        writer.retire_assertion(num)
    for artifact_id in rows.dead:
        writer.retire_artifact(artifact_id)
    for relation, args, groups, exact in rows.facts:
        writer.fact(relation, args, groups, exact)
    for artifact_id, content in rows.contents:
        writer.replace_content(artifact_id, content)


def _restricted(artifact: Artifact, deleted: frozenset[str]) -> Artifact:
    return replace(artifact, support=tuple(g for g in artifact.support if not deleted.intersection(g)))


def _trimmed(summary: Artifact, graph: Graph, deleted: frozenset[str], dead: set[str]) -> Artifact:
    """A trimmed summary: its surviving sentences, its label their product."""
    ids = graph.sentence_ids(summary.id)
    kept = [_restricted(graph.artifact(s), deleted) for s in ids if s not in dead]
    label = graph.semiring.one()
    for sentence in kept:
        label = graph.semiring.times(label, graph.semiring.polynomial(sentence.support, sentence.exact))
    content = {**summary.content, "sentences_kept": [s.id for s in kept]}
    support = tuple(tuple(group) for group in graph.semiring.to_json(label))
    return replace(summary, content=content, support=support, exact=label.exact)
