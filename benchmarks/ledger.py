"""Benchmark: ``add`` of 1% new assertions against a full rebuild of the union, in one run.

The synthetic paper-scale graph (graph.synthetic.generate, rules/ro.dl, cap 8) is
generated; 1% of its assertions (and the receipts citing any of them) are held out,
the graph is built from the other 99%, and then, side by side:

  - add:     ``ledger.add`` of the held-out 1% to a copy of that graph (a new version);
  - rebuild: ``build_graph`` of the union of the inputs, written to a new file.

Both results are compared label for label (every fact's support sets and exact flag,
and the artifact ids); the times and their ratio are printed, never asserted.  Three
configurations by default: the generator's own (3% of the merges have more support
sets than the cap, so truncated labels reach the closure: where the new facts meet
them, add re-evaluates in full, see graph/incremental.py), no merge over the cap, and
no cap.

    python -m benchmarks.ledger [--seed 0] [--fraction 0.01] [--repeat 3] [--cap 8|none [--overcap-merges N]]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import timings
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.ledger import add
from polygraph_logic.graph.store.label_codec import decode_label
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.resources import rule_file


def hold_out(assertions: list[str], receipts: list[str], fraction: float, seed: int):
    """Splits JSON Lines records into (kept assertions, kept receipts, held assertions, held receipts)."""
    rng = random.Random(seed)
    held = set(rng.sample(range(len(assertions)), max(1, round(len(assertions) * fraction))))
    held_ids = {json.loads(assertions[i])["id"] for i in held}
    keep_r, held_r = [], []
    for line in receipts:
        record = json.loads(line)
        sets = record.get("support") or [g for s in record.get("sentences", []) for g in s["support"]]
        (held_r if any(a in held_ids for g in sets for a in g) else keep_r).append(line)
    return ([a for i, a in enumerate(assertions) if i not in held], keep_r,
            [a for i, a in enumerate(assertions) if i in held], held_r)


def labels(path: Path) -> tuple[dict, set]:
    """Returns {(relation, args): (support sets by id, exact)} and the artifact ids of a graph file."""
    db = sqlite3.connect(path)
    names = dict(db.execute("SELECT num, id FROM assertions"))
    facts = {(r, a): ([[names[n] for n in g] for g in decode_label(blob)], exact)
             for r, a, blob, exact in db.execute("SELECT relation, args, label, exact FROM facts")}
    artifacts = {row[0] for row in db.execute("SELECT id FROM artifacts")}
    db.close()
    return facts, artifacts


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


#: the configurations measured by default: the generator's defaults (3% of merges over the cap,
#: so capped labels reach the closure), the same with no merge over the cap, and no cap at all
CONFIGURATIONS = (("8", None), ("8", 0), ("none", None))


def measure(seed: int, fraction: float, repeat: int, cap_text: str, overcap: int | None) -> bool:
    """Builds the 99% graph, then times add of the 1% against a rebuild of the union; prints; True when equal."""
    cap = None if cap_text == "none" else int(cap_text)
    rules = [rule_file("ro.dl")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        source = generate(seed=seed, overcap_merges=overcap).write(tmp / "synthetic")
        assertions = [l for l in (source / "assertions.jsonl").read_text().splitlines() if l.strip()]
        receipts = [l for l in (source / "receipts.jsonl").read_text().splitlines() if l.strip()]
        kept_a, kept_r, new_a, new_r = hold_out(assertions, receipts, fraction, seed)
        files = {name: write(tmp / f"{name}.jsonl", lines) for name, lines in
                 (("base_a", kept_a), ("base_r", kept_r), ("new_a", new_a), ("new_r", new_r),
                  ("union_a", kept_a + new_a), ("union_r", kept_r + new_r))}
        print(f"synthetic paper-scale graph (seed {seed}, cap {cap_text}, merges over the cap: "
              f"{'3% (default)' if overcap is None else overcap}): {len(assertions):,} assertions, "
              f"{len(receipts)} receipts; held out {len(new_a)} assertions and {len(new_r)} receipts")
        base = tmp / "base.graph"
        build_graph(files["base_a"], files["base_r"], rules, cap=cap).write(base)
        add_times, build_times, report = [], [], None
        for _ in range(repeat):  # alternating, so both see the same machine load
            grown = tmp / "grown.graph"
            shutil.copyfile(base, grown)
            [seconds], report = timings(lambda: add(grown, files["new_a"], files["new_r"]), gc_off=False)
            add_times.append(seconds)
            [seconds], _ = timings(lambda: build_graph(files["union_a"], files["union_r"], rules, cap=cap)
                                   .write(tmp / "union.graph"), gc_off=False)
            build_times.append(seconds)
        grown_facts, grown_artifacts = labels(tmp / "grown.graph")
        union_facts, union_artifacts = labels(tmp / "union.graph")
        differing = sum(1 for k in grown_facts.keys() | union_facts.keys() if grown_facts.get(k) != union_facts.get(k))
        inexact = sum(1 for _, exact in union_facts.values() if not exact)
        print(f"  add: version {report.version}, {report.mode}"
              + (f" ({report.reason})" if report.reason else "")
              + f"; facts changed {sum(report.changed.values()):,}, artifacts added {report.artifacts}")
        print(f"  labels: {len(union_facts):,} facts ({inexact} inexact) in the rebuild; "
              f"{differing} differ from the add; artifact ids "
              f"{'identical' if grown_artifacts == union_artifacts else 'DIFFER'}")
        best_add, best_build = min(add_times), min(build_times)
        print(f"  add      {best_add:8.3f} s  (best of {repeat}: {', '.join(f'{t:.3f}' for t in add_times)})")
        print(f"  rebuild  {best_build:8.3f} s  (best of {repeat}: {', '.join(f'{t:.3f}' for t in build_times)})")
        print(f"  ratio    {best_build / best_add:8.1f}x  (rebuild / add; target >= 10x)")
        return differing == 0 and grown_artifacts == union_artifacts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cap", default=None, help="measure only this cap (a number, or none)")
    parser.add_argument("--overcap-merges", type=int, default=None,
                        help="with --cap: merge receipts with more support sets than the cap (default: 3%%)")
    args = parser.parse_args(argv)
    configurations = CONFIGURATIONS if args.cap is None else ((args.cap, args.overcap_merges),)
    equal = [measure(args.seed, args.fraction, args.repeat, cap, overcap) for cap, overcap in configurations]
    return 0 if all(equal) else 1


if __name__ == "__main__":
    sys.exit(main())
