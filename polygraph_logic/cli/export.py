"""``export``: a graph as RDF with its provenance (nanopublications, PROV-O), optionally after a what-if."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.export import DEFAULT_BASE, EXTENSIONS, FORMATS, export_graph
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.progress import Progress
from polygraph_logic.cli.ledger import add_at
from polygraph_logic.cli.arguments import (add_deletion, add_graph, add_json, add_require, deletion as deletion_of,
                                          print_json, requirement)


def register(commands) -> None:
    """Adds the ``export`` subcommand."""
    export = commands.add_parser(
        "export", help="write a graph as RDF (TriG, N-Quads, Turtle, JSON-LD) with its provenance",
        description="Write every assertion and artifact as RDF: one nanopublication per artifact (its "
                    "statement in an assertion graph, PROV-O provenance: each support set a qualified "
                    "derivation listing its assertions, the polynomial, the exact flag). With a deletion, "
                    "every artifact gets its status under the policy and the deletion, a prov:Activity, "
                    "invalidates the dead ones. Turtle has no named graphs; JSON-LD no triple terms.")
    add_graph(export)
    add_at(export)
    export.add_argument("--format", choices=FORMATS, default=None,
                        help="default: from the extension of -o (.trig .nq .ttl .jsonld), else trig")
    export.add_argument("-o", "--output", metavar="FILE", help="where to write (default: standard output)")
    export.add_argument("--base", default=DEFAULT_BASE, metavar="IRI",
                        help=f"namespace of the minted IRIs, ending in '/' (default {DEFAULT_BASE}); give "
                             "each graph its own when loading several into one store")
    export.add_argument("--rdf12", action="store_true",
                        help="write each assertion and claim as an RDF 1.2 triple term (rdf:reifies <<( s p o )>>), "
                             "through pyoxigraph; rdflib cannot read the result")
    export.add_argument("--no-facts", action="store_true",
                        help="leave out the program's non-artifact facts (an import then cannot re-derive)")
    add_deletion(export)
    add_require(export)
    export.add_argument("--exact", action="store_true",
                        help="with a deletion: settle dead verdicts on capped labels by re-derivation")
    add_json(export, "export")
    export.set_defaults(run=_run_export)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if args.output:
        suffix = Path(args.output).suffix.lower()
        for name, extension in EXTENSIONS.items():
            if suffix == extension:
                return name
    return "trig"


def _run_export(args: argparse.Namespace) -> int:
    deletion = deletion_of(args)
    if args.json and not args.output:
        raise PolygraphError("bad_argument", "--json prints the export's report: give the file to write with -o "
                                             "(standard output carries the RDF)")
    require = requirement(args)
    if not deletion and not require and (args.exact or args.policy != "trust-all"):
        raise PolygraphError("bad_argument", "--policy and --exact apply to a deletion: add --retract-source, "
                                             "--revoke-relation or --assertion")
    with Graph(args.graph, at=args.at) as graph:
        progress = Progress("exporting", total=sum(graph.counts().values()), stream=sys.stderr)
        report = export_graph(graph, args.output, _format(args), base=args.base, deletion=deletion,
                              policy=args.policy, exact=args.exact, rdf12=args.rdf12, facts=not args.no_facts,
                              progress=progress.step, require=require)
        progress.done()
    if args.json:
        print_json({"output": report.path, "format": report.format, "rdf12": report.rdf12,
                    "artifacts": report.artifacts, "assertions": report.assertions, "quads": report.quads,
                    "bytes": report.bytes, "seconds": round(report.seconds, 3), "deletion": report.deletion,
                    "policy": report.policy, "dead": report.dead})
    else:
        print(report.summary(), file=sys.stderr)
    return 0
