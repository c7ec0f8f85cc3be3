"""Cleanup policies: what the verdicts of a deletion trust, layer by layer.

Named policies (``POLICIES``):

- ``trust-all``: an artifact dies when its label dies (every support set loses an assertion); a
  claim whose triple the rules still entail is demoted to the edge; a summary with
  sentence-level receipts stands, trimmed, while a sentence does.
- ``deployed``: what deployed pipelines do: only claims die, when their stating assertions are
  all deleted.
- ``flat``: every artifact a deletion touches dies (labels are not read).
- ``distrust:LAYER``: as trust-all, but an artifact of LAYER dies as soon as it is touched.
- ``study``: the study's end state (its section 6): trust claims, merges and edges by their labels,
  drop a flat summary (one without sentence-level receipts) as soon as it is touched, keep a
  summary with sentence-level receipts, trimmed, while a sentence stands.

A policy may also be composed per layer, ``LAYER=RULE[,LAYER=RULE...]`` (e.g.
``summary=distrust-flat,merge=distrust``), each RULE one of ``trust`` (the layer's artifacts
die when their labels die), ``distrust`` (when touched) and, for summaries, ``distrust-flat``
(flat summaries when touched, sentence-level ones trimmed); a layer not named trusts its labels.
``distrust:LAYER`` is ``LAYER=distrust``, ``study`` is ``summary=distrust-flat``.
"""

from __future__ import annotations

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.rows import LAYERS

POLICIES = ("deployed", "trust-all", "flat", "study") + tuple(f"distrust:{layer}" for layer in LAYERS)
RULES = ("trust", "distrust", "distrust-flat")


def layer_rules(policy: str) -> dict[str, str] | None:
    """The rule of each layer that does not trust its labels under ``policy`` ({} for trust-all);
    None for ``flat`` and ``deployed``, which read no layer by rules.  Raises unknown_policy."""
    if policy in ("flat", "deployed"):
        return None
    if policy == "trust-all":
        return {}
    if policy == "study":
        return {"summary": "distrust-flat"}
    if policy.startswith("distrust:") and policy.split(":", 1)[1] in LAYERS:
        return {policy.split(":", 1)[1]: "distrust"}
    if "=" not in policy:
        raise _unknown(policy, "")
    rules: dict[str, str] = {}
    for part in policy.split(","):
        layer, _, rule = (text.strip() for text in part.partition("="))
        if layer not in LAYERS:
            raise _unknown(policy, f": no layer {layer!r} (layers: {', '.join(LAYERS)})")
        if rule not in RULES or (rule == "distrust-flat" and layer != "summary"):
            raise _unknown(policy, f": no rule {rule!r} for {layer} (rules: trust, distrust; for summaries "
                                   "also distrust-flat)")
        if layer in rules:
            raise _unknown(policy, f": {layer} is named twice")
        rules[layer] = rule
    return {layer: rule for layer, rule in rules.items() if rule != "trust"}


def check_policy(policy: str) -> str:
    """Returns the policy if it is known or well composed; raises PolygraphError naming the choices otherwise."""
    if not isinstance(policy, str):
        raise _unknown(policy, "")
    layer_rules(policy)
    return policy


def trusts_sentences(rules: dict[str, str] | None) -> bool:
    """Whether a summary with sentence-level receipts is trimmed (stands while a sentence does)."""
    return rules is not None and rules.get("summary") != "distrust" and rules.get("sentence") != "distrust"


def _unknown(policy, why: str) -> PolygraphError:
    return PolygraphError("unknown_policy", f"unknown policy {policy!r}{why}; choose one of: {', '.join(POLICIES)}, "
                                            "or compose LAYER=RULE[,LAYER=RULE...] (rules: trust, distrust, "
                                            "distrust-flat for summaries)")


__all__ = ["POLICIES", "RULES", "check_policy", "layer_rules", "trusts_sentences"]
