"""Benchmark: what-if latency against a full label scan and sympy, scaling, and exact re-derivation.

Measured side by side in one run, printed, never asserted:

  ours        what_if() over the in-memory index (cost follows the touched artifacts)
  full scan   every label of the graph checked with plain Python set arithmetic
  sympy       every label as a sympy expression, deleted variables set to False, simplified
  recompute   a from-scratch Boolean evaluation of the rules on the surviving assertions

on the synthetic paper-scale graph (generated and built on the fly), the same graph
10x larger, and the Gene Ontology slice when ../shared/data/go-pombase exists.

    python benchmarks/whatif.py [--quick] [--sympy-deletions 2] [--sources 40]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic import evaluate  # noqa: E402
from polygraph_logic.graph.assertions import Assertion  # noqa: E402
from polygraph_logic.graph.build import build_graph  # noqa: E402
from polygraph_logic.graph.records import Receipt, Sentence  # noqa: E402
from polygraph_logic.graph.compile import compile_inputs  # noqa: E402
from polygraph_logic.graph.index import GraphIndex  # noqa: E402
from polygraph_logic.graph.store import Graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate  # noqa: E402
from polygraph_logic.program import load_program  # noqa: E402
from polygraph_logic.rederive import Rederiver  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402
from polygraph_logic.whatif import Deletion, what_if  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "go-pombase"


def timed(call, repeat: int = 1) -> float:
    """Returns the best wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def full_scan(labels: list[list[frozenset]], deleted: frozenset) -> int:
    """The label-free baseline of what-if: every label, plain set arithmetic."""
    return sum(1 for label in labels if not any(not (group & deleted) for group in label))


def sympy_scan(expressions: list, deleted: frozenset) -> int:
    """The reference algebra: substitute False for deleted variables in every label and simplify."""
    from sympy import Symbol, simplify_logic
    substitution = {Symbol(a): False for a in deleted}
    dead = 0
    for expr in expressions:
        if simplify_logic(expr.subs(substitution)) == False:  # noqa: E712 - sympy's false
            dead += 1
    return dead


def with_copies(seed: int, factor: int):
    """Returns the paper-scale graph's inputs plus factor-1 disjoint copies (other seeds, every
    name prefixed), so that a retraction in the original touches exactly the same artifacts."""
    base = generate(seed=seed)
    assertions, receipts = list(base.assertions), list(base.receipts)
    for k in range(1, factor):
        other, tag = generate(seed=seed + k), f"copy{k}/"

        def sets(groups):
            return tuple(frozenset(tag + a for a in group) for group in groups)

        assertions += [Assertion(tag + a.id, tag + a.source, tag + a.subject, a.predicate, tag + a.object, a.text)
                       for a in other.assertions]
        for r in other.receipts:
            content = dict(r.content)
            if r.layer == "merge":
                content["canonical"] = tag + content["canonical"]
                content["members"] = [tag + m for m in content["members"]]
            sentences = tuple(Sentence(s.text, sets(s.support)) for s in r.sentences)
            receipts.append(Receipt(tag + r.artifact, r.layer, content, sets(r.support), sentences))
    return assertions, receipts


def build(name: str, assertions, receipts, rules, directory: Path):
    started = time.perf_counter()
    result = build_graph(assertions, receipts, rules)
    path = directory / f"{name}.graph"
    result.write(path)
    seconds = time.perf_counter() - started
    index = GraphIndex(Graph(path))
    print(f"\n== {name}: {len(result.artifacts)} artifacts, {len(index.assertion_ids)} assertions, "
          f"{len(index.sources)} sources; built in {seconds:.1f} s")
    return result, index


