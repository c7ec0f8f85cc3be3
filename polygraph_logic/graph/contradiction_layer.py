"""The contradiction layer: every ``contradiction(x, y, reason)`` fact is an artifact, its sides named.

Rules derive contradictions (rules/contradictions.dl, the ``owl:propertyDisjointWith``
rules of rules/ro.dl, RO's SWRL rules concluding ``owl:Nothing``, or a user's own). The
encoding: ``x`` and ``y`` are the subject and object both sides share and ``reason`` is
``"P vs Q: why"``; the sides are the triples ``(x, P, y)`` and ``(x, Q, y)``, ``not P``
naming the negated triple (a ``neg_edge``, from a negated assertion); a reason that is a
predicate alone (a CURIE or IRI, no space) is short for ``"P vs not P"``, an edge and its
negation (the rule then needs no string function: every engine evaluates it). A contradiction
whose reason does not have that form (RO's SWRL ones: ``"SWRL: ..."``) keeps x, y and the
reason, with no sides.

The label of a contradiction is the product of its two sides' labels (the rule body is
a conjunction): each support set holds evidence for both sides. A contradiction of
background knowledge alone (label 1) rests on no assertion; like an edge of the ontology
alone it is not an artifact of the graph (it is a fact of the stored program).
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import tuple_key
from polygraph_logic.graph.artifact_ids import IdsGiven
from polygraph_logic.graph.artifact_rule import is_artifact
from polygraph_logic.graph.store.rows import Artifact

LAYER = "contradiction"
#: "P vs Q" or "P vs not P", then optionally ": why"; or P alone, a CURIE such as RO:0002213 (or an IRI)
_REASON = re.compile(r"(not )?(\S+) vs (not )?(\S+?)(?::\s.*)?\Z", re.DOTALL)
_PREDICATE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*:\S+\Z")


def sides(subject, object_, reason) -> list[dict] | None:
    """Returns the two sides a contradiction names, ``{"subject", "predicate", "object", "negated"}``
    each, or None when the reason is not of the form ``"P vs Q: why"`` (see the module docstring)."""
    if not all(isinstance(v, str) for v in (subject, object_, reason)):
        return None
    if _PREDICATE.match(reason):  # P alone: an edge and its negation
        return [{"subject": subject, "predicate": reason, "object": object_, "negated": False},
                {"subject": subject, "predicate": reason, "object": object_, "negated": True}]
    match = _REASON.match(reason)
    if match is None:
        return None
    return [{"subject": subject, "predicate": match[2], "object": object_, "negated": bool(match[1])},
            {"subject": subject, "predicate": match[4], "object": object_, "negated": bool(match[3])}]


def content(args: Sequence) -> dict:
    """Returns a contradiction artifact's content: subject, object, reason and (when the reason
    names them) the sides; a function of the fact alone, so an incremental add writes what a
    full build writes. A contradiction that is not ``(x, y, reason)`` is ``bad_contradiction``."""
    if len(args) != 3:
        raise PolygraphError("bad_contradiction",
                             f"contradiction{tuple(args)!r} has {len(args)} arguments; rules derive "
                             "contradiction(x, y, reason) (see rules/contradictions.dl)")
    subject, object_, reason = args
    found = sides(subject, object_, reason)
    out = {"subject": subject, "object": object_, "reason": reason}
    if found is not None:
        out["sides"] = found
    return out


def fact_args(content: dict) -> tuple:
    """Returns the ``contradiction`` fact's arguments from an artifact's content."""
    return content["subject"], content["object"], content["reason"]


def contradiction_artifacts(model, tally) -> Iterator[Artifact]:
    """Yields the contradiction artifacts of an evaluated model that rest on some assertion (id
    ``contradiction:`` plus a digest of its arguments, as claims and edges), counting them in
    ``tally`` (build.Tally)."""

    rows = model.facts(LAYER) if LAYER in model.store.relations else {}
    ids = IdsGiven()
    for args, label in sorted(rows.items(), key=lambda row: tuple_key(row[0])):
        if not is_artifact(LAYER, label.is_one()):
            continue
        support = tuple(tuple(group) for group in model.semiring.to_json(label))
        yield tally.add(Artifact(ids.id(LAYER, args), LAYER, content(args), support, label.exact))


__all__ = ["LAYER", "content", "contradiction_artifacts", "fact_args", "sides"]
