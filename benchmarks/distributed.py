"""Benchmark: past one Python process: DuckDB and Spark against the Python engine, side by side.

For each scale (the synthetic paper-scale graph and N-1 disjoint copies), in one process,
one after another:

  build      Python engine, DuckDB, Spark SQL (local[2], one warm session): the evaluate
             stage's seconds (load, compile and the graph writer are the same code for all),
             ratios, whether the labels are identical to the Python engine's (fact for fact),
             and the semi-naive rounds: their number, rows (delta facts, monomials) and cost;
  what-if    the SQL what-if (engines/sql_whatif.py) on the Parquet label tables, DuckDB and
             Spark, against the Python what-if on the graph file: single-source retractions
             and the whole retracted list at once; every SQL verdict checked against Python's.

Spark is skipped, in one line saying why, when pyspark or Java is missing.  Printed, never
asserted.  ``polygraph bench`` runs ``measure`` on x1 as its *distributed* section.

``--spark-base REV``: the Spark build is run twice instead, each in a child process of its own
(its own JVM, started before the clock): with the package as of commit REV (a ``git archive``
of it first on the child's path) and with the working tree; printed: both builds' rounds, the
ratios base / working tree of the evaluate stage and of the median round, and whether each
one's labels are identical to the Python engine's.

    python benchmarks/distributed.py [--scales 1 10] [--sources 5] [--no-spark] [--rounds] [--spark-base REV]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = os.environ.get("DISTRIBUTED_PACKAGE")  # set in a child: the package whose Spark build is measured
sys.path.insert(0, PACKAGE or str(ROOT))

from polygraph_logic.engines import build_graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate_copies  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402


def labels_of(model) -> dict:
    to_json = model.semiring.to_json
    return {(name, tup): (frozenset(frozenset(s) for s in to_json(label)), label.exact)
            for name in model.relations() for tup, label in model.facts(name).items()}


def labels_digest(labels: dict) -> str:
    """One digest of every fact's label (support sets and exact flag), in a fixed order."""
    rows = sorted(repr((key, sorted(sorted(map(str, s)) for s in sets), exact)) for key, (sets, exact) in labels.items())
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def spark_child(inputs: Path) -> None:
    """In a child: one Spark build of ``inputs`` (session started first); prints one JSON line."""
    import polygraph_logic
    from polygraph_logic.engines.spark import spark_session
    spark_session("local[2]")
    rounds = []
    build = build_graph(inputs / "assertions.jsonl", inputs / "receipts.jsonl", [rule_file("ro")], cap=8,
                        engine="spark", rounds=rounds.append)
    print(json.dumps({"package": polygraph_logic.__file__, "evaluate_s": build.seconds["evaluate"],
                      "digest": labels_digest(labels_of(build.model)),
                      "rounds": [[r.stratum, r.round, r.delta_facts, r.monomials, r.seconds] for r in rounds]}))


