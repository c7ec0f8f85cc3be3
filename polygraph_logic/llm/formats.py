"""Structured output: one JSON Schema per answer schema, the request that asks for it, the answer it gives.

Every request asks for its answer through the Messages API's structured outputs,
``output_config={"format": {"type": "json_schema", "schema": FORMATS[schema]}}``: the model's
answer is a text block holding one JSON object that matches the schema. No tool is offered
and none is forced: forced tool choice (``tool_choice`` naming a tool) returns a 400 error on
Claude Sonnet 5.5 and Opus 5.5, and so do sampling parameters (``temperature``, ``top_p``,
``top_k``), assistant prefill and thinking budgets or ``thinking: {"type": "disabled"}``
(platform.claude.com/docs/en/models/sonnet-5-5/migration-guide), so none of them is sent.

The schemas keep to the subset the API compiles: every object lists all its properties as
``required`` with ``additionalProperties: false``, and arrays use no ``minItems`` but 0 or 1.
The answer text is then checked by schemas.py, which knows what a JSON Schema cannot say: that
a citation names an id the prompt showed, a predicate one of the relations listed, a merge
member one of the names listed.

The request puts the template's fixed part in ``system`` with a ``cache_control``
breakpoint, so that prefix is cached by the API and billed at the cache-read price on every
later call that shares it; a prompt asked several times (an audit's draws) gets a second
breakpoint after its user turn. The API caches only a prefix of at least its minimum length
(1,024 tokens on Sonnet models); a shorter one is billed as plain input, with no cache write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from polygraph_logic.llm.templates import Prompt

_IDS = {"type": "array", "items": {"type": "string"}, "minItems": 1}
_SUPPORT = {"type": "array", "items": _IDS, "minItems": 1}


def _object(**properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _listing(field: str, item: dict) -> dict:
    return _object(**{field: {"type": "array", "items": item}})


#: answer schema -> the JSON Schema its answer must match
FORMATS: dict[str, dict] = {
    "claims": _listing("claims", _object(subject={"type": "string"}, predicate={"type": "string"},
                                         object={"type": "string"}, cites=_IDS)),
    "merges": _listing("merges", _object(canonical={"type": "string"},
                                         members={"type": "array", "items": {"type": "string"}, "minItems": 1},
                                         support=_SUPPORT)),
    "sentences": _listing("sentences", _object(text={"type": "string"}, support=_SUPPORT)),
    "summary": _object(summary={"type": "string"}, support=_SUPPORT),
    "rederivation": _object(verdict={"type": "boolean"}, reason={"type": "string"}),
}


def output_format(schema: str) -> dict:
    """Returns the ``output_config.format`` that asks for an answer of ``schema``."""
    return {"type": "json_schema", "schema": FORMATS[schema]}


def request(model: str, max_tokens: int, prompt: Prompt, schema: str, repeated: bool = False) -> dict:
    """Returns the Messages API parameters of one question: system prompt cached, answer format set.

    ``repeated``: the same prompt is asked more than once in this run (the draws of an audit),
    so the user turn gets a cache breakpoint too and every later draw reads the whole prompt
    from the cache; a user turn asked once is not marked, since a cache write costs more than input.
    """
    user: Any = [{"type": "text", "text": prompt.user, "cache_control": {"type": "ephemeral"}}] if repeated \
        else prompt.user
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                              "messages": [{"role": "user", "content": user}],
                              "output_config": {"format": output_format(schema)}}
    if prompt.system:
        params["system"] = [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}]
    return params


@dataclass(frozen=True)
class Reply:
    """What one API answer holds: the answer text, whether it is the bare JSON object its format
    asks for, the usage, and who answered (the model id the API reports, the message id and the
    request id)."""

    text: str
    structured: bool
    stop_reason: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    model: str | None = None
    message_id: str | None = None
    request_id: str | None = None


def is_object(text: str) -> bool:
    """Whether ``text`` is one bare JSON object (no fence, no prose around it)."""
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def reply(message: Any, request_id: str | None = None) -> Reply:
    """Returns the Reply of a Message (or of the plain text a gateway sent instead of one).

    The answer is the text of the message's text blocks (thinking blocks are not the answer).
    """
    if isinstance(message, str):
        return Reply(message, False, None)
    usage = message.usage
    counts = dict(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
                  cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
                  cache_read_tokens=getattr(usage, "cache_read_input_tokens", None) or 0)
    who = dict(model=getattr(message, "model", None), message_id=getattr(message, "id", None),
               request_id=request_id)
    text = "".join(b.text for b in message.content if b.type == "text")
    return Reply(text, is_object(text), message.stop_reason, **counts, **who)
