"""Benchmark: building graphs at the PolyGraph study's scale, and the Gene Ontology slice.

Prints, measured in one run (times printed, never asserted):

  - the synthetic paper-scale graph, generated on the fly (graph.synthetic.generate with
    its defaults) and built with rules/ro.dl, beside the study's own counts;
  - the GO slice (../shared/data/go-pombase: GPAD assertions, obographs edges as
    background facts) built with rules ro-class and existential; skipped when absent.

For each: artifacts per layer, build seconds per stage (load, compile, evaluate,
collect, write), peak memory (tracemalloc, measured in a second, traced build, since
tracing slows Python several-fold; and the process's max RSS so far), and the stored
label bytes per artifact (target: at most 100 on average) and file size.

    python -m benchmarks.build_graph [--seed 0] [--data DIR] [--no-go] [--no-trace]

The GO slice uses ro-class, not ro: ro's inverse and symmetric rules turn class-level
edges ("every C is P-related to some D") around, which is unsound there, and together
with rules/existential.dl they make the background closure explode (more than 800,000
edges after five rounds, from 1,031 GO edges alone; it does not finish in ten minutes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Callable

from polygraph_logic.allocation import peak_rss_mb
from benchmarks.harness import Stopwatch, default_data, print_table
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import LAYERS
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.resources import rule_file
from polygraph_logic.importers import edges_to_datalog, read_gpad, read_obographs

#: the study's biomedical graph (Section 3 and 6.4): counts, and the size of its stored graph
STUDY = {"claim": 2784, "merge": 165, "edge": 21373, "summary": 59, "artifacts": 24381, "file MiB": 5.45 / 1.048576}


def measure_one(name: str, assertions, receipts, rules, directory: Path, trace: bool, study=None,
                out: Callable[[str], None] = print) -> dict:
    """Builds and writes one graph, prints what it cost through ``out`` and returns the figures."""
    clock = Stopwatch()
    build = build_graph(assertions, receipts, rules)
    path = directory / f"{name.split()[0]}.graph"
    writing = Stopwatch()
    build.write(path)
    seconds = {**build.seconds, "write": writing()}
    total = clock()
    peak = None
    if trace:
        tracemalloc.start()
        build_graph(assertions, receipts, rules)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    with Graph(path) as graph:
        info = graph.info()
    counts = build.counts()

    out(f"\n== {name}: {len(assertions)} assertions, {len(receipts)} receipts, "
          f"rules {', '.join(Path(r).stem for r in rules)}")
    rows = []
    for layer in LAYERS:
        entry = info["layers"].get(layer, {"artifacts": 0, "inexact": 0, "label_bytes": 0})
        per = entry["label_bytes"] / entry["artifacts"] if entry["artifacts"] else 0.0
        rows.append([layer, counts.get(layer, 0), entry["inexact"], f"{per:.1f}"]
                    + ([study.get(layer, "")] if study else []))
    rows.append(["total", len(build.artifacts), build.truncated(), f"{info['label_bytes_per_artifact']:.1f}"]
                + ([study["artifacts"]] if study else []))
    print_table(["layer", "artifacts", "inexact", "label B/artifact"] + (["study"] if study else []), rows, out)
    out(f"receipts over the cap of {build.cap}: {build.over_cap}; edges of background knowledge alone "
          f"(not artifacts): {build.background_edges}")
    out("build seconds: " + ", ".join(f"{stage} {s:.2f}" for stage, s in seconds.items()) + f"; total {total:.2f}")
    memory = f"tracemalloc peak {peak / 2**20:.0f} MiB (traced rebuild); " if peak is not None else ""
    out(f"memory: {memory}process max RSS so far {peak_rss_mb():.0f} MiB")
    size = info["file_bytes"] / 2**20
    out(f"stored labels: {info['label_bytes_per_artifact']:.1f} bytes per artifact on average (target <= 100: "
          f"{'met' if info['label_bytes_per_artifact'] <= 100 else 'MISSED'}); graph file {size:.1f} MiB"
          + (f" (the study's: {study['file MiB']:.1f} MiB)" if study else ""))
    return {"artifacts": len(build.artifacts), "counts": counts, "truncated": build.truncated(),
            "seconds": {**seconds, "total": total}, "peak_traced_mib": peak / 2**20 if peak is not None else None,
            "max_rss_mib": peak_rss_mb(),
            "label_bytes_per_artifact": info["label_bytes_per_artifact"], "file_mib": size}


def go_slice(directory: Path, trace: bool, data: Path, out: Callable[[str], None] = print) -> dict:
    """Builds the GO slice and returns its figures, or says why it cannot (``skipped``)."""
    gpad, obographs = data / "truncated-pombase.gpad", data / "go-truncated-pombase.json"
    if not (gpad.is_file() and obographs.is_file()):
        out(f"\n== GO slice skipped: {gpad.name} and {obographs.name} not found in {data}")
        return {"skipped": f"{gpad.name} and {obographs.name} not found in {data}"}
    assertions, _ = read_gpad(gpad)
    edges, _, _ = read_obographs(obographs)
    background = directory / "go-background.dl"
    background.write_text(edges_to_datalog(edges, obographs.name), encoding="utf-8")
    rules = [rule_file("ro-class"), rule_file("existential"), background]
    return measure_one("GO slice", assertions, [], rules, directory, trace, out=out)


def measure(seed: int = 0, data: Path | None = None, trace: bool = True, trace_go: bool = True,
            out: Callable[[str], None] = print, go: bool = True) -> dict:
    """Builds the synthetic paper-scale graph and (with ``go``) the GO slice found in ``data``
    (default: ``harness.default_data()``); returns their figures."""
    figures = {}
    with tempfile.TemporaryDirectory(prefix="polygraph-build-") as name:
        directory = Path(name)
        clock = Stopwatch()
        paper = generate(seed=seed)
        out(f"generated the synthetic paper-scale graph (seed {seed}) in {clock():.2f} s: {paper.counts()}")
        figures["synthetic"] = measure_one("synthetic paper-scale graph", paper.assertions, paper.receipts,
                                           [rule_file("ro")], directory, trace, STUDY, out)
        if go:
            figures["go"] = go_slice(directory, trace and trace_go, data or default_data(), out)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic graph")
    parser.add_argument("--data", type=Path, default=None,
                        help="the GO slice's folder (default: $POLYGRAPH_DATA/go-pombase, else ../shared/data/go-pombase)")
    parser.add_argument("--no-go", action="store_true", help="skip the GO slice")
    parser.add_argument("--no-trace", action="store_true", help="skip the traced rebuild (peak memory)")
    args = parser.parse_args(argv)
    measure(args.seed, args.data, not args.no_trace, go=not args.no_go)
    return 0


if __name__ == "__main__":
    sys.exit(main())
