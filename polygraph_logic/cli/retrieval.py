"""``evaluate`` (tainted@k and recall@k per cleanup policy) and ``queries`` (a query set)."""

from __future__ import annotations

import argparse
import json
import sys

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.progress import Progress
from polygraph_logic.query.whatif import Deletion
from polygraph_logic.cli.arguments import (
    add_deletion,
    add_graph,
    add_json,
    add_policy,
    deletion,
    has_deletion,
    positive_int,
    print_json,
)


def register(commands) -> None:
    """Adds the retrieval subcommands."""
    evaluate = commands.add_parser(
        "evaluate", help="how often BM25 still serves dead content after cleanup, and the recall each policy keeps",
        description="For each deletion kind given and each cleanup policy: tainted@k (the fraction of queries "
                    "whose BM25 top k holds content dead by ground truth) and recall@k against a perfect "
                    "maintainer's graph, with the raw graph as the 'before cleanup' row.")
    add_graph(evaluate)
    evaluate.add_argument("--queries", required=True, metavar="FILE",
                          help="queries: JSON Lines with a \"text\" field, or plain text one a line "
                               "(see `polygraph queries`)")
    evaluate.add_argument("--limit", type=positive_int, default=10, metavar="N",
                          help="results per query: the k of tainted@k and recall@k (default 10)")
    add_deletion(evaluate, policy=False)
    evaluate.add_argument("--by-kind", action="store_true",
                          help="evaluate the named sources together, the named relations together (and the "
                               "assertions, the kinds) as separate deletions, one column each (Table 4's "
                               "retract-source and revoke-relation columns), instead of one deletion")
    evaluate.add_argument("--verdicts", metavar="AUDIT.json",
                          help="audit verdicts: ground truth for merges, summaries and sentences")
    add_policy(evaluate, repeatable=True, default="deployed, trust-all, distrust:summary, flat")
    evaluate.add_argument("--exact", action="store_true",
                          help="policies settle dead verdicts on capped labels by re-derivation")
    add_json(evaluate, "evaluate")
    evaluate.set_defaults(run=_run_evaluate)

    queries = commands.add_parser(
        "queries", help="a query set from the graph's own entity names and relation labels",
        description="Draws queries from the entity names of the graph (weighted by mentions) and the labels "
                    "of their relations; the same graph and seed give the same queries. JSON Lines out.")
    add_graph(queries)
    queries.add_argument("--limit", type=positive_int, default=300, metavar="N",
                         help="at most N queries (default 300; a small graph yields fewer)")
    queries.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    queries.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    queries.set_defaults(run=_run_queries)


KINDS = (("retract-source", "sources"), ("revoke-relation", "relations"), ("assertion", "assertions"),
         ("distrust-kind", "kinds"))


def deletions_from(args: argparse.Namespace) -> dict[str, Deletion]:
    """Returns the deletions of the command line by column name: the one deletion the flags name
    (its column named by its kind when it has one kind, else ``deletion``), or with ``--by-kind``
    one deletion per kind named (all sources together, all relations together, ...)."""
    if not has_deletion(args):
        raise PolygraphError("bad_argument", "give the deletion to evaluate: --retract-source S (or "
                                             "--retract-source-file FILE), --revoke-relation P, --assertion ID "
                                             "or --distrust-kind KIND")
    named = deletion(args)
    parts = {kind: Deletion(**{field: getattr(named, field)}) for kind, field in KINDS if getattr(named, field)}
    if args.by_kind or len(parts) == 1:
        return parts
    return {"deletion": named}


