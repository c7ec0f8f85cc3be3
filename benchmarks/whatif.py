"""Benchmark: what-if latency against a full label scan and sympy, scaling, and exact re-derivation.

Measured side by side in one run, printed, never asserted:

  ours        what_if() on the graph file, read in place (cost follows the touched artifacts)
  full scan   every label of the graph checked with plain Python set arithmetic
  sympy       every label as a sympy expression, deleted variables set to False, simplified
  recompute   a from-scratch Boolean evaluation of the rules on the surviving assertions

on the synthetic paper-scale graph (generated and built on the fly), the same graph
10x larger, and the Gene Ontology slice when ../shared/data/go-pombase exists.  (The same
what-if as a whole process at x1 to x40 and on the GO slice: benchmarks/scale.py; as SQL on
Parquet tables: benchmarks/distributed.py.)

    python -m benchmarks.whatif [--quick] [--sympy-deletions 2] [--sources 40] [--data DIR]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
from pathlib import Path

from polygraph_logic import evaluate
from benchmarks.harness import Stopwatch, default_data, timed
from polygraph_logic.datalog.program import load_program
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.graph.synthetic_copies import generate_copies
from polygraph_logic.query.rederive import Rederiver
from polygraph_logic.query.whatif import Deletion, what_if
from polygraph_logic.resources import rule_file
from polygraph_logic.importers import read_gpad, read_obographs, write_background


def full_scan(labels: list[list[frozenset]], deleted: frozenset) -> int:
    """The label-free baseline of what-if: every label, plain set arithmetic."""
    return sum(1 for label in labels if not any(not (group & deleted) for group in label))


def sympy_scan(expressions: list, deleted: frozenset) -> int:
    """The reference algebra: substitute False for deleted variables in every label and simplify."""
    from sympy import Symbol, simplify_logic  # sympy only for the reference comparison; its import takes a second
    substitution = {Symbol(a): False for a in deleted}
    dead = 0
    for expr in expressions:
        if simplify_logic(expr.subs(substitution)) == False:  # noqa: E712 - sympy's false
            dead += 1
    return dead


def with_copies(seed: int, factor: int):
    """Returns the paper-scale graph's inputs plus factor-1 disjoint copies (other seeds, every
    name prefixed), so that a retraction in the original touches exactly the same artifacts."""
    graph = generate_copies(factor, seed)
    return graph.assertions, graph.receipts


def build(name: str, assertions, receipts, rules, directory: Path, out=print):
    clock = Stopwatch()
    result = build_graph(assertions, receipts, rules)
    path = directory / f"{name.split()[0]}-{len(result.artifacts)}.graph"
    result.write(path)
    seconds = clock()
    graph = Graph(path)
    out(f"\n== {name}: {len(result.artifacts)} artifacts, {len(graph.assertions)} assertions, "
        f"{len(graph.distinct('source'))} sources; built in {seconds:.1f} s")
    return result, graph


def latency(result, graph: Graph, rng: random.Random, sources: int, sympy_deletions: int,
            sympy_labels: int | None = None, out=print) -> dict:
    """Times single-source and 10% retractions against the full scan and sympy; returns the figures.

    ``sympy_labels``: convert and simplify only that many labels (a random sample) and
    scale the time to the whole graph linearly, saying so; None converts every label.
    """
    labels = [[frozenset(g) for g in a.support] for a in graph.artifacts()]
    support = {a.id: a.support for a in graph.artifacts()}
    all_sources = graph.distinct("source")
    sample = rng.sample(all_sources, min(sources, len(all_sources)))
    ours, scan, points = [], [], []
    for source in sample:
        deletion = Deletion(sources=(source,))
        deleted = deletion.resolve(graph)
        outcome = what_if(graph, deletion)
        ours.append(timed(lambda: what_if(graph, deletion), 5))
        scan.append(timed(lambda: full_scan(labels, deleted), 1))
        points.append((len(outcome.touched), ours[-1] * 1000))
        by_labels = sum(1 for a in outcome.touched if all(deleted.intersection(g) for g in support[a]))
        assert full_scan(labels, deleted) == by_labels  # the same verdicts, found two ways
    median_touched = statistics.median(p[0] for p in points)
    out(f"single-source retraction, {len(sample)} sources (median touched {median_touched:.0f}):")
    out(f"  ours       median {statistics.median(ours) * 1000:9.3f} ms")
    out(f"  full scan  median {statistics.median(scan) * 1000:9.3f} ms   ratio "
        f"{statistics.median(scan) / statistics.median(ours):8.1f}x")
    figures = {"sources": len(sample), "ours_ms": statistics.median(ours) * 1000,
               "scan_ms": statistics.median(scan) * 1000, "ratio_scan": statistics.median(scan) / statistics.median(ours),
               "points": points, "sample": sample}
    gc.collect()
    batch = rng.sample(all_sources, max(1, len(all_sources) // 10))
    deletion = Deletion(sources=tuple(batch))
    deleted = deletion.resolve(graph)
    ours_batch = timed(lambda: what_if(graph, deletion), 7)
    scan_batch = timed(lambda: full_scan(labels, deleted), 3)
    outcome = what_if(graph, deletion)
    points.append((len(outcome.touched), ours_batch * 1000))
    out(f"10% random retract-source ({len(batch)} sources, {len(deleted)} assertions, "
        f"{len(outcome.touched)} touched, {len(outcome.dead)} dead): ours {ours_batch * 1000:.2f} ms, "
        f"full scan {scan_batch * 1000:.2f} ms, ratio {scan_batch / ours_batch:.1f}x")
    figures["batch"] = {"sources": len(batch), "assertions": len(deleted), "touched": len(outcome.touched),
                        "dead": len(outcome.dead), "ours_ms": ours_batch * 1000, "scan_ms": scan_batch * 1000,
                        "ratio_scan": scan_batch / ours_batch}
    # sympy last: its expressions are many objects that would slow the other timings (GC)
    artifacts = list(graph.artifacts())
    chosen = artifacts if sympy_labels is None or sympy_labels >= len(artifacts) else rng.sample(artifacts, sympy_labels)
    expressions = [graph.label(a).to_sympy() for a in chosen]
    scale = len(artifacts) / len(chosen)
    sympy_times = []
    for source in sample[:sympy_deletions]:
        deleted = Deletion(sources=(source,)).resolve(graph)
        sympy_times.append(timed(lambda: sympy_scan(expressions, deleted)) * scale)
    if sympy_times:
        ratio = statistics.median(sympy_times) / statistics.median(ours)
        how = "" if scale == 1 else f", timed on {len(chosen)} random labels and scaled x{scale:.1f} to all"
        out(f"single-source, sympy median {statistics.median(sympy_times) * 1000:9.1f} ms   ratio {ratio:8.0f}x"
            f"   ({len(sympy_times)} deletions{how})")
        figures.update(sympy_ms=statistics.median(sympy_times) * 1000, ratio_sympy=ratio,
                       sympy_extrapolated=scale != 1)
    del expressions
    gc.collect()
    return figures


def exactness(result, graph: Graph, rng: random.Random, rules, sources: int, out=print) -> dict:
    """Times exact what-if against a from-scratch Boolean recompute; returns the figures."""
    clock = Stopwatch()
    rederiver = Rederiver(graph)
    setup = clock()
    rule_program = load_program(*rules) if rules else None
    ours, recompute, settled = [], [], 0
    all_sources = graph.distinct("source")
    for source in rng.sample(all_sources, min(sources, len(all_sources))):
        deletion = Deletion(sources=(source,))
        deleted = deletion.resolve(graph)
        ours.append(timed(lambda: what_if(graph, deletion, exact=True, rederiver=rederiver)))
        settled += what_if(graph, deletion, exact=True, rederiver=rederiver).settled
        surviving = [a for a in result.assertions if a.id not in deleted]

        def scratch():
            program = compile_inputs(surviving, result.receipts).program(*([rule_program] if rule_program else []))
            evaluate(program, "boolean")

        recompute.append(timed(scratch))
    ratio = statistics.median(recompute) / statistics.median(ours)
    out(f"exact what-if vs Boolean recompute, {len(ours)} single-source retractions "
        f"({settled} capped dead verdicts settled by re-derivation; re-deriver set-up {setup:.2f} s, once):")
    out(f"  exact what-if median {statistics.median(ours) * 1000:9.2f} ms")
    out(f"  recompute     median {statistics.median(recompute) * 1000:9.2f} ms   ratio {ratio:8.1f}x")
    return {"deletions": len(ours), "exact_ms": statistics.median(ours) * 1000,
            "recompute_ms": statistics.median(recompute) * 1000, "ratio": ratio, "settled": settled,
            "setup_s": setup}


def go_rules(data: Path, directory: Path):
    """Returns the GO slice's assertions and rule files, or None when the data is absent."""
    if not (data / "truncated-pombase.gpad").exists():
        return None
    assertions, _ = read_gpad(data / "truncated-pombase.gpad")
    edges, _, _ = read_obographs(data / "go-truncated-pombase.json")
    background = directory / "go-background.dl"
    write_background(background, edges)
    return assertions, [rule_file("ro-class"), rule_file("existential"), background]