def extract(base: str, folder: Path) -> Path:
    """Writes the package as of commit ``base`` to ``folder`` (git archive); returns the folder."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base, "polygraph_logic", "grammar", "rules", "prompts"],
                             capture_output=True, check=True).stdout
    folder.mkdir(parents=True)
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def spark_base_vs_tree(inputs: Path, base: tuple[str, Path], reference: dict, out, show_rounds: bool) -> dict:
    """The Spark build with the base commit's package and with the working tree's, one child each."""
    from polygraph_logic.engines.driver import RoundStats
    digest, results = labels_digest(reference), {}
    for name, package in ((f"base {base[0]}", base[1]), ("working tree", ROOT)):
        env = {**os.environ, "DISTRIBUTED_PACKAGE": str(package), "PYTHONHASHSEED": "0"}
        done = subprocess.run([sys.executable, __file__, "--spark-child", str(inputs)], env=env,
                              capture_output=True, text=True, cwd=inputs)
        if done.returncode:
            sys.exit(f"a Spark child failed:\n{done.stderr[-3000:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        if not figures["package"].startswith(str(package)):
            sys.exit(f"the child imported {figures['package']}, not the package under {package}")
        rounds = [RoundStats(*r) for r in figures["rounds"]]
        entry = {"evaluate_s": figures["evaluate_s"], "identical": figures["digest"] == digest, **round_figures(rounds)}
        results[name] = entry
        out(f"  spark ({name}, a child) evaluate {entry['evaluate_s']:8.2f} s, labels identical to python: "
            f"{'yes' if entry['identical'] else 'NO'}; {entry['rounds']} rounds in {entry['strata']} strata, "
            f"median {entry['median_s'] * 1000:.0f} ms, max {entry['max_s']:.2f} s")
    old, new = results.values()
    if show_rounds:
        out("    the base's costliest stratum, round by round (delta facts, monomials, seconds base, working tree):")
        by_round = {(r[0]): r[3] for r in new["largest_stratum"]}
        for number, facts, monomials, seconds in old["largest_stratum"]:
            now = by_round.get(number)
            out(f"      round {number:3d}: {facts:9,} {monomials:9,} {seconds:7.3f} s {now:7.3f} s" if now is not None
                else f"      round {number:3d}: {facts:9,} {monomials:9,} {seconds:7.3f} s")
    ratios = {"evaluate": old["evaluate_s"] / new["evaluate_s"], "median_round": old["median_s"] / new["median_s"]}
    out(f"  spark base/working tree: evaluate {ratios['evaluate']:.3g}x, median round {ratios['median_round']:.3g}x")
    return {"base": old, "tree": new, "ratios": ratios}


def spark_problem() -> str | None:
    """Why Spark cannot run here (pyspark, Java), or None."""
    from polygraph_logic.engines.spark import spark_available
    return spark_available()


def round_figures(rounds) -> dict:
    """The rounds of one build: count, rows and seconds, in all and for the costliest stratum."""
    if not rounds:
        return {"rounds": 0}
    seconds = [r.seconds for r in rounds]
    biggest = max({r.stratum for r in rounds}, key=lambda s: sum(r.seconds for r in rounds if r.stratum == s))
    return {"rounds": len(rounds), "strata": len({r.stratum for r in rounds}),
            "seconds": sum(seconds), "median_s": statistics.median(seconds), "max_s": max(seconds),
            "delta_facts": sum(r.delta_facts for r in rounds), "monomials": sum(r.monomials for r in rounds),
            "max_delta_facts": max(r.delta_facts for r in rounds),
            "largest_stratum": [[r.round, r.delta_facts, r.monomials, r.seconds]
                                for r in rounds if r.stratum == biggest]}


def build_all(inputs: Path, engines: list[str], out: Callable[[str], None], show_rounds: bool,
              spark_base: tuple[str, Path] | None = None) -> dict:
    """Builds the inputs with each engine; returns per engine its figures (and the Python graph file).
    With ``spark_base`` (its name, its package folder), Spark is built by two children instead."""
    results, reference = {}, None
    children = spark_base is not None and "spark" in engines
    engines = [e for e in engines if not (children and e == "spark")]
    for engine in engines:
        rounds = []
        started = time.perf_counter()
        build = build_graph(inputs / "assertions.jsonl", inputs / "receipts.jsonl", [rule_file("ro")], cap=8,
                            engine=engine, rounds=None if engine == "python" else rounds.append)
        total = time.perf_counter() - started
        labels = labels_of(build.model)
        if engine == "python":
            reference = labels
            build.write(inputs / "python.graph")
        entry = {"evaluate_s": build.seconds["evaluate"], "total_s": total, "facts": len(labels),
                 "identical": labels == reference, **round_figures(rounds)}
        results[engine] = entry
        rows = f"; {entry['rounds']} rounds in {entry['strata']} strata, median {entry['median_s'] * 1000:.0f} ms, " \
               f"max {entry['max_s']:.2f} s" if entry.get("rounds") else ""
        out(f"  {engine:<7} evaluate {entry['evaluate_s']:8.2f} s (whole build {total:7.2f} s), "
            f"{entry['facts']:,} facts, labels identical to python: {'yes' if entry['identical'] else 'NO'}{rows}")
        if show_rounds and entry.get("rounds"):
            out(f"    its costliest stratum, round by round (delta facts, monomials, seconds):")
            for number, facts, monomials, seconds in entry["largest_stratum"]:
                out(f"      round {number:3d}: {facts:9,} {monomials:9,} {seconds:7.3f} s")
    if children:
        results["spark"] = spark_base_vs_tree(inputs, spark_base, reference, out, show_rounds)
        results["spark"]["evaluate_s"] = results["spark"]["tree"]["evaluate_s"]
        engines = engines + ["spark"]
    python = results["python"]["evaluate_s"]
    for engine in engines[1:]:
        results[engine]["python_over"] = python / results[engine]["evaluate_s"]
        out(f"  evaluate python/{engine}{' (working tree)' if children and engine == 'spark' else ''}: "
            f"{results[engine]['python_over']:.3g}x")
    return results


def sql_whatif(graph: Path, retracted: list[str], folder: Path, spark, sources: int, out) -> dict:
    """The SQL what-if on DuckDB and Spark against the Python what-if; median milliseconds."""
    import random

    from polygraph_logic.engines.sql_whatif import DuckDBTables, SparkTables
    from polygraph_logic.engines.tables import export_tables
    from polygraph_logic.graph.store import Graph
    from polygraph_logic.whatif import Deletion, what_if

    export_tables(graph, folder)
    first_copy = [s for s in retracted if not s.startswith("copy")]
    picked = random.Random(0).sample(first_copy, min(sources, len(first_copy)))
    groups = {"single source": [Deletion(sources=(s,)) for s in picked],
              f"all {len(retracted)} retracted sources": [Deletion(sources=tuple(retracted))]}
    figures = {}
    with Graph(graph) as opened, DuckDBTables(folder) as duck:
        engines = [("duckdb", duck)] + ([("spark", SparkTables(folder, session=spark))] if spark else [])
        if spark:
            engines[-1][1].what_if(groups["single source"][0])  # the views' first job (schema, file listing)
        for group, deletions in groups.items():
            times = {"python": [], "touched": []}
            for deletion in deletions:
                started = time.perf_counter()
                expected = what_if(opened, deletion, "trust-all")
                times["python"].append(time.perf_counter() - started)
                times["touched"].append(len(expected.touched))
                for name, engine in engines:
                    started = time.perf_counter()
                    outcome = engine.what_if(deletion)
                    times.setdefault(name, []).append(time.perf_counter() - started)
                    if outcome.touched != expected.touched:
                        raise AssertionError(f"{name} what-if differs from python's on {deletion}")
            entry = {name: statistics.median(values) * 1000 for name, values in times.items() if name != "touched"}
            entry["touched"] = statistics.median(times["touched"])
            figures[group] = entry
            cells = ", ".join(f"{name} {entry[name]:.1f} ms" for name in ["python", *(n for n, _ in engines)])
            out(f"  what-if, {group} ({len(deletions)}, median touched {entry['touched']:,.0f}; verdicts equal): {cells}")
    return figures


def measure(scales: tuple[int, ...] = (1,), quick: bool = False, spark: bool = True, sources: int | None = None,
            show_rounds: bool = False, out: Callable[[str], None] = print, spark_base: str | None = None) -> dict:
    """Runs the builds and SQL what-ifs on each scale; prints through ``out``, returns the figures.
    ``spark_base``: a commit whose Spark build is measured beside the working tree's (children)."""
    figures: dict = {"scales": {}}
    try:
        import duckdb  # noqa: F401
    except ImportError:
        out('distributed: skipped (duckdb is not installed: pip install "polygraph_logic[duckdb]")')
        return {"skipped": "duckdb is not installed"}
    problem = spark_problem() if spark else "--no-spark"
    session = None
    if problem:
        out(f"spark: skipped ({problem})")
        figures["spark_skipped"] = problem
    else:
        from polygraph_logic.engines.spark import spark_session
        started = time.perf_counter()
        session = spark_session("local[2]")
        figures["spark_start_s"] = time.perf_counter() - started
        out(f"spark local[2] session started in {figures['spark_start_s']:.1f} s")
    engines = ["python", "duckdb"] + (["spark"] if session else [])
    with tempfile.TemporaryDirectory(prefix="polygraph-distributed-base-") as packages:
        base = None
        if spark_base and session:
            commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", spark_base],
                                    capture_output=True, text=True, check=True).stdout.strip()
            base = (commit, extract(spark_base, Path(packages) / "base"))
        for scale in scales:
            figures["scales"][scale] = measure_scale(scale, engines, session, base, quick, sources, show_rounds, out)
    return figures