def _run_evaluate(args: argparse.Namespace) -> int:
    from polygraph_logic.retrieval.query_sets import load_queries  # numpy and rank-bm25: only for these commands
    from polygraph_logic.retrieval.consequences import POLICIES, AuditVerdicts, Retriever, evaluate_retrieval  # start-up time: loaded when run

    queries = load_queries(args.queries)
    deletions = deletions_from(args)
    verdicts = AuditVerdicts.load(args.verdicts) if args.verdicts else None
    progress = Progress("evaluate", total=len(queries), unit="queries")
    progress.phase(f"reading {args.graph}")
    try:
        index = GraphIndex(Graph(args.graph))
        progress.phase(f"indexing {len(index.ranked):,} artifacts for BM25")
        retriever = Retriever(index)
        report = evaluate_retrieval(index, queries, deletions, k=args.limit, verdicts=verdicts,
                                    policies=tuple(dict.fromkeys(args.policy or POLICIES)),
                                    exact=args.exact, retriever=retriever, progress=progress)
    finally:
        progress.done()
    if args.json:
        print_json({**report.to_json(), "graph": args.graph, "verdicts": args.verdicts})
    else:
        print_report(report)
    return 0


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def print_report(report: Report, out=None) -> None:
    """Prints a report as a table shaped like the study's Table 4, then the ground truth used."""
    out = out or sys.stdout
    kinds = list(report.deletions)
    k = report.k
    print(f"BM25 (rank-bm25 Okapi) top {k} over {report.documents:,} artifacts, {report.queries} queries; "
          f"policies {'settle capped labels by re-derivation' if report.exact else 'trust labels as stored'}",
          file=out)
    print(f"{'':20}" + "".join(f"{kind:>24}" for kind in kinds), file=out)
    print(f"{'policy':20}" + f"{f'tainted@{k}':>12}{f'recall@{k}':>12}" * len(kinds), file=out)
    for view, results in report.rows.items():
        print(f"{view:20}" + "".join(f"{_percent(results[kind]['tainted']):>12}"
                                     f"{_percent(results[kind]['recall']):>12}" for kind in kinds), file=out)
    print("tainted@k: queries whose top k holds content dead by ground truth; recall@k: mean share of the "
          "perfect maintainer's top k that the policy's top k returns", file=out)
    for kind in kinds:
        entry = report.deletions[kind]
        deletion = entry["deletion"]
        named = deletion["sources"] + deletion["relations"] + deletion["assertions"]
        audited = f"; audit verdicts of '{entry['audited_deletion']}'" if entry["audited_deletion"] else ""
        print(f"{kind}: {', '.join(named[:3])}{f' and {len(named) - 3} more' if len(named) > 3 else ''}; "
              f"{entry['deleted_assertions']} assertions deleted{audited}", file=out)
        for layer, row in entry["truth"].items():
            if layer in ("edge", "contradiction"):
                how = (f"symbolic re-derivation ({row['settled']} capped dead labels settled, "
                       f"{row['revived']} revived)")
            elif layer == "claim":
                how = "dead iff every stating assertion is deleted and the triple is not entailed"
            elif row["truth"] == "labels":
                how = "labels (no audit verdicts for this deletion)"
            else:
                how = f"audit verdicts {row['verdicts']}, labels {row['labels']}"
                if row["undecided"]:
                    how += f" ({row['undecided']} undecided verdicts fell back to the label)"
            print(f"  {layer:9} {row['artifacts']:>7} artifacts {row['dead']:>6} dead  truth: {how}", file=out)
        skipped = max(results[kind]["recall_skipped"] for results in report.rows.values())
        if skipped:
            print(f"  recall@{k} skips {skipped} quer{'y' if skipped == 1 else 'ies'} whose perfect top {k} "
                  "is empty", file=out)


def _run_queries(args: argparse.Namespace) -> int:
    from polygraph_logic.retrieval.query_sets import generate_queries, write_queries  # numpy: only for these commands

    graph = Graph(args.graph)
    queries = generate_queries(graph, args.limit, args.seed)
    if args.output:
        write_queries(queries, args.output)
        print(f"wrote {len(queries)} queries to {args.output}")
    else:
        for query in queries:
            print(json.dumps(query.to_json(), ensure_ascii=False))
    if len(queries) < args.limit:
        print(f"note: the graph yields only {len(queries)} distinct queries", file=sys.stderr)
    return 0