def measure(quick: bool = False, data: Path | None = None, seed: int = 0, sources: int = 40,
            sympy_deletions: int = 2, out=print) -> dict:
    """Runs every what-if measurement; returns the figures per graph (see the module docstring)."""
    rng = random.Random(seed)
    data = data or default_data()
    sources = 10 if quick else sources
    sympy_labels = 1000 if quick else None
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="polygraph-bench-") as name:
        directory = Path(name)
        ro = [rule_file("ro")]
        paper = generate(seed=seed)
        result, index = build("synthetic paper scale", paper.assertions, paper.receipts, ro, directory, out)
        base = latency(result, index, rng, sources, min(sympy_deletions, 1) if quick else sympy_deletions,
                       sympy_labels, out)
        figures["synthetic"] = {"artifacts": len(result.artifacts), "latency": base,
                                "exact": exactness(result, index, rng, ro, 3 if quick else 10, out)}

        factor = 3 if quick else 10
        big_assertions, big_receipts = with_copies(seed, factor)
        big_result, big_index = build(f"synthetic {factor}x (the graph plus {factor - 1} disjoint copies)",
                                      big_assertions, big_receipts, ro, directory, out)
        same = base["sample"]
        gc.collect()
        times_small = [timed(lambda: what_if(index, Deletion(sources=(s,))), 7) for s in same]
        times_big = [timed(lambda: what_if(big_index, Deletion(sources=(s,))), 7) for s in same]
        same_touched = all(len(what_if(big_index, Deletion(sources=(s,))).touched)
                           == len(what_if(index, Deletion(sources=(s,))).touched) for s in same)
        small, big = statistics.median(times_small) * 1000, statistics.median(times_big) * 1000
        out(f"scaling, the same {len(same)} single-source retractions (same touched artifacts: {same_touched}) on a "
            f"graph {factor}x larger: median {small:.3f} ms -> {big:.3f} ms, ratio {big / small:.2f}x")
        figures["scaling"] = {"factor": factor, "artifacts": len(big_result.artifacts), "small_ms": small,
                              "big_ms": big, "ratio": big / small, "same_touched": same_touched}
        del big_result, big_index
        gc.collect()

        go = go_rules(data, directory)
        if go is None:
            out(f"\nGO slice skipped: {data} not found")
            figures["go"] = {"skipped": f"{data} not found"}
        else:
            assertions, rules = go
            go_result, go_index = build("GO slice", assertions, [], rules, directory, out)
            figures["go"] = {"artifacts": len(go_result.artifacts),
                             # sympy over all 62k GO labels did not finish in 6.5 minutes:
                             # time a sample and scale, saying so
                             "latency": latency(go_result, go_index, rng, sources, 1, 100 if quick else 2000, out),
                             "exact": exactness(go_result, go_index, rng, rules, 2 if quick else 5, out)}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10 deletions, a 3x scaling graph, sympy on sampled labels")
    parser.add_argument("--sources", type=int, default=40, help="single-source retractions to time")
    parser.add_argument("--sympy-deletions", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=None,
                        help="the GO slice's folder (default: $POLYGRAPH_DATA/go-pombase, else ../shared/data/go-pombase)")
    args = parser.parse_args(argv)
    measure(args.quick, args.data, args.seed, args.sources, args.sympy_deletions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
