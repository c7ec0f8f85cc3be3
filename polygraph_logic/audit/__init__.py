"""The re-derivation audit: stored labels graded against re-derivation under deletions."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "AUDIT_FORMAT": "oracles", "ArtifactAudit": "report", "AuditReport": "report", "DeletionAudit": "report",
    "ENGINES": "edges", "EdgeAudit": "report", "EdgeRederivation": "edges", "FailedDraw": "oracles",
    "ModelOracle": "oracles", "NamedDeletion": "deletions", "Oracle": "oracles", "PROMPTS": "tasks",
    "ReplayOracle": "oracles", "Row": "verdicts", "ScriptedOracle": "oracles", "SummaryAudit": "report",
    "SurvivingEvidence": "tasks", "TEMPLATES": "tasks", "Task": "tasks", "audit": "run", "can_fire": "edges",
    "deletion_key": "deletions", "load_audit": "report", "name_of": "deletions", "outcome": "verdicts",
    "pool": "verdicts", "random_retractions": "deletions", "render": "tasks", "verdict": "verdicts",
    "wilson": "verdicts",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
