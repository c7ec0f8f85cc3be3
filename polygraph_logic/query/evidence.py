"""Questions of evidence metadata: what stood given the evidence known then, fresh, in scope; and
what an artifact may be used for given the kinds a use requires.

**A view of the evidence** (``EvidenceView``; the flags ``--as-of``, ``--stale-after``, ``--scope``)
leaves out, as a deletion does, the assertions that a reader at that time, for that scope, may not
use (graph/evidence.py defines the fields):

- ``not_yet``: acquired after ``as_of`` (its ``time`` is later);
- ``invalidated``: superseded or retracted by then (``invalidated_at`` at or before the reference
  time; a status without ``invalidated_at`` has never counted);
- ``stale``: expired by then (``expires``), or, with ``stale_after``, acquired longer than that
  before the reference time;
- ``out_of_scope``: authorized for other scopes only (an item without ``scope`` serves every scope).

The reference time is ``as_of``, or the time the view was made (``--as-of now`` says so
explicitly), so ``--scope`` or ``--stale-after`` alone also leave out what is invalidated or
expired now. An assertion with no evidence metadata is always known, never stale, active and of
every scope: a view leaves out nothing a graph without metadata holds.

**Stale by default** (the ledger design's rule: a retracted, invalidated or expired item satisfies
nothing unless the reader asks for history): a question that names no view reads the graph under
the *current view*, ``EvidenceView()`` (reference time now, every scope): what is superseded,
retracted or expired now is left out, and said so.  ``raw`` (``--raw``, ``Deletion(raw=True)``)
asks for the raw view, every stored assertion counting.  ``default_view`` gives the current view
only when it leaves something out, so a graph without such items reads as it always did.

**A requirement** (``Requirement``; ``--require KIND[,KIND]``) does not delete: it marks, per
artifact, whether some support set holds only assertions of the required kinds, once the
deletion (and view) is applied. An assertion a usable verification names (``verifies``) counts as
required kind: the verification promotes it (a model hypothesis guides a search, and once
verified may satisfy a precondition). The what-if decides it exactly, as every verdict: an
artifact qualifies when it stands with every assertion of another kind (not promoted) deleted too.
Under an authorization policy (``--authorization POLICY``, graph/authorization.py) only authorized
assertions count: an unauthorized one is unacceptable whatever its kind, and an unauthorized
verification promotes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.evidence import Evidence, parse_duration, parse_time, show_duration, show_time
from polygraph_logic.graph.kinds import KINDS, check_kinds

if TYPE_CHECKING:  # read only with a policy: `whatif --help` loads none of graph/authorization.py's readers
    from polygraph_logic.graph.authorization import Policy

#: the reasons a view leaves an assertion out, in the order they are checked and reported
REASONS = ("not_yet", "invalidated", "stale", "out_of_scope")


@dataclass(frozen=True)
class EvidenceView:
    """The evidence a reader may use at a time, fresh within ``stale_after``, for ``scope``."""

    as_of: datetime | None = None
    stale_after: timedelta | None = None
    scope: str | None = None
    made: datetime = field(default_factory=lambda: datetime.now(timezone.utc), compare=False)

    @classmethod
    def parse(cls, as_of: str | None = None, stale_after: str | None = None,
              scope: str | None = None, raw: bool = False) -> "EvidenceView | None":
        """The view the flags name (None when none is given: the current view by default, the raw
        view with ``raw``); ``as_of`` may be ``now``."""
        if raw and not (as_of is None and stale_after is None and scope is None):
            raise PolygraphError("bad_argument", "--raw reads every assertion as stored; it cannot be combined "
                                                 "with --as-of, --stale-after or --scope, which choose a view")
        if as_of is None and stale_after is None and scope is None:
            return None
        moment = None
        if as_of is not None:
            moment = (datetime.now(timezone.utc).replace(microsecond=0) if as_of.strip().lower() == "now"
                      else parse_time(as_of, "--as-of"))
        if scope is not None and not scope.strip():
            raise PolygraphError("bad_argument", "--scope names a scope, not an empty text")
        return cls(moment, parse_duration(stale_after) if stale_after is not None else None, scope)

    @property
    def reference(self) -> datetime:
        return self.as_of or self.made

    def reason(self, evidence: Evidence) -> str | None:
        """Why the view leaves out an assertion with this metadata (REASONS), or None."""
        at = self.reference
        if self.as_of is not None and not evidence.known_at(at):
            return "not_yet"
        if evidence.invalid_at(at):
            return "invalidated"
        if evidence.stale_at(at, self.stale_after):
            return "stale"
        if self.scope is not None and not evidence.allowed_in(self.scope):
            return "out_of_scope"
        return None

    def excluded(self, graph) -> dict[str, dict[int, str]]:
        """{reason: {assertion number: id}} of the graph's assertions the view leaves out."""
        out: dict[str, dict[int, str]] = {reason: {} for reason in REASONS}
        for number, name, _, text in graph.evidence_rows():
            reason = self.reason(Evidence.loads(text))
            if reason is not None:
                out[reason][number] = name
        return out

    def to_json(self) -> dict:
        return {"as_of": show_time(self.as_of) if self.as_of else None,
                "reference_time": show_time(self.reference),
                "stale_after_seconds": self.stale_after.total_seconds() if self.stale_after else None,
                "scope": self.scope}

    def __str__(self) -> str:
        parts = [f"as-of {show_time(self.as_of)}"] if self.as_of else []
        if self.stale_after:
            parts.append(f"stale-after {show_duration(self.stale_after)}")
        if self.scope is not None:
            parts.append(f"scope {self.scope}")
        return ", ".join(parts) or "now (the default view)"


