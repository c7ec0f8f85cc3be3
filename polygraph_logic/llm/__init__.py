"""The model-facing layer: prompt templates, a cached and guarded Claude client, strict schemas."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "AnswerCache": "cache", "RECORDED_FORMAT": "cache", "RecordedAnswers": "cache", "cache_key": "cache",
    "DEFAULT_MODEL": "client", "KEY_ENV": "client", "MODEL_ENV": "client", "Completion": "client",
    "ModelClient": "client", "Question": "client", "Usage": "pricing", "resolve_model": "client",
    "PRICES": "pricing", "PRICES_ENV": "pricing", "PriceTable": "pricing", "Tokens": "pricing",
    "load_prices": "pricing", "FORMATS": "formats", "output_format": "formats", "BatchRun": "batches", "Parsed": "schemas",
    "parse_items": "schemas", "Prompt": "templates", "EmptyAnswer": "errors",
    "MissingApiKey": "errors", "ModelError": "errors", "ModelUnavailable": "errors", "QuotaBanner": "errors",
    "Refusal": "errors", "SchemaViolation": "errors", "UnknownCitation": "errors",
    "evidence_line": "evidence_lines", "render_evidence": "evidence_lines", "check_answer": "guards",
    "SCHEMAS": "schemas", "Shown": "schemas", "parse_answer": "schemas", "Template": "templates",
    "load_template": "templates", "parse_template": "templates", "template_names": "templates",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