def latency(name: str, result, index: GraphIndex, rng: random.Random, sources: int, sympy_deletions: int,
            rules) -> dict:
    graph = index.graph
    labels = [[frozenset(g) for g in a.support] for a in graph.artifacts()]
    sample = rng.sample(sorted(index.sources), min(sources, len(index.sources)))
    ours, scan, touched = [], [], []
    for source in sample:
        deletion = Deletion(sources=(source,))
        deleted = deletion.resolve(index)
        outcome = what_if(index, deletion)
        touched.append(len(outcome.touched))
        ours.append(timed(lambda: what_if(index, deletion), 5))
        scan.append(timed(lambda: full_scan(labels, deleted), 1))
        mask = index.mask(deleted)
        by_labels = sum(1 for a in outcome.touched if not index.survives(index.artifacts[a].fact, mask))
        assert full_scan(labels, deleted) == by_labels  # the same verdicts, found two ways
    print(f"single-source retraction, {len(sample)} sources (median touched {statistics.median(touched):.0f}):")
    print(f"  ours       median {statistics.median(ours) * 1000:9.3f} ms")
    print(f"  full scan  median {statistics.median(scan) * 1000:9.3f} ms   ratio {statistics.median(scan) / statistics.median(ours):8.1f}x")
    gc.collect()
    batch = rng.sample(sorted(index.sources), max(1, len(index.sources) // 10))
    deletion = Deletion(sources=tuple(batch))
    deleted = deletion.resolve(index)
    ours_batch = timed(lambda: what_if(index, deletion), 7)
    scan_batch = timed(lambda: full_scan(labels, deleted), 3)
    outcome = what_if(index, deletion)
    print(f"10% random retract-source ({len(batch)} sources, {len(deleted)} assertions, "
          f"{len(outcome.touched)} touched, {len(outcome.dead)} dead): ours {ours_batch * 1000:.2f} ms, "
          f"full scan {scan_batch * 1000:.2f} ms, ratio {scan_batch / ours_batch:.1f}x")
    # sympy last: its expressions are many objects that would slow the other timings (GC)
    expressions = [graph.label(a).to_sympy() for a in graph.artifacts()]
    sympy_times = []
    for source in sample[:sympy_deletions]:
        deleted = Deletion(sources=(source,)).resolve(index)
        sympy_times.append(timed(lambda: sympy_scan(expressions, deleted)))
    if sympy_times:
        ratio = statistics.median(sympy_times) / statistics.median(ours)
        print(f"single-source, sympy median {statistics.median(sympy_times) * 1000:9.1f} ms   ratio {ratio:8.0f}x"
              f"   ({len(sympy_times)} deletions)")
    del expressions
    gc.collect()
    return {"sample": sample, "ours": statistics.median(ours)}


def exactness(name: str, result, index: GraphIndex, rng: random.Random, rules, sources: int) -> None:
    started = time.perf_counter()
    rederiver = Rederiver(index)
    setup = time.perf_counter() - started
    rule_program = load_program(*rules) if rules else None
    ours, recompute, settled = [], [], 0
    for source in rng.sample(sorted(index.sources), min(sources, len(index.sources))):
        deletion = Deletion(sources=(source,))
        deleted = deletion.resolve(index)
        ours.append(timed(lambda: what_if(index, deletion, exact=True, rederiver=rederiver)))
        settled += what_if(index, deletion, exact=True, rederiver=rederiver).settled
        surviving = [a for a in result.assertions if a.id not in deleted]

        def scratch():
            program = compile_inputs(surviving, result.receipts).program(*([rule_program] if rule_program else []))
            evaluate(program, "boolean")

        recompute.append(timed(scratch))
    ratio = statistics.median(recompute) / statistics.median(ours)
    print(f"exact what-if vs Boolean recompute, {len(ours)} single-source retractions "
          f"({settled} capped dead verdicts settled by re-derivation; re-deriver set-up {setup:.2f} s, once):")
    print(f"  exact what-if median {statistics.median(ours) * 1000:9.2f} ms")
    print(f"  recompute     median {statistics.median(recompute) * 1000:9.2f} ms   ratio {ratio:8.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer deletions, a smaller scaling graph")
    parser.add_argument("--sources", type=int, default=40, help="single-source retractions to time")
    parser.add_argument("--sympy-deletions", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sources = 10 if args.quick else args.sources
    directory = Path(tempfile.mkdtemp(prefix="polygraph-bench-"))
    ro = [rule_file("ro")]

    paper = generate(seed=args.seed)
    result, index = build("synthetic paper scale", paper.assertions, paper.receipts, ro, directory)
    base = latency("synthetic", result, index, rng, sources, args.sympy_deletions, ro)
    exactness("synthetic", result, index, rng, ro, 3 if args.quick else 10)

    factor = 3 if args.quick else 10
    big_assertions, big_receipts = with_copies(args.seed, factor)
    big_result, big_index = build(f"synthetic {factor}x (the graph plus {factor - 1} disjoint copies)",
                                  big_assertions, big_receipts, ro, directory)
    same = base["sample"]
    gc.collect()
    times_small = [timed(lambda: what_if(index, Deletion(sources=(s,))), 7) for s in same]
    times_big = [timed(lambda: what_if(big_index, Deletion(sources=(s,))), 7) for s in same]
    touched = [len(what_if(big_index, Deletion(sources=(s,))).touched) == len(what_if(index, Deletion(sources=(s,))).touched)
               for s in same]
    print(f"scaling, the same {len(same)} single-source retractions (same touched artifacts: {all(touched)}) on a "
          f"graph {factor}x larger: median {statistics.median(times_small) * 1000:.3f} ms -> "
          f"{statistics.median(times_big) * 1000:.3f} ms, ratio {statistics.median(times_big) / statistics.median(times_small):.2f}x")

    if (DATA / "truncated-pombase.gpad").exists():
        from polygraph_logic.importers import read_gpad, read_obographs, write_background
        assertions, _ = read_gpad(DATA / "truncated-pombase.gpad")
        edges, _, _ = read_obographs(DATA / "go-truncated-pombase.json")
        background = directory / "go-background.dl"
        write_background(background, edges)
        rules = [rule_file("ro-class"), rule_file("existential"), background]
        go_result, go_index = build("GO slice", assertions, [], rules, directory)
        latency("GO", go_result, go_index, rng, sources, args.sympy_deletions, rules)
        exactness("GO", go_result, go_index, rng, rules, 3 if args.quick else 5)
    else:
        print(f"\nGO slice skipped: {DATA} not found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
