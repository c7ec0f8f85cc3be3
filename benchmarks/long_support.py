"""Build time of one merge receipt whose single support set has n members (issue 13, item 10).

Each size is built by the real ``polygraph build`` command in its own process; the
figure is the build's own wall time (evaluation and writing), then the whole process's.
Before the loop runner and the heap planner, 125 members took about 6 s, 500 about 30 s,
and 1,000 failed with too_deep after about 36 s.

    python benchmarks/long_support.py [--sizes 125 500 1000 5000]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def inputs(folder: Path, n: int) -> tuple[Path, Path]:
    assertions, receipts = folder / f"a{n}.jsonl", folder / f"r{n}.jsonl"
    assertions.write_text("".join(
        json.dumps({"id": f"a{i}", "source": f"s:{i}", "subject": "A", "predicate": "RO:0002211",
                    "object": f"B{i}"}) + "\n" for i in range(1, n + 1)))
    receipts.write_text(json.dumps({
        "artifact": "merge:m1", "layer": "merge", "content": {"canonical": "A", "members": ["A", "B"]},
        "support": [[f"a{i}" for i in range(1, n + 1)]]}) + "\n")
    return assertions, receipts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[125, 500, 1000, 5000])
    args = parser.parse_args()
    print(f"{'members':>8}  {'build':>8}  {'process':>8}  result")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in args.sizes:
            assertions, receipts = inputs(folder, n)
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", "build", "--assertions",
                                   str(assertions), "--receipts", str(receipts), "-o", str(folder / f"g{n}.graph")],
                                  capture_output=True, text=True)
            process = time.perf_counter() - started
            found = re.search(r"; ([\d.]+) s$", done.stdout.strip() or done.stderr.strip())
            build = f"{float(found.group(1)):.2f} s" if found else "-"
            result = "ok" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{n:>8}  {build:>8}  {process:>6.2f} s  {result}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
