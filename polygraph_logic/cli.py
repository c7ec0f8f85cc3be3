"""The ``polygraph`` command: a thin layer of argument parsing over the Python API."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from . import __version__
from .errors import PolygraphError
from .evaluate import Model, StratumStats, evaluate, tuple_key, what_if
from .program import load_program
from .graph.build import build_graph
from .importers import edges_to_datalog, read_gaf, read_gpad, read_obographs, write_assertions, write_background
from .graph.compile import compile_inputs
from .graph.records import load_assertions, load_receipts
from .graph.store import LAYERS, Graph, describe
from .progress import Progress
from .provenance import SEMIRINGS
from .resources import rule_file


def _cap(text: str) -> int | None:
    if text.lower() in ("none", "0", "inf"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--cap takes a positive integer or 'none', not {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError("--cap must be positive")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Returns the argument parser of the ``polygraph`` command."""
    parser = argparse.ArgumentParser(
        prog="polygraph",
        description="Datalog with why-provenance for knowledge graphs built by language models.",
    )
    parser.add_argument("--version", action="version", version=f"polygraph_logic {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = commands.add_parser(
        "eval",
        help="evaluate rule files and print every relation with its provenance",
        description="Evaluate one or more rule files (read as one program) and print every "
        "relation, given facts included. Facts written `a12 :: edge(\"a\", \"b\").` are source "
        "assertions tracked by the provenance semiring.",
    )
    ev.add_argument("files", nargs="+", metavar="FILE.dl", help="rule files, read as one program")
    ev.add_argument("--semiring", choices=SEMIRINGS, default="why",
                    help="boolean: facts only; why: minimal support sets (default); lineage: flat sets")
    ev.add_argument("--cap", type=_cap, default=8, metavar="K",
                    help="keep at most K support sets per fact, the smallest (default 8; 'none' = no cap)")
    ev.add_argument("--json", action="store_true", help="print JSON instead of text")
    ev.add_argument("--relation", action="append", metavar="NAME",
                    help="print only this relation (repeatable)")
    ev.add_argument("--delete", action="append", metavar="ID[,ID...]",
                    help="what if these assertions were deleted: print what still stands and what falls")
    ev.add_argument("--stats", action="store_true", help="print per-stratum rounds and times to stderr")
    ev.set_defaults(run=_run_eval)
    _graph_commands(commands)
    return parser


def _inputs(command: argparse.ArgumentParser, rules: bool) -> None:
    command.add_argument("--assertions", required=True, metavar="A.jsonl", help="assertions (JSON Lines)")
    command.add_argument("--receipts", metavar="R.jsonl", help="receipts for merges and summaries (JSON Lines)")
    command.add_argument("--cap", type=_cap, default=8, metavar="K",
                         help="keep at most K support sets per label, the smallest (default 8)")
    if rules:
        command.add_argument("--rules", action="append", default=[], metavar="FILE.dl",
                             help="rule files (repeatable); a bare name such as 'ro' or 'existential' "
                                  "means the rule file shipped with polygraph_logic")


def _graph_commands(commands) -> None:
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
    build.add_argument("-o", "--output", required=True, metavar="GRAPH", help="the graph file to write")
    build.set_defaults(run=_run_build)

    info = commands.add_parser("info", help="counts per layer, label sizes, truncations of a graph")
    info.add_argument("graph", metavar="GRAPH")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(run=_run_info)

    show = commands.add_parser("show", help="list a graph's artifacts with their labels")
    show.add_argument("graph", metavar="GRAPH")
    show.add_argument("--layer", choices=LAYERS, action="append", help="only this layer (repeatable)")
    show.add_argument("--limit", type=int, default=None, metavar="N", help="at most N artifacts per layer")
    show.set_defaults(run=_run_show)

    importer = commands.add_parser(
        "import", help="turn real annotation data into assertions or background rules",
        description="gpad/gaf: Gene Ontology annotations -> assertions (JSON Lines), one per line "
                    "of the file (ids PREFIX + line number); NOT-qualified lines are skipped and counted. "
                    "obographs: ontology edges -> background facts edge(s, p, o) (a rule file).")
    importer.add_argument("format", choices=("gpad", "gaf", "obographs"))
    importer.add_argument("file", metavar="FILE")
    importer.add_argument("-o", "--output", metavar="OUT",
                          help="where to write (default: standard output)")
    importer.add_argument("--prefix", help="assertion id prefix (default: the format name)")
    importer.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    importer.set_defaults(run=_run_import)