def default_view(graph, made: datetime | None = None) -> EvidenceView | None:
    """The view a question that names none reads under: the current view (``EvidenceView()``:
    invalidated and expired items left out, as of ``made``, default now) when it leaves out any of
    the graph's assertions; None when it leaves out nothing (the raw view then reads the same)."""
    view = EvidenceView(made=made) if made is not None else EvidenceView()
    if not graph.evidence_rows():
        return None
    return view if any(view.excluded(graph).values()) else None


def left_out_now(graph) -> dict[int, str]:
    """{number: id} of the assertions the current view leaves out (invalidated or expired now): what
    satisfies no requirement unless the raw view is asked for."""
    view = default_view(graph)
    return {n: i for found in view.excluded(graph).values() for n, i in found.items()} if view else {}


@dataclass(frozen=True)
class Requirement:
    """The kinds a use of the graph requires of some support set of an artifact, counting only the
    assertions ``authorization`` authorizes (None: every assertion)."""

    kinds: tuple[str, ...]
    authorization: "Policy | None" = None

    @classmethod
    def parse(cls, values, authorization=None) -> "Requirement | None":
        """``--require KIND[,KIND]`` (repeatable) as a requirement; None when none is given.
        ``authorization``: a policy file (or Policy) whose unauthorized assertions never count."""
        names = [k.strip() for value in values or () for k in value.split(",") if k.strip()]
        if not names:
            if authorization is not None:
                raise PolygraphError("bad_argument", "--authorization says which assertions a requirement counts: "
                                                     "give --require KIND too")
            return None
        if authorization is None:
            return cls(check_kinds(names))
        from polygraph_logic.graph.authorization import as_policy  # noqa: PLC0415  (see TYPE_CHECKING above)

        return cls(check_kinds(names), as_policy(authorization))

    def split(self, graph, unusable: dict[int, str]) -> tuple[dict[int, str], dict[int, str]]:
        """``(unacceptable, promoted)``: {number: id} of the assertions of other kinds that no usable
        verification names (and of every unauthorized one), and of those a usable verification names
        (``unusable``: the numbers the deletion and view leave out; a verification among them
        promotes nothing)."""
        others = [k for k in KINDS if k not in self.kinds]
        unacceptable = graph.kind_numbers(others) if others else {}
        refused = unauthorized(graph, self.authorization)
        named = verified(graph, {**unusable, **refused})
        promoted = {n: i for n, i in unacceptable.items() if i in named and n not in refused}
        return {**{n: i for n, i in unacceptable.items() if n not in promoted}, **refused}, promoted

    def qualifying(self, graph, supports, unusable: dict[int, str] | None = None) -> list[bool]:
        """Per support set (a set of assertion ids): whether it holds only authorized assertions of the
        required kinds or that a usable verification names, none of them ``unusable`` (a deletion's)."""
        refused = unauthorized(graph, self.authorization)
        unusable = {**(unusable or {}), **refused}
        gone = set(unusable.values())
        kind = graph.kinds_of(a for support in supports for a in support)
        named = verified(graph, unusable)
        return [all(a not in gone and (kind[a] in self.kinds or a in named) for a in support) for support in supports]

    def __str__(self) -> str:
        return ",".join(self.kinds)


def verified(graph, unusable: dict[int, str]) -> set[str]:
    """The ids the graph's usable verifications name in ``verifies`` (``unusable``: {number: id} of
    the assertions a deletion or view leaves out; a verification among them names nothing)."""
    named: set[str] = set()
    for number, _, kind, text in graph.evidence_rows():
        if kind == "verification" and number not in unusable:
            named.update(json.loads(text).get("verifies", ()))
    return named


def unauthorized(graph, policy: "Policy | None") -> dict[int, str]:
    """{number: id} of the graph's assertions ``policy`` does not authorize (None: none)."""
    if policy is None:
        return {}
    from polygraph_logic.graph.authorization import carried_by  # noqa: PLC0415  (see TYPE_CHECKING above)

    out: dict[int, str] = {}
    for number, name, kind, has_text, text in graph.authorization_rows():
        evidence = Evidence.loads(text)
        record = json.loads(text) if text else {}
        carried = carried_by(record) | ({"text"} if has_text else frozenset())
        if not policy.allows(evidence.agent if evidence else None, kind, carried):
            out[number] = name
    return out

