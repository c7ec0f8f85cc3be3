"""Evidence metadata: when an assertion was acquired, for whom, how long it stays fresh, its status.

The evidence ledger's items carry a time, an authorization scope, a freshness and a status
(DESIGN.md). An assertion may carry them as optional fields, all validated on reading::

    {"id": "a12", ..., "time": "2024-05-01T09:30:00Z", "expires": "2025-05-01",
     "scope": ["team:oncology"], "status": "superseded", "invalidated_at": "2024-11-02",
     "invalidated_by": "a40"}
    {"id": "v1", ..., "kind": "verification", "verifies": ["h3"]}

- ``time``: when the evidence was generated or acquired (PROV-O ``generatedAtTime``);
- ``expires``: its freshness: from then on it is stale;
- ``scope``: the authorization scopes it may be used in (a name or a list); absent: every scope;
- ``status``: ``active`` (the default), ``superseded`` or ``retracted``; ``invalidated_at`` (PROV-O
  ``invalidatedAtTime``) says since when an item that is not active stopped being so (absent: it
  never counted), ``invalidated_by`` what invalidated it (PROV-O ``wasInvalidatedBy``);
- ``verifies`` (a verification only): the assertions it confirms; a requirement of kinds
  (``--require``) counts each of them as acceptable while the verification is usable;
- ``agent`` and ``acquisition``: who asserted it and how it was acquired (agents.py).

Times are ISO 8601 (``2024-05-01``, ``2024-05-01T09:30:00Z``, ``...+02:00``); a time without a zone
is UTC, a date is its midnight UTC. Durations (``--stale-after``) are ``90d``, ``12h``, ``2w``,
``30m``, ``45s``, ``1y`` (365 days) or ISO 8601 ``P30D``, ``PT12H``, ``P1W``, ``P1DT6H``.
The queries that read these fields are query/evidence.py's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.graph.agents import Acquisition, Agent, acquisition_of, agent_of
from polygraph_logic.graph.times import parse_time, show_time

STATUSES = ("active", "superseded", "retracted")
#: the optional fields of an assertion that make up its evidence metadata, in the order written
EVIDENCE_FIELDS = ("time", "expires", "scope", "status", "invalidated_at", "invalidated_by", "verifies", "agent",
                   "acquisition")


def show_duration(duration: timedelta) -> str:
    """A duration as the flags take it: the largest whole unit of d, h, m, s (``365d``, ``36h``)."""
    seconds = duration.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_SHORT = re.compile(r"(\d+(?:\.\d+)?)\s*(s|min|m|h|d|w|y)", re.IGNORECASE)
_ISO = re.compile(r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)


def parse_duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``2w``, ``30m``, ``45s``, ``1y`` or ISO 8601 ``P30D`` / ``PT12H`` / ``P1W``:
    a positive duration; ``bad_duration`` otherwise (months are refused: their length varies)."""
    value = text.strip() if isinstance(text, str) else ""
    short = _SHORT.fullmatch(value)
    if short:
        seconds = float(short.group(1)) * _UNITS[short.group(2).lower()]
    else:
        iso = _ISO.fullmatch(value)
        if iso is None or not any(iso.groups()) or value.upper().endswith("T"):
            raise PolygraphError("bad_duration", f"a duration is a number and a unit (90d, 12h, 2w, 30m, 45s, "
                                                 f"1y) or ISO 8601 such as P30D or PT12H, got {text!r}")
        weeks, days, hours, minutes, secs = (float(g) if g else 0.0 for g in iso.groups())
        seconds = (((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + secs
    if seconds <= 0:
        raise PolygraphError("bad_duration", f"a duration must be longer than zero, got {text!r}")
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class Evidence:
    """An assertion's evidence metadata (the module docstring); every field optional."""

    time: datetime | None = None
    expires: datetime | None = None
    scope: tuple[str, ...] = ()
    status: str = "active"
    invalidated_at: datetime | None = None
    invalidated_by: str | None = None
    verifies: tuple[str, ...] = ()
    agent: Agent | None = None  # who asserted it (agents.py)
    acquisition: Acquisition | None = None  # how it was acquired (agents.py)

    def to_json(self) -> dict:
        """The fields as an assertion record carries them (only those stated)."""
        out: dict = {}
        for name in EVIDENCE_FIELDS:
            value = getattr(self, name)
            if isinstance(value, (Agent, Acquisition)):
                out[name] = value.to_json()
            elif isinstance(value, datetime):
                out[name] = show_time(value)
            elif isinstance(value, tuple):
                if value:
                    out[name] = list(value)
            elif value is not None and not (name == "status" and value == "active"):
                out[name] = value
        return out

    def dumps(self) -> str:
        """The JSON text the graph stores for it."""
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def loads(cls, text: str | None) -> "Evidence | None":
        """Reads what ``dumps`` wrote (None for none)."""
        if not text:
            return None
        return evidence_of(json.loads(text), "", None, [])

    # the questions query/evidence.py asks of one item
    def known_at(self, moment: datetime) -> bool:
        return self.time is None or self.time <= moment

    def invalid_at(self, moment: datetime) -> bool:
        return self.status != "active" and (self.invalidated_at is None or self.invalidated_at <= moment)

    def stale_at(self, moment: datetime, after: timedelta | None) -> bool:
        if self.expires is not None and self.expires <= moment:
            return True
        return after is not None and self.time is not None and self.time < moment - after

    def allowed_in(self, scope: str) -> bool:
        return not self.scope or scope in self.scope


def evidence_of(record: dict, kind: str, where: Position | None, problems: list) -> Evidence | None:
    """The evidence metadata of an assertion record (None when it states none); each bad field is a
    problem added to ``problems`` with ``where``, and the record then gives None."""
    stated = [name for name in EVIDENCE_FIELDS if record.get(name) is not None]
    if not stated:
        return None
    values: dict = {}
    before = len(problems)

    def problem(code: str, message: str) -> None:
        problems.append(PolygraphError(code, message, where))

    for name in ("time", "expires", "invalidated_at"):
        if record.get(name) is not None:
            try:
                values[name] = parse_time(record[name], f"field {name!r}")
            except PolygraphError as error:
                problem(error.code, error.message)
    for name in ("scope", "verifies"):
        value = record.get(name)
        if value is None:
            continue
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items or not all(isinstance(i, str) and i.strip() for i in items):
            problem("bad_field", f"field {name!r} must be a non-empty string or a non-empty list of them, "
                                 f"got {value!r}")
        else:
            values[name] = tuple(dict.fromkeys(items))
    status = record.get("status", "active")
    if status not in STATUSES:
        problem("bad_field", f"field 'status' must be one of {', '.join(STATUSES)}, got {status!r}")
    else:
        values["status"] = status
    invalidated_by = record.get("invalidated_by")
    if invalidated_by is not None:
        if not isinstance(invalidated_by, str) or not invalidated_by.strip():
            problem("bad_field", f"field 'invalidated_by' must be a non-empty string, got {invalidated_by!r}")
        else:
            values["invalidated_by"] = invalidated_by
    if status == "active" and ("invalidated_at" in stated or "invalidated_by" in stated):
        problem("bad_field", "invalidated_at and invalidated_by belong to evidence that is not active: "
                             "say \"status\": \"superseded\" or \"retracted\"")
    if "verifies" in stated and kind and kind != "verification":
        problem("bad_field", f"only a verification may name what it verifies ('verifies'); this assertion's "
                             f"kind is {kind!r}")
    for later, earlier in (("expires", "time"), ("invalidated_at", "time")):
        if later in values and earlier in values and values[later] < values[earlier]:
            problem("bad_field", f"{later} ({show_time(values[later])}) is before time "
                                 f"({show_time(values[earlier])})")
    if record.get("agent") is not None:
        values["agent"] = agent_of(record["agent"], problem)
    if record.get("acquisition") is not None:
        values["acquisition"] = acquisition_of(record["acquisition"], problem)
    if len(problems) > before:
        return None
    return Evidence(**{f.name: values[f.name] for f in fields(Evidence) if f.name in values})
