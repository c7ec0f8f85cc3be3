"""Benchmark: the front door. How fast do ground facts get in, from .facts files and from .dl text?

Generates N facts of a two-column relation (a symbol and a number, plus a tracked
variant with an assertion id per fact) and measures side by side in one run:

  csv module       Python's csv.reader over the same tab-separated rows (the floor)
  .facts           polygraph's .input reader (souffle_io.read_facts), types converted
  .facts tracked   the same with a provenance column (provenance=1)
  .dl text         load_program on `edge("n17", 17).` lines (the regex fast path)
  .dl tracked      load_program on `a17 :: edge("n17", 17).` lines
  whole process    `polygraph eval prog.dl -F DIR -D OUT` on a transitive closure over the facts

and prints facts per second and each ratio to the csv module. Times are printed,
never asserted.

    python benchmarks/front_door.py [--facts 300000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.declarations import Declarations  # noqa: E402
from polygraph_logic.program import load_program, parse_program  # noqa: E402
from polygraph_logic.souffle_io import read_facts  # noqa: E402


def best(repeat: int, run) -> float:
    """Returns the best wall time of ``repeat`` runs of ``run()``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def write_inputs(folder: Path, n: int) -> None:
    """Writes the fact files and programs the measurements read."""
    with open(folder / "edge.facts", "w") as out:
        out.writelines(f"n{i}\t{i}\n" for i in range(n))
    with open(folder / "tracked.facts", "w") as out:
        out.writelines(f"a{i}\tn{i}\t{i}\n" for i in range(n))
    (folder / "plain.dl").write_text("".join(f'edge("n{i}", {i}).\n' for i in range(n)))
    (folder / "tracked.dl").write_text("".join(f'a{i} :: edge("n{i}", {i}).\n' for i in range(n)))
    (folder / "closure.dl").write_text(
        ".decl edge(x: symbol, y: number)\n.input edge\n"
        ".decl link(x: number, y: number)\n.decl reach(x: number, y: number)\n.output reach\n"
        "link(i, j) :- edge(_, i), j = i + 1, j % 1000 != 0.\n"
        "reach(x, y) :- link(x, y), x % 1000 = 1.\nreach(x, z) :- reach(x, y), link(y, z).\n"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=300_000, help="facts per input (default 300,000)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    args = parser.parse_args(argv)
    n = args.facts
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, n)
        declared = parse_program(
            ".decl edge(x: symbol, y: number)\n.input edge\n"
            ".decl tracked(x: symbol, y: number)\n.input tracked(provenance=1)\n").declarations
        plain, tracked = (next(d for d in declared.io if d.relation == r) for r in ("edge", "tracked"))
        kinds = declared.kinds("edge")

        def with_csv():
            with open(folder / "edge.facts", newline="") as f:
                return [(a, int(b)) for a, b in csv.reader(f, delimiter="\t")]

        rows = {
            "csv module (rows + int)": best(args.repeat, with_csv),
            ".facts": best(args.repeat, lambda: read_facts(plain, kinds, declared.relations["edge"], folder)),
            ".facts tracked": best(args.repeat, lambda: read_facts(
                tracked, kinds, declared.relations["tracked"], folder)),
            ".dl text": best(args.repeat, lambda: load_program(folder / "plain.dl")),
            ".dl tracked": best(args.repeat, lambda: load_program(folder / "tracked.dl")),
        }
        assert len(read_facts(plain, kinds, declared.relations["edge"], folder)) == n
        assert len(next(iter(load_program(folder / "tracked.dl").fact_tables().values()))) == n
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "polygraph_logic.cli", "eval", str(folder / "closure.dl"),
                        "-F", str(folder), "-D", str(folder / "out"), "--semiring", "boolean"], check=True)
        whole = time.perf_counter() - started
        reach = sum(1 for _ in open(folder / "out" / "reach.csv"))
    floor = rows["csv module (rows + int)"]
    print(f"front door: {n:,} facts, best of {args.repeat}")
    print(f"{'input':<26}{'seconds':>9}{'facts/s':>12}{'x csv':>8}")
    for name, seconds in rows.items():
        print(f"{name:<26}{seconds:>9.3f}{n / seconds:>12,.0f}{seconds / floor:>8.2f}")
    print(f"whole process (-F/-D, closure): {whole:.2f} s for {n:,} input facts and {reach:,} reach facts")
    print(f"targets: .facts >= 300,000 facts/s ({n / rows['.facts']:,.0f}), .dl >= 100,000 facts/s "
          f"({n / rows['.dl text']:,.0f}); .facts within 3x of csv ({rows['.facts'] / floor:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
