"""Structured output: one tool per answer schema, the request that forces it, the answer it gives.

Every request offers exactly one tool, whose ``input_schema`` is the JSON Schema of the
answer (``TOOLS``), and forces it with ``tool_choice``; the model's answer is the input of
its ``tool_use`` block. That input is kept as JSON text (the form the cache and recorded
answers hold) and then checked by schemas.py, which knows what a JSON Schema cannot say:
that a citation names an id the prompt showed, a predicate one of the relations listed, a
merge member one of the names listed.

The request puts the template's fixed part in ``system`` with a ``cache_control``
breakpoint, so the prefix (tool definition, then system prompt) is cached by the API and
billed at the cache-read price on every later call that shares it; a prompt asked several
times (an audit's draws) gets a second breakpoint after its user turn. The API caches only
a prefix of at least its minimum length (1,024 tokens on Sonnet models); a shorter one is
billed as plain input, with no cache write either.
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


def _listing(field: str, item: dict, description: str) -> tuple[str, dict]:
    return description, _object(**{field: {"type": "array", "items": item}})


#: answer schema -> (tool name, description, JSON Schema of the tool's input)
TOOLS: dict[str, tuple[str, str, dict]] = {
    "claims": ("record_claims", *_listing("claims", _object(
        subject={"type": "string"}, predicate={"type": "string"}, object={"type": "string"}, cites=_IDS),
        "Records the claims the document states, each citing the sentence ids that state it.")),
    "merges": ("record_merges", *_listing("merges", _object(
        canonical={"type": "string"}, members={"type": "array", "items": {"type": "string"}, "minItems": 1},
        support=_SUPPORT), "Records the merges of entity names, each with its alternative evidence bundles.")),
    "sentences": ("record_sentences", *_listing("sentences", _object(text={"type": "string"}, support=_SUPPORT),
                                                "Records the summary's sentences, each with its own receipt.")),
    "summary": ("record_summary", "Records the summary and the evidence it rests on.",
                _object(summary={"type": "string"}, support=_SUPPORT)),
    "rederivation": ("record_verdict", "Records whether the artifact is reproduced from the evidence shown.",
                     _object(verdict={"type": "boolean"}, reason={"type": "string"})),
}


def tool(schema: str) -> dict:
    """Returns the tool definition that answers ``schema`` (strict: inputs must match it)."""
    name, description, input_schema = TOOLS[schema]
    return {"name": name, "description": description, "input_schema": input_schema, "strict": True}


def request(model: str, max_tokens: int, prompt: Prompt, schema: str, repeated: bool = False) -> dict:
    """Returns the Messages API parameters of one question: system prompt cached, tool forced.

    ``repeated``: the same prompt is asked more than once in this run (the draws of an audit),
    so the user turn gets a cache breakpoint too and every later draw reads the whole prompt
    from the cache; a user turn asked once is not marked, since a cache write costs 1.25x.
    """
    user: Any = [{"type": "text", "text": prompt.user, "cache_control": {"type": "ephemeral"}}] if repeated \
        else prompt.user
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                              "messages": [{"role": "user", "content": user}],
                              "tools": [tool(schema)], "tool_choice": {"type": "tool", "name": TOOLS[schema][0]}}
    if prompt.system:
        params["system"] = [{"type": "text", "text": prompt.system, "cache_control": {"type": "ephemeral"}}]
    return params


@dataclass(frozen=True)
class Reply:
    """What one API answer holds: the answer text, whether it came as the tool's call, the usage,
    and who answered (the model id the API reports, the message id and the request id)."""

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


def reply(message: Any, schema: str, request_id: str | None = None) -> Reply:
    """Returns the Reply of a Message (or of the plain text a gateway sent instead of one)."""
    if isinstance(message, str):
        return Reply(message, False, None)
    name = TOOLS[schema][0]
    calls = [b for b in message.content if b.type == "tool_use" and b.name == name]
    usage = message.usage
    counts = dict(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
                  cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
                  cache_read_tokens=getattr(usage, "cache_read_input_tokens", None) or 0)
    who = dict(model=getattr(message, "model", None), message_id=getattr(message, "id", None),
               request_id=request_id)
    if len(calls) == 1 and isinstance(calls[0].input, dict):
        text = json.dumps(calls[0].input, ensure_ascii=False)
        return Reply(text, True, message.stop_reason, **counts, **who)
    text = "".join(b.text for b in message.content if b.type == "text")
    return Reply(text, False, message.stop_reason, **counts, **who)
