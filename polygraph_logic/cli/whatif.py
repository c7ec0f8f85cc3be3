"""``whatif``, ``why``, ``whynot``, ``robustness``, ``top-sources``, ``rests-on`` and ``repl``."""

from __future__ import annotations

import argparse
import sys

from ..errors import PolygraphError
from ..graph.store import LAYERS, Graph
from ..kinds import KINDS
from ..whatif import what_if
from .arguments import (add_deletion, add_distrust, add_graph, add_json, add_limit, add_policy, deletion, natural,
                        print_json)
from .ledger import add_at


def register(commands) -> None:
    """Adds the what-if and explanation subcommands."""
    whatif = commands.add_parser(
        "whatif", help="what stands and what falls if sources, relations or assertions are deleted",
        description="Evaluate a deletion without changing the graph: touched, dead and kept artifacts "
                    "per layer under a cleanup policy. Unknown names are an error; nothing is evaluated.")
    add_graph(whatif)
    add_at(whatif)
    add_deletion(whatif)
    whatif.add_argument("--exact", action="store_true",
                        help="settle dead verdicts on capped labels by symbolic re-derivation")
    add_json(whatif, "whatif")
    whatif.add_argument("--list", action="store_true", help="list the dead artifacts")
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
    add_distrust(explain)
    add_json(explain, "why")
    explain.set_defaults(run=_run_why)

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
        "robustness", help="fewest sources that kill an artifact; echo flag",
        description="The fewest sources (and the fewest evidential origins) whose retraction kills the "
                    "artifact (a minimum hitting set of its support sets), its independent sources, and the "
                    "echo flag: several support sets that all trace back to one origin.")
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
                    "kind distrusted nothing else supports them (a hypothesis-only conclusion).")
    add_graph(rests)
    add_at(rests)
    rests.add_argument("--kind", action="append", required=True, metavar="KIND",
                       help=f"the kind (repeatable: resting on any of them): {', '.join(KINDS)}")
    rests.add_argument("--exact", action="store_true",
                       help="settle verdicts on capped labels by symbolic re-derivation")
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
    from ..progress import Progress
    from ..rederive import Rederiver

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


def _run_whatif(args: argparse.Namespace) -> int:
    with Graph(args.graph, at=args.at) as graph:
        rederiver = shown_rederiver(graph) if args.exact else None
        outcome = what_if(graph, deletion(args), args.policy, exact=args.exact, rederiver=rederiver)
        if args.json:
            print_json(outcome.to_json(listing=args.list, graph=graph))
            return 0
        print_outcome(outcome, args.list, graph=graph)
    return 0


def print_outcome(outcome, listing: bool = False, out=None, graph=None) -> None:
    """Prints a what-if outcome as text: counts per layer, summaries, demotions, uncertain verdicts,
    contradictions resolved and remaining (listed with ``graph``, if the graph has any)."""
    out = out or sys.stdout
    print(f"{outcome.deletion}: {len(outcome.deleted)} assertions deleted; policy {outcome.policy}"
          f"{'; exact' if outcome.exact else ''}; {outcome.elapsed_ms:.2f} ms", file=out)
    width = max([10, *map(len, outcome.by_layer())])  # 'contradiction' is the one longer name
    print(f"{'layer':{width}} {'touched':>8} {'dead':>6} {'kept':>6}", file=out)
    for layer, counts in outcome.by_layer().items():
        print(f"{layer:{width}} {counts['touched']:>8} {counts['dead']:>6} {counts['kept']:>6}", file=out)
    for summary, entry in sorted(outcome.summaries.items()):
        print(f"  {summary}: {entry['status']} ({entry['dead_sentences']} of {entry['sentences']} sentences dead)",
              file=out)
    if outcome.demoted:
        print(f"{len(outcome.demoted)} claims demoted: every stating assertion is deleted, but the rules still "
              "entail the triple (it stands as an edge)", file=out)
    if outcome.deletion.kinds:
        print(f"{len(outcome.distrusted)} assertions of {', '.join(outcome.deletion.kinds)} distrusted (none "
              f"retracted); {len(outcome.resting)} of the dead rest only on them: no other evidence supports them",
              file=out)
    if outcome.uncertain:
        print(f"{len(outcome.uncertain)} dead verdicts rest on capped labels; --exact settles them", file=out)
    if outcome.settled:
        print(f"re-derivation examined {outcome.settled} capped dead verdicts and revived {outcome.revived}", file=out)
    if outcome.contradictions_total:
        found = outcome.contradictions()
        print(f"contradictions: resolved {found['resolved']}, remaining {found['remaining']}", file=out)
    if listing:
        resting = set(outcome.resting)
        for entry in outcome.listing(n for n in outcome._ordered if n in outcome.dead_ranks):
            triple = f"  {' '.join(map(str, entry['triple']))}" if "triple" in entry else ""
            mark = f"  (rests only on {', '.join(outcome.deletion.kinds)})" if entry["id"] in resting else ""
            print(f"  - {entry['id']}{triple}{mark}", file=out)
        for entry in outcome.demoted:
            print(f"  ~ {entry['artifact']}  {' '.join(map(str, entry['triple']))}  (demoted to an edge)", file=out)
        if graph is not None and outcome.contradictions_total:
            for remaining in outcome.contradictions(graph)["remaining_ids"]:
                print(f"  = {remaining}  (contradiction remains)", file=out)