def _run_eval(args: argparse.Namespace) -> int:
    program = load_program(*args.files)
    for warning in program.warnings:
        print(warning, file=sys.stderr)
    progress = _print_stats if args.stats else None
    model = evaluate(program, semiring=args.semiring, cap=args.cap, progress=progress)
    names = args.relation or model.relations()
    for name in names:
        model.facts(name)  # raises a clear KeyError for an unknown relation
    if args.delete:
        deleted = [i for chunk in args.delete for i in chunk.split(",") if i]
        return _print_deletion(model, names, deleted, args.json)
    if args.json:
        full = model.to_json()
        json.dump({name: full[name] for name in names}, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_model(model, names)
    return 0


def _rule_paths(names) -> list[str]:
    try:
        return [str(rule_file(name)) for name in names]
    except FileNotFoundError as error:
        raise PolygraphError("file_error", str(error)) from None


def _run_compile(args: argparse.Namespace) -> int:
    assertions = load_assertions(args.assertions)
    receipts = load_receipts(args.receipts, {a.id for a in assertions}) if args.receipts else []
    compiled = compile_inputs(assertions, receipts, args.cap)
    compiled.program()  # checks the program, as build would
    print(compiled.to_text(), end="")
    return 0


def _run_build(args: argparse.Namespace) -> int:
    rules = _rule_paths(args.rules)
    progress = Progress("evaluating", stream=sys.stderr)
    build = build_graph(args.assertions, args.receipts, rules, cap=args.cap,
                        progress=lambda stats: progress.step(f"{', '.join(stats.relations)[:40]}"))
    progress.done()
    build.write(args.output)
    counts = build.counts()
    print(f"wrote {args.output}: {len(build.artifacts)} artifacts "
          f"({', '.join(f'{counts.get(layer, 0)} {layer}' for layer in LAYERS)}); "
          f"{build.truncated()} labels truncated at cap {args.cap}, {build.over_cap} receipts over the cap; "
          f"{sum(build.seconds.values()):.2f} s", file=sys.stderr)
    return 0


def _run_info(args: argparse.Namespace) -> int:
    with Graph(args.graph) as graph:
        info = graph.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{info['file']}: {info['artifacts']} artifacts over {info['assertions']} assertions "
          f"from {info['sources']} sources ({info['file_bytes']:,} bytes)")
    print(f"{'layer':10} {'artifacts':>9} {'inexact':>8} {'label B/artifact':>17}  support sets: count")
    for layer, entry in info["layers"].items():
        sizes = "  ".join(f"{k}:{v}" for k, v in entry["support_sets"].items())
        per = entry["label_bytes"] / entry["artifacts"]
        print(f"{layer:10} {entry['artifacts']:>9} {entry['inexact']:>8} {per:>17.1f}  {sizes}")
    print(f"labels: {info['label_bytes_per_artifact']:.1f} bytes per artifact on average; "
          f"cap {info['meta'].get('cap')}; receipts over the cap: {info['meta'].get('receipts_over_cap')}")
    return 0


def _run_import(args: argparse.Namespace) -> int:
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
    print(report.summary(), file=sys.stderr)
    return 0


def _run_show(args: argparse.Namespace) -> int:
    with Graph(args.graph) as graph:
        for layer in args.layer or LAYERS:
            artifacts = list(graph.artifacts(layer))
            if not artifacts:
                continue
            print(f"{layer} ({len(artifacts)})")
            for artifact in artifacts[: args.limit]:
                label = graph.label(artifact)
                marker = "" if artifact.exact else "  [capped]"
                print(f"  {artifact.id}  {describe(artifact)}\n      {label}{marker}")
    return 0


def _print_deletion(model: Model, names: Sequence[str], deleted: list[str], as_json: bool) -> int:
    outcome = what_if(model, deleted)
    if as_json:
        json.dump(
            {
                "deleted": sorted(set(deleted)),
                "alive": {n: [{"tuple": list(t), "provenance": model.semiring.to_json(l), "exact": l.exact}
                              for t, l in sorted(outcome.alive[n].items(), key=lambda i: tuple_key(i[0]))]
                          for n in names},
                "dead": {n: [list(t) for t in sorted(outcome.dead[n], key=tuple_key)] for n in names},
            },
            sys.stdout, indent=2, ensure_ascii=False,
        )
        print()
        return 0
    print(f"deleting {', '.join(sorted(set(deleted)))}")
    for name in names:
        alive, dead = outcome.alive[name], outcome.dead[name]
        print(f"{name} ({len(alive)} alive, {len(dead)} dead)")
        for tup in sorted(dead, key=tuple_key):
            print(f"  - {model.format_fact(name, tup)}")
        for tup in sorted(alive, key=tuple_key):
            label = alive[tup]
            print(f"    {model.format_fact(name, tup)}  {model.semiring.format(label)}")
    return 0


def _print_stats(stats: StratumStats) -> None:
    print(
        f"stratum {', '.join(stats.relations)}: {stats.facts} facts, "
        f"{stats.rounds} rounds, {stats.seconds * 1000:.1f} ms",
        file=sys.stderr,
    )


def print_model(model: Model, names: Sequence[str], out=None) -> None:
    """Prints relations as text: a heading per relation, then one fact a line with its label."""
    out = out or sys.stdout
    tracks = model.semiring.tracks_provenance
    for name in names:
        rows = model.facts(name)
        print(f"{name} ({len(rows)} fact{'s' if len(rows) != 1 else ''})", file=out)
        facts = sorted(rows, key=tuple_key)
        texts = [model.format_fact(name, tup) for tup in facts]
        width = max((len(t) for t in texts), default=0)
        for tup, text in zip(facts, texts):
            if tracks:
                label = rows[tup]
                marker = "" if label.exact else "  [capped]"
                print(f"  {text.ljust(width)}  {model.semiring.format(label)}{marker}", file=out)
            else:
                print(f"  {text}", file=out)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (2 on a user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except PolygraphError as error:
        print(str(error), file=sys.stderr)
        return 2
    except KeyError as error:
        print(f"polygraph: {error.args[0]}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
