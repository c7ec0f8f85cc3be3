"""Benchmark: ``build --engine spark --tables DIR`` against ``build --engine spark -o FILE.graph``.

Both evaluate the same plan on Spark (local[2]); then the graph file path reads every label
back into this process (``runner.model()``) and writes SQLite from Python, where the tables
path writes the Parquet folder with Spark (engines/spark_tables.py).  Each build runs in a
child process of its own, one after the other, so that each peak RSS is that build's:

- *python peak RSS*: the driver's Python process (``VmHWM``: allocation.peak_rss_mb): what the graph file path
  holds of the labels, and what the tables path avoids;
- *JVM peak RSS*: the Spark JVM the child started (``VmHWM``, read before it exits); on a
  local master it is the driver and the executors in one process.

Printed per scale: seconds per stage, the two peaks, the ratios graph file / tables, and
whether the two builds hold the same rows (the graph file exported by ``export-tables``,
compared with the Spark folder by tables_compare.differences).

    python benchmarks/spark_tables.py [--inputs /tmp/s21] [--scales 1 10] [--master local[2]]

Inputs: ``DIR/syn<scale>/assertions.jsonl`` and ``receipts.jsonl`` (generated into a
temporary folder by ``graph.synthetic.generate_copies`` when absent); rules: rules/ro.dl.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.allocation import peak_rss_mb  # noqa: E402

MODES = ("tables", "graph")
NAMES = {"tables": "spark -> tables folder", "graph": "spark -> graph file"}


def _jvm_peak_mb() -> float | None:
    """The peak RSS (VmHWM) of the java process among this process's descendants, in MB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    stack, peak = [os.getpid()], None
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            if (Path("/proc") / str(pid) / "comm").read_text().strip() == "java":
                for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak or 0.0, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return peak


def child(mode: str, inputs: Path, output: Path, master: str) -> None:
    """One build; prints its stages, peaks and counts as one JSON line."""
    from polygraph_logic.engines.spark import spark_session
    from polygraph_logic.resources import rule_file
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    spark_session(master)
    seconds["start Spark"] = time.perf_counter() - started
    rules = [rule_file("ro")]
    if mode == "tables":
        from polygraph_logic.engines import build_spark_tables
        stages: list[tuple[str, float]] = []
        built = build_spark_tables(inputs / "assertions.jsonl", inputs / "receipts.jsonl", rules, output,
                                   master=master, writing=lambda stage: stages.append((stage, time.perf_counter())))
        ended = time.perf_counter()
        seconds.update({k: v for k, v in built.seconds.items() if k != "write"})
        for (stage, at), (_, then) in zip(stages, stages[1:] + [("", ended)]):
            seconds[f"write: {stage}"] = then - at
        facts, rounds = built.rows["facts"], len(built.rounds)
    else:
        from polygraph_logic.engines.spark_run import evaluation
        from polygraph_logic.graph import build as python_build
        prepared = python_build.prepare_build(inputs / "assertions.jsonl", inputs / "receipts.jsonl", rules, 8)
        seconds.update(prepared.seconds)
        begun = time.perf_counter()
        with evaluation(prepared.program, 8, master) as runner:
            seconds["evaluate"] = time.perf_counter() - begun
            begun = time.perf_counter()
            model = runner.model()
            seconds["read labels into the driver"] = time.perf_counter() - begun
            rounds = len(runner.stats)
        begun = time.perf_counter()
        build = prepared.build(model)
        build.write(output)
        seconds["write the graph file"] = time.perf_counter() - begun
        facts = sum(len(model.facts(name)) for name in model.relations())
    print(json.dumps({"seconds": seconds, "total": sum(seconds.values()), "facts": facts, "rounds": rounds,
                      "python_mb": peak_rss_mb(),
                      "jvm_mb": _jvm_peak_mb()}))


def inputs_for(base: Path, scale: int, work: Path) -> Path:
    folder = base / f"syn{scale}"
    if (folder / "assertions.jsonl").is_file() and (folder / "receipts.jsonl").is_file():
        return folder
    from polygraph_logic.graph.synthetic import generate_copies
    folder = work / f"syn{scale}"
    generate_copies(scale).write(folder)
    return folder


def run(scale: int, base: Path, master: str) -> None:
    from polygraph_logic.engines.tables import export_tables
    from polygraph_logic.engines.tables_compare import differences
    with tempfile.TemporaryDirectory(prefix="polygraph-spark-tables-") as work:
        work = Path(work)
        inputs = inputs_for(base, scale, work)
        assertions = sum(1 for _ in open(inputs / "assertions.jsonl", encoding="utf-8"))
        results = {}
        outputs = {"tables": work / "spark.tables", "graph": work / "spark.graph"}
        for mode in MODES:
            done = subprocess.run([sys.executable, __file__, "--child", mode, str(inputs), str(outputs[mode]),
                                   "--master", master], capture_output=True, text=True)
            if done.returncode:
                print(f"x{scale} {mode}: failed: {done.stderr.strip().splitlines()[-3:]}")
                return
            results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
        export_tables(outputs["graph"], work / "graph.tables")
        differ = differences(work / "graph.tables", outputs["tables"])
    print(f"x{scale}: {assertions:,} assertions, {results['tables']['facts']:,} facts, "
          f"{results['tables']['rounds']} rounds; the tables folder vs export-tables of the graph file: "
          f"{'identical' if not differ else 'DIFFERENT: ' + '; '.join(differ)}")
    for mode in MODES:
        r = results[mode]
        jvm = f"{r['jvm_mb']:7.0f} MB" if r["jvm_mb"] else "    n/a"
        print(f"  {NAMES[mode]:23s} {r['total']:8.2f} s  python peak RSS {r['python_mb']:6.0f} MB  JVM peak RSS {jvm}")
        for stage, value in r["seconds"].items():
            print(f"      {stage:36s} {value:8.2f} s")
    t, g = results["tables"], results["graph"]
    after = {mode: results[mode]["total"] - results[mode]["seconds"]["evaluate"]
             - results[mode]["seconds"]["start Spark"] for mode in MODES}
    print(f"  ratio graph file / tables: whole build {g['total'] / t['total']:.2f}x, after the evaluation "
          f"{after['graph'] / after['tables']:.2f}x, python peak RSS {g['python_mb'] / t['python_mb']:.2f}x"
          + (f", JVM peak RSS {g['jvm_mb'] / t['jvm_mb']:.2f}x" if g["jvm_mb"] and t["jvm_mb"] else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", default="/tmp/s21", help="a folder holding syn<scale>/ inputs")
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "INPUTS", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, inputs, output = args.child
        child(mode, Path(inputs), Path(output), args.master)
        return
    from polygraph_logic.engines.spark import spark_available
    problem = spark_available()
    if problem:
        print(f"skipped: {problem}")
        return
    print(f"Spark {args.master}, builds one after the other, each in a child process (cap 8, rules/ro.dl)")
    for scale in args.scales:
        run(scale, Path(args.inputs), args.master)


if __name__ == "__main__":
    main()
