"""Benchmark: past one Python process: DuckDB and Spark against the Python engine, side by side.

For each scale (the synthetic paper-scale graph and N-1 disjoint copies), in one process,
one after another:

  build      Python engine, DuckDB, Spark SQL (local[2], one warm session): the evaluate
             stage's seconds (load, compile and the graph writer are the same code for all),
             ratios, whether the labels are identical to the Python engine's (fact for fact),
             and the semi-naive rounds: their number, rows (delta facts, monomials) and cost;
  tables     export-tables of the Python engine's graph file and import-tables back: seconds
             and sizes;
  what-if    the SQL what-if (graph/store/sql_whatif.py) on the Parquet label tables, DuckDB and
             Spark, against the Python what-if on the graph file: single-source retractions
             and the whole retracted list at once (best of --repeat for Python and DuckDB);
             every SQL verdict checked against Python's.

Spark is skipped, in one line saying why, when pyspark or Java is missing.  Printed, never
asserted.  ``python -m benchmarks.run_all`` runs ``measure`` on x1 as its *distributed* section.

``--tables-only``: a graph no Python build holds (``--scales 400``: 1.12 M assertions), built by
``build --engine duckdb --tables`` in a child process (its own peak RSS), then asked what-ifs by
SQL: single-source retractions of the first copy's sources on DuckDB over the Parquet files
(the first query of a fresh connection, then warm ones), the same as a whole ``polygraph
sql-whatif`` process, and the whole retracted list at once.  The check: the first copy is
``generate(0)`` itself and the copies share no entity, so each single-source verdict (touched
and dead artifact ids) must equal the Python what-if on the x1 graph file built by the Python
engine, an independent build.  With ``--work DIR`` the inputs and the folder are kept there and
reused when present (the build's figures are then those recorded beside the folder when it was
built).

    python -m benchmarks.distributed [--scales 1 10] [--sources 10] [--repeat 1] [--no-spark] [--rounds]
    python -m benchmarks.distributed --tables-only [--scales 400] [--work DIR] [--sources 5]
                                     [--memory-limit 12GB]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Callable

from polygraph_logic.allocation import peak_rss_mb
from benchmarks.harness import Polygraph, Stopwatch, child_json, median, timed, timings
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.synthetic import generate
from polygraph_logic.graph.synthetic_copies import generate_copies
from polygraph_logic.resources import rule_file
from polygraph_logic.engines.spark import spark_available, spark_session
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion, what_if
from polygraph_logic.graph.tables.layout import export_tables, import_tables
from polygraph_logic.graph.store.sql_whatif import DuckDBTables, SparkTables


def labels_of(model) -> dict:
    to_json = model.semiring.to_json
    return {(name, tup): (frozenset(frozenset(s) for s in to_json(label)), label.exact)
            for name in model.relations() for tup, label in model.facts(name).items()}


def spark_problem() -> str | None:
    """Why Spark cannot run here (pyspark, Java), or None."""
    return spark_available()


def round_figures(rounds) -> dict:
    """The rounds of one build: count, rows and seconds, in all and for the costliest stratum."""
    if not rounds:
        return {"rounds": 0}
    seconds = [r.seconds for r in rounds]
    biggest = max({r.stratum for r in rounds}, key=lambda s: sum(r.seconds for r in rounds if r.stratum == s))
    return {"rounds": len(rounds), "strata": len({r.stratum for r in rounds}),
            "seconds": sum(seconds), "median_s": median(seconds), "max_s": max(seconds),
            "delta_facts": sum(r.delta_facts for r in rounds), "monomials": sum(r.monomials for r in rounds),
            "max_delta_facts": max(r.delta_facts for r in rounds),
            "largest_stratum": [[r.round, r.delta_facts, r.monomials, r.seconds]
                                for r in rounds if r.stratum == biggest]}


def build_all(inputs: Path, engines: list[str], out: Callable[[str], None], show_rounds: bool) -> dict:
    """Builds the inputs with each engine; returns per engine its figures (and writes the Python
    engine's graph file beside the inputs)."""
    results, reference = {}, None
    for engine in engines:
        rounds = []
        clock = Stopwatch()
        build = build_graph(inputs / "assertions.jsonl", inputs / "receipts.jsonl", [rule_file("ro")], cap=8,
                            engine=engine, rounds=None if engine == "python" else rounds.append)
        total = clock()
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
            out("    its costliest stratum, round by round (delta facts, monomials, seconds):")
            for number, facts, monomials, seconds in entry["largest_stratum"]:
                out(f"      round {number:3d}: {facts:9,} {monomials:9,} {seconds:7.3f} s")
    python = results["python"]["evaluate_s"]
    for engine in engines[1:]:
        results[engine]["python_over"] = python / results[engine]["evaluate_s"]
        out(f"  evaluate python/{engine}: {results[engine]['python_over']:.3g}x")
    return results


def tables_round_trip(graph: Path, folder: Path, out: Callable[[str], None]) -> dict:
    """export-tables of the graph file into ``folder``, then import-tables back: seconds and sizes."""
    export = timed(lambda: export_tables(graph, folder), gc_off=False)
    back = timed(lambda: import_tables(folder, folder.with_name("back.graph")), gc_off=False)
    rows = json.loads((folder / "meta.json").read_text())["rows"]
    figures = {"export_s": export, "import_s": back, "graph_bytes": graph.stat().st_size,
               "tables_bytes": sum(f.stat().st_size for f in folder.iterdir()), "rows": rows}
    out(f"  tables: {rows['artifacts']:,} artifacts, {rows['facts']:,} facts, {rows['mentions']:,} mention rows; "
        f"export-tables {export:.2f} s, import-tables {back:.2f} s; graph {figures['graph_bytes'] / 1e6:.1f} MB, "
        f"tables {figures['tables_bytes'] / 1e6:.1f} MB")
    return figures


def sql_whatif(graph: Path, retracted: list[str], folder: Path, spark, sources: int, repeat: int, out) -> dict:
    """The SQL what-if on DuckDB and Spark against the Python what-if on the tables ``folder``
    (export-tables of ``graph``); median over the deletions of each one's best of ``repeat``
    milliseconds (Spark: one run)."""

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
                expected = what_if(opened, deletion, "trust-all")
                times["python"].append(timed(lambda: what_if(opened, deletion, "trust-all"), repeat))
                times["touched"].append(len(expected.touched))
                for name, engine in engines:
                    outcome = engine.what_if(deletion)
                    if outcome.touched != expected.touched:
                        raise AssertionError(f"{name} what-if differs from python's on {deletion}")
                    times.setdefault(name, []).append(timed(lambda: engine.what_if(deletion),
                                                            repeat if name == "duckdb" else 1))
            entry = {name: median(values) * 1000 for name, values in times.items() if name != "touched"}
            entry["touched"] = median(times["touched"])
            figures[group] = entry
            cells = ", ".join(f"{name} {entry[name]:.1f} ms" for name in ["python", *(n for n, _ in engines)])
            out(f"  what-if, {group} ({len(deletions)}, median touched {entry['touched']:,.0f}; verdicts equal): {cells}")
    return figures


def measure(scales: tuple[int, ...] = (1,), quick: bool = False, spark: bool = True, sources: int | None = None,
            show_rounds: bool = False, out: Callable[[str], None] = print, repeat: int = 1) -> dict:
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
        clock = Stopwatch()
        session = spark_session("local[2]")
        figures["spark_start_s"] = clock()
        out(f"spark local[2] session started in {figures['spark_start_s']:.1f} s")
    engines = ["python", "duckdb"] + (["spark"] if session else [])
    for scale in scales:
        figures["scales"][scale] = measure_scale(scale, engines, session, quick, sources, show_rounds, repeat, out)
    return figures


def measure_scale(scale: int, engines: list[str], session, quick: bool, sources: int | None,
                  show_rounds: bool, repeat: int, out: Callable[[str], None]) -> dict:
    """The builds, the tables' round trip and the SQL what-ifs of one scale."""
    with tempfile.TemporaryDirectory(prefix="polygraph-distributed-") as work:
        inputs = Path(work)
        graph = generate_copies(scale)
        graph.write(inputs)
        out(f"x{scale}: {len(graph.assertions):,} assertions")
        entry = {"assertions": len(graph.assertions), "build": build_all(inputs, engines, out, show_rounds)}
        entry["tables"] = tables_round_trip(inputs / "python.graph", inputs / "tables", out)
        entry["whatif"] = sql_whatif(inputs / "python.graph", list(graph.retracted), inputs / "tables", session,
                                     sources or (3 if quick else 10), repeat, out)
    return entry


# --- --tables-only: a graph no Python build holds ------------------------------------------

def tables_child(directory: Path, memory_limit: str | None) -> None:
    """Builds the tables folder of the inputs in ``directory``; prints its costs as one JSON line."""
    rounds = []
    clock = Stopwatch()
    built = build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl", [rule_file("ro")],
                        engine="duckdb", memory_limit=memory_limit, rounds=rounds.append,
                        output=directory / "graph.tables", tables=True)
    print(json.dumps({"total": clock(), "seconds": built.seconds, "rows": built.rows, "layers": built.layers,
                      "rss_mb": peak_rss_mb(), "rounds": len(rounds), "strata": len({r.stratum for r in rounds}),
                      "max_round": max((r.seconds for r in rounds), default=0.0)}))


