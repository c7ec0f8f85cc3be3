"""``whatif``, ``why``, ``whynot``, ``robustness``, ``top-sources``, ``rests-on`` and ``repl``."""

from __future__ import annotations

import argparse
import itertools
import sys

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.backend import store_class
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import LAYERS
from polygraph_logic.graph.kinds import KINDS
from polygraph_logic.query.whatif import requirement_marks, what_if
from polygraph_logic.cli.arguments import (
    add_deletion,
    add_distrust,
    add_graph,
    add_json,
    add_limit,
    add_policy,
    add_require,
    deletion,
    has_deletion,
    natural,
    print_json,
    requirement,
)
from polygraph_logic.cli.ledger import add_at
from polygraph_logic.cli.printing import print_outcome, print_robustness, print_why, print_whynot


def register(commands) -> None:
    """Adds the what-if and explanation subcommands."""
    whatif = commands.add_parser(
        "whatif", help="what stands and what falls if sources, relations or assertions are deleted",
        description="Evaluate a deletion without changing the graph: touched, dead and kept artifacts "
                    "per layer under a cleanup policy. Unknown names are an error; nothing is evaluated.")
    add_graph(whatif)
    add_at(whatif)
    add_deletion(whatif)
    add_require(whatif)
    whatif.add_argument("--exact", action="store_true",
                        help="on a graph written before circuits: settle dead verdicts on capped labels by symbolic "
                        "re-derivation (a graph with a circuit settles every verdict without it)")
    add_json(whatif, "whatif")
    whatif.add_argument("--list", action="store_true", help="list the dead artifacts")
    whatif.add_argument("--engine", choices=READERS, default=None,
                        help="who reads a graph folder: duckdb (embedded, the default) or spark (Spark SQL: "
                             "pip install \"polygraph_logic[spark]\"); the what-if is the same, every policy "
                             "included. A graph file is read by SQLite")
    whatif.add_argument("--master", default="local[2]", metavar="URL",
                        help="with --engine spark: local[N] or spark://HOST:PORT (default local[2])")
    whatif.set_defaults(run=_run_whatif)

    explain = commands.add_parser(
        "why", help="an artifact's support sets, sources and derivation tree",
        description="Print an artifact's label: each support set with its assertions (id, source, kind, "
                    "triple), and the derivation tree of the first N support sets (--trees). With "
                    "--distrust-kind, marks the support sets that rest on a distrusted kind.")
    add_graph(explain)
    add_at(explain)
    explain.add_argument("artifact", metavar="ARTIFACT", help="an artifact id, e.g. merge:mapk-erk")
    explain.add_argument("--trees", type=natural, default=1, metavar="N",
                         help="derivation trees for N support sets (default 1; 0: none)")
    explain.add_argument("--sets", type=natural, default=None, metavar="N",
                         help="list at most N support sets, the smallest first; a capped label's are "
                              "expanded from the graph's circuit (all of them, not only the cap's)")
    add_distrust(explain)
    add_require(explain)
    add_json(explain, "why")
    explain.set_defaults(run=_run_why)

    asking = commands.add_parser(
        "ask", help="the facts matching a pattern, stored or lazy (derived on demand), with support sets",
        description="Answer an atom such as 'edge(\"a\", \"RO:0002131\", _)' (a variable or _ matches any "
                    "value): every stored fact that matches it and, where the graph was built with .lazy "
                    "declarations, every lazy fact, derived on demand by the lazy rules over the stored "
                    "facts. Each answer lists its support sets (the minimal ones, from the circuit) and, "
                    "with a deletion, whether it holds under it. Answers come in the order of their "
                    "arguments, streamed as they are read (memory bounded whatever their number).")
    add_graph(asking)
    add_at(asking)
    asking.add_argument("question", metavar="ATOM", help='an atom, e.g. \'edge("a", "RO:0002131", _)\'')
    asking.add_argument("--sets", type=natural, default=3, metavar="N",
                        help="support sets shown per fact, the smallest first (default 3)")
    add_limit(asking, None, "facts, the first in the order of their arguments")
    add_deletion(asking, policy=False)
    add_json(asking, "ask")
    asking.set_defaults(run=_run_ask)

    broken = commands.add_parser(
        "whynot", help="which deleted sources broke each support set of an artifact",
        description="Under a deletion and a policy: whether the artifact stands, and for each of its "
                    "support sets the deleted assertions (and their sources) that broke it, or 'survives'.")
    add_graph(broken)
    add_at(broken)
    broken.add_argument("artifact", metavar="ARTIFACT", help="an artifact id, e.g. summary:aim2")
    add_deletion(broken)
    add_json(broken, "whynot")
    broken.set_defaults(run=_run_whynot)

    robust = commands.add_parser(
        "robustness", help="fewest sources that kill an artifact; its paths, origins and echo flag",
        description="The fewest sources (and the fewest evidential origins) whose retraction kills the "
                    "artifact (a minimum hitting set of its support sets), its paths (support sets), its "
                    "distinct evidential origins, its independent supports (support sets with no origin in "
                    "common), and the echo flag: more than one path and one origin.")
    add_graph(robust)
    add_at(robust)
    robust.add_argument("artifact", metavar="ARTIFACT", help="an artifact id")
    add_distrust(robust)
    robust.add_argument("--origins", metavar="F.jsonl", help="derived_from records to use instead of the graph's")
    add_json(robust, "robustness")
    robust.set_defaults(run=_run_robustness)

    top = commands.add_parser(
        "top-sources", help="the sources whose retraction kills the most artifacts",
        description="Rank the sources (or, with --by origin, the evidential origins) by how many artifacts "
                    "their retraction alone kills under the policy, with the count per layer.")
    add_graph(top)
    add_at(top)
    add_limit(top, 10, "sources (or origins)")
    add_policy(top)
    top.add_argument("--by", default="source", choices=("source", "origin"),
                     help="rank sources, or evidential origins (each with every source derived from it)")
    top.add_argument("--origins", metavar="F.jsonl", help="derived_from records to use instead of the graph's")
    add_json(top, "top-sources")
    top.set_defaults(run=_run_top)

    rests = commands.add_parser(
        "rests-on", help="the artifacts that rest only on assertions of a kind (e.g. model hypotheses)",
        description="List the artifacts every support set of which holds an assertion of KIND: with that "
                    "kind distrusted nothing else supports them (a hypothesis-only conclusion). A claim stated "
                    "only by KIND is listed even when the rules entail its triple from other evidence, and "
                    "marked so (cleanup keeps the triple as an edge). A summary with sentence-level receipts "
                    "is the conjunction of its sentences: it is listed when any sentence is, with the "
                    "sentences listed and what trust-all does with it (trimmed: kept without them; removed: "
                    "every sentence rests on KIND). Artifacts are listed in layer order, then id, and read in "
                    "bounded memory however many rest on KIND (the listing is sorted on disk when long); "
                    "--limit N lists the first N, the count still counting them all.")
    add_graph(rests)
    add_at(rests)
    rests.add_argument("--kind", action="append", required=True, metavar="KIND",
                       help=f"the kind (repeatable: resting on any of them): {', '.join(KINDS)}")
    add_limit(rests, None, "artifacts, the first in layer order, then id (JSON: still_entailed, summaries and "
                           "uncertain of those; by_layer counts all)")
    rests.add_argument("--exact", action="store_true",
                       help="on a graph written before circuits: settle verdicts on capped labels by symbolic "
                       "re-derivation (a graph with a circuit settles every verdict without it)")
    add_json(rests, "rests-on")
    rests.set_defaults(run=_run_rests_on)

    repl = commands.add_parser(
        "repl", help="an interactive session of what-if deletions",
        description="Read commands on standard input: retract and revoke to build up a deletion, see "
                    "what falls, explain artifacts, undo, and apply the deletion as a new version ('help' "
                    "lists the commands).")
    add_graph(repl)
    add_at(repl)
    add_policy(repl)
    repl.set_defaults(run=_run_repl)


