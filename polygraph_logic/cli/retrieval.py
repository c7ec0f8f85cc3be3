"""``evaluate`` (tainted@k and recall@k per cleanup policy) and ``queries`` (a query set)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import PolygraphError
from ..graph.index import GraphIndex
from ..graph.store import Graph
from ..progress import Progress
from ..whatif import POLICIES as ALL_POLICIES, Deletion


def register(commands) -> None:
    """Adds the retrieval subcommands."""
    evaluate = commands.add_parser(
        "evaluate", help="how often BM25 still serves dead content after cleanup, and the recall each policy keeps",
        description="For each deletion kind given and each cleanup policy: tainted@k (the fraction of queries "
                    "whose BM25 top k holds content dead by ground truth) and recall@k against a perfect "
                    "maintainer's graph, with the raw graph as the 'before cleanup' row.")
    evaluate.add_argument("graph", metavar="GRAPH")
    evaluate.add_argument("--queries", required=True, metavar="FILE",
                          help="queries: JSON Lines with a \"text\" field, or plain text one a line "
                               "(see `polygraph queries`)")
    evaluate.add_argument("-k", "--k", type=int, default=10, metavar="K", help="results per query (default 10)")
    evaluate.add_argument("--retract-source", action="append", default=[], metavar="S",
                          help="a source of the retract-source deletion (repeatable)")
    evaluate.add_argument("--retract-source-file", metavar="FILE",
                          help="more sources of the retract-source deletion, one a line")
    evaluate.add_argument("--revoke-relation", action="append", default=[], metavar="P",
                          help="a predicate of the revoke-relation deletion (repeatable)")
    evaluate.add_argument("--verdicts", metavar="AUDIT.json",
                          help="audit verdicts: ground truth for merges, summaries and sentences")
    evaluate.add_argument("--policy", action="append", choices=ALL_POLICIES, metavar="POLICY",
                          help="a policy to evaluate (repeatable; default deployed, trust-all, distrust:summary, "
                               "flat)")
    evaluate.add_argument("--exact", action="store_true",
                          help="policies settle dead verdicts on capped labels by re-derivation")
    evaluate.add_argument("--json", action="store_true", help="print JSON")
    evaluate.set_defaults(run=_run_evaluate)

    queries = commands.add_parser(
        "queries", help="a query set from the graph's own entity names and relation labels",
        description="Draws queries from the entity names of the graph (weighted by mentions) and the labels "
                    "of their relations; the same graph and seed give the same queries. JSON Lines out.")
    queries.add_argument("graph", metavar="GRAPH")
    queries.add_argument("-n", type=int, default=300, metavar="N", help="number of queries (default 300)")
    queries.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    queries.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    queries.set_defaults(run=_run_queries)


def deletions_from(args: argparse.Namespace) -> dict[str, Deletion]:
    """Returns the deletions of the command line by kind: all sources together, all relations together."""
    sources = list(args.retract_source)
    if args.retract_source_file:
        try:
            text = Path(args.retract_source_file).read_text("utf-8")
        except OSError as error:
            raise PolygraphError("file_error", f"cannot read {args.retract_source_file}: "
                                               f"{error.strerror or error}") from None
        sources += [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    deletions = {}
    if sources:
        deletions["retract-source"] = Deletion(sources=tuple(dict.fromkeys(sources)))
    if args.revoke_relation:
        deletions["revoke-relation"] = Deletion(relations=tuple(dict.fromkeys(args.revoke_relation)))
    if not deletions:
        raise PolygraphError("bad_argument", "give the deletion to evaluate: --retract-source S (or "
                                             "--retract-source-file FILE) and/or --revoke-relation P")
    return deletions


def _run_evaluate(args: argparse.Namespace) -> int:
    from ..queries import load_queries  # numpy and rank-bm25: only for these commands
    from ..retrieval import POLICIES, AuditVerdicts, Retriever, evaluate_retrieval

    queries = load_queries(args.queries)
    deletions = deletions_from(args)
    verdicts = AuditVerdicts.load(args.verdicts) if args.verdicts else None
    index = GraphIndex(Graph(args.graph))
    retriever = Retriever(index)
    progress = Progress("evaluating queries", total=len(queries))
    try:
        report = evaluate_retrieval(index, queries, deletions, k=args.k, verdicts=verdicts,
                                    policies=tuple(dict.fromkeys(args.policy or POLICIES)),
                                    exact=args.exact, retriever=retriever, progress=progress)
    finally:
        progress.done()
    if args.json:
        data = report.to_json()
        data["graph"] = args.graph
        data["verdicts"] = args.verdicts
        print(json.dumps(data, indent=2, ensure_ascii=False))
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
        named = deletion["sources"] or deletion["relations"]
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
    from ..queries import generate_queries, write_queries  # numpy: only for these commands

    graph = Graph(args.graph)
    queries = generate_queries(graph, args.n, args.seed)
    if args.output:
        write_queries(queries, args.output)
        print(f"wrote {len(queries)} queries to {args.output}")
    else:
        for query in queries:
            print(json.dumps(query.to_json(), ensure_ascii=False))
    if len(queries) < args.n:
        print(f"polygraph: the graph yields only {len(queries)} distinct queries", file=sys.stderr)
    return 0
