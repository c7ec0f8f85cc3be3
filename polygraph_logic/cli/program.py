"""``polygraph eval``: evaluate rule files and print relations with their provenance."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.budget import DEFAULT_MAX_FACTS
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import Model, StratumStats, evaluate, json_row, tuple_key, what_if
from polygraph_logic.datalog.magic import EXCLUDE, TRANSFORM
from polygraph_logic.datalog.program import load_program
from polygraph_logic.provenance import SEMIRINGS
from polygraph_logic.datalog.souffle_output import write_outputs, write_relations
from polygraph_logic.cli.arguments import add_cap, add_json, positive_int


def register(commands) -> None:
    """Adds the ``eval`` subcommand."""
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
    add_cap(ev, "fact")
    add_json(ev, "eval")
    ev.add_argument("--relation", action="append", metavar="NAME",
                    help="print only this relation (repeatable)")
    ev.add_argument("--delete", action="append", metavar="ID[,ID...]",
                    help="what if these assertions were deleted: print what still stands and what falls")
    ev.add_argument("--stats", action="store_true", help="print per-stratum rounds and times to stderr")
    ev.add_argument("-F", "--fact-dir", default=".", metavar="DIR",
                    help="read the .input relations from DIR/REL.facts, tab-separated (default: .)")
    ev.add_argument("-D", "--output-dir", metavar="DIR",
                    help="write the .output relations to DIR/REL.csv as Souffle does ('-': stdout) and "
                    "print .printsize lines, instead of printing every relation")
    ev.add_argument("-I", "--include-dir", action="append", default=[], metavar="DIR",
                    help="look for #include files in DIR too (repeatable; blanks separate several, as "
                    "Souffle's -I; default: the current directory)")
    ev.add_argument("-M", "--macro", action="append", default=[], metavar="'NAME=VALUE ...'",
                    help="define preprocessor macros, as Souffle's -M (repeatable; NAME alone is 1)")
    ev.add_argument("--domain-size", type=int, choices=domain.SIZES, default=domain.DEFAULT, metavar="{32,64}",
                    help="the width of Souffle's values, as its build option SOUFFLE_DOMAIN_64BIT chooses: "
                    "32 (default, Souffle's default build) or 64")
    ev.add_argument("-m", "--magic-transform", metavar="RELATIONS",
                    help="rewrite these relations (comma-separated; '*': all) by the magic-set transformation, "
                    "as Souffle's option: only what the .output relations need is derived (overrides the "
                    "program's .pragma \"magic-transform\")")
    ev.add_argument("--magic-transform-exclude", metavar="RELATIONS",
                    help="never rewrite these relations (comma-separated), as Souffle's option (overrides the "
                    "program's .pragma \"magic-transform-exclude\")")
    ev.add_argument("--max-facts", type=positive_int, default=DEFAULT_MAX_FACTS, metavar="N",
                    help=f"stop when a relation passes N facts (default {DEFAULT_MAX_FACTS:,})")
    ev.add_argument("--timeout", type=float, metavar="SECONDS", help="stop evaluating after SECONDS")
    ev.add_argument("--engine", choices=("python", "duckdb"), default="python",
                    help="python (default): every semiring and construct; duckdb: the Boolean semiring only, "
                    "set at a time (joins of whole relations; needs polygraph_logic[duckdb]), for programs of "
                    "atoms, negation and = or != (others are refused by name)")
    ev.add_argument("--memory-limit", metavar="SIZE", help="with --engine duckdb: DuckDB's memory limit, e.g. 4GB "
                    "(it spills beyond)")
    ev.set_defaults(run=_run_eval)


def _run_eval(args: argparse.Namespace) -> int:
    include_dirs = [d for value in args.include_dir for d in value.split()]
    overrides = {TRANSFORM: args.magic_transform, EXCLUDE: args.magic_transform_exclude}
    program = load_program(*args.files, fact_dir=args.fact_dir, include_dirs=include_dirs, macros=args.macro,
                           domain_size=args.domain_size, overrides=overrides)
    for warning in program.warnings:
        print(warning, file=sys.stderr)
    progress = _print_stats if args.stats else None
    if args.engine == "duckdb":
        return _run_duckdb(args, program, progress)
    if args.memory_limit:
        raise PolygraphError("bad_argument", "--memory-limit is DuckDB's: give it with --engine duckdb")
    model = evaluate(program, semiring=args.semiring, cap=args.cap, progress=progress,
                     max_facts=args.max_facts, timeout=args.timeout)
    if args.output_dir is not None:
        write_outputs(model, args.output_dir)
        if not args.json:
            return 0
    return _print(args, model)


def _run_duckdb(args: argparse.Namespace, program, progress) -> int:
    """``eval --engine duckdb``: the Boolean closure on DuckDB, its outputs written from its tables."""
    if args.semiring != "boolean":
        raise PolygraphError("engine_unsupported", f"--engine duckdb evaluates the Boolean semiring; --semiring "
                             f"{args.semiring} runs on the default engine (drop --engine, or give --semiring boolean)")
    if args.delete:
        raise PolygraphError("engine_unsupported", "--delete asks what-ifs of provenance labels, which the Boolean "
                             "semiring does not keep; drop --engine duckdb")
    from polygraph_logic.engines.duckdb_eval import boolean_closure  # start-up time: DuckDB only when asked
    with boolean_closure(program, args.memory_limit, progress=progress, max_facts=args.max_facts,
                         timeout=args.timeout) as tables:
        if args.output_dir is not None:
            with domain.using(program.domain_size):
                write_relations(program, tables, args.output_dir, sys.stdout)
            if not args.json:
                return 0
        return _print(args, tables.model())


def _print(args: argparse.Namespace, model: Model) -> int:
    """Prints the model's relations (``--relation``: those), or a deletion's outcome, as text or JSON."""
    names = args.relation or model.relations()
    for name in names:
        try:
            model.facts(name)
        except KeyError as error:  # the same code for an unknown name in the CLI, the REPL and the API
            raise PolygraphError("unknown_relation", error.args[0] if error.args else str(error)) from None
    if args.delete:
        deleted = [i for chunk in args.delete for i in chunk.split(",") if i]
        return _print_deletion(model, names, deleted, args.json)
    if args.json:
        model.write_json(sys.stdout, names)  # streamed, a few thousand rows at a time
        print()
    else:
        print_model(model, names)
    return 0


def _print_deletion(model: Model, names: Sequence[str], deleted: list[str], as_json: bool) -> int:
    outcome = what_if(model, deleted)
    if as_json:
        json.dump(
            {
                "deleted": sorted(set(deleted)),
                "alive": {n: [{"tuple": json_row(t), "provenance": model.semiring.to_json(l), "exact": l.exact}
                              for t, l in sorted(outcome.alive[n].items(), key=lambda i: tuple_key(i[0]))]
                          for n in names},
                "dead": {n: [json_row(t) for t in sorted(outcome.dead[n], key=tuple_key)] for n in names},
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