def tables_inputs(directory: Path, copies: int) -> int:
    """Writes the inputs of x``copies`` into ``directory`` unless they are there; returns the assertions."""
    if (directory / "assertions.jsonl").is_file():
        return sum(1 for _ in open(directory / "assertions.jsonl", encoding="utf-8"))
    clock = Stopwatch()
    graph = generate_copies(copies)
    graph.write(directory)
    print(f"generated x{copies}: {len(graph.assertions):,} assertions in {clock():.1f} s")
    return len(graph.assertions)


def tables_build(directory: Path, memory_limit: str | None) -> dict:
    """The tables build in a child (``tables_child``), or the figures recorded beside a folder built before."""
    record = directory / "graph.tables.build.json"
    if (directory / "graph.tables" / "meta.json").is_file() and record.is_file():
        print(f"reusing {directory / 'graph.tables'} (built before; its figures as recorded then)")
        return json.loads(record.read_text())
    arguments = ["--child", directory] + (["--memory-limit", memory_limit] if memory_limit else [])
    result = child_json("distributed", *arguments)
    if isinstance(result, list):
        sys.exit(f"build failed: {result}")
    record.write_text(json.dumps(result))
    return result


def same_verdicts(sql, python) -> bool:
    """The SQL what-if's label-level verdicts against the Python what-if's (as tests/test_tables.py
    compares them): the same touched artifacts; the same dead ones but for claims the Python
    what-if demotes (still entailed) and summaries it trims (sentence by sentence)."""
    trimmed = set(python.summaries)
    demoted = {entry["artifact"] for entry in python.demoted}
    return (sorted(sql.touched) == sorted(python.touched)
            and set(python.dead) - trimmed == set(sql.dead) - demoted - trimmed)


