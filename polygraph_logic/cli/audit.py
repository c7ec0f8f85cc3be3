"""``audit``: grade a graph's labels against re-derivation under deletions (the study's Table 2)."""

from __future__ import annotations

import argparse
import os
import sys

from polygraph_logic.audit import (
    ENGINES,
    PROMPTS,
    ModelOracle,
    NamedDeletion,
    ReplayOracle,
    audit,
    random_retractions,
)
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.progress import Progress
from polygraph_logic.cli.arguments import (
    add_deletion,
    add_graph,
    add_json,
    add_model_options,
    deletion,
    has_deletion,
    positive_int,
    print_json,
    separate,
)

KEY_ENV = "ANTHROPIC_API_KEY"


def register(commands) -> None:
    """Adds the audit subcommand."""
    command = commands.add_parser(
        "audit", help="grade labels against re-derivation under deletions (Table 2 of the study)",
        description="For every model-authored artifact a deletion touches (merges, flat summaries, summary "
                    "sentences), ask an oracle R times whether it re-derives from the surviving evidence; "
                    "alive when at least 1-tau of the draws reproduce it, dead when at most tau do, undecided "
                    "otherwise. Entailed edges are re-derived symbolically. Prints agreement, leaky, "
                    "over-deleted (shares of the decided artifacts, 95% Wilson intervals) and undecided per "
                    "deletion and layer, pooled over the deletions. The anthropic oracle asks every draw at once: "
                    "with --batch as one Message Batch (half price), else N calls at a time; it prints tokens "
                    "(input, output, cache write, cache read) and dollars. Exit status 1 when an edge label or the "
                    "two edge engines disagree (a finding), 2 on an error.")
    add_graph(command)
    add_deletion(command, policy=False)
    command.add_argument("--separately", action="store_true",
                         help="audit each source, relation, assertion and kind named above as its own deletion "
                              "(pooled), instead of all of them as one deletion")
    command.add_argument("--random-retraction", type=float, metavar="FRACTION",
                         help="retract this fraction of the sources, drawn at random with --seed")
    command.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the random retraction (default 0)")
    command.add_argument("--repeat", type=positive_int, default=1, metavar="K",
                         help="K random retractions, seeds N..N+K-1, pooled (default 1)")
    command.add_argument("--draws", type=positive_int, default=5, metavar="R",
                         help="re-derivations per artifact (default 5)")
    command.add_argument("--tau", type=float, default=0.2, metavar="TAU",
                         help="verdict threshold: alive when at least 1-TAU of the draws re-derive, dead when at "
                              "most TAU do (default 0.2)")
    command.add_argument("--oracle", default="anthropic", metavar="anthropic|replay:FILE",
                         help="who re-derives: a Claude model (needs ANTHROPIC_API_KEY) or the answers recorded "
                              "in an AUDIT.json or a JSON Lines file (default anthropic)")
    command.add_argument("--prompt", choices=PROMPTS, default="rederive",
                         help="rederive: show the earlier conclusion; blind: merges as an open identity question, "
                              "summaries and sentences as statements to check (default rederive)")
    command.add_argument("--edge-oracle", choices=ENGINES, default="ours",
                         help="who re-derives entailed edges: our engine, or pyDatalog checked against ours")
    command.add_argument("--model", default=None, help="the model of the anthropic oracle (default "
                                                       "$POLYGRAPH_MODEL or the package default)")
    command.add_argument("--cache", default=None, metavar="FILE",
                         help="SQLite answer cache of the anthropic oracle; cached answers need no key")
    add_model_options(command)
    command.add_argument("-o", "--output", metavar="AUDIT.json", help="write the audit as JSON")
    add_json(command, "audit")
    command.set_defaults(run=_run_audit)


def _oracle(args: argparse.Namespace):
    """Returns the oracle the arguments name, and the model client to close (or None)."""
    if args.oracle.startswith("replay:"):
        path = args.oracle[len("replay:"):]
        if not path:
            raise PolygraphError("unknown_oracle", "--oracle replay:FILE needs a file, e.g. replay:AUDIT.json")
        return ReplayOracle(path), None
    if args.oracle != "anthropic":
        raise PolygraphError("unknown_oracle", f"unknown oracle {args.oracle!r}; choose anthropic or replay:FILE")
    if not os.environ.get(KEY_ENV) and not args.cache:
        raise PolygraphError("missing_api_key", f"the anthropic oracle calls the Claude API and needs {KEY_ENV} "
                                                "in the environment; set it, pass --cache FILE holding the "
                                                "answers already, or re-run recorded answers with "
                                                "--oracle replay:AUDIT.json")
    from polygraph_logic.llm import ModelClient, load_prices  # start-up time: loaded when run

    client = ModelClient(model=args.model, cache=args.cache, prices=load_prices(args.prices),
                         mode="batch" if args.batch else "interactive", concurrency=args.concurrency,
                         poll_interval=args.poll_interval)
    return ModelOracle(client), client


def _deletions(args: argparse.Namespace, index: GraphIndex) -> list:
    deletions: list = []
    if has_deletion(args):
        named = deletion(args)
        deletions += separate(named) if args.separately else [named]
    elif args.separately:
        raise PolygraphError("bad_argument", "--separately splits the deletion named by --retract-source, "
                                             "--revoke-relation, --assertion or --distrust-kind: name one")
    if args.random_retraction is not None:
        deletions += random_retractions(index, args.random_retraction, args.seed, args.repeat)
    if not deletions:
        raise PolygraphError("no_deletion", "say what to delete: --retract-source S, --revoke-relation P (each "
                                            "repeatable; with --separately one deletion per name) or "
                                            "--random-retraction FRACTION --seed N")
    return deletions


def _run_audit(args: argparse.Namespace) -> int:
    index = GraphIndex(Graph(args.graph))
    deletions = _deletions(args, index)
    for named in deletions:  # a misspelt source is reported before an oracle is set up
        (named.deletion if isinstance(named, NamedDeletion) else named).resolve(index)
    oracle, client = _oracle(args)
    bar = Progress("auditing", stream=sys.stderr, unit="oracle draws")
    bar.phase(f"{len(deletions)} deletion{'s' * (len(deletions) != 1)}: the touched artifacts, their evidence")

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.step(amount=done - bar.count)

    try:
        report = audit(index, deletions, oracle, draws=args.draws, tau=args.tau, prompt=args.prompt,
                       edge_oracle=args.edge_oracle, progress=progress)
    finally:
        bar.done()
        if client is not None:
            print(client.usage.line(client.model, client.prices), file=sys.stderr)
            client.close()
    if client is not None:
        report.usage = client.usage.to_json(client.model, client.prices)
    if args.output:
        report.write(args.output)
    if args.json:
        print_json(report.to_json())
    else:
        print(report.table_text())
    return 1 if report.findings else 0
