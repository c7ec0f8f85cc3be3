"""The re-derivation audit: grades stored labels against re-derivation under deletions.

For every deletion, every artifact the deletion touches (its label mentions a deleted
assertion) is graded:

- model-authored artifacts by an oracle, ``draws`` times on the surviving evidence
  (tasks.py says what that is): merges; flat summaries as a whole (layer ``summary``);
  sentence-level summaries sentence by sentence (layer ``sentence``), the summary's own
  fate (kept, trimmed, removed) following from its sentences;
- entailed edges symbolically, by our engine or by pyDatalog (edges.py); with pyDatalog
  both engines run and any disagreement between them is a finding, as is any edge label
  that re-derivation contradicts (a capped label calling a live edge dead is expected and
  only counted).

The label's verdict is trust-all: alive when some support set avoids the deletion.
Nothing here changes the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion
from polygraph_logic.audit.deletions import NamedDeletion, named
from polygraph_logic.audit.edges import EdgeRederivation, check_engine
from polygraph_logic.audit.oracles import FailedDraw, Oracle
from polygraph_logic.audit.report import ArtifactAudit, AuditReport, DeletionAudit, EdgeAudit, SummaryAudit
from polygraph_logic.audit.tasks import SurvivingEvidence, Task, check_prompt, render
from polygraph_logic.audit.verdicts import AUDITED_LAYERS, check_rule, outcome, table_rows, verdict


@dataclass
class _Plan:
    """What one deletion touches, sorted into what each kind of re-derivation grades."""

    deletion: NamedDeletion
    deleted: frozenset[str]
    labels: dict[str, str]  # touched artifact id -> alive / dead by its label
    audited: list[str] = field(default_factory=list)  # merges, flat summaries, sentences
    summaries: list[str] = field(default_factory=list)  # sentence-level summaries
    edges: list[str] = field(default_factory=list)


def audit(graph_or_index: GraphIndex | Graph | str | Path, deletions: Iterable[Deletion | NamedDeletion],
          oracle: Oracle, draws: int = 5, tau: float = 0.2, prompt: str = "rederive", edge_oracle: str = "ours",
          progress: Callable[[int, int], None] | None = None) -> AuditReport:
    """Returns the audit of the graph's labels under each deletion (see the module docstring).

    ``progress(done, total)`` is called after each oracle draw (for an oracle with ``prepare``,
    which is handed every task at once, as it asks them). Every deletion is resolved before the
    first draw, so an unknown source or relation costs no model call.
    """
    check_rule(draws, tau)
    check_prompt(prompt)
    check_engine(edge_oracle)
    index = _index(graph_or_index)
    plans = [_plan(index, deletion) for deletion in named(deletions)]
    layers = _audited_layers(index)
    total, done = sum(len(p.audited) for p in plans) * draws, 0
    evidence = SurvivingEvidence(index.graph)
    rederivation = EdgeRederivation(index.graph) if any(p.edges for p in plans) else None
    # every task first, so that an oracle that can (a model: a batch, or calls in parallel) asks them together
    tasks = {(p, artifact_id): [Task(plan.deletion, artifact.id, artifact.layer, text, shown, draw, prompt)
                                for draw in range(draws)]
             for p, plan in enumerate(plans) for artifact_id in plan.audited
             for artifact in (index.graph.artifact(artifact_id),)
             for shown, text in ((evidence.of(artifact, plan.deleted), render(artifact, prompt)),)}
    if hasattr(oracle, "prepare"):
        oracle.prepare([task for drawn in tasks.values() for task in drawn], progress)
    results, findings = [], []
    for p, plan in enumerate(plans):
        result = DeletionAudit(plan.deletion, len(plan.deleted))
        for artifact_id in plan.audited:
            artifact = index.graph.artifact(artifact_id)
            answers: list[bool | None] = []
            failures = []
            for task in tasks[p, artifact_id]:
                try:
                    answers.append(oracle.rederive(task))
                except FailedDraw as failed:
                    answers.append(None)
                    failures.append({"draw": task.draw, "code": failed.code})
                done += 1
                if progress is not None and not hasattr(oracle, "prepare"):
                    progress(done, total)
            found = verdict(answers, tau)
            label = plan.labels[artifact_id]
            result.artifacts.append(ArtifactAudit(artifact.id, artifact.layer, label, answers, failures, found,
                                                  outcome(label, found)))
        result.table = table_rows(((a.layer, a.outcome) for a in result.artifacts), layers)
        result.summaries = [_summary_fate(index, plan, summary, result.artifacts) for summary in plan.summaries]
        if plan.edges:
            _audit_edges(index, plan, rederivation, edge_oracle, result, findings)
        results.append(result)
    return AuditReport(str(index.graph.path), draws, tau, oracle.name, prompt, edge_oracle, results, findings)


def _index(graph_or_index) -> GraphIndex:
    if isinstance(graph_or_index, GraphIndex):
        return graph_or_index
    if isinstance(graph_or_index, Graph):
        return GraphIndex(graph_or_index)
    return GraphIndex(Graph(graph_or_index))


def _audited_layers(index: GraphIndex) -> list[str]:
    """Returns the model-authored layers the graph has: every table lists them, touched or not."""
    present = set()
    for entry in index.ranked:
        if entry.layer == "summary":
            present.add("summary" if entry.id not in index.sentences else "sentence")
        elif entry.layer in AUDITED_LAYERS:
            present.add(entry.layer)
    return [layer for layer in AUDITED_LAYERS if layer in present]


def _plan(index: GraphIndex, deletion: NamedDeletion) -> _Plan:
    deleted = deletion.deletion.resolve(index)
    numbers = index.numbers(deleted)
    plan = _Plan(deletion, deleted, {})
    for rank in sorted(index.touched(numbers)):
        entry = index.ranked[rank]
        alive = any(group.isdisjoint(numbers) for group in index.artifact_labels[rank])
        plan.labels[entry.id] = "alive" if alive else "dead"
        if entry.layer == "edge":
            plan.edges.append(entry.id)
        elif entry.layer == "summary" and entry.id in index.sentences:
            plan.summaries.append(entry.id)
        elif entry.layer in AUDITED_LAYERS:
            plan.audited.append(entry.id)
    return plan


def _status(dead: int, sentences: int) -> str:
    return "removed" if dead == sentences else ("trimmed" if dead else "kept")


def _summary_fate(index: GraphIndex, plan: _Plan, summary: str, audited: list[ArtifactAudit]) -> SummaryAudit:
    """Returns a sentence-level summary's fate by its sentences' labels and by their verdicts."""
    sentences = index.sentences[summary]
    verdicts = {a.artifact: a.verdict for a in audited if a.layer == "sentence"}
    dead_by_label = sum(plan.labels.get(s) == "dead" for s in sentences)
    found = [verdicts.get(s, "alive") for s in sentences]  # an untouched sentence stands
    dead, undecided = found.count("dead"), found.count("undecided")
    label_status = _status(dead_by_label, len(sentences))
    status = "undecided" if undecided else _status(dead, len(sentences))
    label = "dead" if label_status == "removed" else "alive"
    found_verdict = "undecided" if undecided else ("dead" if status == "removed" else "alive")
    return SummaryAudit(summary, len(sentences), label_status, status, dead_by_label, dead, undecided, label,
                        found_verdict, outcome(label, found_verdict))


def _audit_edges(index: GraphIndex, plan: _Plan, rederivation: EdgeRederivation, edge_oracle: str,
                 result: DeletionAudit, findings: list[dict]) -> None:
    """Grades the touched edges' labels against the chosen engine; with pyDatalog, runs ours too."""
    engines = ["ours"] if edge_oracle == "ours" else ["ours", "pydatalog"]
    derived = {engine: rederivation.edges(plan.deleted, engine, plan.deletion.name) for engine in engines}
    if "pydatalog" in engines:
        result.pydatalog_rules = rederivation.fired[plan.deletion.name]
    name = plan.deletion.name
    for artifact_id in plan.edges:
        fact = index.artifacts[artifact_id].fact
        triple = fact[1]
        answers = {engine: "alive" if triple in derived[engine] else "dead" for engine in engines}
        label, exact = plan.labels[artifact_id], index.exact[fact]
        graded = outcome(label, answers[edge_oracle])
        result.edges.append(EdgeAudit(artifact_id, triple, label, exact, answers, graded))
        if len(set(answers.values())) > 1:
            findings.append({"kind": "engines", "deletion": name, "artifact": artifact_id, "edge": list(triple),
                             **answers})
        if graded == "leaky" or (graded == "over-deleted" and exact):
            findings.append({"kind": "label", "deletion": name, "artifact": artifact_id, "edge": list(triple),
                             "label": label, "exact": exact, "oracle": edge_oracle,
                             "rederived": answers[edge_oracle], "outcome": graded})
