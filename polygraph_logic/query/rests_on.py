"""The artifacts that rest only on assertions of some kinds (``rests-on``), listed in bounded memory.

An artifact *rests on* kinds K when every one of its support sets holds an assertion of K: with K
distrusted nothing else supports it.  The verdicts are those of a trust-all what-if distrusting K
(whatif.py, whatif_verdicts.py), read two ways where its cleanup differs (``rests_on``): a claim
stated only by K is listed even when the rules entail its triple from other evidence (it is
``still_entailed``), and a sentence-level summary is listed when any of its sentences is.

Where a what-if holds every artifact it touches, ``RestsOn`` reads the artifacts from the store a
chunk at a time and decides each as it comes; those listed go to sorted runs on disk
(sorted_runs.py), merged in the listing's order (layer order, then id) when read.  What it
holds does not grow with the result: a byte per assertion number (the distrusted ones), the
capped facts the kinds kill that the circuit revives, and per sentence-level summary the ids of
its resting sentences.  ``--kind source_claim`` on a graph of source claims lists every artifact.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import islice
from types import SimpleNamespace
from typing import Iterator

from polygraph_logic.graph.kinds import check_kinds
from polygraph_logic.graph.store.rows import bad_graph, layer_order
from polygraph_logic.graph.store.settling import by_kinds, resting_counts
from polygraph_logic.query.rederive import as_graph
from polygraph_logic.query.revival import revived_facts, revived_in_store
from polygraph_logic.query.sorted_runs import SortedRuns

#: distrusted assertions up to this many: their mentions are counted, and read through the index
#: when there are at most TOUCHED_HELD of them (beyond: every artifact is read and its label decides)
KINDS_INDEXED = 50_000
TOUCHED_HELD = 200_000
#: dead claims whose edge facts are read in one query
CLAIMS_AT_ONCE = 10_000
# a listed artifact's flags
DEAD, DEMOTED, UNCERTAIN = 1, 2, 4


@dataclass(frozen=True)
class Resting:
    """One listed artifact: ``entry`` ({"id", "layer"}, with "triple" for claims and edges),
    ``still_entailed`` (a claim whose triple the rules entail from other evidence: its entry in
    the report, else None) and ``uncertain`` (its verdict rests on a capped label not settled)."""

    entry: dict
    still_entailed: dict | None
    uncertain: bool


class RestsOn:
    """The artifacts resting on ``kinds``, decided when made and listed when read (``listed``).

    ``total`` and ``by_layer`` count them; ``summaries`` names each sentence-level summary with a
    resting sentence: its sentences, those resting, and what trust-all does with it (``trimmed``,
    kept without them, or ``removed``); ``uncertain_count`` counts the verdicts left uncertain (a
    graph without a circuit, without ``exact``).  Close it (or use ``with``) to remove its runs."""

    def __init__(self, graph, kinds: tuple[str, ...], exact: bool = False, limit: int | None = None):
        """``limit``: only the first ``limit`` artifacts will be listed; on a store that counts in
        SQL (a folder) whose verdicts the circuit settles, the store then counts them all and
        picks the first, and only those are decided here (``counted_in_sql``)."""
        self.graph = as_graph(graph)
        self.kinds = check_kinds(kinds)
        self.exact = exact
        self._distrusted()
        self._settles = exact or self.graph.has_circuit()  # as what_if settles capped verdicts
        self._revived = self._revive() if self._settles and self.assertions else set()
        self._runs = SortedRuns()
        self.summaries: dict[str, dict] = {}
        self._layers: Counter = Counter()
        self.uncertain_count = 0
        self.counted_in_sql = (limit is not None and self._settles and bool(self.assertions)
                               and self.graph.store.checks_in_sql)
        if self.counted_in_sql:
            self._first(limit)
        elif self.assertions:
            self._decide(self.graph.artifact_labels(self._touched))
        self.by_layer = {layer: self._layers[layer]
                         for layer in sorted(self._layers, key=lambda x: (layer_order(x), x))}
        self.total = sum(self._layers.values()) if self.counted_in_sql else self._runs.count

    def __enter__(self) -> "RestsOn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._runs.close()

    # --- reading ----------------------------------------------------------------------
    def listed(self, limit: int | None = None) -> Iterator[Resting]:
        """Yields the resting artifacts in layer order, then id (the first ``limit``)."""
        decode = self.graph.args
        for _, id_, layer, args, flags, entailed in islice(self._runs, limit):
            entry = {"id": id_, "layer": layer}
            if args is not None:
                entry["triple"] = list(decode(args))
            demoted = None
            if flags & DEMOTED:
                support, rederived = entailed
                demoted = {"artifact": id_, "triple": entry.get("triple"), "support": support, "rederived": rederived}
            yield Resting(entry, demoted, bool(flags & UNCERTAIN))

    def report(self, limit: int | None = None) -> dict:
        """The report as JSON (``rests_on``'s): with ``limit``, of the first ``limit`` artifacts (``by_layer``
        counts them all; ``limit`` says so).  Without, its lists are iterators, read as written
        (cli.arguments.print_json), each a merge of the runs."""
        head = {"kinds": list(self.kinds), "assertions": self.assertions}
        if limit is None:
            return {**head, "artifacts": (r.entry for r in self.listed()), "by_layer": self.by_layer,
                    "still_entailed": (r.still_entailed for r in self.listed() if r.still_entailed),
                    "summaries": self.summaries, "uncertain": (r.entry["id"] for r in self.listed() if r.uncertain),
                    "exact": self.exact}
        rows = list(self.listed(limit))
        ids = {r.entry["id"] for r in rows}
        return {**head, "artifacts": [r.entry for r in rows], "by_layer": self.by_layer,
                "still_entailed": [r.still_entailed for r in rows if r.still_entailed],
                "summaries": {name: entry for name, entry in self.summaries.items() if name in ids},
                "uncertain": [r.entry["id"] for r in rows if r.uncertain], "exact": self.exact, "limit": limit}

    # --- deciding ---------------------------------------------------------------------
    def _distrusted(self) -> None:
        """``_deleted``: a byte per assertion number, 1 for the kinds'; ``assertions``: how many."""
        top = self.graph.last_assertion()
        self._deleted = deleted = bytearray(top + 1)
        count = 0
        for (num,) in self.graph.of_kinds(self.kinds):
            deleted[num] = 1
            count += 1
        self.assertions = count
        # few distrusted assertions with few mentions: the artifacts they touch, found by the index
        self._touched = None
        if count <= KINDS_INDEXED:
            numbers = [n for n in range(len(deleted)) if deleted[n]]
            if self.graph.mention_count(numbers) <= TOUCHED_HELD:
                self._touched = numbers

    def _hits(self, groups) -> list[bool]:
        """Per support set: does it hold a distrusted assertion?"""
        get = self._deleted.__getitem__
        try:
            return [any(map(get, group)) for group in groups]
        except IndexError:
            raise bad_graph(self.graph.path, "a label cites an assertion number the graph lacks") from None

    def _killed(self, blob) -> bool:
        """Does the deletion hit every support set of this stored label?"""
        hits = self._hits(self.graph.decode(blob))
        return bool(hits) and all(hits)

    def _revive(self) -> set[int]:
        """The fact numbers whose capped label dies but which the graph's circuit still derives
        (revival.py), or without a circuit, with ``exact``, which symbolic re-derivation revives
        (whatif_verdicts._revived: held in memory, as a what-if holds it)."""
        if self.graph.has_circuit() and self.graph.store.checks_in_sql and self._touched is None:
            return revived_in_store(self.graph, by_kinds(self.graph, self.kinds))[0]
        if self.graph.has_circuit():
            return revived_facts(self.graph, self._killed, lambda n: not self._deleted[n], self._touched)
        from polygraph_logic.query.whatif_verdicts import _revived  # noqa: PLC0415
        deleted = frozenset(n for n in range(len(self._deleted)) if self._deleted[n])
        return _revived(self.graph, deleted, SimpleNamespace(), None)

    def _first(self, limit: int) -> None:
        """Counts the listed artifacts per layer in the store's SQL (settling.resting_counts) and decides here
        only the first ``limit`` of them (and the sentences of the summaries among those)."""
        graph, deleted = self.graph, by_kinds(self.graph, self.kinds)
        first: list[tuple] = []
        counted = graph.store.within_bounds(lambda: resting_counts(graph, deleted, self._revived, limit))
        for layer, count, ids in counted:
            self._layers[layer] = count
            first += [(layer_order(layer), id_) for id_ in ids]
        rows = graph.artifact_label_rows(graph.artifact_numbers(id_ for _, id_ in sorted(first)[:limit]))
        held = {row[0] for row in rows}
        parts = {row[1] for row in graph.summary_parts(row[4] for row in rows if row[4] is not None)} - held
        layers = self._layers
        self._layers = Counter()  # the rows decided here are added to the runs; the counts are the store's
        self._decide(sorted(rows + graph.artifact_label_rows(parts)))
        self._layers = layers

    def _decide(self, rows) -> None:
        """Decides the artifacts of ``rows`` (``ARTIFACT_LABELS``' columns: every artifact the
        kinds touch, or those the store picked) and keeps those listed in the runs (claims a chunk
        at a time, for their edges; sentence-level summaries once their sentences are decided)."""
        graph, revived, settles = self.graph, self._revived, self._settles
        claims: list[tuple] = []
        summaries: dict[int, tuple | None] = {}  # summary number -> its own row when touched
        resting: dict[int, list[str]] = {}  # summary number -> ids of its dead sentences
        for num, id_, layer, fact, summary, args, blob, exact in rows:
            hits = self._hits(graph.decode(blob))
            if not any(hits):
                continue
            dead = all(hits) and fact not in revived
            uncertain = dead and not exact and not settles
            if summary is not None and layer != "sentence":
                summaries[summary] = (id_, layer, args if layer in ("claim", "edge") else None, uncertain)
                continue
            if summary is not None:
                summaries.setdefault(summary, None)
                if dead:
                    resting.setdefault(summary, []).append(id_)
            if not dead:
                continue
            if layer == "claim":
                claims.append((id_, args, uncertain))
                if len(claims) >= CLAIMS_AT_ONCE:
                    self._demote(claims)
                    claims = []
                continue
            self._add(id_, layer, args if layer == "edge" else None, DEAD | (UNCERTAIN if uncertain else 0))
        if claims:
            self._demote(claims)
        self._trim(summaries, resting)

    def _add(self, id_: str, layer: str, args: str | None, flags: int, entailed=None) -> None:
        self._runs.add((layer_order(layer), id_, layer, args, flags, entailed))
        self._layers[layer] += 1
        self.uncertain_count += bool(flags & UNCERTAIN)

    def _demote(self, claims: list[tuple]) -> None:
        """Lists dead claims, those whose triple the rules still entail (the edge fact with their
        arguments has a support set without the kinds, or the circuit revives it) as still entailed."""
        graph = self.graph
        edges = {args: (fact, graph.decode(blob), exact) for args, fact, blob, exact in
                 graph.edge_rows(args for _, args, _ in claims)}
        surviving = {args: [g for g, hit in zip(groups, self._hits(groups)) if not hit]
                     for args, (_, groups, _) in edges.items()}
        names = graph.names(x for sets in surviving.values() for g in sets for x in g)
        for id_, args, uncertain in claims:
            flags, entailed = DEAD, None
            if args in edges:
                fact, _, exact = edges[args]
                if surviving[args] or fact in self._revived:
                    flags = DEMOTED
                    entailed = ([[names[x] for x in g] for g in surviving[args]], not surviving[args])
                elif not exact and not self._settles:
                    uncertain = True
            self._add(id_, "claim", args, flags | (UNCERTAIN if uncertain and flags & DEAD else 0), entailed)

    def _trim(self, summaries: dict[int, tuple | None], resting: dict[int, list[str]]) -> None:
        """Decides the sentence-level summaries the kinds touch (a summary is the conjunction of its
        sentences: trust-all removes it when every sentence rests, else keeps it trimmed) and lists
        those touched that are removed or have a resting sentence."""
        if not summaries:
            return
        sentences, names = Counter(), {}
        for summary, _, id_, layer in self.graph.summary_parts(summaries):
            if layer == "sentence":
                sentences[summary] += 1
            else:
                names[summary] = id_
        for summary in sorted(names, key=names.get):
            dead = resting.get(summary, [])
            removed = len(dead) == sentences[summary]
            if dead:
                self.summaries[names[summary]] = {"sentences": sentences[summary], "resting_sentences": sorted(dead),
                                                  "under_trust_all": "removed" if removed else "trimmed"}
            row = summaries[summary]
            if row is not None and (removed or dead):
                id_, layer, args, uncertain = row
                self._add(id_, layer, args, (DEAD | (UNCERTAIN if uncertain else 0)) if removed else 0)


def rests_on(graph, kinds: tuple[str, ...], exact: bool = False) -> dict:
    """Returns the artifacts that rest on assertions of ``kinds``: every support set holds one, so with
    those kinds distrusted nothing else supports them (a what-if distrusting them, under trust-all).

    The listing follows that rule where the what-if's cleanup verdicts do not:

    - a claim whose every stating assertion is of ``kinds`` rests on them even when the rules entail
      its triple from other evidence; ``still_entailed`` names those claims with that other support
      (cleanup keeps the triple, as an edge).
    - a sentence-level summary is the conjunction of its sentences, so it rests on ``kinds`` when any
      of its sentences does; ``summaries`` names those sentences per summary and what a cleanup
      trusting labels does with it: ``trimmed`` (kept without them) or ``removed`` (every sentence
      rests on ``kinds``).

    The report is held whole; ``RestsOn`` reads it in bounded memory.
    """
    with RestsOn(graph, kinds, exact) as found:
        return {key: list(value) if not isinstance(value, (dict, list, str, int, bool)) else value
                for key, value in found.report().items()}


__all__ = ["RestsOn", "Resting", "rests_on"]
