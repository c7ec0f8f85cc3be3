"""The model-facing layer: prompt templates, a cached and guarded Claude client, strict schemas."""

from polygraph_logic.llm.cache import RECORDED_FORMAT, AnswerCache, RecordedAnswers, cache_key
from polygraph_logic.llm.client import (
    DEFAULT_MODEL,
    KEY_ENV,
    MODEL_ENV,
    Completion,
    ModelClient,
    Usage,
    resolve_model,
)
from polygraph_logic.llm.errors import (
    EmptyAnswer,
    MissingApiKey,
    ModelError,
    ModelUnavailable,
    QuotaBanner,
    Refusal,
    SchemaViolation,
    UnknownCitation,
)
from polygraph_logic.llm.evidence_lines import evidence_line, render_evidence
from polygraph_logic.llm.guards import check_answer
from polygraph_logic.llm.schemas import SCHEMAS, Shown, parse_answer
from polygraph_logic.llm.templates import Template, load_template, parse_template, template_names

__all__ = [
    "AnswerCache", "RECORDED_FORMAT", "RecordedAnswers", "cache_key",
    "DEFAULT_MODEL", "KEY_ENV", "MODEL_ENV", "Completion", "ModelClient", "Usage", "resolve_model",
    "EmptyAnswer", "MissingApiKey", "ModelError", "ModelUnavailable", "QuotaBanner", "Refusal",
    "SchemaViolation", "UnknownCitation",
    "evidence_line", "render_evidence",
    "check_answer",
    "SCHEMAS", "Shown", "parse_answer",
    "Template", "load_template", "parse_template", "template_names",
]
