"""Errors of the model-facing layer: every guard or parse failure is a ``ModelError``.

None of them is ever written to the cache (the paper's cache incident: a session-limit
banner was stored as the answer to 1,123 prompts and 13 content-filter refusals were
replayed as verdicts). Each carries the template and draw it concerns so a caller can
count and report it.
"""

from __future__ import annotations

from polygraph_logic.errors import PolygraphError


class ModelError(PolygraphError):
    """A model call that produced no usable answer (code says which guard fired)."""

    code_name = "model_error"

    def __init__(self, message: str, *, template: str | None = None, draw: int | None = None,
                 code: str | None = None):
        where = f" ({template}, draw {draw})" if template is not None else ""
        super().__init__(code or self.code_name, message + where)
        self.template = template
        self.draw = draw


class QuotaBanner(ModelError):
    """The answer is a quota, rate or session-limit banner, not an answer to the prompt."""

    code_name = "quota_banner"


class Refusal(ModelError):
    """The model refused (a ``refusal`` stop reason, or refusal text instead of an answer)."""

    code_name = "refusal"


class EmptyAnswer(ModelError):
    """The model returned no text (or only whitespace)."""

    code_name = "empty_answer"


class SchemaViolation(ModelError):
    """The answer is not JSON of the expected schema (malformed, missing or extra fields)."""

    code_name = "schema_violation"


class UnknownCitation(ModelError):
    """A receipt cites an id that was not in the evidence shown to the model."""

    code_name = "unknown_citation"

    def __init__(self, message: str, *, unknown: list[str], template: str | None = None,
                 draw: int | None = None):
        super().__init__(message, template=template, draw=draw)
        self.unknown = unknown


class ModelUnavailable(ModelError):
    """The API could not be reached or kept failing after every retry."""

    code_name = "model_unavailable"


class MissingApiKey(ModelError):
    """A call must reach the API but ``ANTHROPIC_API_KEY`` is not set."""

    code_name = "missing_api_key"
