"""The re-derivation audit: stored labels graded against re-derivation under deletions."""

from .deletions import NamedDeletion, deletion_key, name_of, random_retractions
from .edges import ENGINES, EdgeRederivation, can_fire
from .oracles import AUDIT_FORMAT, FailedDraw, ModelOracle, Oracle, ReplayOracle, ScriptedOracle
from .report import ArtifactAudit, AuditReport, DeletionAudit, EdgeAudit, SummaryAudit, load_audit
from .run import audit
from .tasks import PROMPTS, TEMPLATES, SurvivingEvidence, Task, render
from .verdicts import Row, outcome, pool, verdict, wilson

__all__ = [
    "AUDIT_FORMAT", "ArtifactAudit", "AuditReport", "DeletionAudit", "ENGINES", "EdgeAudit", "EdgeRederivation",
    "FailedDraw", "ModelOracle", "NamedDeletion", "Oracle", "PROMPTS", "ReplayOracle", "Row", "ScriptedOracle",
    "SummaryAudit", "SurvivingEvidence", "TEMPLATES", "Task", "audit", "can_fire", "deletion_key", "load_audit",
    "name_of", "outcome", "pool", "random_retractions", "render", "verdict", "wilson",
]
