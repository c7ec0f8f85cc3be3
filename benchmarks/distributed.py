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

    python benchmarks/distributed.py [--scales 1 10] [--sources 5] [--no-spark] [--rounds]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.engines import build_graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate_copies  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402


def labels_of(model) -> dict:
    to_json = model.semiring.to_json
    return {(name, tup): (frozenset(frozenset(s) for s in to_json(label)), label.exact)
            for name in model.relations() for tup, label in model.facts(name).items()}


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


def build_all(inputs: Path, engines: list[str], out: Callable[[str], None], show_rounds: bool) -> dict:
    """Builds the inputs with each engine; returns per engine its figures (and the Python graph file)."""
    results, reference = {}, None
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
    python = results["python"]["evaluate_s"]
    for engine in engines[1:]:
        results[engine]["python_over"] = python / results[engine]["evaluate_s"]
        out(f"  evaluate python/{engine}: {results[engine]['python_over']:.3g}x")
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
            show_rounds: bool = False, out: Callable[[str], None] = print) -> dict:
    """Runs the builds and SQL what-ifs on each scale; prints through ``out``, returns the figures."""
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
    for scale in scales:
        with tempfile.TemporaryDirectory(prefix="polygraph-distributed-") as work:
            inputs = Path(work)
            graph = generate_copies(scale)
            graph.write(inputs)
            out(f"x{scale}: {len(graph.assertions):,} assertions")
            entry = {"assertions": len(graph.assertions), "build": build_all(inputs, engines, out, show_rounds)}
            entry["whatif"] = sql_whatif(inputs / "python.graph", list(graph.retracted), inputs / "tables", session,
                                         sources or (3 if quick else 10), out)
            figures["scales"][scale] = entry
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1])
    parser.add_argument("--sources", type=int, default=None, help="single-source retractions per scale (10)")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--rounds", action="store_true", help="print the costliest stratum round by round")
    args = parser.parse_args(argv)
    measure(tuple(args.scales), spark=not args.no_spark, sources=args.sources, show_rounds=args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
