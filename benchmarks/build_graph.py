"""Benchmark: building graphs. Prints, for the synthetic paper-scale graph and the GO slice,
artifact counts per layer, build time by stage, peak memory and stored label bytes per artifact.

    python benchmarks/build_graph.py [--seed 0]

Times are printed, never asserted. The GO part is skipped when ../shared/data/go-pombase is absent.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.graph.build import build_graph  # noqa: E402
from polygraph_logic.graph.store import LAYERS, Graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "go-pombase"


def measure(name: str, assertions, receipts, rules, directory: Path) -> None:
    # timed without tracing (tracemalloc slows Python several-fold), then traced for memory
    started = time.perf_counter()
    build = build_graph(assertions, receipts, rules)
    path = directory / f"{name.replace(' ', '-')}.graph"
    written = time.perf_counter()
    build.write(path)
    write_seconds = time.perf_counter() - written
    total = time.perf_counter() - started
    tracemalloc.start()
    build_graph(assertions, receipts, rules).write(directory / "traced.graph")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    with Graph(path) as graph:
        info = graph.info()
    counts = build.counts()
    print(f"\n== {name}")
    print("artifacts: " + ", ".join(f"{counts.get(layer, 0)} {layer}" for layer in LAYERS)
          + f" = {len(build.artifacts)}; {build.truncated()} labels truncated at cap {build.cap}")
    stages = ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in build.seconds.items())
    print(f"build: {stages}, write {write_seconds:.2f} s; total {total:.2f} s")
    print(f"peak memory: {peak / 2**20:.0f} MiB traced by tracemalloc; "
          f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"stored labels: {info['label_bytes_per_artifact']:.1f} bytes per artifact on average "
          f"(target <= 100); graph file {info['file_bytes'] / 2**20:.1f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="polygraph-build-"))
    paper = generate(seed=args.seed)
    measure("synthetic paper scale", paper.assertions, paper.receipts, [rule_file("ro")], directory)
    if (DATA / "truncated-pombase.gpad").exists():
        from polygraph_logic.importers import read_gpad, read_obographs, write_background
        assertions, _ = read_gpad(DATA / "truncated-pombase.gpad")
        edges, _, _ = read_obographs(DATA / "go-truncated-pombase.json")
        write_background(directory / "go-background.dl", edges)
        rules = [rule_file("ro-class"), rule_file("existential"), directory / "go-background.dl"]
        measure("GO slice", assertions, [], rules, directory)
    else:
        print(f"\nGO slice skipped: {DATA} not found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
