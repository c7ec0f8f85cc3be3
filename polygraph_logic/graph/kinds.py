"""Assertion kinds and their authority: the one place that defines them.

Every assertion has a *kind* saying what sort of evidence it is.  Kinds differ in
authority: a model hypothesis can guide a search but cannot support a conclusion
until it is verified.  The order below runs from most to least authoritative; it is
documentation and a sort order (``why`` lists a support set's assertions by it), and
no verdict weighs kinds against each other: a reader states which kinds it distrusts
(``whatif --distrust-kind``), and what rests only on those falls for that question, or
which kinds a use requires (``--require``, query/evidence.py): an artifact qualifies for it
when some support set holds only those kinds, an assertion that a verification names
(its ``verifies``) counting as one of them.

An assertion without ``"kind"`` is a ``source_claim``; a graph built before kinds
existed reads every assertion as one.
"""

from __future__ import annotations

from typing import Iterable

from polygraph_logic.errors import PolygraphError

DEFAULT_KIND = "source_claim"

#: kind -> description, most authoritative first (the authority order)
KINDS: dict[str, str] = {
    "verification": "a check that confirmed a claim (an experiment, a curator's review, a passing test)",
    "source_claim": "a claim stated by a source document (a paper, an annotation file, a database record)",
    "tool_observation": "what a tool observed when run (a query result, a measurement, a log line)",
    "policy_decision": "a decision taken under a stated policy (a curation rule, an approval, a sign-off)",
    "user_assertion": "something the user stated, not backed by a document",
    "graph_derived": "a relation read off the graph itself (a path, an inferred link) and recorded as evidence",
    "model_hypothesis": "a language model's conjecture: it may guide a search but cannot support a conclusion "
                        "until verified",
}


def authority(kind: str) -> int:
    """Returns the kind's rank in the authority order (0 is the most authoritative)."""
    return list(KINDS).index(kind)


def is_kind(value) -> bool:
    return isinstance(value, str) and value in KINDS


def check_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    """Returns the kinds, deduplicated in order; an unknown kind is an ``unknown_kind`` error."""
    kinds = tuple(dict.fromkeys(kinds))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise PolygraphError("unknown_kind", f"unknown kind(s) {', '.join(map(repr, unknown))}; "
                                             f"choose from: {', '.join(KINDS)}")
    return kinds
