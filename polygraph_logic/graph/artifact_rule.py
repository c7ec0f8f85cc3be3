"""What becomes an artifact: the one rule every build follows (Python, DuckDB, Spark) and ``add`` too.

An artifact is a fact of one of six relations, each a layer, stored in this order:

============== ============================ ======================================= =================
layer          its facts                    an artifact when                        id
============== ============================ ======================================= =================
claim          ``claim(s, p, o)``           always: an assertion states it          ``claim:`` digest
merge          ``merge(id)``                its receipt states it                   the receipt's
summary        ``summary(id)``              its receipt states it                   the receipt's
sentence       ``sentence(id)``             its receipt lists it (a fact of label   the sentence's
                                            zero when no rule derives it)
edge           ``edge(s, p, o)``            it rests on an assertion (not on        ``edge:`` digest
                                            background knowledge alone) and no
                                            assertion states the triple (then it is
                                            the claim's artifact)
contradiction  ``contradiction(x, y, r)``   it rests on an assertion                ``contradiction:``
                                                                                    digest
============== ============================ ======================================= =================

``is_artifact`` decides it for one fact (the Python build, ``add``); ``sql_condition`` is the
same decision as an SQL condition on a fact row (the DuckDB and Spark builds): both read the
declaration ``RULES``, so a change to it changes every build.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LayerRule:
    """Which facts of one layer's relation are artifacts, and how the artifact is named."""

    layer: str
    from_receipts: bool    # the receipts name them (merges, summaries, sentences): id and content
    needs_assertion: bool  # a fact of background knowledge alone (label one) is no artifact
    unless_claimed: bool   # a triple an assertion states is the claim's artifact, not this layer's
    digested: bool         # the id is the layer and a digest of the fact's arguments


#: the layers in the order their artifacts are stored (numbered)
RULES = (
    LayerRule("claim", from_receipts=False, needs_assertion=False, unless_claimed=False, digested=True),
    LayerRule("merge", from_receipts=True, needs_assertion=False, unless_claimed=False, digested=False),
    LayerRule("summary", from_receipts=True, needs_assertion=False, unless_claimed=False, digested=False),
    LayerRule("sentence", from_receipts=True, needs_assertion=False, unless_claimed=False, digested=False),
    LayerRule("edge", from_receipts=False, needs_assertion=True, unless_claimed=True, digested=True),
    LayerRule("contradiction", from_receipts=False, needs_assertion=True, unless_claimed=False, digested=True),
)
RULE_OF = {rule.layer: rule for rule in RULES}
#: the relations whose facts can be artifacts
ARTIFACT_RELATIONS = tuple(rule.layer for rule in RULES)


def is_artifact(layer: str, label_is_one: bool, claimed: bool = False) -> bool:
    """Whether a fact of ``layer``'s relation is an artifact: ``label_is_one`` when it rests on
    background knowledge alone, ``claimed`` when an assertion states its triple."""
    rule = RULE_OF.get(layer)
    if rule is None:
        return False
    return not (rule.needs_assertion and label_is_one) and not (rule.unless_claimed and claimed)


def sql_condition(layer: str, one: str = "f.one", claimed: str = "f.claimed", relation: str = "f.relation") -> str:
    """``is_artifact`` as an SQL condition on a fact row: ``one`` and ``claimed`` are the row's
    boolean expressions for a label of one and a stated triple, ``relation`` its relation."""
    rule = RULE_OF[layer]
    terms = [f"{relation} = '{layer}'"]
    if rule.needs_assertion:
        terms.append(f"NOT {one}")
    if rule.unless_claimed:
        terms.append(f"NOT {claimed}")
    return " AND ".join(terms)


__all__ = ["ARTIFACT_RELATIONS", "RULES", "RULE_OF", "LayerRule", "is_artifact", "sql_condition"]
