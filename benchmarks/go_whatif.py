"""Benchmark: a what-if on the GO slice as a whole process against a from-scratch Boolean recompute.

Issue 11's GO target: `polygraph whatif GRAPH --retract-source S` (a whole process: start,
open the graph file, answer) at least 5x faster than recomputing the closure from scratch
on the surviving assertions (compile and Boolean evaluation, timed inside one process as
benchmarks/scale.py does). Run side by side, alternating, for the sources with the most
assertions and for the source whose retraction leaves the most capped dead verdicts
(also with --exact). Printed, never asserted.

    python benchmarks/go_whatif.py [--data DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "go-pombase"

_RECOMPUTE = """
import sys, time
from polygraph_logic import evaluate
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.records import load_assertions
from polygraph_logic.program import load_program
assertions = [a for a in load_assertions(sys.argv[1]) if a.source != sys.argv[2]]
rules = load_program(*sys.argv[3:])
started = time.perf_counter()
evaluate(compile_inputs(assertions, []).program(rules), "boolean")
print(time.perf_counter() - started)
"""


def _process(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def measure(data: Path = DATA, repeat: int = 3, out=print) -> dict:
    """Builds the GO slice's graph and times what-if processes against recomputes; returns the figures."""
    if not (data / "truncated-pombase.gpad").exists():
        out(f"GO slice skipped: {data} not found")
        return {"skipped": str(data)}
    from polygraph_logic.graph.store import Graph
    from polygraph_logic.resources import rule_file
    from polygraph_logic.whatif import Deletion, what_if
    polygraph = [sys.executable, "-m", "polygraph_logic.cli"]
    with tempfile.TemporaryDirectory(prefix="polygraph-go-") as name:
        folder = Path(name)
        gpad, obo = data / "truncated-pombase.gpad", data / "go-truncated-pombase.json"
        subprocess.run([*polygraph, "import", "gpad", str(gpad), "-o", str(folder / "a.jsonl")], check=True,
                       capture_output=True)
        subprocess.run([*polygraph, "import", "obographs", str(obo), "-o", str(folder / "bg.dl")], check=True,
                       capture_output=True)
        rules = [str(rule_file("ro-class")), str(rule_file("existential")), str(folder / "bg.dl")]
        graph = folder / "go.graph"
        subprocess.run([*polygraph, "build", "--assertions", str(folder / "a.jsonl"),
                        *[x for r in rules for x in ("--rules", r)], "-o", str(graph)], check=True,
                       capture_output=True)
        with Graph(graph) as opened:
            sources = Counter(a.source for a in opened.assertions.values())
            capped = max((len(what_if(opened, Deletion(sources=(s,))).uncertain), s) for s in sources)[1]
        chosen = [s for s, _ in sources.most_common(2)] + [capped]
        figures = {"sources": {}}
        out(f"GO slice graph: {graph.stat().st_size / 2**20:.1f} MiB; median of {repeat}, alternating")
        out(f"{'source':18} {'whatif s':>9} {'--exact s':>10} {'recompute s':>12} {'ratio':>7} {'exact ratio':>12}")
        for source in chosen:
            whatif, exact, recompute = [], [], []
            for _ in range(repeat):
                whatif.append(_process([*polygraph, "whatif", str(graph), "--retract-source", source]))
                exact.append(_process([*polygraph, "whatif", str(graph), "--retract-source", source, "--exact"]))
                done = subprocess.run([sys.executable, "-c", _RECOMPUTE, str(folder / "a.jsonl"), source, *rules],
                                      check=True, capture_output=True, text=True)
                recompute.append(float(done.stdout))
            w, e, r = (statistics.median(x) for x in (whatif, exact, recompute))
            figures["sources"][source] = {"whatif_s": w, "exact_s": e, "recompute_s": r, "ratio": r / w,
                                          "ratio_exact": r / e, "most_capped": source == capped}
            note = "  (most capped dead verdicts)" if source == capped else ""
            out(f"{source:18} {w:9.2f} {e:10.2f} {r:12.2f} {r / w:6.1f}x {r / e:11.1f}x{note}")
        ratios = [f["ratio"] for f in figures["sources"].values()]
        out(f"recompute / what-if whole process: {min(ratios):.1f}x to {max(ratios):.1f}x (target >= 5x)")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    measure(args.data, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
