"""Benchmark: exporting the synthetic paper-scale graph to RDF and re-parsing it with pyoxigraph.

For the paper-scale graph (graph.synthetic.generate with its defaults, built with
rules/ro.dl, as benchmarks/build_graph.py does) and one ten times smaller, per format
(N-Quads, TriG, Turtle, JSON-LD, and TriG with RDF 1.2 triple terms): export seconds,
bytes and bytes per artifact, the peak of traced Python memory during the export
(tracemalloc, in a second run, since tracing slows Python; pyoxigraph's own buffers are
not Python memory), and the seconds pyoxigraph takes to re-parse the file, with the
quads it read. Then an after-deletion export (the generator's retracted sources, trust-all).

The exporter streams: its memory follows the graph's vocabulary (assertions, entity
names), not the bytes it writes. The last lines compare how the output and the peak
grow from the small graph to the full one.

    python -m benchmarks.export [--quick]       # --quick: graphs five times smaller
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Callable

import pyoxigraph as ox

from benchmarks.harness import Stopwatch, print_table, timings
from polygraph_logic.export import EXTENSIONS, export_graph
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.progress import Progress
from polygraph_logic.query.whatif import Deletion
from polygraph_logic.resources import rule_file

VARIANTS = (("nquads", False), ("trig", False), ("turtle", False), ("jsonld", False), ("trig", True))
PARSE = {"nquads": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG, "turtle": ox.RdfFormat.TURTLE,
         "jsonld": ox.RdfFormat.JSON_LD}
# generator arguments: the paper's scale, and a tenth of it (--quick: a fifth of each)
SIZES = {"full": dict(documents=300, assertions=2800, merges=165, summaries=59),
         "tenth": dict(documents=30, assertions=280, merges=17, summaries=6)}
QUICK = {"full": dict(documents=60, assertions=560, merges=33, summaries=12),
         "tenth": dict(documents=6, assertions=56, merges=3, summaries=1)}


def _variant(format: str, rdf12: bool) -> str:
    return f"{format}{' rdf12' if rdf12 else ''}"


def _export_figures(graph: Path, directory: Path, format: str, rdf12: bool, progress: bool) -> dict:
    """Exports once untraced (time, size, with a progress bar on a terminal), once traced (peak), then
    re-parses with pyoxigraph."""
    path = directory / f"export{'-12' if rdf12 else ''}{EXTENSIONS[format]}"
    bar = Progress(f"exporting {_variant(format, rdf12)}", total=None, stream=sys.stderr) if progress else None
    report = export_graph(graph, path, format, rdf12=rdf12, progress=bar.step if bar else None)
    if bar:
        bar.done()
    tracemalloc.start()
    export_graph(graph, directory / f"traced{EXTENSIONS[format]}", format, rdf12=rdf12)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    [reparse], reparsed = timings(lambda: sum(1 for _ in ox.parse(path=str(path), format=PARSE[format])), gc_off=False)
    return {"artifacts": report.artifacts, "quads": report.quads, "seconds": round(report.seconds, 3),
            "bytes": report.bytes, "bytes_per_artifact": round(report.bytes_per_artifact, 1),
            "peak_traced_bytes": peak, "reparse_seconds": round(reparse, 3), "reparsed_quads": reparsed}


def measure(quick: bool = False, out: Callable[[str], None] = print) -> dict:
    """Builds the two synthetic graphs, exports each in every format, prints the figures through
    ``out`` and returns them:

    ``{"quick": bool, "graphs": {"full"|"tenth": {artifacts, assertions, file_bytes, ...}},
    "formats": {"full"|"tenth": {"nquads"|"trig"|"turtle"|"jsonld"|"trig rdf12": {artifacts,
    quads, seconds, bytes, bytes_per_artifact, peak_traced_bytes, reparse_seconds,
    reparsed_quads}}}, "after_deletion": {"full"|"tenth": {retracted_sources, dead, seconds,
    bytes}}}``.
    """
    results: dict = {"quick": quick, "graphs": {}, "formats": {}, "after_deletion": {}}
    with tempfile.TemporaryDirectory(prefix="polygraph-export-") as name:
        directory = Path(name)
        for size, arguments in (QUICK if quick else SIZES).items():
            inputs = generate(seed=0, **arguments)
            clock = Stopwatch()
            graph = directory / f"{size}.graph"
            build = build_graph(inputs.assertions, inputs.receipts, [rule_file("ro")])
            build.write(graph)
            results["graphs"][size] = {"generator": arguments, "artifacts": len(build.artifacts),
                                       "assertions": len(inputs.assertions), "file_bytes": graph.stat().st_size,
                                       "build_seconds": round(clock(), 2)}
            results["formats"][size] = {
                _variant(format, rdf12): _export_figures(graph, directory, format, rdf12, progress=size == "full")
                for format, rdf12 in VARIANTS}
            deletion = Deletion(sources=tuple(inputs.retracted))
            report = export_graph(graph, directory / "after.trig", "trig", deletion=deletion, policy="trust-all")
            results["after_deletion"][size] = {"retracted_sources": len(inputs.retracted), "dead": report.dead,
                                               "seconds": round(report.seconds, 3), "bytes": report.bytes}
    _print(results, out)
    return results


def _print(results: dict, out: Callable[[str], None]) -> None:
    mib = 2 ** 20
    for size, graph in results["graphs"].items():
        out(f"\n== {size} synthetic graph{' (quick)' if results['quick'] else ''}: {graph['assertions']} assertions, "
            f"{graph['artifacts']} artifacts; graph file {graph['file_bytes'] / mib:.1f} MiB, "
            f"built in {graph['build_seconds']:.2f} s")
        print_table(["format", "quads", "export s", "MiB", "B/artifact", "peak MiB", "reparse s", "reparsed"],
                    [[variant, row["quads"], f"{row['seconds']:.2f}", f"{row['bytes'] / mib:.1f}",
                      f"{row['bytes_per_artifact']:.0f}", f"{row['peak_traced_bytes'] / mib:.2f}",
                      f"{row['reparse_seconds']:.2f}", row["reparsed_quads"]]
                     for variant, row in results["formats"][size].items()], out)
        after = results["after_deletion"][size]
        out(f"after retracting {after['retracted_sources']} sources (trust-all): {after['dead']} artifacts "
            f"invalidated; TriG export {after['seconds']:.2f} s, {after['bytes'] / mib:.1f} MiB")
    full, tenth = results["formats"]["full"], results["formats"]["tenth"]
    out("\nmemory against output, full graph vs the ten-times-smaller one:")
    for variant in full:
        grew = full[variant]["bytes"] / tenth[variant]["bytes"]
        peak = full[variant]["peak_traced_bytes"] / tenth[variant]["peak_traced_bytes"]
        share = full[variant]["peak_traced_bytes"] / full[variant]["bytes"]
        out(f"  {variant:<12} output x{grew:5.1f}, peak x{peak:5.1f}; full-graph peak = {share:6.1%} of its output")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="graphs five times smaller")
    args = parser.parse_args(argv)
    measure(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