def _require(graph: Graph, artifact: str) -> None:
    if not graph.has_artifact(artifact):
        raise PolygraphError("unknown_artifact", f"no artifact named {artifact!r}{graph.artifact_hint(artifact)}")


def shown_rederiver(graph, stream=None):
    """A rederive.Rederiver that draws its progress on a terminal (re-deriving capped dead verdicts
    can take seconds on a large graph): how many verdicts, how many goals tried so far."""
    from polygraph_logic.progress import Progress  # start-up time: loaded when run
    from polygraph_logic.query.rederive import Rederiver  # start-up time: loaded when run

    class Shown(Rederiver):
        def revive(self, uncertain, dead, deleted):
            self.progress = Progress("re-deriving", stream=stream or sys.stderr, unit="goals tried")
            self.note = f"{len(uncertain):,} capped dead verdicts to settle"
            self.progress.phase(self.note)
            try:
                return super().revive(uncertain, dead, deleted)
            finally:
                self.progress.done()

        def derivable(self, fact, deleted=frozenset()):
            self.progress.step(self.note)
            return super().derivable(fact, deleted)

    return Shown(graph)


#: the readers of a graph folder (``whatif --engine``)
READERS = ("duckdb", "spark")


def _reader(args: argparse.Namespace) -> Graph:
    """The graph, read by the engine ``--engine`` names (a folder only: a file is SQLite's)."""
    if args.engine is not None and store_class(args.graph).form == "file":
        raise PolygraphError("bad_argument", f"{args.graph} is a graph file, read by SQLite: --engine "
                                             f"{args.engine} reads graph folders (`polygraph export-tables "
                                             f"{args.graph} -o FOLDER` writes one)")
    if args.engine == "spark":  # the Spark backend (graph/store/spark_store.py), imported when asked for
        return Graph(args.graph, at=args.at, store="spark", master=args.master)
    return Graph(args.graph, at=args.at)