def print_why(result: dict, out=None) -> None:
    """Prints a why() result as text."""
    out = out or sys.stdout
    triple = f" {' '.join(map(str, result['triple']))}" if result.get("triple") else ""
    print(f"{result['artifact']} ({result['layer']}{triple}): {result['label']}"
          f"{'' if result['exact'] else '  [capped]'}", file=out)
    marks = result.get("distrusted") or [False] * len(result["support_sets"])
    for i, (support, distrusted) in enumerate(zip(result["support_sets"], marks), 1):
        note = f"  [rests on {'/'.join(result['distrusted_kinds'])}: cannot support]" if distrusted else ""
        print(f"  support set {i}:{note}", file=out)
        for a in support:
            s, p, o = a["triple"]
            print(f"    {a['id']:10} {a['source']:24} {a['kind']:16} {s} {'NOT ' * a.get('negated', False)}{p} {o}",
                  file=out)
    if "stands" in result:
        print(f"  {'stands' if result['stands'] else 'does not stand'} without "
              f"{', '.join(result['distrusted_kinds'])}", file=out)
    for tree in result["derivations"]:
        if tree is not None:
            print("  derivation:", file=out)
            for line in tree.lines("    "):
                print(line, file=out)


def _run_why(args: argparse.Namespace) -> int:
    from ..explain import Explainer, why
    graph = Graph(args.graph, at=args.at)
    _require(graph, args.artifact)
    result = why(graph, args.artifact, Explainer(graph), trees=args.trees, distrust=tuple(args.distrust_kind))
    if args.json:
        result["derivations"] = [t.lines() if t else None for t in result["derivations"]]
        print_json(result)
    else:
        print_why(result)
    return 0


def print_whynot(result: dict, out=None) -> None:
    """Prints a whynot() result as text."""
    out = out or sys.stdout
    print(f"{result['artifact']} is {result['status']} under {result['policy']} after {result['deletion']}",
          file=out)
    for entry in result["support_sets"]:
        broken = (f"broken by {', '.join(entry['broken_by'])} ({', '.join(entry['sources'])})"
                  if entry["broken_by"] else "survives")
        print(f"  {{{', '.join(entry['support'])}}}: {broken}", file=out)


def _run_whynot(args: argparse.Namespace) -> int:
    from ..explain import whynot
    graph = Graph(args.graph, at=args.at)
    _require(graph, args.artifact)
    result = whynot(graph, args.artifact, deletion(args), args.policy)
    print_json(result) if args.json else print_whynot(result)
    return 0


def print_robustness(result: dict, out=None) -> None:
    """Prints a robustness() result as text."""
    out = out or sys.stdout
    inexact = "" if result["exact"] else " (capped label: at least)"
    print(f"{result['artifact']}: {result['support_sets']} support sets over {len(result['sources'])} sources",
          file=out)
    print(f"  fewest sources whose retraction kills it{inexact}: "
          f"{len(result['fewest_sources_to_kill'])} ({', '.join(result['fewest_sources_to_kill'])})", file=out)
    print(f"  independent sources: {result['independent_sources']}", file=out)
    print(f"  N_path {result['n_path']} support sets, N_prov {result['n_prov']} independent origins"
          f"{'  ECHO: several support sets, one origin' if result['echo'] else ''}", file=out)
    print(f"  fewest origins whose retraction kills it{inexact}: {len(result['fewest_origins_to_kill'])} "
          f"({', '.join(result['fewest_origins_to_kill'])})", file=out)
    for origin, sources in result["origins"].items():
        if sources != [origin]:
            print(f"  origin {origin}: {', '.join(sources)}", file=out)
    if result.get("distrusted_kinds"):
        print(f"  not counted: {result['distrusted_sets']} support sets resting on "
              f"{', '.join(result['distrusted_kinds'])}", file=out)


def _run_robustness(args: argparse.Namespace) -> int:
    from ..explain import robustness
    graph = Graph(args.graph, at=args.at)
    _require(graph, args.artifact)
    result = robustness(graph, args.artifact, origins=args.origins, distrust=tuple(args.distrust_kind))
    print_json(result) if args.json else print_robustness(result)
    return 0


def _run_top(args: argparse.Namespace) -> int:
    from ..explain import top_sources
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
    from ..explain import rests_on
    with Graph(args.graph, at=args.at) as graph:
        result = rests_on(graph, tuple(args.kind), exact=args.exact)
    if args.json:
        print_json(result)
        return 0
    print(f"{len(result['artifacts'])} artifacts rest only on {', '.join(result['kinds'])} "
          f"({result['assertions']} assertions of that kind)")
    for entry in result["artifacts"]:
        triple = f"  {' '.join(map(str, entry['triple']))}" if "triple" in entry else ""
        print(f"  - {entry['id']} ({entry['layer']}){triple}")
    if result["uncertain"]:
        print(f"{len(result['uncertain'])} of them rest on capped labels; --exact settles them")
    return 0


def _run_repl(args: argparse.Namespace) -> int:
    from ..repl import run_repl
    return run_repl(args.graph, policy=args.policy, at=args.at)
