"""The model-facing layer: prompt templates, a cached and guarded Claude client, strict schemas."""

from .cache import RECORDED_FORMAT, AnswerCache, RecordedAnswers, cache_key
from .client import DEFAULT_MODEL, KEY_ENV, MODEL_ENV, Completion, ModelClient, Usage, resolve_model
from .errors import (EmptyAnswer, MissingApiKey, ModelError, ModelUnavailable, QuotaBanner, Refusal,
                     SchemaViolation, UnknownCitation)
from .evidence import evidence_line, render_evidence
from .guards import check_answer
from .schemas import SCHEMAS, Shown, parse_answer
from .templates import Template, load_template, parse_template, template_names

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