def _run_whatif(args: argparse.Namespace) -> int:
    with _reader(args) as graph:
        rederiver = shown_rederiver(graph) if args.exact else None
        outcome = what_if(graph, deletion(args), args.policy, exact=args.exact, rederiver=rederiver,
                          require=requirement(args))
        if args.json:
            print_json(outcome.to_json(listing=args.list, graph=graph))
            return 0
        print_outcome(outcome, args.list, graph=graph)
    return 0


def _run_why(args: argparse.Namespace) -> int:
    from polygraph_logic.query.explain import Explainer, why  # start-up time: loaded when run
    graph = Graph(args.graph, at=args.at)
    _require(graph, args.artifact)
    result = why(graph, args.artifact, Explainer(graph), trees=args.trees, distrust=tuple(args.distrust_kind),
                 sets=args.sets)
    require = requirement(args)
    if require:
        result.update(requirement_marks(graph, result, require))
    if args.json:
        result["derivations"] = [t.lines() if t else None for t in result["derivations"]]
        print_json(result)
    else:
        print_why(result)
    return 0


def _run_ask(args: argparse.Namespace) -> int:
    from polygraph_logic.query.lazy_facts import answers  # start-up time: loaded when run
    with Graph(args.graph, at=args.at) as graph:
        found = answers(graph, args.question, deletion(args) if has_deletion(args) else None)
        listed = itertools.islice(found, args.limit)
        if args.json:
            print_json({"question": args.question, "answers": (a.to_json(args.sets) for a in listed)})
            return 0
        count = 0
        for count, answer in enumerate(listed, 1):
            shown = answer.to_json(args.sets)
            more = "" if answer.complete else " at least"
            print(f"{shown['fact']}{'  (lazy)' if answer.lazy else ''}: {shown['verdict']};{more} "
                  f"{len(answer.support_sets)} support set(s)")
            for support in shown["support_sets"]:
                print("  " + " · ".join(support) if support else "  (background knowledge)")
        if args.limit is not None and count == args.limit and next(found, None) is not None:
            print(f"the first {count} fact(s) matching {args.question} (--limit {args.limit}); more match")
        else:
            print(f"{count} fact(s) match {args.question}")
    return 0


