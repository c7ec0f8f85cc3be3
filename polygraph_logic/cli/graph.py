"""``compile``, ``build``, ``info``, ``show`` and ``import``: making and reading graphs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.cli.ledger import add_at
from polygraph_logic.engines import ENGINES
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import LAYERS, describe
from polygraph_logic.progress import Progress
from polygraph_logic.cli.arguments import (
    add_authorization,
    add_cap,
    add_graph,
    add_json,
    add_limit,
    add_require,
    cap_value,
    print_json,
    requirement,
    shipped_name,
)


def _inputs(command: argparse.ArgumentParser, rules: bool) -> None:
    command.add_argument("--assertions", required=True, metavar="A.jsonl", help="assertions (JSON Lines)")
    command.add_argument("--receipts", metavar="R.jsonl", help="receipts for merges and summaries (JSON Lines)")
    add_cap(command)
    if rules:
        command.add_argument("--rules", action="append", default=[], metavar="FILE.dl",
                             help="rule files (repeatable); a bare name such as 'ro' or 'existential' "
                                  "means the rule file shipped with polygraph_logic")


def register(commands) -> None:
    """Adds the graph subcommands."""
    compile_ = commands.add_parser(
        "compile", help="print the Datalog program that assertions and receipts become",
        description="Compile assertions and receipts into rules and print them (nothing is evaluated).")
    _inputs(compile_, rules=False)
    compile_.set_defaults(run=_run_compile)

    build = commands.add_parser(
        "build", help="evaluate assertions, receipts and rules into a graph file",
        description="Evaluate assertions, receipts and rule files under why-provenance and write "
                    "the graph (every artifact with its layer, content and label) to one SQLite file. "
                    "Writing is atomic: an interrupted build leaves a previous file intact.")
    _inputs(build, rules=True)
    build.add_argument("--origins", metavar="F.jsonl",
                       help="derived_from records between sources (JSON Lines), stored with the graph")
    add_authorization(build, "every assertion it does not authorize is refused at its file and line "
                             "(unauthorized) and nothing is written; without one nothing is refused")
    output = build.add_mutually_exclusive_group(required=True)
    output.add_argument("-o", "--output", metavar="GRAPH", help="the graph file to write")
    output.add_argument("--tables", metavar="DIR",
                        help="with --engine duckdb or spark: write a graph folder (Parquet, as export-tables "
                             "writes) straight from the engine instead of a graph file; every reading command "
                             "reads it in place (whatif, why, export, serve, ...) and add grows it by versions")
    build.add_argument("--engine", choices=ENGINES, default="python",
                       help="python (the reference, the default), duckdb (embedded SQL: for large graphs) "
                            "or spark (Spark SQL: local or a cluster; needs the [spark] extra)")
    build.add_argument("--memory-limit", metavar="SIZE", help="DuckDB's memory limit, e.g. 4GB (it spills beyond)")
    build.add_argument("--master", metavar="URL",
                       help="where --engine spark runs: local[2] (the default) or spark://HOST:PORT")
    build.add_argument("--no-circuit", dest="circuit", action="store_false",
                       help="leave out the circuit of the capped labels (the derivations of every fact the cap "
                            "truncated): the build is faster, and a what-if then counts dead verdicts on capped "
                            "labels as uncertain unless --exact re-derives them")
    build.add_argument("--labels", choices=("capped", "witness"), default="capped",
                       help="capped (the default): each fact's label lists its --cap smallest support sets; "
                            "witness (--engine python, or duckdb with --tables): one support set per fact, a small one of the round that "
                            "derived it first (docs/whatif.md), "
                            "and the evaluation's circuit for every fact with more, so the build costs the "
                            "Boolean closure whatever the number of alternative derivations; what-if verdicts "
                            "are settled on the circuit (policies trust-all and deployed)")
    build.add_argument("--stats", action="store_true",
                       help="print to stderr each stratum (facts, rounds, seconds) and, with --engine duckdb "
                            "or spark, each semi-naive round (delta facts, monomials, seconds)")
    add_json(build, "build")
    build.set_defaults(run=_run_build)

    info = commands.add_parser(
        "info", help="counts per layer, label sizes, truncations of a graph",
        description="Print a graph's assertions, sources and artifacts, per layer the artifacts, the "
                    "inexact (capped) labels, label bytes and the distribution of support-set counts, and "
                    "how it was built (cap, rule files, receipts over the cap).")
    add_graph(info)
    add_at(info)
    add_json(info, "info")
    info.set_defaults(run=_run_info)

    check = commands.add_parser(
        "check", help="check every row of a graph file or folder and report damage",
        description="Check every row: labels decode and cite existing assertions, artifacts have their facts, "
                    "known layers and JSON content, mentions and rules load (a file: SQLite's integrity check, "
                    "then every row read; a folder: one DuckDB query per kind of damage). Reports its stages "
                    "on standard error. Prints one bad_graph line per kind of damage and exits 2, or 'ok'.")
    add_graph(check)
    add_json(check, "check")
    check.set_defaults(run=_run_check)

    show = commands.add_parser(
        "show", help="list a graph's artifacts with their labels",
        description="List the artifacts of each layer (claims, merges, edges, summaries, sentences, "
                    "contradictions): id, content and label (support sets), '[capped]' where the cap "
                    "truncated the label ('[witness]': one support set of several, on a graph built "
                    "with --labels witness).")
    add_graph(show)
    add_at(show)
    show.add_argument("--layer", choices=LAYERS, action="append", help="only this layer (repeatable)")
    add_limit(show, None, "artifacts per layer")
    add_require(show)
    add_json(show, "show")
    show.set_defaults(run=_run_show)

    generate_ = commands.add_parser(
        "generate", help="write a seedable synthetic graph's inputs (paper scale by default)",
        description="Generate assertions, receipts (merges, sentence-level summaries) and a list of "
                    "retracted sources shaped like the PolyGraph study's biomedical graph. The same "
                    "seed and parameters always give the same files.")
    generate_.add_argument("-o", "--output", required=True, metavar="DIR",
                           help="the folder to write assertions.jsonl, receipts.jsonl and retracted.txt to")
    generate_.add_argument("--seed", type=int, default=0, metavar="N",
                           help="random seed: the same seed and parameters give the same files (default 0)")
    generate_.add_argument("--documents", type=int, default=300, metavar="N",
                           help="source documents (default 300)")
    generate_.add_argument("--assertions", type=int, default=2800, metavar="N",
                           help="assertions, spread over the documents (default 2800)")
    generate_.add_argument("--merges", type=int, default=165, metavar="N",
                           help="merge receipts: entities merged under one canonical name (default 165)")
    generate_.add_argument("--summaries", type=int, default=59, metavar="N",
                           help="community summaries, each with sentence-level receipts (default 59)")
    generate_.add_argument("--copies", type=int, default=1, metavar="N",
                           help="the graph plus N-1 disjoint copies (copy k: seed + k, names prefixed copyK/); "
                                "for scale measurements")
    generate_.add_argument("--hubs", type=int, default=0, metavar="H",
                           help="with --copies: the copies share the H busiest places and wholes of the first "
                                "copy (hub entities that many others are located in or part of; default 0)")
    generate_.add_argument("--hub-sides", choices=("hub", "both"), default="hub",
                           help="hub: a later copy shares a hub on its hub side only (its own edges out of it "
                                "stay with its own entity; the default); both: edges into and out of a hub meet "
                                "there, as in a graph merged from many documents")
    generate_.add_argument("--hub-cycles", choices=("keep", "break"), default="keep",
                           help="with --hub-sides both: keep the part_of / located_in cycles among hubs that the "
                                "copies' differing hierarchies make (the default), or leave unshared each edge "
                                "between hubs that would close one")
    generate_.add_argument("--hub-skew", type=float, default=0.0, metavar="S",
                           help="draw the places genes are located in with weight 1/rank^S: a heavy-tailed "
                                "degree (0, the default: uniform; 1 to 2: a few places hold most genes)")
    add_json(generate_, "generate")
    generate_.set_defaults(run=_run_generate)

    ontology = commands.add_parser(
        "compile-ontology", help="compile OWL object-property axioms (e.g. the OBO RO) into rules",
        description="Read an OWL ontology (RDF/XML or Turtle) and write Datalog rules over "
                    "edge(subject, predicate, object) for transitive, symmetric, inverse, sub-property "
                    "and property-chain axioms, SWRL rules (class atoms read type(x, C); owl:Nothing gives "
                    "contradiction(x, y, reason)), hasSelf restrictions and propertyDisjointWith (a "
                    "contradiction(x, y, \"P vs Q: ...\") when both hold); every axiom or SWRL rule "
                    "with no rule is listed with the reason.")
    ontology.add_argument("ontology", metavar="ONTOLOGY.owl", help="the ontology: RDF/XML or Turtle")
    ontology.add_argument("-o", "--output", required=True, metavar="RULES.dl", help="the rule file to write")
    ontology.add_argument("--profile", choices=("instance", "class"), default="instance",
                          help="instance: every rule (graphs of individuals, the default); class: only "
                               "rules sound between classes read existentially (GO-style annotations)")
    add_json(ontology, "compile-ontology")
    ontology.set_defaults(run=_run_compile_ontology)

    importer = commands.add_parser(
        "import", help="GO annotations (gpad, gaf) into assertions, obographs into background rules, "
                       "an RDF export (rdf) back into a graph file",
        description="gpad/gaf: Gene Ontology annotations -> assertions (JSON Lines), one per line "
                    "of the file (ids PREFIX + line number); a NOT-qualified line is a negated assertion "
                    "(\"negated\": true). "
                    "obographs: ontology edges -> background facts edge(s, p, o) (a rule file). "
                    "rdf: an export of `polygraph export` (any format) -> a graph file (-o required).")
    importer.add_argument("format", choices=("gpad", "gaf", "obographs", "rdf"),
                          help="the input's format: gpad, gaf, obographs or rdf")
    importer.add_argument("file", metavar="FILE", help="the file to read")
    importer.add_argument("-o", "--output", metavar="OUT",
                          help="where to write (default: standard output)")
    importer.add_argument("--prefix", help="assertion id prefix (default: the format name)")
    importer.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    add_json(importer, "import")
    importer.set_defaults(run=_run_import)


def _run_compile(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.compile import compile_inputs  # start-up time: `show` and `info` need
    from polygraph_logic.graph.records import load_inputs     # none of the build's modules
    assertions, receipts = load_inputs(args.assertions, args.receipts)
    compiled = compile_inputs(assertions, receipts, args.cap)
    compiled.program()  # checks the program, as build would
    print(compiled.to_text(), end="")
    return 0


def _run_build(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.engine_build import build_graph  # start-up time: loaded when run
    from polygraph_logic.query.origins import load_origins  # start-up time: loaded when run
    origins = load_origins(args.origins) if args.origins else None
    output = args.tables or args.output
    with Progress("building", stream=sys.stderr, unit="strata evaluated") as progress:
        progress.phase("reading the inputs, compiling, evaluating the rules")

        def evaluated(stats) -> None:
            relations = ", ".join(stats.relations)
            relations = relations if len(relations) <= 40 else relations[:37] + "..."
            progress.step(f"last: {relations} ({stats.facts:,} facts, {stats.rounds} rounds)")
            if args.stats:
                progress.note(f"stratum {', '.join(stats.relations)}: {stats.facts:,} facts, {stats.rounds} rounds, "
                              f"{stats.seconds:.3f} s")

        def round_done(stats) -> None:
            progress.note(f"  stratum {stats.stratum} round {stats.round}: {stats.delta_facts:,} delta facts, "
                          f"{stats.monomials:,} monomials, {stats.seconds:.3f} s")

        built = build_graph(args.assertions, args.receipts, args.rules, cap=args.cap, progress=evaluated,
                            engine=args.engine, memory_limit=args.memory_limit, master=args.master,
                            rounds=round_done if args.stats else None, output=output, tables=bool(args.tables),
                            origins=origins, circuit=args.circuit, labels=args.labels,
                            authorization=args.authorization, writing=lambda stage: progress.phase(f"writing {output}: {stage}"))
    if args.tables:
        return _report(args, output, built.layers, built.truncated, built.over_cap, built.seconds,
                       f"{built.rows['facts']:,} facts, {built.rows['mentions']:,} mentions; ")
    return _report(args, output, built.counts(), built.truncated(), built.over_cap, built.seconds)


def _report(args: argparse.Namespace, output: str, counts: dict, truncated: int, over_cap: int,
            seconds: dict, more: str = "") -> int:
    """What a build wrote: the --json object, or one line on stderr."""
    if args.json:
        print_json({"output": output, "engine": args.engine, "cap": args.cap,
                    "artifacts": sum(counts.values()), "layers": {layer: counts.get(layer, 0) for layer in LAYERS},
                    "truncated": truncated, "receipts_over_cap": over_cap,
                    "seconds": {stage: round(value, 3) for stage, value in seconds.items()}})
        return 0
    print(f"wrote {output}: {sum(counts.values())} artifacts "
          f"({', '.join(f'{counts.get(layer, 0)} {layer}' for layer in LAYERS)}); "
          + (f"{truncated} witness labels with more support sets (settled by the circuit), "
             if args.labels == "witness" else f"{truncated} labels truncated at cap {args.cap}, ")
          + f"{over_cap} receipts over the cap; "
          f"{more}{sum(seconds.values()):.2f} s", file=sys.stderr)
    return 0


def info_json(info: dict) -> dict:
    """``Graph.info()`` as ``info --json`` prints it: meta values as numbers and lists (the cap a
    number or null), rule files as given or by their shipped name (never a site-packages path)."""
    meta = dict(info["meta"])
    for key, value in meta.items():
        if isinstance(value, str) and value.isdigit():
            meta[key] = int(value)
    if "cap" in meta:
        meta["cap"] = cap_value(meta["cap"])
    if "rule_files" in meta:
        try:
            files = json.loads(meta["rule_files"])
        except (TypeError, ValueError):
            files = []
        meta["rule_files"] = [shipped_name(str(name)) for name in files]
    return {**info, "meta": meta}


def _run_info(args: argparse.Namespace) -> int:
    with Graph(args.graph, at=args.at) as graph:
        info = info_json(graph.info())
    if args.json:
        print_json(info)
        return 0
    print(f"{info['file']}: {info['artifacts']} artifacts over {info['assertions']} assertions "
          f"from {info['sources']} sources ({info['file_bytes']:,} bytes)")
    width = max([10, *map(len, info["layers"])])  # 'contradiction' is the one longer name
    print(f"{'layer':{width}} {'artifacts':>9} {'inexact':>8} {'label B/artifact':>17}  support sets: count")
    for layer, entry in info["layers"].items():
        sizes = "  ".join(f"{k}:{v}" for k, v in entry["support_sets"].items())
        per = entry["label_bytes"] / entry["artifacts"]
        print(f"{layer:{width}} {entry['artifacts']:>9} {entry['inexact']:>8} {per:>17.1f}  {sizes}")
    kept = ("witness (one support set per fact; the circuit holds the rest)"
            if info["meta"].get("labels") == "witness" else f"cap {info['meta'].get('cap') or 'none'}")
    print(f"labels: {info['label_bytes_per_artifact']:.1f} bytes per artifact on average; "
          f"{kept}; receipts over the cap: {info['meta'].get('receipts_over_cap')}")
    return 0


def _run_check(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.store.check import check_graph  # start-up time: loaded when run
    with Progress("checking", stream=sys.stderr, unit="stages") as progress:
        report = check_graph(args.graph, progress=lambda stage: progress.step(stage))
    if args.json:
        print_json({"file": report.path, "ok": report.ok, "rows": dict(report.rows),
                    "problems": {kind: {"count": count, "examples": report.examples[kind]}
                                 for kind, count in report.problems.items()}})
        return 0 if report.ok else 2
    for line in report.lines():
        print(line, file=sys.stderr)
    print(report.summary(), file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 2


def _run_generate(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.synthetic_copies import generate_copies  # start-up time: loaded when run
    try:
        graph = generate_copies(args.copies, seed=args.seed, hubs=args.hubs, hub_sides=args.hub_sides,
                                hub_cycles=args.hub_cycles, documents=args.documents,
                                assertions=args.assertions, merges=args.merges, summaries=args.summaries,
                                hub_skew=args.hub_skew)
    except ValueError as error:
        raise PolygraphError("bad_argument", str(error)) from None
    graph.write(args.output)
    counts = graph.counts()
    if args.json:
        print_json({"output": args.output, "seed": args.seed, "copies": args.copies, "hubs": args.hubs,
                    "hub_sides": args.hub_sides, "hub_cycles": args.hub_cycles, "hub_skew": args.hub_skew,
                    "counts": counts})
        return 0
    print(f"wrote {args.output}: " + ", ".join(f"{v} {k}" for k, v in counts.items()), file=sys.stderr)
    return 0


def _run_compile_ontology(args: argparse.Namespace) -> int:
    from polygraph_logic.ontology.owl import class_level, compile_ontology  # rdflib: only for this command

    compiled = compile_ontology(args.ontology)
    if args.profile == "class":
        compiled = class_level(compiled)
    compiled.write(args.output)
    if args.json:
        print_json({"source": args.ontology, "output": args.output, "profile": args.profile,
                    "compiled": dict(compiled.counts), "rules": len(compiled.rules),
                    "skipped": {kind: {"count": count, "reason": reason,
                                       "items": sorted(compiled.skipped_items.get(kind, []))}
                                for kind, (count, reason) in sorted(compiled.skipped.items())},
                    "notes": list(compiled.notes)})
        return 0
    print(compiled.report(), file=sys.stderr)
    return 0


def _run_import(args: argparse.Namespace) -> int:
    from polygraph_logic.importers import (  # start-up time: loaded when run
        edges_to_datalog,
        import_rdf,
        read_gaf,
        read_gpad,
        read_obographs,
        write_assertions,
        write_background,
    )                               # pyoxigraph

    if args.json and not args.output:
        raise PolygraphError("bad_argument", "--json prints the import's report: give the file to write with -o "
                                             "(standard output carries the import)")
    if args.format == "rdf":
        if not args.output:
            raise PolygraphError("bad_argument", "import rdf needs -o GRAPH: the graph file to write")
        imported = import_rdf(args.file, args.output)
        if args.json:
            layers: dict[str, int] = {}
            for artifact in imported.artifacts:
                layers[artifact.layer] = layers.get(artifact.layer, 0) + 1
            print_json({"file": args.file, "format": "rdf", "output": args.output, "unit": "quads",
                        "read": imported.quads, "imported": len(imported.assertions), "malformed": [],
                        "rdf_format": imported.format, "artifacts": len(imported.artifacts), "layers": layers,
                        "facts": len(imported.facts), "facts_included": imported.facts_included,
                        "deletion": imported.deletion, "dead": imported.dead})
        else:
            print(imported.summary(), file=sys.stderr)
        return 0
    if args.format == "obographs":
        edges, _labels, report = read_obographs(args.file)
        if args.output:
            write_background(args.output, edges, source=Path(args.file).name)
        else:
            sys.stdout.write(edges_to_datalog(edges, source=Path(args.file).name))
    else:
        read = read_gpad if args.format == "gpad" else read_gaf
        assertions, report = read(args.file, id_prefix=args.prefix or args.format, strict=args.strict)
        if args.output:
            write_assertions(args.output, assertions)
        else:
            for assertion in assertions:
                print(json.dumps(assertion.to_json(), ensure_ascii=False))
    if args.json:
        print_json({"file": args.file, "format": args.format, "output": args.output, "unit": report.unit,
                    "read": report.read, "imported": report.imported,
                    "malformed": [{"line": line, "reason": reason} for line, reason in report.malformed],
                    "negated": report.negated, "comments": report.comments, "short_lines": report.short_lines,
                    "relations": dict(sorted(report.relations.items()))})
        return 0
    print(report.summary(), file=sys.stderr)
    return 0


def _run_show(args: argparse.Namespace) -> int:
    from polygraph_logic.query.listing import Listing  # start-up time: loaded when run

    require = requirement(args)
    with Graph(args.graph, at=args.at) as graph:
        listing = Listing(graph, args.layer, args.limit, require)
        if args.json:  # the listing written as it is read (print_json streams an iterator)
            print_json(listing.to_json())
            return 0
        # an inexact label: one a cap truncated, or a witness (one support set of several)
        inexact = "  [witness]" if graph.meta.get("labels") == "witness" else "  [capped]"
        shown = None
        for layer, artifact in listing.rows():  # streamed
            if layer != shown:
                print(f"{layer} ({listing.counts[layer]})")
                shown = layer
            marker = "" if artifact.exact else inexact
            if require and artifact.id in listing.unqualified:
                marker += f"  [no support set of only {'/'.join(require.kinds)}]"
            print(f"  {artifact.id}  {describe(artifact)}\n      {listing.text(artifact.support)}{marker}")
    return 0