def measure_scale(scale: int, engines: list[str], session, base, quick: bool, sources: int | None,
                  show_rounds: bool, out: Callable[[str], None]) -> dict:
    """The builds and SQL what-ifs of one scale."""
    with tempfile.TemporaryDirectory(prefix="polygraph-distributed-") as work:
        inputs = Path(work)
        graph = generate_copies(scale)
        graph.write(inputs)
        out(f"x{scale}: {len(graph.assertions):,} assertions")
        entry = {"assertions": len(graph.assertions), "build": build_all(inputs, engines, out, show_rounds, base)}
        entry["whatif"] = sql_whatif(inputs / "python.graph", list(graph.retracted), inputs / "tables", session,
                                     sources or (3 if quick else 10), out)
    return entry


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1])
    parser.add_argument("--sources", type=int, default=None, help="single-source retractions per scale (10)")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--rounds", action="store_true", help="print the costliest stratum round by round")
    parser.add_argument("--spark-base", metavar="REV", help="also build on Spark with the package as of REV (children)")
    parser.add_argument("--spark-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.spark_child:
        spark_child(Path(args.spark_child))
        return 0
    measure(tuple(args.scales), spark=not args.no_spark, sources=args.sources, show_rounds=args.rounds,
            spark_base=args.spark_base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
