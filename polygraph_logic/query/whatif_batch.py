"""What-ifs that each retract one source, the rows of several read at once (``top-sources``).

A what-if asks the store a dozen short questions (whatif_verdicts.py): the deleted assertions, the
facts and artifacts their mentions reach, the edges behind dead claims, the summaries' sentences.
On a graph folder each is a DuckDB query of 5 to 45 ms whatever its size, so twenty what-ifs of
one source each spent 0.2-0.4 s apiece asking.  ``SourceWhatIfs`` asks each of those questions once
for a batch of sources (their union) and answers every what-if of the batch from the rows held;
the questions whose answers it does not hold (a capped fact's derivations, assertion ids) go to
the graph.  The verdicts are the what-if's own (``decide``), so the same as ``what_if``'s.
"""

from __future__ import annotations

from polygraph_logic.query.whatif import Deletion, Outcome
from polygraph_logic.query.whatif_verdicts import decide

#: the most numbers one query of the batch's rows lists (a folder prunes its row groups by them)
CHUNK = 10_000


class SourceWhatIfs:
    """The rows that retracting any of ``sources`` touches, read once; ``outcome(source)`` is the
    what-if retracting that source (``policy``), as ``what_if`` decides it."""

    def __init__(self, graph, sources: list[str], policy: str = "trust-all"):
        self.graph, self.policy = graph, policy
        self.exact = graph.has_circuit()
        self.deleted: dict[str, dict[int, str]] = {source: {} for source in sources}
        for num, id_, source in graph.numbers_by_source(sources):
            self.deleted[source][num] = id_
        mentions, facts, artifacts = graph.batch_rows((n for found in self.deleted.values() for n in found), CHUNK)
        self._mentions: dict[int, list[int]] = {}
        for assertion, fact in mentions:
            self._mentions.setdefault(assertion, []).append(fact)
        self._facts = {row[0]: row for row in facts}
        self._artifacts = {row[3]: row for row in artifacts}
        claims = [self._facts[row[3]][2] for row in self._artifacts.values()
                  if row[2] == "claim" and row[3] in self._facts]
        self._edges = {row[0]: row for row in graph.edge_rows(claims)} if claims else {}
        summaries = {row[4] for row in self._artifacts.values() if row[4] is not None}
        self._parts = graph.summary_parts(summaries) if summaries else []

    def outcome(self, source: str) -> Outcome:
        """The what-if retracting ``source`` (one of the batch's), its verdicts decided."""
        numbers = self.deleted[source]
        outcome = Outcome(Deletion(sources=(source,)), frozenset(numbers.values()), self.policy, self.exact)
        decide(_Held(self), frozenset(numbers), outcome)
        return outcome


class _Held:
    """The graph as decide() asks it, answered from a batch's rows where they hold the answer."""

    def __init__(self, batch: SourceWhatIfs):
        self._batch = batch

    def __getattr__(self, name: str):
        return getattr(self._batch.graph, name)

    def _touched(self, deleted) -> list[int]:
        mentions = self._batch._mentions
        return sorted({f for a in deleted for f in mentions.get(a, ())})

    def touched_facts(self, deleted) -> list[tuple]:
        facts = self._batch._facts
        return [facts[f] for f in self._touched(deleted) if f in facts]

    def touched_artifacts(self, deleted) -> list[tuple]:
        facts, artifacts = self._batch._facts, self._batch._artifacts
        return [(*artifacts[f], *facts[f][2:]) for f in self._touched(deleted) if f in artifacts and f in facts]

    def edge_rows(self, args_keys) -> list[tuple]:
        edges = self._batch._edges
        return [edges[key] for key in sorted(set(args_keys)) if key in edges]

    def summary_parts(self, summaries) -> list[tuple]:
        wanted = set(summaries)
        return [row for row in self._batch._parts if row[0] in wanted]


__all__ = ["SourceWhatIfs"]