def _run_whynot(args: argparse.Namespace) -> int:
    from polygraph_logic.query.explain import whynot  # start-up time: loaded when run
    graph = Graph(args.graph, at=args.at)
    _require(graph, args.artifact)
    result = whynot(graph, args.artifact, deletion(args), args.policy)
    print_json(result) if args.json else print_whynot(result)
    return 0


def _run_robustness(args: argparse.Namespace) -> int:
    from polygraph_logic.query.explain import robustness  # start-up time: loaded when run
    graph = Graph(args.graph, at=args.at)
    _require(graph, args.artifact)
    result = robustness(graph, args.artifact, origins=args.origins, distrust=tuple(args.distrust_kind))
    print_json(result) if args.json else print_robustness(result)
    return 0


def _run_top(args: argparse.Namespace) -> int:
    from polygraph_logic.query.explain import top_sources  # start-up time: loaded when run
    rows = top_sources(Graph(args.graph, at=args.at), args.limit, args.policy, by=args.by, origins=args.origins)
    if args.json:
        print_json(rows)
        return 0
    print(f"{args.by:30} {'dead':>6}  " + "  ".join(f"{layer:>8}" for layer in LAYERS))
    for row in rows:
        print(f"{row[args.by]:30} {row['dead']:>6}  "
              + "  ".join(f"{row['by_layer'].get(layer, 0):>8}" for layer in LAYERS))
        if args.by == "origin" and row["sources"] != [row["origin"]]:
            print(f"  sources: {', '.join(row['sources'])}")
    return 0


def _run_rests_on(args: argparse.Namespace) -> int:
    from polygraph_logic.query.rests_on import RestsOn  # start-up time: loaded when run
    with Graph(args.graph, at=args.at) as graph, RestsOn(graph, tuple(args.kind), args.exact, args.limit) as found:
        if args.json:
            print_json(found.report(args.limit))
            return 0
        _print_resting(found, args.limit)
    return 0


def _print_resting(found, limit: int | None) -> None:
    """Prints ``rests-on``'s listing as it is read (``found``: a query.rests_on.RestsOn)."""
    kinds = ", ".join(found.kinds)
    print(f"{found.total} artifacts rest only on {kinds} ({found.assertions} assertions of "
          "that kind): every support set of each holds one")
    for row in found.listed(limit):
        entry = row.entry
        triple = f"  {' '.join(map(str, entry['triple']))}" if "triple" in entry else ""
        note = "  [its triple is still entailed by other evidence: it stands as an edge]" if row.still_entailed else ""
        summary = found.summaries.get(entry["id"])
        if summary is not None:
            note = (f"  [{len(summary['resting_sentences'])} of {summary['sentences']} sentences rest on {kinds}: "
                    + ("trust-all keeps it trimmed, without them]" if summary["under_trust_all"] == "trimmed"
                       else "trust-all removes it]"))
        print(f"  - {entry['id']} ({entry['layer']}){triple}{note}")
    if limit is not None and found.total > limit:
        print(f"  ... and {found.total - limit} more (--limit {limit})")
    if found.summaries or (found.counted_in_sql and found.by_layer.get("sentence")):  # (a resting sentence's)
        print("a summary with sentence-level receipts is the conjunction of its sentences: it rests on a kind "
              "when any sentence does")
    if found.uncertain_count:
        print(f"{found.uncertain_count} of them rest on capped labels; --exact settles them")


def _run_repl(args: argparse.Namespace) -> int:
    from polygraph_logic.cli.repl import run_repl  # start-up time: loaded when run
    return run_repl(args.graph, policy=args.policy, at=args.at)
