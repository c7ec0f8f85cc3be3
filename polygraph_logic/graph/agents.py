"""Who asserted an item and how it was acquired: an assertion's agent and acquisition.

The evidence ledger's items carry their provenance and acquisition action (DESIGN.md). An
assertion may name both, as optional fields kept with its evidence metadata (evidence.py)::

    {"id": "a12", ..., "agent": "reviewer-1"}
    {"id": "doc#1", ..., "agent": {"id": "model:claude-x/extract-claims@2", "type": "model",
      "model": "claude-x", "prompt": "extract-claims", "prompt_version": "2", "prompt_sha256": "9f2c..."},
     "acquisition": {"id": "call:msg_01", "type": "model_call", "time": "2024-05-01T09:30:00Z",
      "used": ["PMID:39973430"], "prompt_sha256": "41d0...", "message_id": "msg_01"}}

- ``agent``: an id (a text) or an object: ``id`` (required), ``type`` (``model``, ``person``,
  ``tool``, ``organization``; absent: not said), ``label``, and for a model ``model``, ``prompt``,
  ``prompt_version`` and ``prompt_sha256`` (the template it was asked with), for a tool ``version``.
  PROV-O: the assertion ``prov:wasAttributedTo`` the agent.
- ``acquisition``: an object: ``id`` (optional: the export names an unnamed one by its content),
  ``type`` (``model_call``, ``query``, ``tool_run``, ``curation``, ``import``, ``review``), ``time``
  (ISO 8601, when it ran), ``ended``, ``used`` (the inputs: sources, documents, assertion ids),
  ``query`` (the query text), and a model call's ``prompt_sha256`` (of the rendered prompt),
  ``message_id`` and ``request_id``. PROV-O: the assertion ``prov:wasGeneratedBy`` the activity,
  which ``prov:used`` its inputs and ``prov:wasAssociatedWith`` the agent.

Each bad field is a ``bad_field`` (``bad_time`` for a time) at its file and line; an unknown key
is refused rather than dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields
from datetime import datetime

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.times import parse_time, show_time

AGENT_TYPES = ("model", "person", "tool", "organization")
ACQUISITION_TYPES = ("model_call", "query", "tool_run", "curation", "import", "review")
_AGENT_TEXT = ("label", "model", "prompt", "prompt_version", "version")
_ACQUISITION_TEXT = ("query", "message_id", "request_id")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")


@dataclass(frozen=True)
class Agent:
    """An assertion's agent (the module docstring): a model and its prompt, a person, a tool."""

    id: str
    type: str | None = None
    label: str | None = None
    model: str | None = None
    prompt: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None
    version: str | None = None

    def to_json(self) -> str | dict:
        """The field as an assertion record carries it: the id alone when nothing else is said."""
        stated = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return self.id if list(stated) == ["id"] else stated


@dataclass(frozen=True)
class Acquisition:
    """How an assertion was acquired (the module docstring): the call, the query, the time."""

    id: str | None = None
    type: str | None = None
    time: datetime | None = None
    ended: datetime | None = None
    used: tuple[str, ...] = ()
    query: str | None = None
    prompt_sha256: str | None = None
    message_id: str | None = None
    request_id: str | None = None

    def to_json(self) -> dict:
        """The field as an assertion record carries it (only what is stated)."""
        out: dict = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, datetime):
                out[f.name] = show_time(value)
            elif value is not None and value != ():
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def key(self) -> str:
        """Its id, else a name made from its content (the same acquisition stated twice: one name)."""
        if self.id is not None:
            return self.id
        text = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False)
        return "acquisition-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def agent_of(value, problem) -> Agent | None:
    """The agent a record's ``agent`` field states; each bad part is ``problem(code, message)``."""
    if _text(value):
        return Agent(value)
    if not isinstance(value, dict):
        problem("bad_field", f"field 'agent' must be an agent id or an object with 'id', got {value!r}")
        return None
    known = {f.name for f in fields(Agent)}
    bad = len([problem("bad_field", f"field 'agent' has an unknown key {k!r}; it may say {', '.join(sorted(known))}")
               for k in value if k not in known])
    if not _text(value.get("id")):
        problem("bad_field", f"field 'agent' needs an 'id' (a non-empty string), got {value.get('id')!r}")
        bad += 1
    if value.get("type") is not None and value["type"] not in AGENT_TYPES:
        problem("bad_field", f"the agent's type must be one of {', '.join(AGENT_TYPES)}, got {value['type']!r}")
        bad += 1
    for name in (*_AGENT_TEXT, "prompt_sha256"):
        if value.get(name) is not None and not _text(value[name]):
            problem("bad_field", f"the agent's {name!r} must be a non-empty string, got {value[name]!r}")
            bad += 1
    if _text(value.get("prompt_sha256")) and not _SHA256.match(value["prompt_sha256"]):
        problem("bad_field", f"the agent's 'prompt_sha256' must be 64 lowercase hex digits, "
                             f"got {value['prompt_sha256']!r}")
        bad += 1
    return None if bad else Agent(**{k: v for k, v in value.items() if k in known})


def acquisition_of(value, problem) -> Acquisition | None:
    """The acquisition a record's ``acquisition`` field states, as ``agent_of`` reads an agent."""
    if not isinstance(value, dict) or not value:
        problem("bad_field", f"field 'acquisition' must be a non-empty object (id, type, time, used, ...), "
                             f"got {value!r}")
        return None
    known = {f.name for f in fields(Acquisition)}
    bad = len([problem("bad_field", f"field 'acquisition' has an unknown key {k!r}; it may say "
                                    f"{', '.join(sorted(known))}") for k in value if k not in known])
    values = {}
    if value.get("type") is not None and value["type"] not in ACQUISITION_TYPES:
        problem("bad_field", f"the acquisition's type must be one of {', '.join(ACQUISITION_TYPES)}, "
                             f"got {value['type']!r}")
        bad += 1
    for name in ("id", "type", *_ACQUISITION_TEXT, "prompt_sha256"):
        if value.get(name) is not None:
            if not _text(value[name]):
                problem("bad_field", f"the acquisition's {name!r} must be a non-empty string, got {value[name]!r}")
                bad += 1
            values[name] = value[name]
    if _text(value.get("prompt_sha256")) and not _SHA256.match(value["prompt_sha256"]):
        problem("bad_field", f"the acquisition's 'prompt_sha256' must be 64 lowercase hex digits, "
                             f"got {value['prompt_sha256']!r}")
        bad += 1
    for name in ("time", "ended"):
        if value.get(name) is not None:
            try:
                values[name] = parse_time(value[name], f"the acquisition's {name!r}")
            except PolygraphError as error:
                problem(error.code, error.message)
                bad += 1
    if "time" in values and "ended" in values and values["ended"] < values["time"]:
        problem("bad_field", "the acquisition ended before it started ('ended' is before 'time')")
        bad += 1
    used = value.get("used")
    if used is not None:
        items = [used] if isinstance(used, str) else used
        if not isinstance(items, list) or not items or not all(_text(i) for i in items):
            problem("bad_field", f"the acquisition's 'used' must be a non-empty string or a non-empty list of "
                                 f"them, got {used!r}")
            bad += 1
        else:
            values["used"] = tuple(dict.fromkeys(items))
    return None if bad else Acquisition(**values)
