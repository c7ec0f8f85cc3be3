"""What-if deletions: which artifacts a deletion touches, which stand, which fall, and why.

Nothing here mutates the graph, and nothing reads more of it than the deletion
touches: the deleted assertions are found through the assertion indexes, the touched
artifacts through the mentions index, and only their labels are decoded.  Each
touched artifact gets a verdict under a cleanup policy:

- ``deployed``: only claims all of whose assertions are deleted fall (what current
  pipelines do); every other artifact is kept.
- ``trust-all``: every label is trusted: an artifact falls when no support set survives.
- ``distrust:LAYER``: every touched artifact of LAYER falls outright; other labels trusted.
- ``flat``: everything whose flat lineage touches the deletion falls.

A sentence-level summary is the conjunction of its sentences; under label-trusting
policies it is kept with its dead sentences dropped while any sentence stands.
A claim that falls while the rules still entail its triple from surviving evidence is
*demoted*, not dead: it stands as an entailed edge (any policy that trusts edge labels).
A dead verdict on a capped (inexact) label is settled by the graph's circuit: the stored
derivations of every capped fact, read by least fixpoint (whatif_verdicts.py, provenance/circuit.py),
so every verdict is exact.  On a graph written before circuits such a verdict is *uncertain*,
and ``exact`` settles it by symbolic re-derivation over the surviving facts (rederive.py).
A contradiction (contradictions.py) is *resolved* when it falls: its label is the product of
its two sides, so it falls when the deletion hits every support set; ``contradictions``
counts those resolved and those remaining.  Nothing is overwritten: a what-if only reports.

A deletion may carry a view of the evidence (``--as-of``, ``--stale-after``, ``--scope``):
the assertions the view leaves out are deleted with the rest; one that names none reads under the
current view (invalidated and expired items left out, ``default_view``) unless it asks for the raw
view (``raw``); and a what-if may carry a
requirement of kinds (``--require``), which marks the artifacts that stand but have no support
set of the required kinds (``unqualified``) without deleting anything (query/evidence.py).
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field, replace
from functools import cached_property

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import LAYERS, layer_order
from polygraph_logic.query.evidence import EvidenceView, Requirement, default_view, left_out_now
from polygraph_logic.query.policies import POLICIES, check_policy, layer_rules  # noqa: F401  (re-exported)
from polygraph_logic.query.rederive import as_graph  # noqa: F401  (re-exported)
from polygraph_logic.query.whatif_verdicts import decide




@dataclass(frozen=True)
class Deletion:
    """A set of assertions to delete, by source, by predicate, or by id, in any mix.

    ``kinds`` are distrusted kinds (kinds.py): their assertions cannot support, so for
    verdicts they are deleted; what falls only for them *rests on* them, not retracted.
    """

    sources: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    assertions: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    evidence: EvidenceView | None = None  # the evidence a reader may use (query/evidence.py)
    raw: bool = False  # no view named: every stored assertion counts (else the current view, by default)

    def viewed(self, graph) -> "Deletion":
        """This deletion under the view it reads: its own, else (unless ``raw``) the current view
        when that leaves anything of the graph out (evidence.default_view)."""
        if self.evidence is not None or self.raw:
            return self
        view = default_view(as_graph(graph))
        return self if view is None else replace(self, evidence=view)

    def numbers(self, graph) -> dict[int, str]:
        """Returns {assertion number: id} of the deleted assertions; unknown names are an error
        with close matches, and nothing is evaluated."""
        graph = as_graph(graph)
        problems, numbers = [], {}
        for kind, column, names in (("source", "source", self.sources), ("relation", "predicate", self.relations),
                                    ("assertion", "id", self.assertions)):
            if not names:
                continue
            numbers.update(graph.numbers(column, names))
            for name in names:
                if not graph.has(column, name):
                    close = difflib.get_close_matches(name, _candidates(graph, column, name), n=3, cutoff=0.6)
                    hint = f" (did you mean {', '.join(close)}?)" if close else ""
                    problems.append(f"no {kind} named {name!r}{hint}")
        if problems:
            raise PolygraphError("unknown_deletion", "; ".join(problems) + "; nothing was evaluated")
        if self.kinds:
            numbers.update(graph.kind_numbers(self.kinds))
        if self.evidence:
            for left_out in self.evidence.excluded(graph).values():
                numbers.update(left_out)
        return numbers

    def resolve(self, graph) -> frozenset[str]:
        """Returns the deleted assertion ids (see ``numbers``)."""
        return frozenset(self.numbers(graph).values())

    def __add__(self, other: "Deletion") -> "Deletion":
        if self.evidence and other.evidence and self.evidence != other.evidence:
            raise PolygraphError("bad_argument", f"one deletion reads the evidence one way ({self.evidence}), "
                                                 f"the other another ({other.evidence}): join them under one view")
        return Deletion(*(tuple(dict.fromkeys(a + b)) for a, b in zip(
            (self.sources, self.relations, self.assertions, self.kinds),
            (other.sources, other.relations, other.assertions, other.kinds))), self.evidence or other.evidence,
            self.raw and other.raw)

    def __bool__(self) -> bool:
        """Whether it names anything: a deletion, a view of the evidence, or the raw view (which an
        empty deletion, read under the current view by default, is not)."""
        return bool(self.sources or self.relations or self.assertions or self.kinds or self.evidence or self.raw)

    def __str__(self) -> str:
        return self.summary(None)

    def summary(self, most: int | None = 10) -> str:
        """The deletion in words, at most ``most`` names of each kind and how many more (None: all;
        a what-if of the 2,440 retracted sources of a graph would otherwise head its report with
        a line of 100 KB)."""
        parts = []
        for word, names in (("retract-source", self.sources), ("revoke-relation", self.relations),
                            ("assertion", self.assertions), ("distrust-kind", self.kinds)):
            shown = names if most is None else names[:most]
            parts += [f"{word} {name}" for name in shown]
            if len(names) > len(shown):
                parts.append(f"and {len(names) - len(shown):,} more {word}")
        if self.evidence:
            parts.append(f"evidence {self.evidence}")
        return ", ".join(parts) or "nothing"


def _candidates(graph: Graph, column: str, name: str) -> list[str]:
    """Returns names near ``name`` in the index order (for a hint; never a scan of every id)."""
    if column != "id":
        return graph.distinct(column)
    prefix = name[:max(1, len(name) - 2)]
    return graph.assertion_ids_from(prefix)


@dataclass
class Outcome:
    """The verdicts of one what-if: touched, dead and kept artifact ids, per layer too.

    Verdicts are decided on artifact numbers; ``touched``, ``dead``, ``kept``,
    ``demoted`` and ``uncertain`` name them (in layer order, then id) when first read.
    """

    deletion: Deletion
    deleted: frozenset[str]
    policy: str
    exact: bool
    rows: dict[int, tuple[str, str]] = field(default_factory=dict, repr=False)  # touched: number -> (id, layer)
    dead_ranks: set[int] = field(default_factory=set, repr=False)
    demotions: dict[int, dict] = field(default_factory=dict, repr=False)
    uncertain_ranks: set[int] = field(default_factory=set, repr=False)
    resting_ranks: set[int] = field(default_factory=set, repr=False)  # dead only for the distrusted kinds
    distrusted: frozenset[str] = frozenset()  # the deleted assertions of distrusted kinds
    raw_triples: dict[int, str] = field(default_factory=dict, repr=False)  # claims and edges: stored args
    decode_args: object = field(default=None, repr=False)
    summaries: dict[str, dict] = field(default_factory=dict)
    contradictions_total: int = 0  # contradiction artifacts in the graph (see contradictions())
    settled: int = 0  # inexact dead verdicts that the circuit or re-derivation examined
    revived: int = 0  # ... and found alive after all
    settled_by: str | None = None  # "circuit" (the graph's stored circuit) or "rederivation" (its rules)
    evidence_excluded: dict[str, list[str]] = field(default_factory=dict)  # reason -> ids the view left out
    require: Requirement | None = None
    promoted: list[str] = field(default_factory=list)  # assertions of other kinds a verification names
    unqualified: list[dict] = field(default_factory=list)  # standing, but no support set of the kinds
    elapsed_ms: float = 0.0

    @property
    def touched_ranks(self) -> set[int]:
        return set(self.rows)

    @cached_property
    def _ordered(self) -> list[int]:
        rows = self.rows
        return sorted(rows, key=lambda n: (layer_order(rows[n][1]), rows[n][0]))

    def _names(self, keep) -> list[str]:
        return [self.rows[n][0] for n in self._ordered if keep(n)]

    @cached_property
    def touched(self) -> list[str]:
        """The ids of every artifact whose label mentions a deleted assertion."""
        return self._names(lambda n: True)

    @cached_property
    def dead(self) -> list[str]:
        """The ids of the touched artifacts that fall under the policy."""
        return self._names(self.dead_ranks.__contains__)

    @cached_property
    def kept(self) -> list[str]:
        """The ids of the touched artifacts that stand under the policy (demoted claims among them)."""
        return self._names(lambda n: n not in self.dead_ranks)

    @cached_property
    def demoted(self) -> list[dict]:
        """Claims whose stating assertions are all gone but whose triple the rules still entail."""
        return [self.demotions[n] for n in self._ordered if n in self.demotions]

    @cached_property
    def resting(self) -> list[str]:
        """Dead artifacts that rest only on the distrusted kinds: the rest of the deletion leaves them."""
        return self._names(self.resting_ranks.__contains__)

    @cached_property
    def uncertain(self) -> list[str]:
        """Dead verdicts that rest on capped labels (on a graph without a circuit: re-derivation with
        ``exact`` could change them)."""
        return self._names(self.uncertain_ranks.__contains__)

    def contradictions(self, graph=None) -> dict:
        """Returns how many contradictions the deletion resolves (their label dies under the policy)
        and how many remain; with ``graph``, the ids of each (remaining: the graph's others too)."""
        resolved = [self.rows[n][0] for n in self._ordered
                    if self.rows[n][1] == "contradiction" and n in self.dead_ranks]
        out = {"resolved": len(resolved), "remaining": self.contradictions_total - len(resolved)}
        if graph is not None:
            gone = set(resolved)
            out["resolved_ids"] = resolved
            out["remaining_ids"] = [i for i in as_graph(graph).layer_ids("contradiction") if i not in gone]
        return out

    def triple(self, artifact_number: int) -> list | None:
        """Returns the triple of a touched claim or edge (None for other layers)."""
        raw = self.raw_triples.get(artifact_number)
        return None if raw is None else list(self.decode_args(raw))

    def layer(self, artifact_number: int) -> str:
        return self.rows[artifact_number][1]

    def by_layer(self) -> dict[str, dict[str, int]]:
        """Returns touched / dead / kept (and demoted) counts per layer."""
        counts: dict[str, dict[str, int]] = {}
        for number, (_, layer) in self.rows.items():
            entry = counts.setdefault(layer, {"touched": 0, "dead": 0, "kept": 0})
            entry["touched"] += 1
            entry["dead" if number in self.dead_ranks else "kept"] += 1
            if number in self.demotions:
                entry["demoted"] = entry.get("demoted", 0) + 1
        return {layer: counts[layer] for layer in LAYERS if layer in counts}

    def listing(self, numbers) -> list[dict]:
        """Returns artifacts as ``{"id", "layer"}`` with ``"triple"`` for claims and edges."""
        out = []
        for n in numbers:
            entry = {"id": self.rows[n][0], "layer": self.rows[n][1]}
            if n in self.raw_triples:
                entry["triple"] = self.triple(n)
            out.append(entry)
        return out

    def to_json(self, listing: bool = False, graph=None) -> dict:
        """Returns the outcome as JSON; ``triples`` names each dead claim's or edge's triple, and with
        ``listing`` each dead artifact is ``{"id", "layer", "triple"}`` instead of its id alone.
        ``contradictions`` counts those resolved and remaining (with their ids given ``graph``)."""
        dead = [n for n in self._ordered if n in self.dead_ranks]
        return {
            "deletion": str(self.deletion),
            "deleted_assertions": sorted(self.deleted),
            "policy": self.policy,
            "exact": self.exact,
            "touched": self.touched,
            "dead": self.listing(dead) if listing else self.dead,
            "kept": self.kept,
            "demoted": self.demoted,
            # the triple of each dead claim or edge, beside its id
            "triples": {self.rows[n][0]: self.triple(n) for n in dead if n in self.raw_triples},
            "uncertain": self.uncertain,
            "by_layer": self.by_layer(),
            "summaries": self.summaries,
            "contradictions": self.contradictions(graph),
            # capped dead verdicts examined and revived (the keys' names predate circuits: ``settled_by``
            # says which settled them, "circuit" or "rederivation", null when none needed settling)
            "settled_by": self.settled_by,
            "settled_by_rederivation": self.settled,
            "revived_by_rederivation": self.revived,
            "elapsed_ms": round(self.elapsed_ms, 3),
            **({"distrusted_kinds": list(self.deletion.kinds), "distrusted_assertions": sorted(self.distrusted),
                "rests_on_distrusted_kinds": self.resting} if self.deletion.kinds else {}),
            **({"evidence": {**self.deletion.evidence.to_json(), "excluded": self.evidence_excluded}}
               if self.deletion.evidence else {}),
            **({"require": self.requirement_json()} if self.require else {}),
        }

    def requirement_json(self) -> dict:
        """What ``require`` found: the kinds, the promoted assertions and the unqualified artifacts."""
        counts: dict[str, int] = {}
        for entry in self.unqualified:
            counts[entry["layer"]] = counts.get(entry["layer"], 0) + 1
        return {"kinds": list(self.require.kinds), "promoted": self.promoted,
                "unqualified": self.unqualified, "unqualified_by_layer": counts}


def refuse_witness(graph, what: str) -> None:
    """Refuses a question whose answer reads every support set of a label, on a graph whose labels
    keep one support set per fact (``polygraph build --labels witness``): naming why and what to do."""
    if graph.meta.get("labels") == "witness":
        raise PolygraphError("needs_capped_labels", f"{what}, which reads all of a label's support sets, and "
                             "this graph keeps one per fact (built with --labels witness); ask under the "
                             "policies trust-all or deployed, which its circuit settles, or build it with "
                             "--labels capped")


def what_if(graph, deletion: Deletion, policy: str = "trust-all", exact: bool = False,
            rederiver=None, require: Requirement | None = None) -> Outcome:
    """Evaluates a deletion under a policy without changing anything; see the module docstring.

    ``graph`` is a Graph (or anything holding one: a GraphIndex, a Session);
    ``rederiver`` (a rederive.Rederiver) is built on first use when ``exact`` is set;
    ``require`` marks the standing artifacts with no support set of its kinds (``unqualified``).
    """
    check_policy(policy)
    graph = as_graph(graph)
    if policy == "flat" or any(rule.startswith("distrust") for rule in (layer_rules(policy) or {}).values()):
        refuse_witness(graph, f"the policy {policy} removes artifacts a deletion touches")
    if require:
        refuse_witness(graph, "--require asks whether any of an artifact's support sets holds a kind")
    started = time.perf_counter()
    exact = exact or graph.has_circuit()  # a stored circuit settles every capped verdict (whatif_verdicts.py)
    deletion = deletion.viewed(graph)
    numbers = deletion.numbers(graph)
    outcome = Outcome(deletion, frozenset(numbers.values()), policy, exact)
    decide(graph, frozenset(numbers), outcome, rederiver)
    outcome.contradictions_total = graph.layer_count("contradiction")
    if deletion.evidence:
        outcome.evidence_excluded = {reason: sorted(found.values(), key=lambda a: (len(a), a))
                                     for reason, found in deletion.evidence.excluded(graph).items()}
    if require:
        _mark_unqualified(graph, numbers, outcome, require, rederiver)
    if deletion.kinds:  # what falls only because the distrusted kinds cannot support
        rest = Deletion(deletion.sources, deletion.relations, deletion.assertions, evidence=deletion.evidence,
                        raw=deletion.raw)
        retracted = what_if(graph, rest, policy, exact, rederiver).dead_ranks if rest else set()
        outcome.resting_ranks = outcome.dead_ranks - retracted
        outcome.distrusted = frozenset(graph.kind_numbers(deletion.kinds).values())
    outcome.elapsed_ms = (time.perf_counter() - started) * 1000
    return outcome


def _mark_unqualified(graph, numbers: dict[int, str], outcome: Outcome, require: Requirement, rederiver) -> None:
    """Fills ``outcome``'s requirement: the artifacts standing under its deletion that fall once
    every assertion of another kind (a verification's named ones excepted) is deleted too."""
    unacceptable, promoted = require.split(graph, numbers)
    strict = Outcome(outcome.deletion, frozenset(), outcome.policy, outcome.exact)
    decide(graph, frozenset(numbers) | frozenset(unacceptable), strict, rederiver)
    outcome.require = require
    outcome.promoted = sorted(promoted.values(), key=lambda a: (len(a), a))
    # a claim demoted by the strict deletion stands only as the edge its triple is (which is marked
    # on its own): as a claim it has no support set of the kinds
    fallen = strict.dead_ranks | set(strict.demotions)
    # a summary with sentence-level receipts stands trimmed while one sentence does, but it meets
    # the requirement only when every sentence standing now does: one sentence of other kinds is
    # enough for it not to (why says the same of its label)
    fallen |= {n for n, (id_, layer) in strict.rows.items() if layer == "summary" and id_ in strict.summaries
               and strict.summaries[id_]["dead_sentences"]
               > outcome.summaries.get(id_, {}).get("dead_sentences", 0)}
    outcome.unqualified = strict.listing(n for n in strict._ordered if n in fallen and n not in outcome.dead_ranks
                                         and n not in outcome.demotions)


def requirement_marks(graph, result: dict, require: Requirement) -> dict:
    """For ``why``'s result of one artifact: the required kinds, whether each listed support set
    meets them (``qualifies``) and whether the artifact does (``meets_requirement``; decided by
    the what-if, so exact when a capped label lists only some of its sets)."""
    supports = [{a["id"] for a in support} for support in result["support_sets"]]
    marks = require.qualifying(graph, supports, left_out_now(graph))  # invalidated or expired: satisfies nothing
    if result["exact"] and result.get("expanded") is None and result.get("layer") != "summary":
        meets = any(marks)
    else:
        outcome = what_if(graph, Deletion(), require=require)
        meets = result["artifact"] not in {entry["id"] for entry in outcome.unqualified}
    return {"required_kinds": list(require.kinds), "qualifies": marks, "meets_requirement": meets}
