"""``bench``: every benchmark in one run, written up as a Markdown report with a plot."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(commands) -> None:
    """Adds the ``bench`` subcommand."""
    bench = commands.add_parser(
        "bench", help="run every benchmark and write a Markdown report with ratios, memory and a plot",
        description="Runs the benchmarks one after another (engine vs pyDatalog on the GO closure, "
                    "polygraph eval as whole processes against a pyDatalog process and on generated "
                    "Souffle-suite stand-ins, graph builds, what-if vs full scan and sympy, exact "
                    "re-derivation vs recompute, RDF export) on the synthetic paper-scale graph and the GO "
                    "slice when present, then the synthetic graph at x1, x10 and x40 with each command its "
                    "own process, and the GO slice's what-if as a whole process against a from-scratch "
                    "recompute; writes "
                    "REPORT_DIR/report.md, whatif-latency.png and figures.json. Run it on an idle machine: "
                    "other work on the same cores distorts the ratios.")
    bench.add_argument("--quick", action="store_true",
                       help="fewer repeats and deletions, a 3x scaling graph, sympy on a label sample, "
                            "scales x1 and x3 "
                            "(about two minutes on two cores)")
    bench.add_argument("-o", "--output", default="bench-report", metavar="REPORT_DIR",
                       help="where to write the report (default: bench-report)")
    bench.add_argument("--data", type=Path, metavar="DIR",
                       help="the GO slice's folder (default: $POLYGRAPH_DATA, else ../shared/data/go-pombase "
                            "beside the checkout or the current folder)")
    bench.set_defaults(run=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    from polygraph_logic.benchmarks.run_all import run_bench  # start-up: every benchmark imported by bench alone

    report = run_bench(args.output, quick=args.quick, data=args.data)
    print(f"\nreport: {Path(args.output) / 'report.md'}")
    for what, figure in report.headline():
        print(f"  {what}: {figure}")
    return 0
