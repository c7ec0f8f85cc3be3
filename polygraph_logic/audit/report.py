"""What an audit found, as AUDIT.json (format ``polygraph-audit/1``) and as a Table-2-shaped text."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.files import write_text_atomically
from polygraph_logic.audit.deletions import NamedDeletion
from polygraph_logic.audit.oracles import AUDIT_FORMAT
from polygraph_logic.audit.verdicts import Row, format_table, pool


@dataclass
class ArtifactAudit:
    """One touched model-authored artifact under one deletion: its label, draws and verdict."""

    artifact: str
    layer: str
    label: str  # what the stored label says under the deletion (trust-all): alive or dead
    draws: list[bool | None]  # None: a failed draw
    failures: list[dict]  # {"draw": i, "code": why} for each failed draw
    verdict: str  # alive, dead or undecided
    outcome: str  # agree, leaky, over-deleted or undecided

    @property
    def reproduced(self) -> int:
        return sum(d is True for d in self.draws)

    @property
    def failed_draws(self) -> int:
        return sum(d is None for d in self.draws)

    def to_json(self) -> dict:
        return {"artifact": self.artifact, "layer": self.layer, "label": self.label, "draws": self.draws,
                "failed_draws": self.failed_draws, "failures": self.failures, "reproduced": self.reproduced,
                "verdict": self.verdict, "outcome": self.outcome}


@dataclass
class EdgeAudit:
    """One touched entailed edge: its label against symbolic re-derivation by each engine run."""

    artifact: str
    edge: tuple[str, str, str]
    label: str
    exact: bool  # False: a capped label, which may call a live edge dead
    answers: dict[str, str]  # engine -> alive / dead
    outcome: str  # the label against the chosen edge oracle

    def to_json(self) -> dict:
        return {"artifact": self.artifact, "edge": list(self.edge), "label": self.label, "exact": self.exact,
                **self.answers, "outcome": self.outcome}


@dataclass
class SummaryAudit:
    """A sentence-level summary's fate, which follows from its sentences: kept, trimmed or removed.

    ``label_status`` trusts the sentences' labels, ``status`` the audit's verdicts
    (sentences the deletion did not touch stand); ``undecided`` when a touched sentence
    is undecided. ``label``/``verdict``/``outcome`` read "removed" as dead, anything else as alive.
    """

    summary: str
    sentences: int
    label_status: str
    status: str
    dead_by_label: int
    dead: int
    undecided: int
    label: str
    verdict: str
    outcome: str

    def to_json(self) -> dict:
        return {"summary": self.summary, "sentences": self.sentences, "label_status": self.label_status,
                "status": self.status, "dead_sentences_by_label": self.dead_by_label, "dead_sentences": self.dead,
                "undecided_sentences": self.undecided, "label": self.label, "verdict": self.verdict,
                "outcome": self.outcome}


@dataclass
class DeletionAudit:
    """Everything audited under one deletion."""

    deletion: NamedDeletion
    deleted: int  # assertions deleted
    artifacts: list[ArtifactAudit] = field(default_factory=list)
    edges: list[EdgeAudit] = field(default_factory=list)
    summaries: list[SummaryAudit] = field(default_factory=list)
    table: list[Row] = field(default_factory=list)
    pydatalog_rules: tuple[int, int, int] | None = None  # rules pyDatalog ran, of all rules, in rounds

    def to_json(self) -> dict:
        entry = {"name": self.deletion.name, "deletion": self.deletion.to_json(), "deleted_assertions": self.deleted,
                 "artifacts": [a.to_json() for a in self.artifacts], "edges": [e.to_json() for e in self.edges],
                 "summaries": [s.to_json() for s in self.summaries], "table": [r.to_json() for r in self.table]}
        if self.pydatalog_rules is not None:
            ran, of, rounds = self.pydatalog_rules
            entry["pydatalog_rules"] = {"ran": ran, "of": of, "rounds": rounds}
        return entry


@dataclass
class AuditReport:
    """An audit's results: per deletion and pooled, with findings about edges."""

    graph: str
    draws: int
    tau: float
    oracle: str
    prompt: str
    edge_oracle: str
    deletions: list[DeletionAudit]
    findings: list[dict]
    usage: dict | None = None  # a model oracle's calls, tokens and dollars (Usage.to_json)

    @property
    def pooled(self) -> list[Row]:
        """Returns the rows over every (deletion, artifact) adjudication."""
        return pool(d.table for d in self.deletions)

    def to_json(self) -> dict:
        """Returns the AUDIT.json document (see docs/construct-and-audit.md)."""
        return {"format": AUDIT_FORMAT, "graph": self.graph, "draws": self.draws, "tau": self.tau,
                "oracle": self.oracle, "prompt": self.prompt, "edge_oracle": self.edge_oracle,
                "deletions": [d.to_json() for d in self.deletions],
                "pooled": [r.to_json() for r in self.pooled], "findings": self.findings,
                **({"usage": self.usage} if self.usage is not None else {})}

    def write(self, path: str | Path) -> None:
        """Writes AUDIT.json atomically."""
        write_text_atomically(path, json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")

    def table_text(self) -> str:
        """Returns the Table-2-shaped text: rows per deletion and pooled, then summaries, edges, findings."""
        lines = [f"audit of {self.graph}: R={self.draws} draws, tau={self.tau:g}, oracle {self.oracle}, "
                 f"prompt {self.prompt}; agreement, leaky and over-deleted are shares of the decided "
                 f"artifacts with 95% Wilson intervals"]
        sections = [(d.deletion.name, d.table) for d in self.deletions]
        if len(self.deletions) > 1:
            sections.append((f"pooled over {len(self.deletions)} deletions", self.pooled))
        lines.append(format_table(sections))
        summaries = [(d.deletion.name, s) for d in self.deletions for s in d.summaries]
        if summaries:
            lines.append("sentence-level summaries (kept while any sentence stands):")
            for name, s in summaries:
                lines.append(f"  {name}: {s.summary}: label {s.label_status}, re-derivation {s.status} "
                             f"({s.dead} of {s.sentences} sentences dead"
                             f"{f', {s.undecided} undecided' if s.undecided else ''}): {s.outcome}")
        failed = Counter(f["code"] for d in self.deletions for a in d.artifacts for f in a.failures)
        if failed:
            lines.append(f"failed draws (no answer, not counted as 'not reproduced'): {sum(failed.values())} ("
                         + ", ".join(f"{code} {count}" for code, count in sorted(failed.items())) + ")")
        lines.extend(self._edge_lines())
        if self.findings:
            lines.append("findings:")
            lines.extend(f"  {_finding_text(f)}" for f in self.findings)
        return "\n".join(lines)

    def _edge_lines(self) -> list[str]:
        audited = [d for d in self.deletions if d.edges]
        if not audited:
            return []
        lines = [f"entailed edges, re-derived symbolically by {self.edge_oracle} (never by the model):"]
        for d in audited:
            counts = {o: sum(e.outcome == o for e in d.edges) for o in ("agree", "leaky", "over-deleted")}
            capped = sum(e.outcome == "over-deleted" and not e.exact for e in d.edges)
            text = f"  {d.deletion.name}: {len(d.edges)} touched, {counts['agree']} agree with their labels"
            if counts["leaky"]:
                text += f", {counts['leaky']} leaky"
            if counts["over-deleted"]:
                text += f", {counts['over-deleted']} over-deleted ({capped} by a capped label)"
            if d.pydatalog_rules:
                ran, of, rounds = d.pydatalog_rules
                text += f"; pyDatalog ran the {ran} of {of} rules that can fire, in {rounds} rounds"
            lines.append(text)
        return lines


def _finding_text(finding: dict) -> str:
    edge = " ".join(finding["edge"])
    if finding["kind"] == "engines":
        return (f"{finding['deletion']}: the engines disagree on {finding['artifact']} ({edge}): "
                f"ours {finding['ours']}, pydatalog {finding['pydatalog']}")
    return (f"{finding['deletion']}: the label of {finding['artifact']} ({edge}) says {finding['label']}, "
            f"re-derivation by {finding['oracle']} says {finding['rederived']}: {finding['outcome']}"
            f"{'' if finding['exact'] else ' (capped label)'}")


def load_audit(path: str | Path) -> dict:
    """Returns a parsed AUDIT.json; PolygraphError when it is unreadable or of another format."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise PolygraphError("file_error", f"not JSON: {error.msg}",
                             Position(str(path), error.lineno, error.colno)) from None
    if not isinstance(document, dict) or document.get("format") != AUDIT_FORMAT:
        raise PolygraphError("file_error", f"{path} is not an audit file (format {AUDIT_FORMAT!r})")
    return document