def run_tables_only(directory: Path, copies: int, sources: int, memory_limit: str | None) -> None:
    """``--tables-only`` on x``copies`` in ``directory`` (see the module docstring)."""

    count = tables_inputs(directory, copies)
    result = tables_build(directory, memory_limit)
    rows = result["rows"]
    stages = ", ".join(f"{k} {v:.1f}" for k, v in result["seconds"].items())
    print(f"x{copies}: {count:,} assertions -> {rows['facts']:,} facts, {sum(result['layers'].values()):,} "
          f"artifacts, {rows['mentions']:,} mentions")
    print(f"  build --engine duckdb --tables: {result['total']:.1f} s, peak RSS {result['rss_mb']:,.0f} MB "
          f"({stages}); {result['rounds']} rounds in {result['strata']} strata, slowest round "
          f"{result['max_round']:.2f} s")
    folder = directory / "graph.tables"
    print(f"  tables folder: {sum(p.stat().st_size for p in folder.iterdir()) / 2 ** 20:,.1f} MiB")

    # the first copy's sources (no copy prefix), and the reference: the x1 graph built by Python
    retracted = [line.strip() for line in open(directory / "retracted.txt", encoding="utf-8") if line.strip()]
    first = [s for s in retracted if not s.startswith("copy")]
    chosen = random.Random(0).sample(first, min(sources, len(first)))
    with tempfile.TemporaryDirectory(prefix="polygraph-scale-") as work:
        generate(seed=0).write(Path(work))
        build_graph(Path(work) / "assertions.jsonl", Path(work) / "receipts.jsonl", [rule_file("ro")],
                    output=Path(work) / "x1.graph")
        with Graph(Path(work) / "x1.graph") as graph:
            expected = {s: what_if(graph, Deletion(sources=(s,))) for s in chosen}

    clock = Stopwatch()
    tables = DuckDBTables(folder)
    opened = clock()
    cold, warm, equal = [], [], True
    for source in chosen:
        deletion = Deletion(sources=(source,))
        [first_query], outcome = timings(lambda: tables.what_if(deletion))
        cold.append(first_query)
        warm.append(timed(lambda: tables.what_if(deletion), 3))
        equal &= same_verdicts(outcome, expected[source])
    print(f"  single-source what-if by SQL, {len(chosen)} sources of the first copy: first query median "
          f"{median(cold) * 1000:.0f} ms (max {max(cold) * 1000:.0f}), warm median "
          f"{median(warm) * 1000:.0f} ms; opening the folder {opened * 1000:.0f} ms (target <= 1 s)")
    print(f"  verdicts equal to the Python what-if on the Python engine's x1 graph file: {'yes' if equal else 'NO'}")
    polygraph = Polygraph()
    processes = [polygraph("sql-whatif", folder, "--retract-source", source).check("sql-whatif").seconds
                 for source in chosen[:3]]
    print(f"  polygraph sql-whatif as a whole process (start-up included): median {median(processes):.2f} s")
    [everything], outcome = timings(lambda: tables.what_if(Deletion(sources=tuple(retracted))))
    print(f"  all {len(retracted):,} retracted sources at once: {everything * 1000:.0f} ms, "
          f"{len(outcome.touched):,} touched, {len(outcome.dead):,} dead")
    tables.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=None,
                        help="copies of the paper-scale graph (default 1; --tables-only: 400)")
    parser.add_argument("--sources", type=int, default=None,
                        help="single-source retractions per scale (default 10; --tables-only: 5)")
    parser.add_argument("--repeat", type=int, default=1, help="best of N for the Python and DuckDB what-ifs (Spark: 1)")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--rounds", action="store_true", help="print the costliest stratum round by round")
    parser.add_argument("--tables-only", action="store_true",
                        help="instead: DuckDB builds the tables folder (no Python build), SQL what-ifs on it")
    parser.add_argument("--work", type=Path, metavar="DIR",
                        help="--tables-only: keep inputs and tables here (reused when present)")
    parser.add_argument("--memory-limit", default=None, help="--tables-only: DuckDB's limit for the build")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        tables_child(args.child, args.memory_limit)
        return 0
    if args.tables_only:
        for copies in args.scales or [400]:
            if args.work:
                directory = args.work if len(args.scales or [400]) == 1 else args.work / f"x{copies}"
                directory.mkdir(parents=True, exist_ok=True)
                run_tables_only(directory, copies, args.sources or 5, args.memory_limit)
                continue
            with tempfile.TemporaryDirectory(prefix="polygraph-tables-only-") as work:
                run_tables_only(Path(work), copies, args.sources or 5, args.memory_limit)
        return 0
    measure(tuple(args.scales or [1]), spark=not args.no_spark, sources=args.sources, show_rounds=args.rounds,
            repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
