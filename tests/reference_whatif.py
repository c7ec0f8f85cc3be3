"""A deliberately naive what-if, for cross-checks of the on-disk path.

It reads every assertion, artifact and fact of a graph into memory and applies the
policies as docs/concepts.md and DESIGN.md state them, artifact by artifact, with no index:
what the disk path must equal, verdict for verdict (exact mode aside: that is checked
against a from-scratch Boolean recomputation in test_whatif.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Reference:
    touched: set[str] = field(default_factory=set)
    dead: set[str] = field(default_factory=set)
    demoted: set[str] = field(default_factory=set)
    uncertain: set[str] = field(default_factory=set)
    summaries: dict[str, dict] = field(default_factory=dict)


class ReferenceGraph:
    """Everything of a graph in Python lists and dicts."""

    def __init__(self, graph):
        self.assertions = list(graph.assertions.values())
        self.artifacts = list(graph.artifacts())
        self.facts = {(f.relation, f.args): f for f in graph.facts()}

    def deleted(self, deletion) -> set[str]:
        return {a.id for a in self.assertions if a.source in deletion.sources
                or a.predicate in deletion.relations or a.id in deletion.assertions}

    def what_if(self, deletion, policy: str) -> Reference:
        deleted = self.deleted(deletion)
        out = Reference()

        def label_dead(support) -> bool:
            return all(set(group) & deleted for group in support)

        touched = [a for a in self.artifacts if any(x in deleted for g in a.support for x in g)]
        out.touched = {a.id for a in touched}
        rules = _rules(policy)
        dead_by_label = {a.id for a in touched if label_dead(a.support)}
        inexact = {a.id for a in self.artifacts if not a.exact}
        if policy == "trust-all":
            dies = set(dead_by_label)
        elif policy == "flat":
            dies = set(out.touched)
        elif policy == "deployed":
            dies = set()
            for a in touched:
                if a.layer == "claim" and a.id in dead_by_label:
                    stating = {s.id for s in self.assertions if s.triple == a.fact[1]}
                    if a.exact or stating <= deleted:
                        dies.add(a.id)
        else:
            dies = dead_by_label | {a.id for a in touched if rules.get(a.layer) == "distrust"}
            if rules.get("summary") == "distrust-flat":  # a summary no sentence belongs to
                with_sentences = {a.content["summary"] for a in self.artifacts if a.layer == "sentence"}
                dies |= {a.id for a in touched if a.layer == "summary" and a.id not in with_sentences}
        uncertain = set()
        if policy not in ("flat", "deployed"):
            uncertain = dies & dead_by_label & inexact
        if policy != "flat" and rules.get("edge") != "distrust":
            for a in touched:
                if a.layer != "claim" or a.id not in dies or a.id not in dead_by_label:
                    continue
                edge = self.facts.get(("edge", a.fact[1]))
                if edge is None:
                    continue
                if not label_dead(edge.support):
                    out.demoted.add(a.id)
                    dies.discard(a.id)
                elif not edge.exact:
                    uncertain.add(a.id)
        self._summaries(touched, dies, policy, rules, out)
        out.dead = dies
        out.uncertain = (uncertain - out.demoted) & dies
        return out

    def _summaries(self, touched, dies, policy, rules, out) -> None:
        trusting = policy not in ("flat", "deployed") and "distrust" not in (rules.get("summary"), rules.get("sentence"))
        sentences: dict[str, list[str]] = {}
        for a in self.artifacts:
            if a.layer == "sentence":
                sentences.setdefault(a.content["summary"], []).append(a.id)
        touched_ids = {a.id for a in touched}
        for summary, parts in sorted(sentences.items()):
            if summary not in touched_ids and not touched_ids & set(parts):
                continue
            dead = [s for s in parts if s in dies]
            removed = len(dead) == len(parts) if trusting else summary in dies
            if summary in touched_ids:
                dies.discard(summary)
                if removed:
                    dies.add(summary)
            if removed:
                out.touched.update(parts)
                dies.update(parts)
            status = "removed" if removed else ("trimmed" if dead else "kept")
            out.summaries[summary] = {"status": status, "sentences": len(parts), "dead_sentences": len(dead)}


def _rules(policy: str) -> dict[str, str]:
    """Each layer's rule as docs/whatif.md states the policies: distrust:L is L=distrust, study is
    summary=distrust-flat, a composition lists its layers (the rest trust their labels)."""
    if policy in ("trust-all", "flat", "deployed"):
        return {}
    if policy == "study":
        return {"summary": "distrust-flat"}
    if policy.startswith("distrust:"):
        return {policy[len("distrust:"):]: "distrust"}
    return dict(part.split("=") for part in policy.split(","))
