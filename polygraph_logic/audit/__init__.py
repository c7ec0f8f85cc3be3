"""The re-derivation audit: stored labels graded against re-derivation under deletions."""

from polygraph_logic.audit.deletions import NamedDeletion, deletion_key, name_of, random_retractions
from polygraph_logic.audit.edges import ENGINES, EdgeRederivation, can_fire
from polygraph_logic.audit.oracles import (
    AUDIT_FORMAT,
    FailedDraw,
    ModelOracle,
    Oracle,
    ReplayOracle,
    ScriptedOracle,
)
from polygraph_logic.audit.report import (
    ArtifactAudit,
    AuditReport,
    DeletionAudit,
    EdgeAudit,
    SummaryAudit,
    load_audit,
)
from polygraph_logic.audit.run import audit
from polygraph_logic.audit.tasks import PROMPTS, TEMPLATES, SurvivingEvidence, Task, render
from polygraph_logic.audit.verdicts import Row, outcome, pool, verdict, wilson

__all__ = [
    "AUDIT_FORMAT", "ArtifactAudit", "AuditReport", "DeletionAudit", "ENGINES", "EdgeAudit", "EdgeRederivation",
    "FailedDraw", "ModelOracle", "NamedDeletion", "Oracle", "PROMPTS", "ReplayOracle", "Row", "ScriptedOracle",
    "SummaryAudit", "SurvivingEvidence", "TEMPLATES", "Task", "audit", "can_fire", "deletion_key", "load_audit",
    "name_of", "outcome", "pool", "random_retractions", "render", "verdict", "wilson",
]
